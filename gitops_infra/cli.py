"""``gitops-infra``: a thin command line over :mod:`gitops_infra.automation` for CI jobs and terminals.

Each command parses its arguments, calls one library function and renders the result. Exit codes follow
``terraform plan -detailed-exitcode``:

- ``0``: success (and, for ``drift``, no drift);
- ``1``: an error, printed as ``ErrorType: message`` with no traceback;
- ``2``: drift found (``drift``), or changes pending (``preview --expect-no-changes``);
- ``128 + N``: stopped by signal N (130 for SIGINT, 143 for SIGTERM). The engine is cancelled the way
  Ctrl-C cancels ``pulumi``: in-flight operations finish and the stack's lock is released.

On a terminal, engine events drive a live progress display; without one, each finished step is a plain
line. With ``--json``, every exit writes exactly one JSON document on stdout: the result, or
``{"error": {"type": ..., "message": ...}}`` for any failure, usage errors included.

If stdout is closed early (``gitops-infra up dev --yes | head -1``), output stops there but the operation
runs to its end and releases the stack's lock; the command then exits 1 with a message on stderr.

The CLI starts without the engine: ``--help`` and argument errors import click and nothing heavy. The
library (``pulumi.automation``, the provider SDKs) and rich load when a command runs, as it needs them.
"""

from __future__ import annotations

import functools
import json
import signal
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import click

from . import automation
from .automation.constants import DEFAULT_PARALLEL, PREVIOUS
from .automation.stack_name import parse_stack_name
from .errors import CheckpointError, GitOpsInfraError, StackNameError
from .policy import POLICY_PACK

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from . import contract
    from ._console import CliConsole
    from .automation.stack_target import EventCallback

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PENDING", "main"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_PENDING = 2
"""Drift found, or changes pending under ``preview --expect-no-changes``."""

_LOG_WIDTH = 1000


