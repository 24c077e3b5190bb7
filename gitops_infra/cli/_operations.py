"""The commands on one stack: preview, up, promote, refresh, rollback, destroy, history and recover.

Each parses its arguments, calls one library function and renders the result; the text and Markdown
renderings of their results sit here, beside them.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from .. import automation
from ..checks import format_duration
from ..errors import CheckpointError, OperationFailedError
from ._app import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_PENDING,
    CliError,
    Fleet,
    Invocation,
    changes_line,
    checked_stack,
    command,
    create_option,
    echo,
    fleet_command,
    formats,
    lock_wait_option,
    main,
    message_option,
    policy_packs_option,
)
from ._fleet import gitops_markdown, namer
from ._markdown import Plain, cell, code, counts, details, table, word
from ._text import one_line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "DrainPrinter",
    "destroy_markdown",
    "failed_destroy_markdown",
    "fleet_preview_markdown",
    "preview_markdown",
    "print_fleet_preview",
    "print_preview",
    "print_update",
]


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


def print_fleet_preview(out: Console, found: automation.FleetPreview) -> None:
    shown = namer(found.stacks)
    if not found.stacks:
        out.print(f"no stacks in shard {found.shard}" if found.shard else "no stacks")
    for previewed in found.stacks:
        if previewed.error is not None:
            error = one_line(f"{previewed.error.type}: {previewed.error.message}")
            out.print(f"{one_line(shown(previewed))}: error: {error}")
        elif previewed.result is not None:
            out.print(f"{shown(previewed)}: {changes_line(dict(previewed.result.changes))}")


def fleet_preview_markdown(found: automation.FleetPreview) -> str:
    """Previews of many stacks as Markdown: one row a stack, then each one's steps or error folded."""
    shown = namer(found.stacks)
    title = f"shard {code(found.shard)} of the fleet" if found.shard else "every stack"
    rows = [
        (
            shown(p),
            Plain(f"error: {word(p.error.type)}")
            if p.error is not None
            else changes_line(dict(p.result.changes) if p.result else {}),
        )
        for p in found.stacks
    ]
    lines = [f"### Preview of {title}", "", *table(["stack", "result"], rows)]
    body: list[str] = []
    for p in found.stacks:
        if p.error is not None:
            body += [f"{code(shown(p))}: {code(p.error.message)}", ""]
        elif p.result is not None and p.result.steps:
            steps = [(word(step.op), code(step.urn), ", ".join(step.keys)) for step in p.result.steps]
            body += [code(shown(p)), "", *table(["operation", "resource", "changed"], steps), ""]
    if body:
        lines += details("details", body[:-1])
    return "\n".join(lines) + "\n"


def print_preview(out: Console, title: str, result: automation.PreviewResult) -> None:
    for step in result.steps:
        keys = f"  ({', '.join(step.keys)})" if step.keys else ""
        out.print(f"{step.op:<8} {step.urn}{keys}")
    out.print(f"{title}: {changes_line(dict(result.changes))}")


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


def _positive_duration(_ctx: click.Context, _param: click.Parameter, value: str | None) -> timedelta | None:
    from ..checks import parse_duration

    if value is None:
        return None
    try:
        age = parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if age <= timedelta(0):
        raise click.BadParameter(f"{value!r} is not a positive duration")
    return age


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
    callback=_positive_duration,
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

    def human(out: Console) -> None:
        print_update(out, "Promoted to", result)
        evidence = result.evidence
        if evidence is None:
            return
        age = format_duration(timedelta(seconds=evidence.age_seconds or 0))
        out.print(
            f"  evidence: {evidence.source} version {evidence.version} of {evidence.commit[:12]}, {age} old"
        )
        if evidence.drift is not None:
            out.print(f"  evidence: {'drifted' if evidence.drift else 'no drift'}")
        if evidence.gitops is not None:
            for source in evidence.gitops.sources:
                out.print("  evidence: " + one_line(f"{source.shown} Ready at {source.revision}"))
            for sync in evidence.gitops.syncs:
                out.print("  evidence: " + one_line(f"{sync.shown} Ready, applied {sync.applied_revision}"))

    invocation.emit(result, human)
    return EXIT_OK


