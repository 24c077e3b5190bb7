"""Go durations as Flux's CRDs accept them, and the waits ``up`` and a delete derive from Flux's ``timeout``.

Example::

    assert checks.go_duration_problem("1m30s") is None
    assert checks.format_duration(checks.parse_duration("90s")) == "1m30s"
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

__all__ = [
    "DELETE_MARGIN",
    "GO_DURATION_HINT",
    "GO_DURATION_PATTERN",
    "GO_MAX_DURATION_SECONDS",
    "MAX_READY_TIMEOUT",
    "MIN_DELETE_TIMEOUT",
    "READY_MARGIN",
    "default_ready_timeout",
    "delete_timeout",
    "format_duration",
    "go_duration_problem",
    "parse_duration",
    "ready_timeout_after_timeout_problem",
    "ready_timeout_problem",
]


GO_DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
"""What Flux's CRDs accept for ``interval``, ``retryInterval`` and ``timeout`` (their OpenAPI ``pattern``).

Narrower than Go's ``time.ParseDuration``: no bare ``0``, no ``.5m`` or ``1.m``, no ``ns``/``us``/``µs``.
A value the API server would refuse must be refused here first, by the same pattern.
"""
_DURATION = re.compile(GO_DURATION_PATTERN)
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
GO_DURATION_HINT = "must be a Go duration such as 30s, 5m, 1m30s or 1h (units ms, s, m, h)"


GO_MAX_DURATION_SECONDS = (2**63 - 1) / 1e9
"""Go's longest ``time.Duration`` (int64 nanoseconds, about 2562047h): a longer one does not parse."""


def _duration_seconds(text: str) -> float:
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(text))


def go_duration_problem(value: object) -> str | None:
    """``None`` for a duration Flux's CRDs accept and Go can hold, else what was expected."""
    if not isinstance(value, str) or not _DURATION.fullmatch(value):
        return GO_DURATION_HINT
    if _duration_seconds(value) > GO_MAX_DURATION_SECONDS:
        return "must be at most 2562047h, the longest duration Go (and so Flux) can hold"
    return None


MAX_READY_TIMEOUT = timedelta(hours=24)


def ready_timeout_problem(value: object) -> str | None:
    """``None`` for a wait ``up`` can make: a Go duration of at most a day (``0s``: no wait)."""
    problem = go_duration_problem(value)
    if problem is not None:
        return problem
    assert isinstance(value, str)  # go_duration_problem accepts strings only
    # A day is already a hung pipeline; far beyond it, the provider's seconds overflow to no wait at all.
    return "must be at most 24h" if parse_duration(value) > MAX_READY_TIMEOUT else None


READY_MARGIN = timedelta(minutes=2)
"""How much longer than Flux's own ``timeout`` ``up`` waits for Ready by default: Flux clones and builds
the path before its wait for the applied objects' health starts."""
DELETE_MARGIN = timedelta(minutes=5)
"""How much longer than Flux's ``timeout`` a delete of a sync object may take: with ``deletionPolicy:
WaitForTermination`` kustomize-controller holds its finalizer up to ``timeout`` while what it applied goes."""
MIN_DELETE_TIMEOUT = timedelta(minutes=10)
"""The provider's own delete timeout, which a derived one never goes below."""


def default_ready_timeout(timeout: str) -> str:
    """How long ``up`` waits for Ready when ``readyTimeout`` is not set: Flux's ``timeout`` and a margin."""
    return format_duration(parse_duration(timeout) + READY_MARGIN)


def ready_timeout_after_timeout_problem(ready_timeout: str, timeout: str) -> str | None:
    """``None`` when ``up`` waits longer than Flux does (or not at all, ``0s``), else what was expected.

    Flux reports a Kustomization not Ready only once its health checks have run out of ``timeout``; a
    shorter wait fails ``up`` while Flux is still legitimately waiting, with no verdict to show.
    """
    wait = parse_duration(ready_timeout)
    if not wait or wait > parse_duration(timeout):
        return None
    return (
        f"must be longer than timeout ({timeout}), which Flux may spend waiting for health checks before "
        f"it reports Ready or not; leave it unset for timeout plus {format_duration(READY_MARGIN)}, or "
        "0s not to wait"
    )


def delete_timeout(timeout: str) -> str:
    """How long a delete of a sync object may take: Flux's ``timeout`` and a margin, 10m at least."""
    return format_duration(max(parse_duration(timeout) + DELETE_MARGIN, MIN_DELETE_TIMEOUT))


def format_duration(delta: timedelta) -> str:
    """``delta`` as a Go duration Flux and Pulumi both read (``7m``, ``1h2m3s``), whole seconds up."""
    seconds = math.ceil(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if n)
    return text or "0s"


def parse_duration(text: str) -> timedelta:
    """Parse a duration Flux accepts (``1m30s``, ``5m``, ``1.5h``); raise ``ValueError`` otherwise."""
    if go_duration_problem(text) is not None:
        raise ValueError(f"{text!r} is not a Go duration such as 1m30s, 5m or 60s, of at most 2562047h")
    return timedelta(seconds=_duration_seconds(text))
