"""``python -m bench``: run the benchmarks, print their tables and write the JSON.

Defaults: all five suites, 5 repeats, the engine suite at 10, 100 and 500 resources, the fleet suite (4
stacks) at the first of those sizes, the scaling suite at N = 1, 2, 4, 8, 16, the shards suite at 200
stacks and one repeat (16 to 35 minutes on 2 cores, as the machine goes). ``--quick`` is a smoke run: 10
resources, 3 repeats, N = 1, 2, 4, 20 stacks (its medians are too noisy to quote).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from gitops_infra.automation.signals import cancel_on_signals
from gitops_infra.cli._console import silence
from tests.support import REPO_ROOT

from . import (
    cluster_layers,
    engine_overhead,
    fleet_drift,
    fleet_shards,
    noise,
    plan_scaling,
    plan_startup,
    receiver_latency,
)
from .fixture import require_engine

SUITES = ("engine", "startup", "scaling", "fleet", "shards", "cluster", "receiver")
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "latest.json"


def _count(text: str) -> int:
    """A positive whole number, for argparse: a count of zero would time nothing and fail minutes later."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def _ints(text: str) -> list[int]:
    """Distinct positive whole numbers separated by commas (``10,100,500``), for argparse."""
    values = [_count(part.strip()) for part in text.split(",") if part.strip()]
    if not values or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected distinct positive whole numbers, such as 10,100,500"
        )
    return values


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 resources, 3 repeats, N=1,2,4")
    parser.add_argument("--repeats", type=_count, help="timed repeats per figure (default 5; quick 3)")
    parser.add_argument("--sizes", type=_ints, help="engine suite resource counts (default 10,100,500)")
    parser.add_argument("--ns", type=_ints, help="scaling suite N values (default 1,2,4,8,16)")
    parser.add_argument(
        "--suite", action="append", choices=SUITES, help="run only this suite (repeatable; default all)"
    )
    parser.add_argument(
        "--operation",
        action="append",
        choices=engine_overhead.OPERATIONS,
        help="engine suite: only this operation (repeatable; default all)",
    )
    parser.add_argument("--stacks", type=_count, help=f"shards suite: stacks (default {fleet_shards.STACKS})")
    parser.add_argument(
        "--shard-counts",
        type=_ints,
        default=[],
        help="shards suite: also run every shard of each N one after the other, and compare (e.g. 1,2,...,8)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON file (default {DEFAULT_OUT})")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="OLD.json",
        help="run nothing: print the change of each figure from OLD.json to --out's file",
    )
    args = parser.parse_args(argv)
    if args.ns is not None and len(args.ns) < 2:
        parser.error("argument --ns: expected two values or more, since a line is fitted through them")
    if args.compare is None:
        _check_out(parser, args.out)
    # A pass over 200 stacks takes minutes: the shards suite times one pair unless --repeats says more.
    args.shard_repeats = args.repeats or 1
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.sizes = args.sizes or ([10] if args.quick else [10, 100, 500])
    args.ns = args.ns or ([1, 2, 4] if args.quick else [1, 2, 4, 8, 16])
    args.suite = args.suite or list(SUITES)
    args.stacks = args.stacks or (20 if args.quick else fleet_shards.STACKS)
    return args


def _check_out(parser: argparse.ArgumentParser, out: Path) -> None:
    """Refuse an ``--out`` that cannot be written now, rather than after the run (a typo'd directory)."""
    if out.is_dir():
        parser.error(f"argument --out: {out} is a directory; expected a JSON file's path")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"argument --out: cannot make its directory {out.parent}: {exc.strerror or exc}")
    if not os.access(out.parent, os.W_OK):
        parser.error(f"argument --out: its directory {out.parent} is not writable")


def _write(out: Path, results: dict[str, Any]) -> str | None:
    """Write the results to ``out``: why not, if that failed (a full disk)."""
    try:
        out.write_text(json.dumps(results, indent=2) + "\n")
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