def promotion_markdown(result: automation.PromotionResult) -> str:
    """A promotion as a pull request comment: what was deployed where, and the evidence it was allowed on."""
    commit = f" {code((result.commit or '')[:12])}" if result.commit else ""
    lines = [f"### Promoted{commit} to {code(result.stack)} (version {result.version})", ""]
    lines += counts(dict(result.changes))
    evidence = result.evidence
    if evidence is not None:
        age = format_duration(timedelta(seconds=evidence.age_seconds or 0))
        rows: list[tuple[Any, ...]] = [
            (Plain("source"), evidence.source),
            (Plain("commit"), evidence.commit),
            (Plain("source update"), Plain(f"version {evidence.version}")),
            (
                Plain("ended"),
                evidence.updated_at.isoformat(timespec="seconds") if evidence.updated_at else "",
            ),
            (Plain("age"), Plain(age)),
        ]
        if evidence.max_age_seconds is not None:
            rows.append(
                (Plain("max age"), Plain(format_duration(timedelta(seconds=evidence.max_age_seconds))))
            )
        if evidence.drift is not None:
            rows.append((Plain("IaC drift"), Plain("drifted" if evidence.drift else "none")))
        lines += ["", "Evidence:", "", *table(["check", "found"], rows)]
        if evidence.gitops is not None:
            lines += ["", *gitops_markdown(evidence.gitops)]
    return "\n".join(lines) + "\n"


def print_update(out: Console, verb: str, result: automation.UpResult | automation.DestroyResult) -> None:
    commit = f" from {result.commit[:12]}" if result.commit else ""
    changes = changes_line(dict(result.changes), applied=True)
    out.print(f"{verb} {result.stack} (version {result.version}{commit}): {changes}")
    if isinstance(result, automation.DestroyResult):
        print_teardown(out, result.drain, result.sweeps)
        return
    for key, value in sorted(result.outputs.items()):
        out.print(f"  {key}: {json.dumps(value)}")


