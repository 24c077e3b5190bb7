"""Results as Markdown a pull request or a job summary can show (``--format markdown``).

Each rendering is a heading, a compact table of counts, then the details in a collapsible ``<details>``
block. It renders the results as they are: their secrets are already masked (``[secret]``), and the
offline plan's inputs redacted, so nothing secret can reach the Markdown.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import singledispatch
from typing import Any

from .fleet import FleetDrift, StackStatus
from .plan import Plan
from .results import DriftReport, PreviewResult

__all__ = ["to_markdown"]

_MAX_VALUE = 80


def _cell(value: Any) -> str:
    """One table cell: a single line, pipes escaped, long values cut."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = _text(" ".join(text.split())).replace("|", "\\|")  # a pipe would end the cell
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _text(text: str) -> str:
    """Free text, with ``<computed>`` and the like kept visible: Markdown would read them as HTML tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Code(str):
    """A value shown whole as inline code (a URN, a type): never cut, pipes escaped."""


def _code(value: str) -> _Code:
    escaped = value.replace("`", "").replace("|", "\\|")
    return _Code(f"`{escaped}`")


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c if isinstance(c, _Code) else _cell(c) for c in row) + " |" for row in rows]
    return lines


def _details(summary: str, body: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _counts(changes: Mapping[str, int]) -> list[str]:
    rows = [(op, count) for op, count in sorted(changes.items()) if count]
    return _table(["operation", "count"], rows) if rows else ["No changes."]


@singledispatch
def to_markdown(result: Any) -> str:
    """``result`` (a preview, an offline plan, a drift report, the fleet's drift, statuses) as Markdown."""
    raise TypeError(f"no Markdown rendering for {type(result).__name__}")


@to_markdown.register
def _(result: PreviewResult) -> str:
    lines = [f"### Preview of {_code(result.stack)}", "", *_counts(result.changes)]
    if result.steps:
        rows = [(s.op, _code(s.urn), ", ".join(s.keys)) for s in result.steps]
        lines += _details(f"{len(result.steps)} steps", _table(["operation", "resource", "changed"], rows))
    return "\n".join(lines) + "\n"


@to_markdown.register
def _(result: Plan) -> str:
    by_type = Counter(r.type for r in result.resources)
    lines = [
        f"### Offline plan of {_code(result.stack)}: {len(result.resources)} resources to create",
        "",
        _text(result.note),
        "",
        *_table(["type", "count"], sorted(by_type.items())),
    ]
    rows = [(_code(r.type), r.name, _cell(dict(r.inputs))) for r in result.resources]
    lines += _details(f"{len(result.resources)} resources", _table(["type", "name", "inputs"], rows))
    return "\n".join(lines) + "\n"


def _drift_rows(report: DriftReport) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for resource in report.resources:
        if not resource.diffs:
            rows.append((resource.kind.value, _code(resource.urn), "", "", ""))
        for diff in resource.diffs:
            rows.append((resource.kind.value, _code(resource.urn), diff.path, diff.recorded, diff.actual))
    return rows


_DRIFT_HEADER = ["drift", "resource", "property", "recorded", "actual"]


@to_markdown.register
def _(result: DriftReport) -> str:
    kinds = Counter(r.kind.value for r in result.resources)
    lines = [f"### Drift of {_code(result.stack)}", ""]
    lines += _table(["drift", "count"], sorted(kinds.items())) if kinds else ["No drift."]
    if result.resources:
        lines += _details(f"{len(result.resources)} drifted", _table(_DRIFT_HEADER, _drift_rows(result)))
    return "\n".join(lines) + "\n"


@to_markdown.register
def _(result: FleetDrift) -> str:
    def outcome(stack: Any) -> str:
        if stack.error is not None:
            return f"error: {stack.error.type}"
        return f"{len(stack.report.resources)} drifted" if stack.has_drift else "no drift"

    lines = [
        "### Drift of every stack",
        "",
        *_table(["stack", "result"], [(s.stack, outcome(s)) for s in result.stacks]),
    ]
    body: list[str] = []
    for stack in result.stacks:
        if stack.error is not None:
            body += [f"**{stack.stack}**: {_cell(stack.error.message)}", ""]
        elif stack.report is not None and stack.report.has_drift:
            body += [f"**{stack.stack}**", "", *_table(_DRIFT_HEADER, _drift_rows(stack.report)), ""]
    if body:
        lines += _details("details", body[:-1])
    return "\n".join(lines) + "\n"


def _status_markdown(statuses: Sequence[StackStatus]) -> str:
    rows = []
    for s in statuses:
        last = s.last
        lock = {None: "unknown", False: "no", True: f"by {s.lock}"}[s.locked]
        head = {None: "", True: "yes", False: "no"}[s.at_head]
        if s.error is not None:
            rows.append((s.stack, f"error: {s.error.type}", "", "", "", ""))
        elif last is None:
            rows.append((s.stack, "never deployed", "", "", "", lock))
        else:
            when = last.start_time.isoformat(timespec="seconds")
            rows.append(
                (
                    s.stack,
                    f"v{last.version} {last.kind} {last.result}",
                    when,
                    (last.commit or "")[:12],
                    head,
                    lock,
                )
            )
    lines = ["### Stack status", "", *_table(["stack", "last", "at", "commit", "HEAD", "locked"], rows)]
    messages = [f"- **{s.stack}**: {_cell(s.last.message)}" for s in statuses if s.last and s.last.message]
    messages += [f"- **{s.stack}**: {_cell(s.error.message)}" for s in statuses if s.error is not None]
    if messages:
        lines += _details("messages", messages)
    return "\n".join(lines) + "\n"


@to_markdown.register
def _(result: StackStatus) -> str:
    return _status_markdown([result])


@to_markdown.register
def _(result: tuple) -> str:  # type: ignore[type-arg]  # status_all's statuses
    return _status_markdown(list(result))
