"""The commands across stacks: drift and status, of one stack or of every stack (``--all``).

Each parses its arguments, calls one library function and renders the result; the text and Markdown
renderings of their results sit here, beside them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import automation
from ._app import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_PENDING,
    Invocation,
    fleet_command,
    formats,
    lock_wait_option,
    main,
)
from ._markdown import Plain, code, details, table

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["drift_markdown", "fleet_drift_markdown", "status_markdown"]


@main.command()
@fleet_command
@formats
@lock_wait_option
def drift(invocation: Invocation, every: bool, parallel: int, lock_wait: float) -> int:
    """Compare STACK (or --all stacks) with reality without writing anything; exit 2 when one drifted.

    With --all, one line per stack; a stack that cannot be checked is reported and the others go on
    (exit 1 when one errored and none drifted). A stack an update holds is a lock error, unless
    --lock-wait gives the update time to finish.
    """
    options = invocation.options(lock_wait=lock_wait)
    if every:
        with invocation.activity("Checking drift of"):
            fleet = automation.detect_drift_all(options=options, parallel=parallel)
        invocation.emit(fleet, lambda out: _print_fleet_drift(out, fleet))
        if fleet.has_drift:
            return EXIT_PENDING
        return EXIT_ERROR if fleet.has_errors else EXIT_OK
    with invocation.activity("Checking drift of"):
        report = automation.detect_drift(invocation.stack, options=options)

    def human(out: Console) -> None:
        for resource in report.resources:
            out.print(f"{resource.kind.value:<8} {resource.urn}")
            for diff in resource.diffs:
                out.print(f"    {diff.path}: {json.dumps(diff.recorded)} -> {json.dumps(diff.actual)}")
        out.print(
            f"{invocation.stack}: {len(report.resources)} drifted"
            if report.has_drift
            else f"{invocation.stack}: no drift"
        )

    invocation.emit(report, human)
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
@fleet_command
@formats
def status(invocation: Invocation, every: bool, parallel: int) -> int:
    """Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock."""
    with invocation.activity("Reading the status of"):
        if every:
            found = automation.status_all(options=invocation.options(), parallel=parallel)
        else:
            found = (automation.status(invocation.stack, options=invocation.options()),)
    invocation.emit(found if every else found[0], lambda out: _print_status(out, found))
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


def _drift_rows(report: automation.DriftReport) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for resource in report.resources:
        if not resource.diffs:
            rows.append((Plain(resource.kind.value), code(resource.urn), Plain(""), Plain(""), Plain("")))
        for diff in resource.diffs:
            kind = Plain(resource.kind.value)
            rows.append((kind, code(resource.urn), diff.path, diff.recorded, diff.actual))
    return rows


_DRIFT_HEADER = ["drift", "resource", "property", "recorded", "actual"]


def drift_markdown(result: automation.DriftReport) -> str:
    """One stack's drift as Markdown: the counts by kind, then each drifted property folded."""
    kinds = Counter(r.kind.value for r in result.resources)
    lines = [f"### Drift of {code(result.stack)}", ""]
    lines += (
        table(["drift", "count"], [(Plain(k), n) for k, n in sorted(kinds.items())])
        if kinds
        else ["No drift."]
    )
    if result.resources:
        lines += details(f"{len(result.resources)} drifted", table(_DRIFT_HEADER, _drift_rows(result)))
    return "\n".join(lines) + "\n"


def fleet_drift_markdown(result: automation.FleetDrift) -> str:
    """Every stack's drift as Markdown: one row a stack, then each stack's drift or error folded."""

    def outcome(checked: automation.StackDrift) -> Plain:
        if checked.error is not None:
            return Plain(f"error: {checked.error.type}")  # the name of one of our exception classes
        assert checked.report is not None  # a check without an error has a report
        return Plain(f"{len(checked.report.resources)} drifted" if checked.has_drift else "no drift")

    lines = [
        "### Drift of every stack",
        "",
        *table(["stack", "result"], [(checked.stack, outcome(checked)) for checked in result.stacks]),
    ]
    body: list[str] = []
    for checked in result.stacks:
        if checked.error is not None:
            body += [f"{code(checked.stack)}: {code(checked.error.message)}", ""]
        elif checked.report is not None and checked.report.has_drift:
            body += [code(checked.stack), "", *table(_DRIFT_HEADER, _drift_rows(checked.report)), ""]
    if body:
        lines += details("details", body[:-1])
    return "\n".join(lines) + "\n"


def status_markdown(statuses: Sequence[automation.StackStatus]) -> str:
    """Statuses as Markdown: one row a stack, then the last deployments' messages and errors folded."""
    rows = []
    for status in statuses:
        last = status.last
        lock = (
            Plain({None: "unknown", False: "no"}[status.locked]) if not status.locked else f"by {status.lock}"
        )
        head = Plain({None: "", True: "yes", False: "no"}[status.at_head])
        if status.error is not None:
            rows.append((status.stack, Plain(f"error: {status.error.type}"), *[Plain("")] * 4))
        elif last is None:
            rows.append((status.stack, Plain("never deployed"), Plain(""), Plain(""), Plain(""), lock))
        else:
            when = last.start_time.isoformat(timespec="seconds")
            summary = f"v{last.version} {last.kind} {last.result}"
            rows.append((status.stack, summary, when, (last.commit or "")[:12], head, lock))
    lines = ["### Stack status", "", *table(["stack", "last", "at", "commit", "HEAD", "locked"], rows)]
    messages = [f"- {code(s.stack)}: {code(s.last.message)}" for s in statuses if s.last and s.last.message]
    messages += [f"- {code(s.stack)}: {code(s.error.message)}" for s in statuses if s.error is not None]
    if messages:
        lines += details("messages", messages)
    return "\n".join(lines) + "\n"
