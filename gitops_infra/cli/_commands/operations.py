"""The operations on a stack: preview, up, promote, refresh, rollback, history, recover and switch-engine.

``preview`` takes ``--all`` too. A destroy, which deletes, has its own module (``destroy``).
"""

from __future__ import annotations

from datetime import timedelta

import click

from ... import automation
from ...errors import CheckpointError
from .._invocation import (
    Fleet,
    Invocation,
    checked_stack,
    command,
    create_option,
    fleet_command,
    formats,
    lock_wait_option,
    message_option,
    policy_packs_option,
    positive_duration,
)
from .._main import EXIT_ERROR, EXIT_OK, EXIT_PENDING, CliError, main
from .._render.operations import (
    print_fleet_preview,
    print_history,
    print_preview,
    print_promotion,
    print_recovery,
    print_refresh,
    print_update,
)

__all__: list[str] = []


@main.command()
@fleet_command
@formats
@click.option("--refresh", is_flag=True, help="Read the real state of resources first.")
@click.option("--expect-no-changes", is_flag=True, help="Exit 2 when the preview has changes.")
@policy_packs_option
@create_option
def preview(
    invocation: Invocation,
    fleet: Fleet,
    refresh: bool,
    expect_no_changes: bool,
    policy_packs: tuple[str, ...],
    create: bool,
) -> int:
    """Show what `up` would change in STACK (or --all stacks, each reported, nothing created)."""
    if fleet.every:
        if create:
            raise CliError("UsageError", "preview --all only looks: --create goes with one STACK")
        stacks = fleet.stacks(invocation)
        with invocation.activity("Previewing"):
            found = automation.preview_all(
                stacks,
                options=invocation.options(),
                parallel=fleet.parallel,
                shard=fleet.shard,
                refresh=refresh,
                policy_packs=policy_packs,
            )
        invocation.emit(found, lambda out: print_fleet_preview(out, found))
        if expect_no_changes and found.has_changes:
            return EXIT_PENDING
        return EXIT_ERROR if found.has_errors else EXIT_OK
    with invocation.activity("Previewing"):
        result = automation.preview(
            invocation.stack,
            options=invocation.options(),
            refresh=refresh,
            policy_packs=policy_packs,
            create=create,
        )

    invocation.emit(result, lambda out: print_preview(out, f"Preview of {invocation.stack}", result))
    return EXIT_PENDING if expect_no_changes and result.has_changes else EXIT_OK


@main.command()
@command
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@click.option("--refresh", is_flag=True, help="Read the real state of resources first.")
@message_option
@policy_packs_option
@create_option
@lock_wait_option
@click.option(
    "--require-promoted-from",
    "promoted_from",
    metavar="SOURCE",
    callback=checked_stack,
    help="Refuse unless the work tree's commit has a successful update on stack SOURCE.",
)
def up(
    invocation: Invocation,
    yes: bool,
    refresh: bool,
    message: str | None,
    policy_packs: tuple[str, ...],
    create: bool,
    lock_wait: float,
    promoted_from: str | None,
) -> int:
    """Apply the program to STACK."""
    invocation.confirm(f"Apply the program to stack {invocation.stack!r}?", yes)
    with invocation.activity("Updating"):
        result = automation.up(
            invocation.stack,
            options=invocation.options(lock_wait=lock_wait, progress=True),
            message=message,
            policy_packs=policy_packs,
            refresh=refresh,
            create=create,
            require_promoted_from=promoted_from,
        )
    invocation.emit(result, lambda out: print_update(out, "Updated", result))
    return EXIT_OK


@main.command()
@command
@click.argument("target", callback=checked_stack)
@formats
@click.option("--yes", "-y", is_flag=True, help="Promote without asking.")
@click.option("--require-no-drift", is_flag=True, help="Refuse when the source stack has drifted (iac).")
@click.option(
    "--require-healthy",
    is_flag=True,
    help="Refuse unless the source's GitOps layer is healthy now: Flux Ready at its revision, none suspended",
)
@click.option(
    "--max-age",
    metavar="DURATION",
    callback=positive_duration,
    help="Refuse unless the source's last successful update ended within DURATION (24h, 90m).",
)
@message_option
@lock_wait_option
def promote(
    invocation: Invocation,
    target: str,
    yes: bool,
    require_no_drift: bool,
    require_healthy: bool,
    max_age: timedelta | None,
    message: str | None,
    lock_wait: float,
) -> int:
    """Deploy to TARGET the commit of STACK's last successful update (gitops-infra promote dev prod).

    The result carries the evidence checked: the commit, the update's age, and with --require-no-drift
    and --require-healthy, the drift answer and Flux's revisions and Ready states. A refusal names the
    check that failed and what it found.
    """
    invocation.confirm(f"Deploy stack {invocation.stack!r}'s last update to stack {target!r}?", yes)
    with invocation.activity("Promoting"):
        result = automation.promote(
            invocation.stack,
            target,
            options=invocation.options(lock_wait=lock_wait, progress=True),
            require_no_drift=require_no_drift,
            require_healthy=require_healthy,
            max_age=max_age,
            message=message,
        )
    invocation.emit(result, lambda out: print_promotion(out, result))
    return EXIT_OK