T = TypeVar("T")


class _Tables:
    """Where the tables go: stdout, until it fails.

    A closed or full stdout (``make bench | head``) ends the tables, not the run: a full run takes half
    an hour, and its results are still measured and written to the JSON.
    """

    closed = False

    def show(self, print_table: Callable[..., T], *args: Any) -> T | None:
        if self.closed:
            return None
        try:
            shown = print_table(*args)
            sys.stdout.flush()
        except OSError:  # only stdout is written here: EPIPE, ENOSPC, EIO
            silence(sys.stdout)
            self.closed = True
            return None
        return shown


def _fmt(seconds: float) -> str:
    return f"{seconds:7.3f}s"


def _verdict(ratio: float, target: float) -> str:
    return "ok" if ratio <= target else "MISS"


def _print_engine(rows: list[dict[str, Any]]) -> None:
    least = min(r["repeats"] for r in rows)
    print(
        f"\n## Automation layer vs raw pulumi CLI (median of n pairs: {least}, more where a row was noisy)\n"
    )
    print("The ratio is the median of the pairs' ratios; the medians' ratio is context.\n")
    print("| operation | vs raw command | resources | n | ours | raw | ratio | medians' ratio | target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['operation']} | `{r['raw_command']}` | {r['resources']} | {r['repeats']} | "
            f"{_fmt(r['ours_median_s'])} | {_fmt(r['raw_median_s'])} | {r['ratio']:.3f} | "
            f"{r['ratio_of_medians']:.3f} | "
            f"<= {r['target']} {_verdict(r['ratio'], r['target'])} |"
        )


