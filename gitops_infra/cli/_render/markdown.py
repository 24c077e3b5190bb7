"""Markdown a pull request or a job summary can show (``--format markdown``): the shared pieces.

Each rendering is a heading, a compact table of counts, then the details in a collapsible ``<details>``
block. The renderings themselves sit beside the text ones, a module a kind of result in this package;
``to_markdown`` (the package's) picks the one for a result. They render results as they are: their
secrets are already masked (``[secret]``), and the offline plan's inputs redacted, so nothing secret can
reach the Markdown.

Every string a result carries may be hostile, even where we usually write it (an error's type, a Flux
object's kind): ``fleet report`` renders artifacts and pod logs that anyone who can write one controls.
So each goes through :func:`code`, the one escape, directly or through :func:`word`; :class:`Plain`
holds only the renderers' own words. ``tests/unit/test_markdown.py`` fills every string field of every
result with hostile text and renders it through every rendering ``to_markdown`` knows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .escape import one_line

__all__ = ["Code", "Plain", "cell", "code", "counts", "details", "escape", "table", "word"]

_MAX_VALUE = 200
"""A table value (a drift's recorded or actual value, a plan's inputs) is cut after this many characters;
messages and errors are shown whole."""


def cell(value: Any) -> Code:
    """One table value, as inline code: one line, cut when long."""
    shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    shown = one_line(shown)
    return code(shown if len(shown) <= _MAX_VALUE else shown[: _MAX_VALUE - 1] + "…")


def escape(text: str) -> str:
    """Our own free text, with ``<computed>`` and the like kept visible: Markdown would read them as tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Code(str):
    """Text shown as inline code: nothing in it is read as Markdown or HTML."""


class Plain(str):
    """Our own words in a table (a count, "no drift", "error: " before a :func:`word`): shown as they are.

    Never a string a result carries as it is: that goes through :func:`code` or :func:`word`.
    """


def code(value: Any) -> Code:
    """``value`` whole as inline code: one line, controls escaped, and nothing in it read as Markdown or
    HTML (links, images, mentions, emphasis, tags, comments). Every string a result carries goes through
    here, since any of them may be hostile.

    A backtick in the value needs a longer fence (CommonMark code spans), and one at either end a space
    inside it.
    """
    text = one_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
    if not text:
        return Code("")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Code(f"{fence}{pad}{text}{pad}{fence}")


_WORD = re.compile(r"[A-Za-z]{1,64}(?:-[A-Za-z]{1,64}){0,4}")
"""Letters, and hyphens between them: no Markdown, GFM or HTML construct (emphasis, links, autolinks,
mentions, entities, tags, issue references) is made of these alone."""


def word(value: str) -> Plain | Code:
    """A one-word value a result carries (an operation, a kind, an error's type): as it is when it is a
    bare word (``update``, ``HelmRelease``, ``StackNotFoundError``), else as inline code (:func:`code`).

    Example::

        word("HelmRelease") == "HelmRelease"; word("<img src=x>") == "`<img src=x>`"
    """
    return Plain(value) if _WORD.fullmatch(value) else code(value)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A table; each value is inline code (:func:`cell`), and a pipe in it is escaped (GFM reads that
    inside code spans too), so no value can end its cell or its row."""

    def shown(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return (value if isinstance(value, Code | Plain) else cell(value)).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(shown(c) for c in row) + " |" for row in rows]
    return lines


def details(summary: str, body: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def counts(changes: Mapping[str, int]) -> list[str]:
    rows = [(word(op), count) for op, count in sorted(changes.items()) if count]
    return table(["operation", "count"], rows) if rows else ["No changes."]