class CliError(click.ClickException):
    """A failure the CLI reports as ``<kind>: <message>`` on stderr (and as JSON with ``--json``)."""

    def __init__(self, kind: str, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.kind = kind
        self.exit_code = exit_code  # type: ignore[misc]  # click reads it per instance as well


def _echo(text: str, *, err: bool = False, nl: bool = True) -> bool:
    """``click.echo``, except that a closed stream is the end of output: False when it was closed."""
    try:
        click.echo(text, err=err, nl=nl)
    except BrokenPipeError:
        from ._console import silence

        silence(sys.stderr if err else sys.stdout)
        return False
    return True


def _json(result: Any) -> str:
    from .automation.results import to_jsonable

    return json.dumps(to_jsonable(result), indent=2, sort_keys=True)


@dataclass
class Invocation:
    """What every command shares: the stack, where it runs, and how output is rendered."""

    stack: str
    cwd: Path | None
    json: bool
    console: CliConsole
    stdout_closed: bool = False
    markdown: bool = False
    """Render the result as Markdown (``--format markdown``), for a pull request or a job summary."""

    def options(self, *, lock_wait: float = 0.0, progress: bool = False) -> automation.StackOptions:
        """Options for the library call; ``progress`` prints each finished step as it happens."""
        on_event: EventCallback | None = None
        if progress and not self.json:
            from ._console import StepPrinter

            on_event = StepPrinter(self.console)
        return automation.StackOptions(work_dir=self.cwd, on_event=on_event, lock_wait=lock_wait)

    def activity(self, what: str) -> AbstractContextManager[Any]:
        """A spinner on a terminal while the engine works; nothing otherwise."""
        if self.json or not self.console.is_terminal:
            return nullcontext()
        return self.console.status(f"{what} {self.stack}…")

    def emit(self, result: Any, human: Callable[[Console], None]) -> None:
        if self.markdown:
            self.stdout_closed = not _echo(automation.to_markdown(result), nl=False)
        elif self.json:
            self.stdout_closed = not _echo(_json(result))
        else:
            human(self.console)

    @property
    def output_lost(self) -> bool:
        """True when stdout was closed before everything was written to it."""
        return self.stdout_closed or (self.console.closed and not self.json)

    def confirm(self, question: str, yes: bool, *, ask: bool = True) -> None:
        """Go on with ``--yes``; else ask on a terminal (``ask=False`` only checks that one is there)."""
        if yes:
            return
        if not sys.stdin.isatty():
            raise CliError("UsageError", f"{question} Pass --yes to proceed without a terminal to ask on.")
        if ask and not click.confirm(question, default=False, err=True):
            raise click.Abort()


@overload
def _checked_stack(_ctx: click.Context, _param: click.Parameter, value: str) -> str: ...


@overload
def _checked_stack(_ctx: click.Context, _param: click.Parameter, value: None) -> None: ...


def _checked_stack(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """STACK, checked as the Python API checks it: an empty name must never mean "the selected stack"."""
    if value is None:  # an optional stack option left out
        return None
    try:
        parse_stack_name(value)
    except StackNameError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _fleet_command(fn: Callable[..., int]) -> Callable[..., None]:
    """``_command`` for a command that takes STACK or ``--all`` (every stack with a Pulumi.<stack>.yaml),
    checked ``--parallel N`` at a time; ``fn`` gets ``every`` and ``parallel``."""

    @functools.wraps(fn)
    def checked(inv: Invocation, every: bool, parallel: int, **kwargs: Any) -> int:
        if every == bool(inv.stack):
            raise CliError("UsageError", "give either STACK or --all")
        return fn(inv, every=every, parallel=parallel, **kwargs)

    command = _command(checked, stack_required=False)
    command = click.option("--all", "every", is_flag=True, help="Every stack of the project.")(command)
    return click.option(
        "--parallel",
        type=click.IntRange(min=1),
        default=DEFAULT_PARALLEL,
        show_default=True,
        help="With --all: how many stacks to check at once, each in its own engine process.",
    )(command)


def _command(fn: Callable[..., int], *, stack_required: bool = True) -> Callable[..., None]:
    """Common arguments (STACK, --cwd, --json), one error boundary, and the exit code."""

    @click.argument("stack", required=stack_required, callback=_checked_stack)
    @click.option(
        "--cwd",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The Pulumi project directory (default: found from the current directory).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
    @functools.wraps(fn)
    def wrapper(stack: str | None, cwd: Path | None, as_json: bool, **kwargs: Any) -> None:
        # Progress and prompts go to stdout on a terminal, and never into a --json document.
        from ._console import CliConsole

        console = CliConsole(stderr=as_json, highlight=False, markup=False, soft_wrap=True)
        if not console.is_terminal:
            # A log has no width to fit: never crop a line (rich assumes 80 columns otherwise).
            console.width = _LOG_WIDTH
        invocation = Invocation(stack=stack or "", cwd=cwd, json=as_json, console=console)
        with automation.cancel_on_signals() as interruption:
            try:
                code = fn(invocation, **kwargs)
                if interruption.signum:  # the engine stopped early but cleanly (`drift --all` goes on)
                    code = interruption.exit_code
            except GitOpsInfraError as exc:
                code = interruption.exit_code if interruption.signum else EXIT_ERROR
                raise CliError(type(exc).__name__, str(exc), code) from exc
            except KeyboardInterrupt:
                code = interruption.exit_code if interruption.signum else 128 + signal.SIGINT
                raise CliError("Interrupted", "stopped before it finished", code) from None
        if invocation.output_lost:
            command = click.get_current_context().info_name
            raise CliError(
                "OutputClosed",
                f"stdout was closed before `{command}` finished writing its output; `{command}` itself "
                "ran to its end",
            )
        sys.exit(code)

    return wrapper


# Click 8.2+ raises this for a group called with no command; older versions printed the help themselves.
_HELP_INSTEAD: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",) if hasattr(click.exceptions, name)
)


def _wants_json(args: list[str]) -> bool:
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _report(kind: str, message: str, *, as_json: bool) -> None:
    """The one place a failure is written: ``kind: message`` on stderr, and the JSON document."""
    if as_json:
        _echo(json.dumps({"error": {"type": kind, "message": message}}, indent=2, sort_keys=True))
    _echo(f"{kind}: {message}", err=True)


class _Cli(click.Group):
    """Every failure, a usage error included, exits through :func:`_report` with one exit code.

    Click's usage errors would exit 2, which here means "changes pending": they exit 1 instead. With
    ``--json`` anywhere among the options, each of them is a JSON document on stdout too.
    """

    def main(  # type: ignore[override]
        self, args: list[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = _wants_json(argv)
        extra.pop("standalone_mode", None)
        try:
            return super().main(argv, prog_name, standalone_mode=False, **extra)
        except CliError as exc:
            _report(exc.kind, exc.format_message(), as_json=as_json)
            sys.exit(exc.exit_code)
        except _HELP_INSTEAD as exc:  # `gitops-infra` alone: the help, as before click 8.2
            click.echo(exc.format_message())
            sys.exit(EXIT_OK)
        except click.UsageError as exc:
            _report("UsageError", exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            _report(type(exc).__name__, exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.Abort:
            _report("Aborted", "nothing was changed", as_json=as_json)
            sys.exit(EXIT_ERROR)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gitops-infra")
def main() -> None:
    """Preview, apply, check for drift and roll back GitOps platform stacks."""


def _checked_policy_packs(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    """Each ``--policy-pack``: ``gitops-infra`` (the bundled pack), or a directory that exists."""
    for pack in value:
        if pack != POLICY_PACK and not (pack and Path(pack).is_dir()):  # Path('') would be '.'
            raise click.BadParameter(f"{pack!r} is not a directory, nor {POLICY_PACK!r} (the bundled pack)")
    return value


_policy_packs = click.option(
    "--policy-pack",
    "policy_packs",
    multiple=True,
    metavar="DIR|gitops-infra",
    callback=_checked_policy_packs,
    help="A CrossGuard policy pack directory to enforce, or gitops-infra for the bundled one (repeatable).",
)
_create = click.option("--create", is_flag=True, help="Create the stack if it does not exist.")
_lock_wait = click.option(
    "--lock-wait",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Seconds to wait for another update's lock before failing.",
)
_message = click.option("--message", "-m", help="The update's message in the stack history.")


def _formats(fn: Callable[..., int]) -> Callable[..., int]:
    """``--format text|markdown``: Markdown is for a pull request comment or a CI job summary."""

    @click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "markdown"]),
        default="text",
        show_default=True,
        help="markdown: a summary table and collapsible details, for a pull request or job summary.",
    )
    @functools.wraps(fn)
    def wrapper(inv: Invocation, output_format: str, **kwargs: Any) -> int:
        if output_format == "markdown" and inv.json:
            raise CliError("UsageError", "--json and --format markdown each print the whole output: pick one")
        inv.markdown = output_format == "markdown"
        return fn(inv, **kwargs)

    return wrapper


_DONE = {"create": "created", "update": "updated", "delete": "deleted", "replace": "replaced"}


def _changes_line(changes: dict[str, int], *, applied: bool = False) -> str:
    def phrase(op: str, count: int) -> str:
        if op == "same":
            return f"{count} unchanged"
        return f"{count} {_DONE.get(op, op)}" if applied else f"{count} to {op}"

    return ", ".join(phrase(op, count) for op, count in sorted(changes.items())) or "no resources"


@main.command()
@_command
@_formats
@click.option("--refresh", is_flag=True, help="Read the real state of resources first.")
@click.option("--expect-no-changes", is_flag=True, help="Exit 2 when the preview has changes.")
@_policy_packs
@_create
def preview(
    inv: Invocation, refresh: bool, expect_no_changes: bool, policy_packs: tuple[str, ...], create: bool
) -> int:
    """Show what `up` would change in STACK."""
    with inv.activity("Previewing"):
        result = automation.preview(
            inv.stack, options=inv.options(), refresh=refresh, policy_packs=policy_packs, create=create
        )

    inv.emit(result, lambda out: _print_preview(out, f"Preview of {inv.stack}", result))
    return EXIT_PENDING if expect_no_changes and result.has_changes else EXIT_OK


def _print_preview(out: Console, title: str, result: automation.PreviewResult) -> None:
    for step in result.steps:
        keys = f"  ({', '.join(step.keys)})" if step.keys else ""
        out.print(f"{step.op:<8} {step.urn}{keys}")
    out.print(f"{title}: {_changes_line(dict(result.changes))}")


@main.command()
@_command
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@click.option("--refresh", is_flag=True, help="Read the real state of resources first.")
@_message
@_policy_packs
@_create
@_lock_wait
@click.option(
    "--require-promoted-from",
    "promoted_from",
    metavar="SOURCE",
    callback=_checked_stack,
    help="Refuse unless the work tree's commit has a successful update on stack SOURCE.",
)
def up(
    inv: Invocation,
    yes: bool,
    refresh: bool,
    message: str | None,
    policy_packs: tuple[str, ...],
    create: bool,
    lock_wait: float,
    promoted_from: str | None,
) -> int:
    """Apply the program to STACK."""
    inv.confirm(f"Apply the program to stack {inv.stack!r}?", yes)
    with inv.activity("Updating"):
        result = automation.up(
            inv.stack,
            options=inv.options(lock_wait=lock_wait, progress=True),
            message=message,
            policy_packs=policy_packs,
            refresh=refresh,
            create=create,
            require_promoted_from=promoted_from,
        )
    inv.emit(result, lambda out: _print_update(out, "Updated", result))
    return EXIT_OK


@main.command()
@_command
@click.argument("target", callback=_checked_stack)
@click.option("--yes", "-y", is_flag=True, help="Promote without asking.")
@click.option("--require-no-drift", is_flag=True, help="Refuse when the source stack has drifted.")
@_message
@_lock_wait
def promote(
    inv: Invocation, target: str, yes: bool, require_no_drift: bool, message: str | None, lock_wait: float
) -> int:
    """Deploy to TARGET the commit of STACK's last successful update (gitops-infra promote dev prod)."""
    inv.confirm(f"Deploy stack {inv.stack!r}'s last update to stack {target!r}?", yes)
    with inv.activity("Promoting"):
        result = automation.promote(
            inv.stack,
            target,
            options=inv.options(lock_wait=lock_wait, progress=True),
            require_no_drift=require_no_drift,
            message=message,
        )
    inv.emit(result, lambda out: _print_update(out, "Promoted to", result))
    return EXIT_OK


def _print_update(out: Console, verb: str, result: automation.UpResult | automation.DestroyResult) -> None:
    commit = f" from {result.commit[:12]}" if result.commit else ""
    changes = _changes_line(dict(result.changes), applied=True)
    out.print(f"{verb} {result.stack} (version {result.version}{commit}): {changes}")
    outputs = result.outputs if isinstance(result, automation.UpResult) else {}  # a destroy leaves none
    for key, value in sorted(outputs.items()):
        out.print(f"  {key}: {json.dumps(value)}")


@main.command()
@_command
@_message
@_lock_wait
def refresh(inv: Invocation, message: str | None, lock_wait: float) -> int:
    """Write the real state of STACK's resources into its state."""
    with inv.activity("Refreshing"):
        result = automation.refresh(
            inv.stack, options=inv.options(lock_wait=lock_wait, progress=True), message=message
        )
    inv.emit(
        result,
        lambda out: out.print(f"Refreshed {inv.stack}: {_changes_line(dict(result.changes), applied=True)}"),
    )
    return EXIT_OK


@main.command()
@_fleet_command
@_formats
def drift(inv: Invocation, every: bool, parallel: int) -> int:
    """Compare STACK (or --all stacks) with reality without writing anything; exit 2 when one drifted.

    With --all, one line per stack; a stack that cannot be checked is reported and the others go on
    (exit 1 when one errored and none drifted).
    """
    if every:
        with inv.activity("Checking drift of"):
            fleet = automation.detect_drift_all(options=inv.options(), parallel=parallel)
        inv.emit(fleet, lambda out: _print_fleet_drift(out, fleet))
        if fleet.has_drift:
            return EXIT_PENDING
        return EXIT_ERROR if fleet.has_errors else EXIT_OK
    with inv.activity("Checking drift of"):
        report = automation.detect_drift(inv.stack, options=inv.options())

    def human(out: Console) -> None:
        for resource in report.resources:
            out.print(f"{resource.kind.value:<8} {resource.urn}")
            for diff in resource.diffs:
                out.print(f"    {diff.path}: {json.dumps(diff.recorded)} -> {json.dumps(diff.actual)}")
        out.print(
            f"{inv.stack}: {len(report.resources)} drifted" if report.has_drift else f"{inv.stack}: no drift"
        )

    inv.emit(report, human)
    return EXIT_PENDING if report.has_drift else EXIT_OK


def _print_fleet_drift(out: Console, fleet: automation.FleetDrift) -> None:
    for checked in fleet.stacks:
        if checked.error is not None:
            out.print(f"{checked.stack}: error: {checked.error.type}: {checked.error.message}")
        elif checked.report is not None and checked.report.has_drift:
            out.print(f"{checked.stack}: {len(checked.report.resources)} drifted")
        else:
            out.print(f"{checked.stack}: no drift")


@main.command()
@_fleet_command
@_formats
def status(inv: Invocation, every: bool, parallel: int) -> int:
    """Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock."""
    with inv.activity("Reading the status of"):
        if every:
            found = automation.status_all(options=inv.options(), parallel=parallel)
        else:
            found = (automation.status(inv.stack, options=inv.options()),)
    inv.emit(found if every else found[0], lambda out: _print_status(out, found))
    return EXIT_ERROR if any(s.error is not None for s in found) else EXIT_OK


def _print_status(out: Console, found: tuple[automation.StackStatus, ...]) -> None:
    for s in found:
        if s.error is not None:
            out.print(f"{s.stack}: error: {s.error.type}: {s.error.message}")
            continue
        lock = {None: "lock unknown", False: "unlocked", True: f"locked by {s.lock}"}[s.locked]
        if s.last is None:
            out.print(f"{s.stack}: never deployed; {lock}")
            continue
        last = s.last
        head = {None: "", True: ", HEAD", False: ", not HEAD"}[s.at_head]
        when = last.start_time.isoformat(timespec="seconds")
        commit = (last.commit or "no commit")[:12]
        out.print(
            f"{s.stack}: version {last.version} {last.kind} {last.result} at {when} from {commit}{head}; "
            f"{lock}; {last.message!r}"
        )


@main.command()
@_command
@click.argument("commit", default=PREVIOUS)
@click.option("--yes", "-y", is_flag=True, help="Roll back without asking (and without a preview first).")
@click.option("--preview-only", is_flag=True, help="Only show what the rollback would change.")
@_message
@_lock_wait
def rollback(
    inv: Invocation, commit: str, yes: bool, preview_only: bool, message: str | None, lock_wait: float
) -> int:
    """Roll STACK back to COMMIT (a sha, tag or ref; default: the previous deployed commit).

    On a terminal it first shows the preview of that commit and asks; --yes applies at once.
    """
    question = f"Roll stack {inv.stack!r} back to {commit!r}?"
    if preview_only or not yes:
        if not preview_only:
            inv.confirm(question, yes=False, ask=False)  # refuse before any work without a terminal
        with inv.activity("Previewing the rollback of"):
            preview = automation.rollback_to_commit(
                inv.stack, commit, options=inv.options(lock_wait=lock_wait), preview_only=True
            )
        title = f"Rollback of {inv.stack} to {commit}"
        if preview_only:
            inv.emit(preview, lambda out: _print_preview(out, f"{title} (preview)", preview))
            return EXIT_OK
        _print_preview(inv.console, f"{title} would do", preview)
        inv.confirm(question, yes=False)
    with inv.activity("Rolling back"):
        result = automation.rollback_to_commit(
            inv.stack, commit, options=inv.options(lock_wait=lock_wait, progress=True), message=message
        )
    inv.emit(result, lambda out: _print_update(out, "Rolled back", result))
    return EXIT_OK


@main.command()
@_command
@click.option("--yes", "-y", is_flag=True, help="Destroy without asking.")
@click.option("--confirm", "confirm_name", metavar="STACK", help="Repeat a prod stack's name to destroy it.")
@click.option("--preview-only", is_flag=True, help="Only show what would be deleted.")
@_message
@_lock_wait
def destroy(
    inv: Invocation,
    yes: bool,
    confirm_name: str | None,
    preview_only: bool,
    message: str | None,
    lock_wait: float,
) -> int:
    """Delete every resource of STACK (its config and history stay). A prod stack needs --confirm STACK."""
    options = inv.options(lock_wait=lock_wait, progress=not preview_only)
    if preview_only:
        with inv.activity("Previewing the destroy of"):
            preview = automation.destroy(inv.stack, options=options, preview_only=True)
        inv.emit(preview, lambda out: _print_preview(out, f"Destroy of {inv.stack} (preview)", preview))
        return EXIT_OK
    inv.confirm(f"Delete every resource of stack {inv.stack!r}?", yes)
    with inv.activity("Destroying"):
        result = automation.destroy(inv.stack, options=options, message=message, confirm=confirm_name)
    inv.emit(result, lambda out: _print_update(out, "Destroyed", result))
    return EXIT_OK


@main.command()
@_command
def history(inv: Invocation) -> int:
    """List STACK's deployments, newest first, with the commit each ran from."""
    deployments = automation.history(inv.stack, options=inv.options())

    def human(out: Console) -> None:
        for d in deployments:
            commit = d.commit[:12] if d.commit else "-"
            when = f"{d.start_time:%Y-%m-%d %H:%M:%S}"
            out.print(f"{d.version:>4}  {d.kind:<8} {d.result:<10} {when}  {commit}  {d.message}")

    inv.emit(deployments, human)
    return EXIT_OK


@main.command()
@_command
@click.option("--yes", "-y", is_flag=True, help="Recover without asking.")
@click.option("--force", is_flag=True, help="Even if the lock's update still runs on this machine.")
def recover(inv: Invocation, yes: bool, force: bool) -> int:
    """Clear what a dead update left on STACK (lock, pending operations, debris), then refresh it.

    If STACK's checkpoint cannot be read (a full disk cut it short), the newest intact copy from the
    backend's history is restored, the broken file kept aside: with --yes, or when you answer yes.
    """
    inv.confirm(f"Clear the lock and pending operations of stack {inv.stack!r}?", yes)
    options = inv.options(progress=True)
    try:
        with inv.activity("Recovering"):
            result = automation.recover(inv.stack, options=options, force=force, restore_checkpoint=yes)
    except CheckpointError as exc:
        if exc.candidate is None:
            raise
        inv.confirm(f"{exc} Restore it?", yes=False)
        with inv.activity("Recovering"):
            result = automation.recover(inv.stack, options=options, force=force, restore_checkpoint=True)

    def human(out: Console) -> None:
        if result.restored_checkpoint:
            out.print(
                f"Restored {result.restored_checkpoint}; the unreadable checkpoint is kept at "
                f"{result.broken_checkpoint_kept_at}"
            )
        for tree in result.removed_worktrees:
            out.print(f"Removed the stale rollback worktree {tree}")
        out.print(f"Cleared the lock of {result.stale_lock}" if result.stale_lock else "No stale lock found")
        for pending in result.pending:
            out.print(f"  dropped pending {pending}")
        out.print(f"Refreshed {inv.stack}: {_changes_line(result.changes, applied=True)}")

    inv.emit(result, human)
    return EXIT_OK


@main.command()
@_command
@_formats
def plan(inv: Invocation) -> int:
    """Run STACK's program offline under mocks and print the resources it would create.

    Needs no engine, cloud, credentials or passphrase.
    """
    result = automation.offline_plan(inv.stack, options=inv.options())
    inv.emit(result, lambda out: _print_plan(out, result))
    return EXIT_OK


_KEY_INPUTS_SHOWN = 4
_VALUE_WIDTH = 48


# What a reviewer of a plan looks for first: who can reach the cluster's API.
_FIRST_INPUTS = ("endpointPublicAccess", "endpointPrivateAccess", "publicAccessCidrs")


def _key_inputs(inputs: Mapping[str, Any]) -> str:
    """A few scalar inputs (or short lists of them), enough to tell resources apart at a glance."""
    shown = []
    ordered = sorted(inputs.items(), key=lambda item: item[0] not in _FIRST_INPUTS)
    for key, value in ordered:
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        short_list = strings and 0 < len(value) <= 2
        if (short_list or isinstance(value, str | int | float | bool)) and key not in ("apiVersion", "kind"):
            text = json.dumps(value)
            shown.append(f"{key}={text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + '…'}")
        if len(shown) == _KEY_INPUTS_SHOWN:
            break
    return "  ".join(shown)


def _print_plan(out: Console, result: automation.Plan) -> None:
    out.print(f"Offline plan of stack {result.stack} ({result.project}): {len(result.resources)} resources")
    out.print(result.note)
    if result.placeholders:
        out.print(f"Secrets planned with redacted placeholders: {', '.join(result.placeholders)}")
    children: dict[str | None, list[automation.PlannedResource]] = {}
    for resource in sorted(result.resources, key=lambda r: (r.type, r.name)):
        children.setdefault(resource.parent, []).append(resource)
    from rich.tree import Tree

    tree = Tree(f"pulumi:pulumi:Stack  {result.project}-{result.stack}")

    def add(branch: Tree, parent: str | None) -> None:
        for resource in children.get(parent, []):
            inputs = _key_inputs(resource.inputs)
            add(
                branch.add(f"{resource.type}  {resource.name}" + (f"  {inputs}" if inputs else "")),
                resource.urn,
            )

    add(tree, None)
    out.print(tree)
    out.print("Outputs:")
    for key, value in result.outputs.items():
        out.print(f"  {key}: {json.dumps(value)}")


# -- the policy pack -----------------------------------------------------------------------------------


@main.group(name="policy")
def policy_group() -> None:
    """The bundled CrossGuard policy pack (--policy-pack gitops-infra)."""


@policy_group.command(name="path")
def policy_path() -> None:
    """Print a directory holding the bundled pack, set to run on this gitops-infra's Python.

    For the raw CLI: pulumi preview --policy-pack "$(gitops-infra policy path)".
    """
    from .policy import pack_dir

    try:
        found = pack_dir()
    except GitOpsInfraError as exc:
        raise CliError(type(exc).__name__, str(exc)) from exc
    _echo(str(found))


# -- the environment contract --------------------------------------------------------------------------


@main.group(name="contract")
def contract_group() -> None:
    """The environment contract app teams read: its JSON Schema, and a check of a document."""


@contract_group.command()
def schema() -> None:
    """Print the JSON Schema of the environment ConfigMap's data."""
    from .contract import contract_schema

    _echo(json.dumps(contract_schema(), indent=2))


@contract_group.command()
@click.argument("file", type=click.File("rb"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def check(file: Any, as_json: bool) -> None:
    """Check FILE (a ConfigMap manifest, or its data alone; YAML or JSON; - for stdin).

    Exits 0 when it holds the contract, 1 when it does not.
    """
    name = str(getattr(file, "name", "-"))
    source = "<stdin>" if name in ("-", "<stdin>") else name
    try:
        text = file.read().decode("utf-8")
    except UnicodeDecodeError:
        raise CliError("ContractCheckError", f"{source}: not a text file (UTF-8 YAML or JSON)") from None
    from .contract import check_contract

    result = check_contract(text, source=source)
    if as_json:
        _echo(_json(result))
    else:
        _print_contract_check(result)
    sys.exit(EXIT_OK if result.valid else EXIT_ERROR)


def _print_contract_check(result: contract.ContractCheck) -> None:
    lines = [f"{result.source}: {problem}" for problem in result.problems]
    for checked in result.checked:
        if checked.environment is not None:
            env = checked.environment
            lines.append(
                f"{result.source}: {checked.where}: holds contract {result.contract_version} "
                f"(environment {env.name}, baseDomain {env.base_domain})"
            )
        lines.extend(f"{result.source}: {checked.where}: {problem}" for problem in checked.problems)
    if lines:
        _echo("\n".join(lines))


if __name__ == "__main__":
    main()
