"""What a YAML scalar is to Pulumi: gopkg.in/yaml.v3's rules, which the engine reads its files with.

The engine reads ``Pulumi.yaml`` and ``Pulumi.<stack>.yaml`` with gopkg.in/yaml.v3 (v3.0.1 in pulumi
v3.274's ``sdk/go/common/encoding``), which follows YAML 1.2's core schema, where PyYAML follows YAML 1.1.
So ``no``, ``on`` and ``yes`` are text to Pulumi (booleans to PyYAML), ``0o17`` is 15 (text to PyYAML),
``1e3`` is a number (text to PyYAML) and ``1:20`` is text (80 to PyYAML). This module is a port of
yaml.v3's ``resolve()`` (``resolve.go``): :func:`resolve` says what a plain scalar is, exactly as it does,
number syntax and range included (Go's ``strconv``: an integer past 64 bits is a float, a number past a
float's range is text).
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

__all__ = ["BINARY", "BOOL", "FLOAT", "INT", "MERGE", "NULL", "STR", "TIMESTAMP", "resolve"]

STR, INT, FLOAT, BOOL, NULL = "!!str", "!!int", "!!float", "!!bool", "!!null"
TIMESTAMP, BINARY, MERGE = "!!timestamp", "!!binary", "!!merge"

# resolve.go's resolveMap: the only spellings of these values. Nothing else starting with one of
# "yYnNtTfFoO~" is anything but text: YAML 1.1's yes, no, on, off and y are gone.
_EXACT: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("true", "True", "TRUE"), (BOOL, True)),
    **dict.fromkeys(("false", "False", "FALSE"), (BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
    "<<": (MERGE, "<<"),
}
_INT64 = (-(2**63), 2**63 - 1)
_UINT64_MAX = 2**64 - 1
# strconv.ParseInt(s, 0, 64) once yaml.v3 has dropped every "_": a sign, then 0x/0o/0b, a leading 0
# (octal, as Go reads it), or decimal digits. No 4,300-digit string reaches int(): 64 bits fit in 22 digits.
_GO_INT = re.compile(
    r"(?P<sign>[-+]?)(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)"
    r"|(?P<zero>0[0-7]*)|(?P<dec>[1-9][0-9]*))"
)
_BASES = ((16, "hex"), (8, "oct"), (2, "bin"), (8, "zero"), (10, "dec"))
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# strconv.ParseFloat on text starting with ".": digits, which "_" may separate one at a time (Go's
# underscoreOK), and an exponent.
_DOT_FLOAT = re.compile(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?")
# parseTimestamp's layouts (time.Parse): "2006-1-2T15:4:5.999999999Z07:00", the same with "t",
# "2006-1-2 15:4:5.999999999" and "2006-1-2". Month, day, hour, minute and second take one or two
# digits, the fraction any number after "." or ",", the zone "Z" or +hh:mm.
_TIMESTAMP = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})"
    r"(?:(?:(?P<t>[Tt])|(?P<space> ))(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{1,2}):(?P<second>[0-9]{1,2})"
    r"(?:[.,](?P<fraction>[0-9]+))?(?P<zone>Z|[-+][0-9]{2}:[0-9]{2})?)?"
)


def resolve(text: str, tag: str = "") -> tuple[str, Any]:
    """``(tag, value)`` of a plain scalar as yaml.v3 resolves it: ``tag`` is ``""`` when the scalar has
    none, else the explicit tag (``!!int``), which only changes whether a timestamp is tried."""
    if text in _EXACT:
        return _EXACT[text]
    first = text[0]
    if first in "yYnNtTfFoO~":
        return STR, text
    if first == ".":
        if _DOT_FLOAT.fullmatch(text) and not math.isinf(value := float(text.replace("_", ""))):
            return FLOAT, value
        return STR, text
    if not (first.isascii() and (first.isdigit() or first in "+-")):
        return STR, text
    if tag in ("", TIMESTAMP) and (stamp := _timestamp(text)) is not None:
        return TIMESTAMP, stamp
    plain = text.replace("_", "")
    number = _integer(plain)
    if number is not None:
        return INT, number
    if _YAML_STYLE_FLOAT.fullmatch(plain) and not math.isinf(value := float(plain)):
        return FLOAT, value  # ParseFloat's ErrRange (past ±1.8e308) leaves it text
    number = _prefixed(plain)
    if number is not None:
        return INT, number
    return STR, text


def _integer(plain: str) -> int | None:
    """``strconv.ParseInt(plain, 0, 64)``, else ``ParseUint`` (no sign): ``None`` when neither reads it."""
    found = _GO_INT.fullmatch(plain)
    if found is None:
        return None
    base, digits = next((b, found[g]) for b, g in _BASES if found[g] is not None)
    # 64 bits are 64 binary digits at most: more (leading zeros aside) is out of range, and int() is
    # never handed the 4,300 decimal digits past which Python refuses to read a number.
    if len(digits.lstrip("0")) > 64:
        return None
    number = -int(digits, base) if found["sign"] == "-" else int(digits, base)
    if _INT64[0] <= number <= _INT64[1] or (not found["sign"] and number <= _UINT64_MAX):
        return number
    return None


def _prefixed(plain: str) -> int | None:
    """resolve.go's second try at ``0b``/``0o`` (and ``-0b``/``-0o``) after ParseInt failed: it reads the
    digits with ``ParseInt(digits, base)``, which takes a sign of their own (``0b-1`` is -1)."""
    negative = plain.startswith("-")
    body = plain[1:] if negative else plain
    if body[:2] not in ("0b", "0o"):
        return None
    base = 2 if body[1] == "b" else 8
    digits = ("-" if negative else "") + body[2:]
    if not re.fullmatch(rf"[-+]?[0-{base - 1}]{{1,64}}", digits):
        return None
    number = int(digits, base)
    if _INT64[0] <= number <= _INT64[1] or (digits[0] not in "+-" and number <= _UINT64_MAX):
        return number
    return None


def _timestamp(text: str) -> datetime.date | datetime.datetime | None:
    """``parseTimestamp``: the date or time ``text`` spells in one of its layouts, or ``None``."""
    found = _TIMESTAMP.fullmatch(text)
    if found is None or (found["t"] and not found["zone"]) or (found["space"] and found["zone"]):
        return None  # the "T" layouts end in a zone, the space one has none
    try:
        day = datetime.date(int(found["year"]), int(found["month"]), int(found["day"]))
        if found["hour"] is None:
            return day
        zone = None
        if found["zone"] == "Z":
            zone = datetime.UTC
        elif found["zone"]:
            hours, minutes = int(found["zone"][1:3]), int(found["zone"][4:6])
            if hours > 24 or minutes > 60:  # time.Parse's own bounds for an offset
                return None
            offset = datetime.timedelta(hours=hours, minutes=minutes)
            zone = datetime.timezone(-offset if found["zone"][0] == "-" else offset)
        micro = int((found["fraction"] or "0")[:6].ljust(6, "0"))
        clock = (int(found["hour"]), int(found["minute"]), int(found["second"]), micro)
        return datetime.datetime.combine(day, datetime.time(*clock, tzinfo=zone))
    except ValueError:  # a day or hour time.Parse refuses too (February 30th, 24:00)
        # ... and year 0 or a 24-hour offset, which time.Parse takes and Python's dates cannot hold: text.
        return None
