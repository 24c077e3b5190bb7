"""A griffe extension (mkdocs.yml: the python handler's ``extensions``) for the API reference.

The package's docstrings are written in reST's habits, which read well in ``help()`` and an editor:
Sphinx roles (``:func:`~gitops_infra.automation.up```) and literal blocks after ``::``. The reference is
Markdown, where a role shows as its raw text and ``Example::`` keeps both colons. This turns, in every
docstring griffe loads:

- a role into inline code of its target (``~`` keeps the last component, as Sphinx shows it). Not a link:
  many roles name a module-local function that the reference does not render, and an unresolved link
  fails the strict build;
- a line ending ``::`` followed by an indented block into the line ending ``:`` and a fenced block, so
  that the Google-style parser does not read ``Example:`` as a section title and swallow the block.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|mod|attr|data|meth|exc|obj):`(~?)([^`]+)`")
_SHELL_STARTS = ("$ ", "pulumi ", "gitops-infra ", "kubectl ", "make ")


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fence_literal_blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        body_start = index + 2
        if (
            line.rstrip().endswith("::")
            and body_start < len(lines)
            and not lines[index + 1].strip()
            and _indent(lines[body_start]) > _indent(line)
        ):
            base = _indent(line)
            end = body_start
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
                end += 1
            while end > body_start and not lines[end - 1].strip():
                end -= 1
            body = lines[body_start:end]
            strip = min(_indent(text) for text in body if text.strip())
            first = body[0].strip()
            language = "sh" if first.startswith(_SHELL_STARTS) else "python"
            text = line.rstrip()[:-2].rstrip()
            out += [f"{text}:" if text else "", "", " " * base + f"```{language}"]
            out += [" " * base + code[strip:] if code.strip() else "" for code in body]
            out += [" " * base + "```"]
            index = end
            continue
        out.append(line)
        index += 1
    return out


def markdown_docstring(text: str) -> str:
    """``text`` with its Sphinx roles as inline code and its ``::`` literal blocks fenced."""
    return "\n".join(_fence_literal_blocks(_ROLE.sub(_role, text).split("\n")))


class ReSTHabits(griffe.Extension):
    """Rewrites each docstring once griffe has made its object."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
