"""Markdown a pull request or a job summary can show (``--format markdown``): the shared pieces.

Each rendering is a heading, a compact table of counts, then the details in a collapsible ``<details>``
block. The renderings themselves sit beside their commands' text renderers (``_operations``, ``_fleet``,
``_plan``); :func:`to_markdown` picks the one for a result. They render results as they are: their
secrets are already masked (``[secret]``), and the offline plan's inputs redacted, so nothing secret can
reach the Markdown. Everything a result carries (names, messages) is escaped, since it may be hostile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["Code", "cell", "code", "counts", "details", "escape", "table", "to_markdown"]

_MAX_VALUE = 80


def cell(value: Any) -> str:
    """One table cell: a single line, pipes escaped, long values cut."""
    shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    shown = escape(" ".join(shown.split())).replace("|", "\\|")  # a pipe would end the cell
    return shown if len(shown) <= _MAX_VALUE else shown[: _MAX_VALUE - 1] + "…"


def escape(text: str) -> str:
    """Free text, with ``<computed>`` and the like kept visible: Markdown would read them as HTML tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Code(str):
    """A value shown whole as inline code (a URN, a type): never cut, pipes escaped."""


def code(value: str) -> Code:
    escaped = value.replace("`", "").replace("|", "\\|")
    return Code(f"`{escaped}`")


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c if isinstance(c, Code) else cell(c) for c in row) + " |" for row in rows]
    return lines


def details(summary: str, body: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def counts(changes: Mapping[str, int]) -> list[str]:
    rows = [(op, count) for op, count in sorted(changes.items()) if count]
    return table(["operation", "count"], rows) if rows else ["No changes."]


def to_markdown(result: Any) -> str:
    """``result`` (a preview, an offline plan, a drift report, the fleet's drift, statuses) as Markdown."""
    for kind, render in _renderers():
        if isinstance(result, kind):
            return render(result)
    raise TypeError(f"no Markdown rendering for {type(result).__name__}")


def _renderers() -> list[tuple[type, Callable[[Any], str]]]:
    # Here, not at import: the result types load the engine wrapper, which `--help` must not pay for.
    from ..automation import DriftReport, FleetDrift, Plan, PreviewResult, StackStatus
    from ._fleet import drift_markdown, fleet_drift_markdown, status_markdown
    from ._operations import preview_markdown
    from ._plan import plan_markdown

    return [
        (PreviewResult, preview_markdown),
        (Plan, plan_markdown),
        (DriftReport, drift_markdown),
        (FleetDrift, fleet_drift_markdown),
        (StackStatus, lambda status: status_markdown([status])),
        (tuple, lambda statuses: status_markdown(list(statuses))),  # status_all's
    ]
