"""Small statistics helpers: medians, ratios and a least-squares line."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def timed(fn: Callable[[], object]) -> float:
    """Wall-clock seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


@dataclass(frozen=True)
class LinearFit:
    """``y = intercept + slope * x`` by least squares, and how well it fits."""

    intercept: float
    slope: float
    r_squared: float
    max_rel_deviation: float
    """The largest ``|y - fit| / fit`` over the points."""

    def at(self, x: float) -> float:
        return self.intercept + self.slope * x


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> LinearFit:
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx if sxx else 0.0
    intercept = mean_y - slope * mean_x
    fitted = [intercept + slope * x for x in xs]
    ss_res = sum((y - f) ** 2 for y, f in zip(ys, fitted, strict=True))
    ss_tot = sum((y - mean_y) ** 2 for y in ys)
    r_squared = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    max_dev = max(abs(y - f) / f for y, f in zip(ys, fitted, strict=True) if f)
    return LinearFit(intercept=intercept, slope=slope, r_squared=r_squared, max_rel_deviation=max_dev)
