"""The fleet past one machine: listing, splitting and merging at 200-500 stacks, and shards against one run.

One fixture project holding ``STACKS`` small stacks (one file resource each, the engine tests' dynamic
provider), every tenth drifted out of band. The first stack is brought up by the engine; the others are
made from its exported state (``pulumi stack import``, with their own stack name, files and config),
which is what they would hold after their own ``up``, at a fraction of the setup time.

- ``fleet list``, ``fleet matrix`` and ``fleet report`` are timed as subprocesses (the CLI a CI job runs)
  over every stack, and over a fleet of 500 stack files (list, matrix; no backend needed) and 500 results
  (report).
- ``drift --all`` in one process (``--parallel 4``) is timed against 4 shards run at once (4 processes,
  ``--parallel 1`` each: the same 4 engines at a time), back to back, alternating which goes first.
  Both drifted sets must be the same, and ``fleet report`` over the shards must equal the single run.
- ``--shard-counts`` runs every shard of each N one after the other (in-process) and checks that they
  cover each stack exactly once and that their merged report equals the single run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import yaml

from gitops_infra.automation import StackOptions, detect_drift_all
from gitops_infra.automation.fleet.inventory import Shard, fleet_stacks
from gitops_infra.automation.fleet.reports import merge_drift_reports
from gitops_infra.automation.results import to_jsonable
from tests.support import without_times

from .fixture import STACK, Fixture, fixture
from .stats import clocked

STACKS = 200
LISTED = 500
CLI = str(Path(sys.executable).parent / "gitops-infra")


@dataclass(frozen=True)
class Fleet:
    fx: Fixture
    names: tuple[str, ...]
    drifted: frozenset[str]

    def cli(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CLI, *args],
            cwd=cwd or self.fx.root,
            env={**os.environ, **self.fx.env},
            capture_output=True,
            text=True,
            check=False,
        )


def _clone_stack(fx: Fixture, exported: str, settings: dict[str, Any], index: int) -> str:
    name = f"s{index:03d}"
    files = fx.root.parent / f"files-{name}"
    shutil.copytree(fx.root.parent / "files", files)
    config = dict(settings["config"])
    config["fixture:directory"] = str(files)
    config["gitops-infra:fleet"] = {
        "wave": index % 3,
        "labels": {"shard-bench": "yes", "tier": f"t{index % 4}"},
    }
    (fx.root / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({**settings, "config": config}))
    state = exported.replace(f"urn:pulumi:{STACK}::", f"urn:pulumi:{name}::").replace(
        f"fixture-{STACK}", f"fixture-{name}"
    )
    state = state.replace(json.dumps(str(fx.root.parent / "files"))[1:-1], json.dumps(str(files))[1:-1])
    path = fx.root.parent / f"state-{name}.json"
    path.write_text(state)
    env = {**os.environ, **fx.env}
    for args in (["stack", "init", name], ["stack", "import", "--file", str(path), "--stack", name]):
        subprocess.run(
            ["pulumi", *args, "--non-interactive"], cwd=fx.root, env=env, check=True, capture_output=True
        )
    return name


@contextmanager
def fleet(count: int) -> Iterator[Fleet]:
    with fixture(1) as fx:
        exported = _export(fx)
        settings = yaml.safe_load((fx.root / f"Pulumi.{STACK}.yaml").read_text())
        with ThreadPoolExecutor(max_workers=4) as pool:
            names = list(pool.map(lambda i: _clone_stack(fx, exported, settings, i), range(1, count)))
        subprocess.run(["git", "-C", str(fx.root), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(fx.root), "commit", "-qm", f"{count} stacks"], check=True)
        drifted = set()
        for index, name in enumerate(names, start=1):
            if index % 10 == 0:
                for file in (fx.root.parent / f"files-{name}").iterdir():
                    file.write_text("edited out of band")
                drifted.add(f"organization/fixture/{name}")
        yield Fleet(fx=fx, names=(STACK, *names), drifted=frozenset(drifted))


def _export(fx: Fixture) -> str:
    done = subprocess.run(
        ["pulumi", "stack", "export", "--stack", STACK, "--non-interactive"],
        cwd=fx.root,
        env={**os.environ, **fx.env},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _files_only(root: Path, count: int) -> Path:
    """A project of ``count`` stack files (no backend): what ``fleet list`` and ``matrix`` read."""
    project = root / f"listed-{count}"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: listed\nruntime: python\n")
    for index in range(count):
        fleet = {"wave": index % 3, "labels": {"tier": f"t{index % 4}", "region": f"r{index % 7}"}}
        (project / f"Pulumi.s{index:04d}.yaml").write_text(
            yaml.safe_dump({"config": {"gitops-infra:fleet": fleet}})
        )
    return project


def _drifted(document: dict[str, Any]) -> frozenset[str]:
    return frozenset(s["name"] for s in document["stacks"] if s["has_drift"])


def _timed_cli(fl: Fleet, repeats: int, *args: str, cwd: Path | None = None) -> list[float]:
    times = []
    for _ in range(repeats):
        seconds, done = clocked(lambda: fl.cli(*args, cwd=cwd))
        if done.returncode not in (0, 2):
            raise RuntimeError(f"gitops-infra {' '.join(args)}: {done.stderr[-2000:]}")
        times.append(seconds)
    return times


def _shards_at_once(fl: Fleet, out: Path, count: int) -> list[Path]:
    run = out / f"run-{len(list(out.glob('run-*')))}"
    run.mkdir()

    def one(index: int) -> Path:
        done = fl.cli("drift", "--all", "--parallel", "1", "--shard", f"{index}/{count}", "--json")
        path = run / f"shard-{index}-of-{count}.json"
        path.write_text(done.stdout)
        return path

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def run(repeats: int, stacks: int = STACKS, shard_counts: Sequence[int] = ()) -> dict[str, Any]:
    print(f"[shards] making {stacks} stacks...", file=sys.stderr)
    with fleet(stacks) as fl:
        out = Path(tempfile.mkdtemp(prefix="gitops-infra-bench-shards-"))
        try:
            return _measure(fl, out, repeats, shard_counts)
        finally:
            shutil.rmtree(out, ignore_errors=True)


def _measure(fl: Fleet, out: Path, repeats: int, shard_counts: Sequence[int]) -> dict[str, Any]:
    stacks = len(fl.names)
    print("[shards] drift --all, one process against 4 shards at once...", file=sys.stderr)
    # No warm-up pair: at 200 stacks a pass takes minutes, and each engine process starts cold anyway.
    whole: dict[str, Any] = {}
    report_inputs: list[Path] = []
    one_s: list[float] = []
    sharded_s: list[float] = []
    identical = True
    for index in range(repeats):
        print(f"[shards]   repeat {index + 1}/{repeats}", file=sys.stderr)
        one: subprocess.CompletedProcess[str] | None = None
        files: list[Path] = []
        for first in (True, False) if index % 2 == 0 else (False, True):
            if first:
                seconds, one = clocked(lambda: fl.cli("drift", "--all", "--parallel", "4", "--json"))
                one_s.append(seconds)
            else:
                seconds, files = clocked(lambda: _shards_at_once(fl, out, 4))
                sharded_s.append(seconds)
        assert one is not None
        if not whole:  # the first single run is the reference
            whole = json.loads(one.stdout)
            if len(whole["stacks"]) != stacks or whole["has_errors"] or _drifted(whole) != fl.drifted:
                raise RuntimeError(f"the single run is not the fleet made: {one.stderr[-2000:]}")
            report_inputs = files
        merged = to_jsonable(merge_drift_reports(files))
        identical &= _drifted(json.loads(one.stdout)) == _drifted(merged) == fl.drifted
        identical &= without_times(merged) == without_times(whole)

    print("[shards] fleet list, matrix and report...", file=sys.stderr)
    listed = _files_only(out, LISTED)
    big = out / "results-500.json"
    big.write_text(json.dumps(_scaled(whole, LISTED)))
    cli = {
        f"fleet list ({stacks})": _timed_cli(fl, repeats, "fleet", "list", "--json"),
        f"fleet matrix --op drift ({stacks})": _timed_cli(fl, repeats, "fleet", "matrix", "--op", "drift"),
        f"fleet report ({stacks}, 4 shards)": _timed_cli(
            fl, repeats, "fleet", "report", *map(str, report_inputs), "--json"
        ),
        f"fleet list ({LISTED})": _timed_cli(fl, repeats, "fleet", "list", "--json", cwd=listed),
        f"fleet matrix --op drift ({LISTED})": _timed_cli(
            fl, repeats, "fleet", "matrix", "--op", "drift", cwd=listed
        ),
        f"fleet matrix --op drift --max-jobs 256 ({LISTED} → shards)": _timed_cli(
            fl, repeats, "fleet", "matrix", "--op", "drift", "--max-jobs", "256", cwd=listed
        ),
        f"fleet report ({LISTED})": _timed_cli(fl, repeats, "fleet", "report", str(big), "--json"),
        "gitops-infra --help (the CLI's floor)": _timed_cli(fl, repeats, "--help"),
    }

    counts = []
    for count in shard_counts:
        print(f"[shards] every shard of {count}, one after the other...", file=sys.stderr)
        everything = fleet_stacks([fl.fx.root])
        options = StackOptions(work_dir=fl.fx.root, env=fl.fx.env)
        files = []
        for index in range(count):
            part = detect_drift_all(everything, options=options, parallel=4, shard=Shard(index, count))
            files.append(out / f"counted-{index}-of-{count}.json")
            files[-1].write_text(json.dumps(to_jsonable(part)))
        seen = [s["name"] for f in files for s in json.loads(f.read_text())["stacks"]]
        merged = to_jsonable(merge_drift_reports(files))
        counts.append(
            {
                "n": count,
                "stacks_seen": len(seen),
                "each_once": sorted(seen) == sorted(s["name"] for s in whole["stacks"]),
                "report_equals_single_run": without_times(merged) == without_times(whole),
            }
        )

    one_median, sharded_median = median(one_s), median(sharded_s)
    return {
        "stacks": stacks,
        "drifted": len(fl.drifted),
        "repeats": repeats,
        "one_process_s": one_s,
        "four_shards_s": sharded_s,
        "one_process_median_s": one_median,
        "four_shards_median_s": sharded_median,
        "ratio": sharded_median / one_median,
        "identical": identical,
        "cli_median_s": {name: median(times) for name, times in cli.items()},
        "per_stack_s": one_median * 4 / stacks,
        "shard_counts": counts,
    }


def _scaled(whole: dict[str, Any], count: int) -> dict[str, Any]:
    """``whole`` grown to ``count`` stacks by renaming copies of its stacks: a 500-stack report's size."""
    stacks = []
    for index in range(count):
        stack = json.loads(json.dumps(whole["stacks"][index % len(whole["stacks"])]))
        stack["stack"] = f"copy{index:04d}"
        stack["name"] = f"organization/fixture/copy{index:04d}"
        if stack["report"] is not None:
            stack["report"]["stack"] = stack["stack"]
        stacks.append(stack)
    return {**whole, "stacks": stacks}
