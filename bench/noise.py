"""How much to trust a figure, and how two runs differ.

Every row of every suite keeps its raw timings as ``<series>_s`` lists. :func:`spreads` reads each one
back as min, median and max, and its spread, ``(max - min) / median``: a row whose spread exceeds
``NOISY`` is marked, so that a reader can tell a regression from a noisy run. :func:`changes` compares
the headline figures (ratios, speed-ups, medians) of two result files, row by row, for ``--compare``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from gitops_infra._files import FileRefused, read_regular_file

__all__ = ["MAX_RESULTS_BYTES", "NOISY", "Change", "Spread", "changes", "is_noisy", "load", "spreads"]

NOISY = 0.10
"""A series whose max and min differ by more than this share of its median is marked noisy."""

_IDENTITY = ("operation", "resources", "dimension", "n", "command", "stacks")
"""The fields that name a row within its suite's list."""
_HEADLINE = ("ratio", "speedup")
"""Fields compared between runs, besides every ``*_ratio`` and ``*_median_s``."""


@dataclass(frozen=True)
class Spread:
    """Min, median and max of one timing series of one row."""

    row: str
    series: str
    low: float
    middle: float
    high: float

    @property
    def spread(self) -> float:
        return (self.high - self.low) / self.middle if self.middle else 0.0

    @property
    def noisy(self) -> bool:
        return self.spread > NOISY


@dataclass(frozen=True)
class Change:
    """One headline figure present in both runs."""

    figure: str
    old: float
    new: float

    @property
    def relative(self) -> float:
        return (self.new - self.old) / self.old if self.old else 0.0


def is_noisy(values: Sequence[float]) -> bool:
    """Whether one timing series is noisy, as its row would be marked."""
    return Spread("", "", min(values), median(values), max(values)).noisy


def _name(path: str, row: Mapping[str, Any]) -> str:
    named = [f"{key}={row[key]}" for key in _IDENTITY if isinstance(row.get(key), str | int)]
    return f"{path}[{', '.join(named)}]" if named else path


def _rows(results: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each row of each suite, named by its suite and the fields that tell it from its neighbours."""
    for suite, value in results.items():
        if isinstance(value, Mapping):
            yield suite, value
        elif isinstance(value, list):
            for row in value:
                if isinstance(row, Mapping):
                    yield _name(suite, row), row


def _series(values: object) -> list[float] | None:
    if isinstance(values, list) and len(values) >= 2 and all(isinstance(v, int | float) for v in values):
        return [float(v) for v in values]
    return None


def spreads(results: Mapping[str, Any]) -> list[Spread]:
    """Min, median and max of every timing series (``<name>_s`` lists of two values or more)."""
    found = []
    for name, row in _rows(results):
        for key, values in row.items():
            series = _series(values)
            if key.endswith("_s") and series is not None:
                found.append(Spread(name, key.removesuffix("_s"), min(series), median(series), max(series)))
    return found


def _headlines(results: Mapping[str, Any]) -> dict[str, float]:
    figures = {}
    for name, row in _rows(results):
        for key, value in row.items():
            headline = key in _HEADLINE or key.endswith(("_ratio", "_median_s"))
            if headline and isinstance(value, int | float) and not isinstance(value, bool):
                figures[f"{name}.{key}"] = float(value)
    return figures


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Each headline figure in both runs, old and new, in the new run's order."""
    before, after = _headlines(old), _headlines(new)
    return [Change(figure, before[figure], value) for figure, value in after.items() if figure in before]


MAX_RESULTS_BYTES = 64 * 1024 * 1024
"""A full run's results are tens of kilobytes; a larger file is not one."""


def load(path: Path) -> dict[str, Any]:
    """A results file, or ``SystemExit`` naming it and what is wrong with it.

    Read as ``fleet report`` reads a report (one reader): a FIFO would block the read and a device never
    end it, so only a regular file of at most ``MAX_RESULTS_BYTES`` is read.
    """
    try:
        loaded = json.loads(read_regular_file(path, MAX_RESULTS_BYTES))
    except FileRefused as exc:
        raise SystemExit(f"--compare: {path}: {exc}; not a results file") from None
    except OSError as exc:
        raise SystemExit(f"--compare: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SystemExit(f"--compare: {path} is not JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise SystemExit(f"--compare: {path} is not a results file (a JSON object)")
    return loaded
