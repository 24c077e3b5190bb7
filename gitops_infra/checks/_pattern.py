"""The one way a check matches a pattern, shared by the checks' modules."""

from __future__ import annotations

import re

__all__ = ["pattern_problem"]


def pattern_problem(pattern: re.Pattern[str], value: object, hint: str) -> str | None:
    """``None`` for a string ``pattern`` matches whole, else ``hint``.

    ``fullmatch``, not ``match``: a ``$`` alone would let a trailing newline through.
    """
    return None if isinstance(value, str) and pattern.fullmatch(value) else hint
