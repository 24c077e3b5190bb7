"""Small statistics helpers: timing one call (the one place every suite's timed call goes through, so also
where a stop signal ends a run), the ratio of paired series, and a least-squares line."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from gitops_infra.automation.signals import interrupted

T = TypeVar("T")


def timed(fn: Callable[[], object]) -> float:
    """Wall-clock seconds one call of ``fn`` takes."""
    return clocked(fn)[0]


def clocked(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall-clock seconds one call of ``fn`` takes, and what it returned.

    A stop signal that came during the call (which the engine running then may have finished anyway)
    stops the run here, before the next call.
    """
    start = time.perf_counter()
    value = fn()
    took = time.perf_counter() - start
    if interrupted():
        raise KeyboardInterrupt
    return took, value


def paired_ratio(ours: Sequence[float], baseline: Sequence[float]) -> float:
    """The median of ``ours[i] / baseline[i]``: the ratio of two series timed as interleaved pairs.

    Each pair runs back to back, so a change in the machine's speed between pairs (seen here: the same
    command taking 6 s, then 10 s, minutes apart) moves both halves and cancels out of that pair's ratio;
    the ratio of the two medians, which may come from different pairs, keeps it.
    """
    return statistics.median(o / b for o, b in zip(ours, baseline, strict=True))


@dataclass(frozen=True)
class LinearFit:
    """``y = intercept + slope * x`` by least squares, and how well it fits."""

    intercept: float
    slope: float
    r_squared: float
    max_rel_deviation: float
    """The largest ``|y - fit| / fit`` over the points."""

    def predict(self, x: float) -> float:
        return self.intercept + self.slope * x


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> LinearFit:
    """The least-squares line through the points; for one line, R² is the squared correlation."""
    slope, intercept = statistics.linear_regression(xs, ys)
    try:
        r_squared = statistics.correlation(xs, ys) ** 2
    except statistics.StatisticsError:  # constant ys (or xs): a flat line fits them exactly
        r_squared = 1.0
    fitted = [intercept + slope * x for x in xs]
    max_dev = max(abs(y - f) / f for y, f in zip(ys, fitted, strict=True) if f)
    return LinearFit(intercept=intercept, slope=slope, r_squared=r_squared, max_rel_deviation=max_dev)
