"""Fleet drift: ``detect_drift_all`` over 4 stacks against 4 sequential ``pulumi refresh --preview-only``.

One project with 4 stacks of the same size, all up and without drift. Each repeat times ours (the 4
stacks checked ``parallel`` at a time, each in its own engine process) and the raw loop back to back,
alternating which goes first. The figure is the speed-up: raw median / ours median.
"""

from __future__ import annotations

import sys
from statistics import median

from gitops_infra.automation import StackOptions, detect_drift_all

from .fixture import STACK, Fixture, fixture
from .stats import timed

STACKS = 4


def _ours(fx: Fixture, parallel: int) -> None:
    fleet = detect_drift_all(options=StackOptions(work_dir=fx.root, env=fx.env), parallel=parallel)
    if len(fleet.stacks) != STACKS or fleet.has_drift or fleet.has_errors:
        raise RuntimeError(f"expected {STACKS} clean stacks, got {fleet}")


def _raw(fx: Fixture, stacks: list[str]) -> None:
    for stack in stacks:
        fx.pulumi("refresh", "--preview-only", stack=stack)


def run(size: int, repeats: int, parallel: int = STACKS) -> dict[str, object]:
    print(f"[fleet] setting up {STACKS} stacks of {size} resources...", file=sys.stderr)
    with fixture(size) as fx:
        stacks = [STACK, *(f"{STACK}{index}" for index in range(2, STACKS + 1))]
        for stack in stacks[1:]:
            fx.add_stack(stack, fx.root.parent / f"files-{stack}")
        _ours(fx, parallel), _raw(fx, stacks)  # warm-up, untimed
        ours_s: list[float] = []
        raw_s: list[float] = []
        for index in range(repeats):
            print(f"[fleet]   repeat {index + 1}/{repeats}", file=sys.stderr)
            pair = [(ours_s, lambda: _ours(fx, parallel)), (raw_s, lambda: _raw(fx, stacks))]
            for times, work in pair if index % 2 == 0 else reversed(pair):
                times.append(timed(work))
    ours_median, raw_median = median(ours_s), median(raw_s)
    return {
        "stacks": STACKS,
        "resources_per_stack": size,
        "parallel": parallel,
        "repeats": repeats,
        "ours_s": ours_s,
        "raw_s": raw_s,
        "ours_median_s": ours_median,
        "raw_median_s": raw_median,
        "speedup": raw_median / ours_median,
    }
