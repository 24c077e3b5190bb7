"""Stack names, checked where they enter: the Python API and the CLI.

An empty name is the dangerous one: ``pulumi`` reads "no ``--stack``" as "the selected stack", so an
unset ``$STACK`` in CI would act on whichever stack was selected last (prod, say). Every name is checked
against Pulumi's own rules before anything runs:

- ``stack``, ``org/stack`` or ``org/project/stack``;
- each part 1-100 characters of letters, digits, ``-``, ``_`` and ``.`` (Pulumi's ``ParseStackName`` and
  ``ValidateProjectName``), the org as Pulumi Cloud spells one;
- no surrounding whitespace, and no part that is only dots (it would read as a directory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import StackNameError

__all__ = ["StackName", "parse_stack_name"]

_PART = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_ORG = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_-]{1,38}[a-zA-Z0-9]")


@dataclass(frozen=True)
class StackName:
    """A checked stack name: ``name`` is the stack itself, ``org`` and ``project`` qualify it."""

    text: str
    """The name as given, which is what the engine is passed."""
    name: str
    org: str | None = None
    project: str | None = None

    def __str__(self) -> str:
        return self.text

    @property
    def settings_base(self) -> str:
        """The stack's config file without its extension: Pulumi names it after the stack part alone."""
        return f"Pulumi.{self.name}"


def parse_stack_name(text: object) -> StackName:
    """Check ``text`` against Pulumi's rules; raise ``StackNameError`` saying what is wrong."""

    def refuse(why: str) -> StackNameError:
        shown = repr(text) if isinstance(text, str) and len(text) <= 120 else "the stack name"
        return StackNameError(f"invalid stack name {shown}: {why}", stack=str(text))

    if not isinstance(text, str):
        raise refuse("must be a string")
    if not text:
        raise refuse("must not be empty (an empty name would act on whichever stack is selected)")
    if text != text.strip():
        raise refuse("must not start or end with whitespace")
    parts = text.split("/")
    if len(parts) > 3:
        raise refuse("use stack, org/stack or org/project/stack")
    for part in parts:
        if not _PART.fullmatch(part):
            raise refuse("each part must be 1-100 letters, digits, '-', '_' or '.'")
        if set(part) == {"."}:
            raise refuse("a part may not be only dots")
    if len(parts) > 1 and not _ORG.fullmatch(parts[0]):
        raise refuse(
            "the org must be 3-40 letters, digits, '-' or '_', and start and end with a letter or digit"
        )
    name = parts[-1]
    return StackName(
        text=text,
        name=name,
        org=parts[0] if len(parts) > 1 else None,
        project=parts[1] if len(parts) == 3 else None,
    )
