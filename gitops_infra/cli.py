"""``gitops-infra``: a thin command line over :mod:`gitops_infra.automation` for CI jobs and terminals.

Each command parses its arguments, calls one library function and renders the result. Exit codes follow
``terraform plan -detailed-exitcode``:

- ``0``: success (and, for ``drift``, no drift);
- ``1``: an error, printed as ``ErrorType: message`` with no traceback;
- ``2``: drift found (``drift``), or changes pending (``preview --expect-no-changes``);
- ``128 + N``: stopped by signal N (130 for SIGINT, 143 for SIGTERM). The engine is cancelled the way
  Ctrl-C cancels ``pulumi``: in-flight operations finish and the stack's lock is released.

On a terminal, engine events drive a live progress display; without one, each finished step is a plain
line. With ``--json``, stdout carries exactly one JSON document (an ``{"error": ...}`` one on failure).
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
from typing import Any

import click
from pulumi import automation as auto
from rich.console import Console
from rich.tree import Tree

from . import automation
from .automation.results import to_jsonable
from .automation.workspace import EventCallback
from .errors import GitOpsInfraError

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_PENDING", "main"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_PENDING = 2
"""Drift found, or changes pending under ``preview --expect-no-changes``."""

_LOG_WIDTH = 1000


@dataclass
class Invocation:
    """What every command shares: the stack, where it runs, and how output is rendered."""

    stack: str
    cwd: Path | None
    json: bool
    console: Console

    def options(self, *, lock_wait: float = 0.0, progress: bool = False) -> automation.StackOptions:
        """Options for the library call; ``progress`` prints each finished step as it happens."""
        on_event: EventCallback | None = None if self.json or not progress else _StepPrinter(self.console)
        return automation.StackOptions(work_dir=self.cwd, on_event=on_event, lock_wait=lock_wait)

    def activity(self, what: str) -> AbstractContextManager[Any]:
        """A spinner on a terminal while the engine works; nothing otherwise."""
        if self.json or not self.console.is_terminal:
            return nullcontext()
        return self.console.status(f"{what} {self.stack}…")

    def emit(self, result: Any, human: Callable[[Console], None]) -> None:
        if self.json:
            click.echo(json.dumps(to_jsonable(result), indent=2, sort_keys=True))
        else:
            human(self.console)

    def confirm(self, question: str, yes: bool) -> None:
        if yes:
            return
        if not sys.stdin.isatty():
            raise click.ClickException(f"{question} Pass --yes to proceed without a terminal to ask on.")
        if not click.confirm(question, default=False, err=True):
            raise click.Abort()


class _StepPrinter:
    """Prints one line per finished resource step, from the engine's event stream."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: auto.EngineEvent) -> None:
        done = event.res_outputs_event
        failed = event.res_op_failed_event
        diag = event.diagnostic_event
        if done is not None and done.metadata.op != auto.OpType.SAME and _shown(done.metadata.type):
            meta = done.metadata
            self.console.print(f"  {meta.op.value:<8} {meta.type}  {meta.urn.rsplit('::', 1)[-1]}")
        elif failed is not None:
            self.console.print(f"  failed   {failed.metadata.urn}", style="red")
        elif diag is not None and diag.severity == "error":
            self.console.print(f"  error: {diag.message.strip()}", style="red")


def _shown(resource_type: str) -> bool:
    # The stack and provider resources are bookkeeping; `pulumi up` does not list them either.
    return resource_type != "pulumi:pulumi:Stack" and not resource_type.startswith("pulumi:providers:")


