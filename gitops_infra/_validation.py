"""Pydantic's validation errors as our problem lines: ``<key path>: <what was expected>``.

One reading for the stack config (:mod:`gitops_infra.config`) and the fleet section
(:mod:`gitops_infra.automation.fleet.inventory`): a key path from the error's location, and a message that
never echoes the input value. No Pulumi import: the fleet commands read hundreds of stack files with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

__all__ = ["validation_problems"]


def _message(error: Mapping[str, Any], hints: Mapping[str, str]) -> str:
    # pydantic prefixes our own ValueErrors; the input value is deliberately never echoed.
    msg = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    if error["type"] == "missing":
        return "required"
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "string_pattern_mismatch":
        return hints.get(str(error.get("ctx", {}).get("pattern")), msg)
    return msg


def validation_problems(
    exc: ValidationError,
    root: str,
    *,
    spell: Callable[[str], str] = str,
    hints: Mapping[str, str] | None = None,
) -> list[str]:
    """One ``"<root>.<key>[<index>]: <message>"`` line per error of ``exc``.

    ``spell`` writes a key as the file spells it (``to_camel`` for the stack config's camelCase keys: a
    default that fails is reported by its field name); ``hints`` says what a regex pattern means, so that
    an error says "must be ..." rather than quoting the pattern.
    """
    problems = []
    for error in exc.errors():
        path = root
        for part in error["loc"]:
            if isinstance(part, str) and "[" in part:  # a union member's name ('str' in `str | None`)
                continue
            path += f"[{part}]" if isinstance(part, int) else f".{spell(part)}"
        problems.append(f"{path}: {_message(error, hints or {})}")
    return problems