@main.command()
@command
@message_option
@lock_wait_option
def refresh(invocation: Invocation, message: str | None, lock_wait: float) -> int:
    """Write the real state of STACK's resources into its state."""
    with invocation.activity("Refreshing"):
        result = automation.refresh(
            invocation.stack, options=invocation.options(lock_wait=lock_wait, progress=True), message=message
        )
    invocation.emit(result, lambda out: print_refresh(out, invocation.stack, result))
    return EXIT_OK


@main.command()
@command
@click.argument("commit", default=automation.PREVIOUS)
@click.option("--yes", "-y", is_flag=True, help="Roll back without asking (and without a preview first).")
@click.option("--preview-only", is_flag=True, help="Only show what the rollback would change.")
@message_option
@lock_wait_option
def rollback(
    invocation: Invocation, commit: str, yes: bool, preview_only: bool, message: str | None, lock_wait: float
) -> int:
    """Roll STACK back to COMMIT (a sha, tag or ref; default: the previous deployed commit).

    On a terminal it first shows the preview of that commit and asks; --yes applies at once.
    """
    question = f"Roll stack {invocation.stack!r} back to {commit!r}?"
    if preview_only or not yes:
        if not preview_only:
            invocation.confirm(question, yes=False, ask=False)  # refuse before any work without a terminal
        with invocation.activity("Previewing the rollback of"):
            preview = automation.rollback_to_commit(
                invocation.stack, commit, options=invocation.options(lock_wait=lock_wait), preview_only=True
            )
        title = f"Rollback of {invocation.stack} to {commit}"
        if preview_only:
            invocation.emit(preview, lambda out: print_preview(out, f"{title} (preview)", preview))
            return EXIT_OK
        print_preview(invocation.console, f"{title} would do", preview)
        invocation.confirm(question, yes=False)
    with invocation.activity("Rolling back"):
        result = automation.rollback_to_commit(
            invocation.stack,
            commit,
            options=invocation.options(lock_wait=lock_wait, progress=True),
            message=message,
        )
    invocation.emit(result, lambda out: print_update(out, "Rolled back", result))
    return EXIT_OK


@main.command()
@command
def history(invocation: Invocation) -> int:
    """List STACK's deployments, newest first, with the commit each ran from."""
    deployments = automation.history(invocation.stack, options=invocation.options())
    invocation.emit(deployments, lambda out: print_history(out, deployments))
    return EXIT_OK


@main.command("switch-engine")
@command
@click.option("--yes", "-y", is_flag=True, help="Switch without asking.")
@message_option
@lock_wait_option
def switch_engine(invocation: Invocation, yes: bool, message: str | None, lock_wait: float) -> int:
    """Hand STACK's fleet to the GitOps engine its gitops.engine now names (from Flux to Argo CD).

    Flux's root is suspended and orphans what it applied, then one update brings Argo CD and removes
    Flux: what the fleet runs stays up. An up with gitops.engine changed is refused; this is the way.
    """
    invocation.confirm(f"Hand stack {invocation.stack!r}'s fleet to the engine its config names?", yes)
    with invocation.activity("Switching"):
        result = automation.switch_engine(
            invocation.stack, options=invocation.options(lock_wait=lock_wait, progress=True), message=message
        )
    invocation.emit(result, lambda out: print_update(out, "Switched", result))
    return EXIT_OK


@main.command()
@command
@click.option("--yes", "-y", is_flag=True, help="Recover without asking.")
@click.option("--force", is_flag=True, help="Even if the lock's update still runs on this machine.")
def recover(invocation: Invocation, yes: bool, force: bool) -> int:
    """Clear what a dead update left on STACK (lock, pending operations, debris), then refresh it.

    If STACK's checkpoint cannot be read (a full disk cut it short), the newest intact copy from the
    backend's history is restored, the broken file kept aside: with --yes, or when you answer yes.
    """
    invocation.confirm(f"Clear the lock and pending operations of stack {invocation.stack!r}?", yes)
    options = invocation.options(progress=True)
    try:
        with invocation.activity("Recovering"):
            result = automation.recover(
                invocation.stack, options=options, force=force, restore_checkpoint=yes
            )
    except CheckpointError as exc:
        if exc.candidate is None:
            raise
        invocation.confirm(f"{exc} Restore it?", yes=False)
        with invocation.activity("Recovering"):
            result = automation.recover(
                invocation.stack, options=options, force=force, restore_checkpoint=True
            )
    invocation.emit(result, lambda out: print_recovery(out, invocation.stack, result))
    return EXIT_OK
