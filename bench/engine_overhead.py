"""Our automation layer against the raw ``pulumi`` CLI, on the same fixture, stack, backend and env.

Per size, one fixture is brought up once; then each repeat times ours and raw back to back, alternating
which goes first so that drift (page cache, CPU frequency, the stack's growing history) cancels out. One
untimed warm-up pair comes first, and a row's ratio is the median of its pairs' ratios
(:func:`~bench.stats.paired_ratio`). A row either of whose series is noisy after those repeats
(:data:`noise.NOISY`) gets ``EXTEND`` times as many pairs again, and says so (``extended``). :func:`growth`
fits a line to each operation's medians over the sizes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from gitops_infra.automation import StackOptions, detect_drift, preview, refresh, up

from .fixture import STACK, Fixture, fixture
from .noise import is_noisy
from .stats import linear_fit, paired_ratio, timed

TARGET = 1.05
EXTEND = 2
"""A noisy row's extra pairs, as a multiple of the repeats: 5 become 15."""


@dataclass(frozen=True)
class Pair:
    """One operation: our function and the raw command it wraps."""

    name: str
    raw: str
    ours: Callable[[Fixture], object]
    raw_args: tuple[str, ...]


def _options(fx: Fixture) -> StackOptions:
    return StackOptions(work_dir=fx.root, env=fx.env)


def _check_preview(fx: Fixture) -> object:
    result = preview(STACK, options=_options(fx))
    if result.has_changes:
        raise RuntimeError(f"the fixture should be up to date, but preview shows {result.changes}")
    return result


def _check_up(fx: Fixture) -> object:
    result = up(STACK, options=_options(fx), message="bench: no-op up")
    if set(result.changes) - {"same"}:
        raise RuntimeError(f"the no-op up changed something: {result.changes}")
    return result


def _check_refresh(fx: Fixture) -> object:
    result = refresh(STACK, options=_options(fx), message="bench: refresh")
    if set(result.changes) - {"same"}:
        raise RuntimeError(f"the refresh found changes: {result.changes}")
    return result


def _check_drift(fx: Fixture) -> object:
    report = detect_drift(STACK, options=_options(fx))
    if report.has_drift:
        raise RuntimeError("the fixture should have no drift")
    return report


PAIRS = (
    Pair("preview", "pulumi preview", _check_preview, ("preview",)),
    Pair(
        "up (no-op)",
        "pulumi up --yes --skip-preview",
        _check_up,
        ("up", "--yes", "--skip-preview", "--message", "bench: no-op up"),
    ),
    Pair(
        "refresh",
        "pulumi refresh --yes --skip-preview",
        _check_refresh,
        ("refresh", "--yes", "--skip-preview", "--message", "bench: refresh"),
    ),
    Pair("detect_drift", "pulumi refresh --preview-only", _check_drift, ("refresh", "--preview-only")),
)
OPERATIONS = tuple(pair.name.split()[0] for pair in PAIRS)


def _measure(fx: Fixture, pair: Pair, repeats: int) -> dict[str, Any]:
    def ours() -> float:
        return timed(lambda: pair.ours(fx))

    def raw() -> float:
        return timed(lambda: fx.pulumi(*pair.raw_args))

    ours(), raw()  # warm-up, untimed
    ours_s: list[float] = []
    raw_s: list[float] = []

    def pairs(count: int) -> None:
        for _ in range(count):
            if len(ours_s) % 2 == 0:
                ours_s.append(ours())
                raw_s.append(raw())
            else:
                raw_s.append(raw())
                ours_s.append(ours())

    pairs(repeats)
    # A noisy row gets more pairs before its ratio is taken, whichever way it leans: decided on the spread
    # alone, never on the ratio, so that its median says more than the luck of five runs.
    extended = is_noisy(ours_s) or is_noisy(raw_s)
    if extended:
        pairs(EXTEND * repeats)
    ours_median, raw_median = median(ours_s), median(raw_s)
    ratio = paired_ratio(ours_s, raw_s)
    return {
        "operation": pair.name,
        "raw_command": pair.raw,
        "resources": fx.size,
        "repeats": len(ours_s),
        "extended": extended,
        "ours_s": ours_s,
        "raw_s": raw_s,
        "ours_median_s": ours_median,
        "raw_median_s": raw_median,
        "ratio": ratio,
        "ratio_of_medians": ours_median / raw_median,
        "target": TARGET,
        "meets_target": ratio <= TARGET,
    }


def run(sizes: Sequence[int], repeats: int, operations: Sequence[str] = ()) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pairs = [p for p in PAIRS if not operations or p.name.split()[0] in operations]
    for size in sizes:
        print(f"[engine] setting up the fixture with {size} resources (initial up)...", file=sys.stderr)
        with fixture(size) as fx:
            for pair in pairs:
                print(f"[engine]   {pair.name} x{repeats} at {size} resources", file=sys.stderr)
                rows.append(_measure(fx, pair, repeats))
    return rows


def growth(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per operation measured at two sizes or more: a least-squares line through its medians, ours and raw."""
    fits: list[dict[str, Any]] = []
    for name in dict.fromkeys(row["operation"] for row in rows):
        points = sorted(
            (row["resources"], row["ours_median_s"], row["raw_median_s"])
            for row in rows
            if row["operation"] == name
        )
        if len(points) < 2:
            continue
        sizes = [float(size) for size, _, _ in points]
        ours, raw = linear_fit(sizes, [p[1] for p in points]), linear_fit(sizes, [p[2] for p in points])
        fits.append(
            {
                "operation": name,
                "resources": [size for size, _, _ in points],
                "ours": {
                    "intercept_s": ours.intercept,
                    "slope_s_per_resource": ours.slope,
                    "r_squared": ours.r_squared,
                },
                "raw": {
                    "intercept_s": raw.intercept,
                    "slope_s_per_resource": raw.slope,
                    "r_squared": raw.r_squared,
                },
            }
        )
    return fits