def print_teardown(
    out: Console, drain: automation.DrainResult | None, sweeps: tuple[automation.SweepResult, ...] = ()
) -> None:
    """What the drain did (or would do), and what each sweep found left behind."""
    if drain is not None:
        if drain.skipped:
            out.print(f"Drain: skipped: {drain.skipped}")
        else:
            verb = ("would suspend", "would delete") if drain.planned else ("suspended", "deleted")
            out.print(f"Drain: {verb[0]} {len(drain.suspended)}, {verb[1]} {len(drain.deleted)}")
            for obj in drain.suspended:
                out.print(f"  {verb[0]:<13} {obj}")
            for obj in drain.deleted:
                out.print(f"  {verb[1]:<13} {obj}")
    for sweep in sweeps:
        account = f" (account {sweep.account})" if sweep.account else ""
        where = f"cluster {sweep.cluster} in {sweep.region}{account}"
        if sweep.error is not None:
            out.print(f"Sweep of {where}: could not look: {sweep.error}", style="red")
        elif not sweep.orphans:
            out.print(f"Sweep of {where}: nothing left behind")
        else:
            out.print(f"Sweep of {where}: {len(sweep.orphans)} left behind (not deleted):", style="red")
            for orphan in sweep.orphans:
                out.print(f"  {orphan.type:<36} {orphan.arn}  ({orphan.matched})")


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
    invocation.emit(
        result,
        lambda out: out.print(
            f"Refreshed {invocation.stack}: {changes_line(dict(result.changes), applied=True)}"
        ),
    )
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
@formats
@click.option("--yes", "-y", is_flag=True, help="Destroy without asking.")
@click.option("--confirm", "confirm_name", metavar="STACK", help="Repeat a prod stack's name to destroy it.")
@click.option("--preview-only", is_flag=True, help="Only show what the drain and the destroy would delete.")
@click.option(
    "--no-drain",
    is_flag=True,
    help="Do not drain the stack's cluster first (AWS resources its objects made may be left behind).",
)
@click.option(
    "--drain-timeout",
    default="10m",
    show_default=True,
    callback=_positive_duration,
    metavar="DURATION",
    help="How long the drain may take in all (a Go duration: 90s, 10m, 1h).",
)
@message_option
@lock_wait_option
def destroy(
    invocation: Invocation,
    yes: bool,
    confirm_name: str | None,
    preview_only: bool,
    no_drain: bool,
    drain_timeout: timedelta,
    message: str | None,
    lock_wait: float,
) -> int:
    """Delete every resource of STACK (its config and history stay). A prod stack needs --confirm STACK.

    A stack that made its cluster is drained first: Flux suspended, then its Ingresses and Gateways,
    LoadBalancer Services, what mounts its PersistentVolumeClaims, the claims, and Karpenter's nodes
    deleted and gone, so that the AWS controllers delete what they made for them. After the destroy,
    the AWS resources still tagged for the cluster are listed as orphans: exit 2 when there are any (or
    the sweep could not look). The sweep reads the cluster's account as the stack's AWS provider reaches
    it (aws:profile, then aws:assumeRoles). A destroy that fails is swept too: its findings come with the
    error (exit 1).
    """
    progress = not preview_only and not (invocation.json or invocation.markdown)
    options = invocation.options(lock_wait=lock_wait, progress=progress)
    timeout = drain_timeout.total_seconds()
    if preview_only:
        with invocation.activity("Previewing the destroy of"):
            preview = automation.destroy(
                invocation.stack,
                options=options,
                preview_only=True,
                drain=not no_drain,
                drain_timeout=timeout,
            )

        def human(out: Console) -> None:
            print_preview(out, f"Destroy of {invocation.stack} (preview)", preview)
            print_teardown(out, preview.drain)

        invocation.emit(preview, human)
        return EXIT_OK
    invocation.confirm(f"Delete every resource of stack {invocation.stack!r}?", yes)
    if no_drain:
        invocation.warn("--no-drain: the cluster is not drained; AWS resources its objects made may be left")
    on_drain = DrainPrinter(invocation.console) if progress else None
    try:
        with invocation.activity("Destroying"):
            result = automation.destroy(
                invocation.stack,
                options=options,
                message=message,
                confirm=confirm_name,
                drain=not no_drain,
                drain_timeout=timeout,
                on_drain=on_drain,
            )
    except OperationFailedError as exc:
        if exc.sweeps:  # the error itself follows, from the error boundary (with them in --json's)
            _failed_destroy(invocation, exc)
        raise
    invocation.emit(result, lambda out: print_update(out, "Destroyed", result))
    return EXIT_OK if result.clean else EXIT_PENDING


def _failed_destroy(invocation: Invocation, exc: OperationFailedError) -> None:
    """What the sweep found after a destroy that failed: text, or the Markdown of a job summary."""
    if invocation.markdown:
        invocation.stdout_closed = not echo(failed_destroy_markdown(exc), nl=False)
    elif not invocation.json:
        invocation.console.print(f"Destroy of {invocation.stack} failed; the sweep after it:")
        print_teardown(invocation.console, None, exc.sweeps)


class DrainPrinter:
    """One line per object as the drain suspends, deletes and sees it gone."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: str, obj: automation.KubeObject) -> None:
        self.console.print(f"  drain: {event:<9} {obj}")


@main.command()
@command
def history(invocation: Invocation) -> int:
    """List STACK's deployments, newest first, with the commit each ran from."""
    deployments = automation.history(invocation.stack, options=invocation.options())

    def human(out: Console) -> None:
        for d in deployments:
            commit = d.commit[:12] if d.commit else "-"
            # The engine's `git.dirty`: that run's code was not all in the commit (what promote refuses).
            dirty = "dirty" if d.dirty else ""
            when = f"{d.start_time:%Y-%m-%d %H:%M:%S}"
            out.print(
                f"{d.version:>4}  {d.kind:<8} {d.result:<10} {when}  {commit:<12} {dirty:<5}  "
                + one_line(d.message)
            )

    invocation.emit(deployments, human)
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

    def human(out: Console) -> None:
        if result.restored_checkpoint:
            out.print(
                f"Restored {result.restored_checkpoint}; the unreadable checkpoint is kept at "
                f"{result.broken_checkpoint_kept_at}"
            )
        for tree in result.removed_worktrees:
            out.print(f"Removed the stale rollback worktree {tree}")
        if result.stale_lock:
            out.print(f"Cleared the lock of {result.stale_lock}")
        for lock in result.damaged_locks:
            out.print(f"Cleared a damaged lock: {lock}")
        if not (result.stale_lock or result.damaged_locks):
            out.print("No stale lock found")
        for pending in result.pending:
            out.print(f"  dropped pending {pending}")
        out.print(f"Refreshed {invocation.stack}: {changes_line(result.changes, applied=True)}")

    invocation.emit(result, human)
    return EXIT_OK