def _command(fn: Callable[..., int]) -> Callable[..., None]:
    """Common arguments (STACK, --cwd, --json), one error boundary, and the exit code."""

    @click.argument("stack")
    @click.option(
        "--cwd",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The Pulumi project directory (default: found from the current directory).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
    @functools.wraps(fn)
    def wrapper(stack: str, cwd: Path | None, as_json: bool, **kwargs: Any) -> None:
        # Progress and prompts go to stdout on a terminal, and never into a --json document.
        console = Console(stderr=as_json, highlight=False, markup=False, soft_wrap=True)
        if not console.is_terminal:
            # A log has no width to fit: never crop a line (rich assumes 80 columns otherwise).
            console.width = _LOG_WIDTH
        invocation = Invocation(stack=stack, cwd=cwd, json=as_json, console=console)
        with automation.cancel_on_signals() as interruption:
            try:
                code = fn(invocation, **kwargs)
            except GitOpsInfraError as exc:
                if as_json:
                    error = {"type": type(exc).__name__, "message": str(exc)}
                    click.echo(json.dumps({"error": error}, indent=2, sort_keys=True))
                click.echo(f"{type(exc).__name__}: {exc}", err=True)
                sys.exit(interruption.exit_code if interruption.signum else EXIT_ERROR)
            except KeyboardInterrupt:
                click.echo("Interrupted.", err=True)
                sys.exit(interruption.exit_code if interruption.signum else 128 + signal.SIGINT)
        sys.exit(code)

    return wrapper


class _UsageError(click.UsageError):
    exit_code = EXIT_ERROR


class _Cli(click.Group):
    """Click's usage errors exit 2, which here means "changes pending"; they exit 1 instead."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _UsageError(exc.format_message(), exc.ctx) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _UsageError(exc.format_message(), exc.ctx) from exc


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gitops-infra")
def main() -> None:
    """Preview, apply, check for drift and roll back GitOps platform stacks."""


_policy_packs = click.option(
    "--policy-pack",
    "policy_packs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="A CrossGuard policy pack directory to enforce (repeatable).",
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


_DONE = {"create": "created", "update": "updated", "delete": "deleted", "replace": "replaced"}


def _changes_line(changes: dict[str, int], *, applied: bool = False) -> str:
    def phrase(op: str, count: int) -> str:
        if op == "same":
            return f"{count} unchanged"
        return f"{count} {_DONE.get(op, op)}" if applied else f"{count} to {op}"

    return ", ".join(phrase(op, count) for op, count in sorted(changes.items())) or "no resources"


@main.command()
@_command
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

    def human(out: Console) -> None:
        for step in result.steps:
            keys = f"  ({', '.join(step.keys)})" if step.keys else ""
            out.print(f"{step.op:<8} {step.urn}{keys}")
        out.print(f"Preview of {inv.stack}: {_changes_line(dict(result.changes))}")

    inv.emit(result, human)
    return EXIT_PENDING if expect_no_changes and result.has_changes else EXIT_OK


@main.command()
@_command
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@click.option("--refresh", is_flag=True, help="Read the real state of resources first.")
@_message
@_policy_packs
@_create
@_lock_wait
def up(
    inv: Invocation,
    yes: bool,
    refresh: bool,
    message: str | None,
    policy_packs: tuple[str, ...],
    create: bool,
    lock_wait: float,
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
        )
    inv.emit(result, lambda out: _print_update(out, "Updated", result))
    return EXIT_OK


def _print_update(out: Console, verb: str, result: automation.UpResult) -> None:
    commit = f" from {result.commit[:12]}" if result.commit else ""
    changes = _changes_line(dict(result.changes), applied=True)
    out.print(f"{verb} {result.stack} (version {result.version}{commit}): {changes}")
    for key, value in sorted(result.outputs.items()):
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
@_command
def drift(inv: Invocation) -> int:
    """Compare STACK with reality without writing anything; exit 2 when it drifted."""
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


@main.command()
@_command
@click.argument("commit", default=automation.PREVIOUS)
@click.option("--yes", "-y", is_flag=True, help="Roll back without asking.")
@_message
@_lock_wait
def rollback(inv: Invocation, commit: str, yes: bool, message: str | None, lock_wait: float) -> int:
    """Roll STACK back to COMMIT (a sha, tag or ref; default: the previous deployed commit)."""
    inv.confirm(f"Roll stack {inv.stack!r} back to {commit!r}?", yes)
    with inv.activity("Rolling back"):
        result = automation.rollback_to_commit(
            inv.stack, commit, options=inv.options(lock_wait=lock_wait, progress=True), message=message
        )
    inv.emit(result, lambda out: _print_update(out, "Rolled back", result))
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
    """Clear the lock and pending operations a dead update left on STACK, then refresh it."""
    inv.confirm(f"Clear the lock and pending operations of stack {inv.stack!r}?", yes)
    with inv.activity("Recovering"):
        result = automation.recover(inv.stack, options=inv.options(progress=True), force=force)

    def human(out: Console) -> None:
        out.print(f"Cleared the lock of {result.stale_lock}" if result.stale_lock else "No stale lock found")
        for pending in result.pending:
            out.print(f"  dropped pending {pending}")
        out.print(f"Refreshed {inv.stack}: {_changes_line(result.changes, applied=True)}")

    inv.emit(result, human)
    return EXIT_OK


@main.command()
@_command
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


if __name__ == "__main__":
    main()