def _print_growth(fits: list[dict[str, Any]]) -> None:
    if not fits:
        return
    sizes = " → ".join(str(size) for size in fits[0]["resources"])
    print(f"\n## Growth with resource count ({sizes}): least-squares lines through the medians\n")
    print("| operation | ours: per resource | ours: fixed | R² | raw: per resource | raw: fixed | R² |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for fit in fits:
        cells = [
            f"{line['slope_s_per_resource'] * 1000:.2f} ms | {_fmt(line['intercept_s'])} | "
            f"{line['r_squared']:.4f}"
            for line in (fit["ours"], fit["raw"])
        ]
        print(f"| {fit['operation']} | {' | '.join(cells)} |")


def _print_startup(row: dict[str, Any]) -> None:
    print(
        f"\n## Starting up: the offline plan and the CLI (median of {row['repeats']} repeats; "
        f"the `--help` rows, {row['help_repeats']})\n"
    )
    print("| command | baseline | ours | baseline | ratio | target |")
    print("|---|---|---:|---:|---:|---|")
    ratio = row["plan_floor_ratio"]
    print(
        f"| `{row['command']}` | its floor: the same {row['resources']} resources registered under the same "
        f"mocks, nothing of ours | {_fmt(row['ours_median_s'])} | {_fmt(row['floor_median_s'])} | "
        f"{ratio:.3f} | <= {row['target']} {_verdict(ratio, row['target'])} |"
    )
    print(
        f"| `{row['command']}` | the same floor, with the collector off and no teardown at its end, as "
        f"ours | {_fmt(row['ours_median_s'])} | {_fmt(row['lean_floor_median_s'])} | "
        f"{row['plan_lean_floor_ratio']:.3f} | (context: ours alone) |"
    )
    print(
        f"| `{row['command']}` | import the {len(row['used_modules'])} SDK modules the plan loads | "
        f"{_fmt(row['ours_median_s'])} | {_fmt(row['used_modules_median_s'])} | "
        f"{row['ratio_to_used_modules']:.3f} | (context) |"
    )
    print(
        f'| `gitops-infra --help` | `python -c "import click"` | {_fmt(row["help_median_s"])} | '
        f"{_fmt(row['click_median_s'])} | {row['help_click_ratio']:.3f} | <= {row['help_target']} "
        f"{_verdict(row['help_click_ratio'], row['help_target'])} |"
    )
    print(
        f"| `gitops-infra --help` | `python -c pass` | {_fmt(row['help_median_s'])} | "
        f"{_fmt(row['pass_median_s'])} | {row['help_ratio_to_pass']:.3f} | (context) |"
    )


def _print_fleet(row: dict[str, Any]) -> None:
    print(f"\n## Fleet drift: {row['stacks']} stacks (median of {row['repeats']} repeats)\n")
    print("| ours | vs raw | resources per stack | ours | raw | speed-up |")
    print("|---|---|---:|---:|---:|---:|")
    print(
        f"| `detect_drift_all(parallel={row['parallel']})` | {row['stacks']} sequential "
        f"`pulumi refresh --preview-only` | {row['resources_per_stack']} | {_fmt(row['ours_median_s'])} | "
        f"{_fmt(row['raw_median_s'])} | {row['speedup']:.2f}x |"
    )


def _print_shards(row: dict[str, Any]) -> None:
    print(
        f"\n## The fleet past one machine: {row['stacks']} stacks, {row['drifted']} drifted "
        f"(median of {row['repeats']} repeats)\n"
    )
    print("| ours | vs | ours | baseline | ratio | same drifted set, same report |")
    print("|---|---|---:|---:|---:|---|")
    print(
        f"| 4 shards at once (`drift --all --shard I/4 --parallel 1`, 4 processes) | one process "
        f"(`drift --all --parallel 4`) | {_fmt(row['four_shards_median_s'])} | "
        f"{_fmt(row['one_process_median_s'])} | {row['ratio']:.3f} | {'yes' if row['identical'] else 'NO'} |"
    )
    per_stack = row["per_stack_s"]
    print(f"\nOne stack's drift check costs {per_stack:.2f}s of a runner (4 at a time on this machine).\n")
    print("| command (subprocess) | median | target |")
    print("|---|---:|---|")
    for name, seconds in row["cli_median_s"].items():
        target = "< 1s " + ("ok" if seconds < 1 else "MISS") if "fleet" in name else "(context)"
        print(f"| `{name}` | {_fmt(seconds)} | {target} |")
    if row["shard_counts"]:
        print("\n| N | stacks seen over the N shards | each exactly once | report equals the single run |")
        print("|---:|---:|---|---|")
        for c in row["shard_counts"]:
            print(
                f"| {c['n']} | {c['stacks_seen']} | {'yes' if c['each_once'] else 'NO'} | "
                f"{'yes' if c['report_equals_single_run'] else 'NO'} |"
            )


def _print_cluster(row: dict[str, Any]) -> None:
    print(f"\n## On the local cluster: {row['resources']} resources (median of {row['repeats']} repeats)\n")
    print("| ours | vs | ours | baseline | ratio | target |")
    print("|---|---|---:|---:|---:|---|")
    ratio, target = row["gitops_layer_ratio"], row["gitops_layer_target"]
    print(
        f"| `detect_drift()` (both layers) | `detect_drift(layers=('iac',))` | "
        f"{_fmt(row['both_layers_median_s'])} | {_fmt(row['iac_median_s'])} | {ratio:.3f} | "
        f"<= {target} {_verdict(ratio, target)} |"
    )
    print(
        f"| `destroy()` (the drain, nothing to drain) | `destroy(drain=False)` | "
        f"{_fmt(row['drained_destroy_median_s'])} | {_fmt(row['undrained_destroy_median_s'])} | "
        f"{row['drain_overhead_ratio']:.3f} | (measured) |"
    )


def _print_receiver(row: dict[str, Any]) -> None:
    print(
        f"\n## Commit to applied on the local cluster: polling every {row['interval']} against the Receiver "
        f"({row['commits']} commits, side by side)\n"
    )
    print("| sync | median | p95 | min | max | target |")
    print("|---|---:|---:|---:|---:|---|")
    for label, key, target in (
        (
            f"polling (gitInterval {row['interval']})",
            "polling",
            f"(half the interval: {row['polling_expected_median_s']:.0f} s)",
        ),
        ("Receiver (a signed push event)", "receiver", f"median < {row['receiver_target_median_s']:.0f} s"),
    ):
        r = row[key]
        print(
            f"| {label} | {_fmt(r['median_s'])} | {_fmt(r['p95_s'])} | {_fmt(r['min_s'])} | "
            f"{_fmt(r['max_s'])} | {target} |"
        )


def _print_scaling(rows: list[dict[str, Any]]) -> None:
    print(f"\n## Offline plan time vs N (in-process, median of {rows[0]['repeats']} repeats)\n")
    print("| scaled | N | resources | median | linear fit | ratio to N=first |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        first = r["points"][0]["median_s"]
        for p in r["points"]:
            print(
                f"| {r['dimension']} | {p['n']} | {p['resources']} | {_fmt(p['median_s'])} | "
                f"{_fmt(p['fit_s'])} | {p['median_s'] / first:.3f} |"
            )
    print("\n| scaled | slope per N | intercept | R² | max deviation from fit | linear? |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        f = r["fit"]
        print(
            f"| {r['dimension']} | {f['slope_s_per_n'] * 1000:.1f} ms | {_fmt(f['intercept_s'])} | "
            f"{f['r_squared']:.4f} | {f['max_rel_deviation'] * 100:.1f}% | {'yes' if r['linear'] else 'no'} |"
        )


WARM_SETUP_S = 120
"""A ``make test`` whose setup took less than this built nothing: a warm run."""
MAKE_TEST_RECORD = REPO_ROOT / ".tools" / "make-test.json"


def _headline_fields(results: dict[str, Any]) -> None:
    """The figures other tools read, at fixed places: ``drift.gitops_layer_ratio`` and
    ``teardown.drain_overhead_ratio`` (the cluster suite), ``fleet.matrix_500_s`` and ``fleet.report_500_s``
    (the shards suite), and ``suite.warm_make_test_s`` (the last ``make test``, which records itself)."""
    cluster = results.get("cluster")
    if isinstance(cluster, dict):
        results["drift"] = {"gitops_layer_ratio": cluster["gitops_layer_ratio"]}
        results["teardown"] = {"drain_overhead_ratio": cluster["drain_overhead_ratio"]}
    shards = results.get("shards")
    if isinstance(shards, dict):
        cli = shards["cli_median_s"]
        fleet = results.setdefault("fleet", {})
        fleet["matrix_500_s"] = cli[f"fleet matrix --op drift ({fleet_shards.LISTED})"]
        fleet["report_500_s"] = cli[f"fleet report ({fleet_shards.LISTED})"]
    try:
        record = json.loads(MAKE_TEST_RECORD.read_text())
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and isinstance(record.get("make_test_s"), int | float):
        warm = isinstance(record.get("setup_s"), int | float) and record["setup_s"] < WARM_SETUP_S
        results["suite"] = {
            "warm_make_test_s": record["make_test_s"] if warm else None,
            "last_make_test": record,
        }


def _print_spreads(results: dict[str, Any]) -> None:
    found = noise.spreads(results)
    if not found:
        return
    noisy = sum(s.noisy for s in found)
    print(
        f"\n## Spread of every timed series: min, median, max ({noisy} of {len(found)} spread over "
        f"{noise.NOISY:.0%}, marked NOISY: read their rows as noise, not as a change)\n"
    )
    print("| row | series | min | median | max | spread | |")
    print("|---|---|---:|---:|---:|---:|---|")
    for s in found:
        print(
            f"| {s.row} | {s.series} | {_fmt(s.low)} | {_fmt(s.middle)} | {_fmt(s.high)} | "
            f"{s.spread:.1%} | {'NOISY' if s.noisy else ''} |"
        )


def _print_changes(old_path: Path, new_path: Path) -> int:
    old, new = noise.load(old_path), noise.load(new_path)
    found = noise.changes(old, new)
    when = old.get("started_at", "?"), new.get("started_at", "?")
    print(f"## Change from {old_path} ({when[0]}) to {new_path} ({when[1]})\n")
    if not found:
        print("No figure is in both files.")
        return 1
    # A figure of a row with a noisy series, in either run, may have moved by noise alone.
    noisy = {s.row for results in (old, new) for s in noise.spreads(results) if s.noisy}
    print("| figure | old | new | change | |")
    print("|---|---:|---:|---:|---|")
    for c in found:
        mark = "NOISY" if c.figure.rpartition(".")[0] in noisy else ""
        print(f"| {c.figure} | {c.old:.4g} | {c.new:.4g} | {c.relative:+.1%} | {mark} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C or SIGTERM mid-run goes to the engine running then, as Pulumi's own Ctrl-C: it stops cleanly
    # and leaves no plugin behind, and each suite removes its temp dirs on the way out. A partial run
    # writes nothing.
    with cancel_on_signals() as interruption:
        try:
            return _main(argv)
        except (Exception, KeyboardInterrupt):
            if interruption.signum is None:
                raise
    print(
        f"bench: stopped by {signal.Signals(interruption.signum).name}; no results were written",
        file=sys.stderr,
    )
    return interruption.exit_code


def _main(argv: list[str] | None) -> int:
    args = _args(argv)
    tables = _Tables()
    if args.compare is not None:
        found = tables.show(_print_changes, args.compare, args.out)
        return 1 if tables.closed else (found or 0)
    require_engine()
    started = time.perf_counter()
    results: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "settings": {
            "quick": args.quick,
            "repeats": args.repeats,
            "sizes": args.sizes,
            "ns": args.ns,
            "suites": args.suite,
        },
    }
    if "engine" in args.suite:
        results["engine"] = engine_overhead.run(args.sizes, args.repeats, args.operation or ())
        tables.show(_print_engine, results["engine"])
        results["engine_growth"] = engine_overhead.growth(results["engine"])
        tables.show(_print_growth, results["engine_growth"])
    if "startup" in args.suite:
        results["startup"] = plan_startup.run(args.repeats)
        tables.show(_print_startup, results["startup"])
    if "fleet" in args.suite:
        results["fleet"] = fleet_drift.run(args.sizes[0], args.repeats)
        tables.show(_print_fleet, results["fleet"])
    if "shards" in args.suite:
        results["shards"] = fleet_shards.run(args.shard_repeats, args.stacks, args.shard_counts)
        tables.show(_print_shards, results["shards"])
    if "scaling" in args.suite:
        results["scaling"] = plan_scaling.run(args.ns, args.repeats)
        tables.show(_print_scaling, results["scaling"])
    if "cluster" in args.suite:
        results["cluster"] = cluster_layers.run(args.repeats, 10 if args.quick else cluster_layers.SIZE)
        tables.show(_print_cluster, results["cluster"])
    if "receiver" in args.suite:
        results["receiver"] = receiver_latency.run(3 if args.quick else receiver_latency.COMMITS)
        tables.show(_print_receiver, results["receiver"])
    _headline_fields(results)
    tables.show(_print_spreads, results)
    results["elapsed_s"] = time.perf_counter() - started
    failed = _write(args.out, results)
    if failed is not None:
        print(
            f"bench: cannot write {args.out}: {failed}; the tables above are this run's figures",
            file=sys.stderr,
        )
        return 1
    tables.show(print, f"\nTotal {results['elapsed_s']:.0f}s; results written to {args.out}")
    if tables.closed:
        print(
            f"bench: stdout failed, so the tables stopped there; all results are in {args.out}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