def preview_markdown(result: automation.PreviewResult) -> str:
    """A preview (of ``up``, a rollback or a destroy) as Markdown: the counts, then the steps folded."""
    lines = [f"### Preview of {code(result.stack)}", "", *counts(result.changes)]
    if result.steps:
        rows = [(word(step.op), code(step.urn), ", ".join(step.keys)) for step in result.steps]
        lines += details(f"{len(result.steps)} steps", table(["operation", "resource", "changed"], rows))
    if isinstance(result, automation.DestroyPreview) and result.drain is not None:
        lines += ["", *teardown_markdown(result.drain)]
    return "\n".join(lines) + "\n"


def destroy_markdown(result: automation.DestroyResult) -> str:
    """A destroy as Markdown: the counts, the drain, and what each sweep found left behind."""
    commit = f" from {code(result.commit[:12])}" if result.commit else ""
    lines = [f"### Destroyed {code(result.stack)} (version {result.version}){commit}", ""]
    lines += counts(dict(result.changes))
    lines += ["", *teardown_markdown(result.drain, result.sweeps)]
    return "\n".join(lines).rstrip("\n") + "\n"


def failed_destroy_markdown(exc: OperationFailedError) -> str:
    """A failed destroy as Markdown: the error, then what each sweep found left behind."""
    lines = [f"### Destroy of {code(exc.stack)} failed", "", code(f"{type(exc).__name__}: {exc}"), ""]
    lines += teardown_markdown(None, exc.sweeps)
    return "\n".join(lines).rstrip("\n") + "\n"


def teardown_markdown(
    drain: automation.DrainResult | None, sweeps: tuple[automation.SweepResult, ...] = ()
) -> list[str]:
    lines: list[str] = []
    if drain is not None and drain.skipped:
        lines += [f"Drain skipped: {cell(drain.skipped)}", ""]
    elif drain is not None:
        label = "would" if drain.planned else "done"
        rows: list[tuple[Any, ...]] = [
            (Plain("suspend"), word(o.kind), code(o.namespace), code(o.name)) for o in drain.suspended
        ]
        rows += [(Plain("delete"), word(o.kind), code(o.namespace), code(o.name)) for o in drain.deleted]
        title = f"Drain ({label}): {len(drain.suspended)} suspended, {len(drain.deleted)} deleted"
        lines += [f"#### {title}", ""]
        lines += table(["step", "kind", "namespace", "name"], rows) if rows else ["Nothing to drain."]
        lines.append("")
    for sweep in sweeps:
        account = f" (account {code(sweep.account)})" if sweep.account else ""
        where = f"{code(sweep.cluster)} in {code(sweep.region)}{account}"
        if sweep.error is not None:
            lines += [f"#### Sweep of {where}: could not look", "", cell(sweep.error), ""]
        elif not sweep.orphans:
            lines += [f"#### Sweep of {where}: nothing left behind", ""]
        else:
            found = [(code(o.type), code(o.arn), code(o.matched)) for o in sweep.orphans]
            lines += [f"#### Sweep of {where}: {len(sweep.orphans)} left behind", ""]
            lines += [*table(["type", "ARN", "found by"], found), ""]
    return lines
