"""Drift: one stack's (``drift STACK``), and the fleet's (``drift --all``, and ``fleet report``, which
merges the shards' and matrix jobs' reports into one).

A fleet report's inputs are artifacts and pod logs that anyone who can write one controls, so every text
from them is shown escaped: on one line on a terminal (:func:`~.escape.one_line`), as inline code in
Markdown (:func:`~.markdown.code`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from ... import automation
from .escape import one_line
from .gitops import gitops_markdown, gitops_outcome, print_gitops
from .markdown import Plain, code, details, table, word
from .names import namer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["drift_markdown", "fleet_drift_markdown", "print_drift", "print_fleet_drift"]


def print_drift(out: Console, stack: str, report: automation.DriftReport) -> None:
    """Each drifted resource and property, then the IaC outcome and the GitOps layer."""
    for resource in report.resources:
        out.print(f"{resource.kind.value:<8} {one_line(resource.urn)}")
        for diff in resource.diffs:
            out.print("    " + one_line(f"{diff.path}: {_change(diff.recorded, diff.actual)}"))
    out.print(f"{stack}: {_iac_outcome(report)}")
    print_gitops(out, report.gitops, checked=automation.Layer.GITOPS in report.layers)


def _iac_outcome(report: automation.DriftReport) -> str:
    if automation.Layer.IAC not in report.layers:
        return "iac not checked"
    return f"{len(report.resources)} drifted" if report.has_drift else "no drift"


def _change(recorded: Any, actual: Any) -> str:
    return f"{json.dumps(recorded, default=str)} -> {json.dumps(actual, default=str)}"


def print_fleet_drift(out: Console, fleet: automation.FleetDrift) -> None:
    """A line a stack, a cause or a missing result. A report's inputs are artifacts and pod logs anyone
    who can write one controls, so every text from them is one line, escaped (:func:`one_line`): it can
    neither forge a line nor a CI workflow command."""
    names = namer(fleet.stacks)

    def shown(checked: automation.StackDrift) -> str:
        return one_line(names(checked))

    if not fleet.stacks:  # a shard the hash gave no stack: say so, rather than print nothing
        out.print(f"no stacks in shard {one_line(fleet.shard)}" if fleet.shard else "no stacks")
    for unread in fleet.unread:
        out.print(f"missing: {one_line(unread)}")
    for checked in fleet.stacks:
        name = shown(checked)
        if checked.error is not None:
            out.print(f"{name}: error: " + one_line(f"{checked.error.type}: {checked.error.message}"))
            continue
        assert checked.report is not None  # a check without an error has a report
        report = checked.report
        if report.gitops is None:  # not checked, or a stack without Flux
            out.print(f"{name}: {_iac_outcome(report)}")
            continue
        out.print(f"{name}: {_iac_outcome(report)}; {gitops_outcome(report.gitops)}")
        for problem in report.gitops.problems:
            out.print(f"  {one_line(problem)}")
    for cause in fleet.causes:
        change = _change(cause.recorded, cause.actual) if cause.path else "deleted"
        where = one_line(f"{cause.type} {cause.path}")
        out.print(
            f"cause: {where}: {one_line(change)}: {len(cause.stacks)} stack(s): "
            + one_line(", ".join(cause.stacks))
        )


def _drift_rows(report: automation.DriftReport) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for resource in report.resources:
        if not resource.diffs:
            rows.append((word(resource.kind.value), code(resource.urn), Plain(""), Plain(""), Plain("")))
        for diff in resource.diffs:
            kind = word(resource.kind.value)
            rows.append((kind, code(resource.urn), diff.path, diff.recorded, diff.actual))
    return rows


_DRIFT_HEADER = ["drift", "resource", "property", "recorded", "actual"]


def drift_markdown(result: automation.DriftReport) -> str:
    """One stack's drift as Markdown: the counts by kind, then each drifted property folded."""
    kinds = Counter(r.kind.value for r in result.resources)
    lines = [f"### Drift of {code(result.stack)}", ""]
    lines += (
        table(["drift", "count"], [(word(k), n) for k, n in sorted(kinds.items())])
        if kinds
        else ["No drift."]
    )
    if automation.Layer.IAC not in result.layers:
        lines = [f"### Drift of {code(result.stack)}", "", "The IaC layer was not checked."]
    if result.resources:
        lines += details(f"{len(result.resources)} drifted", table(_DRIFT_HEADER, _drift_rows(result)))
    if result.gitops is not None:
        lines += ["", *gitops_markdown(result.gitops)]
    return "\n".join(lines) + "\n"


def fleet_drift_markdown(result: automation.FleetDrift) -> str:
    """Every stack's drift as Markdown: one row a stack, then each stack's drift or error folded."""

    def outcome(checked: automation.StackDrift) -> Plain:
        if checked.error is not None:
            return Plain(f"error: {word(checked.error.type)}")  # a report's: any text at all
        assert checked.report is not None  # a check without an error has a report
        if checked.report.gitops is None:  # not checked, or a stack without Flux
            return Plain(_iac_outcome(checked.report))
        return Plain(f"{_iac_outcome(checked.report)}; {gitops_outcome(checked.report.gitops)}")

    shown = namer(result.stacks)
    title = f"shard {code(result.shard)} of the fleet" if result.shard else "every stack"
    lines = [f"### Drift of {title}", ""]
    if result.unread:
        lines += ["Missing results:", "", *(f"- {code(unread)}" for unread in result.unread), ""]
    causes = result.causes
    if causes:
        rows = [
            (
                code(c.type),
                word(c.kind.value),
                c.path if c.path else Plain(""),
                c.recorded if c.path else Plain(""),
                c.actual if c.path else Plain(""),
                len(c.stacks),
                ", ".join(c.stacks),
            )
            for c in causes
        ]
        header = ["resource type", "drift", "property", "recorded", "actual", "stacks", "names"]
        lines += ["Drift by cause:", "", *table(header, rows), ""]
    lines += table(["stack", "result"], [(shown(checked), outcome(checked)) for checked in result.stacks])
    if not result.stacks:
        lines.append("No stacks in this selection.")
    body: list[str] = []
    for checked in result.stacks:
        if checked.error is not None:
            body += [f"{code(shown(checked))}: {code(checked.error.message)}", ""]
        elif checked.report is not None and (checked.report.has_drift or not checked.report.healthy):
            body += [code(shown(checked)), ""]
            if checked.report.has_drift:
                body += [*table(_DRIFT_HEADER, _drift_rows(checked.report)), ""]
            if checked.report.gitops is not None and not checked.report.healthy:
                body += [*gitops_markdown(checked.report.gitops), ""]
    if body:
        lines += details("details", body[:-1])
    return "\n".join(lines) + "\n"
