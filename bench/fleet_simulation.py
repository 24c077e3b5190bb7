"""How long a fleet drift check takes on GitHub Actions: one runner against a matrix, for 50 to 5,000 stacks.

A model, not a measurement: ``python -m bench.fleet_simulation [--per-stack S] [--refresh R] ...``.

- A stack costs ``per_stack`` seconds of our own work on a runner (measured by the ``shards`` suite:
  the engine, the language host, the dynamic provider, 4 at a time on 2 cores) plus ``refresh`` seconds
  of waiting on the cloud's APIs. The refresh time is an **assumption**: 60 s by default, for an EKS
  platform stack of a few dozen AWS resources read one API call each, with retries.
- A runner checks ``parallel`` stacks at a time (``--parallel``, 4 by default).
- Every job pays ``job_overhead`` seconds before it checks anything (checkout, Python, the engine,
  OIDC): 90 s assumed.
- GitHub runs at most 256 jobs from one matrix, ``concurrency`` of them at once (20 on the Free plan's
  hosted runners, 60 on Team, 500 on Enterprise), and stops a job after 6 hours.
- ``fleet matrix`` makes a job a stack up to 256 stacks, else 256 shards; a shard's size is its real size
  under our hash, on made-up stack names (the largest shard sets the pace, not the mean).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from gitops_infra.automation.fleet.inventory import shard_index

GITHUB_MAX_JOBS = 256
JOB_LIMIT_S = 6 * 3600
PLANS = {"Free": 20, "Team": 60, "Enterprise": 500}
FLEETS = (50, 500, 5000)


@dataclass(frozen=True)
class Model:
    per_stack: float
    refresh: float
    job_overhead: float
    parallel: int

    def stacks_time(self, count: int) -> float:
        """Seconds one runner takes to check ``count`` stacks, ``parallel`` at a time."""
        return math.ceil(count / self.parallel) * (self.refresh + self.per_stack)

    def one_runner(self, stacks: int) -> float:
        return self.job_overhead + self.stacks_time(stacks)

    def matrix(
        self, stacks: int, concurrency: int, max_jobs: int = GITHUB_MAX_JOBS
    ) -> tuple[float, float, int]:
        """Wall seconds for the matrix, its longest job, and how many jobs it has."""
        if stacks <= max_jobs:
            jobs, longest = stacks, self.job_overhead + self.stacks_time(1)
        else:
            jobs = max_jobs
            sizes = [0] * jobs
            for index in range(stacks):
                sizes[shard_index(f"organization/fleet/stack-{index:05d}", jobs)] += 1
            longest = self.job_overhead + self.stacks_time(max(sizes))
        rounds = math.ceil(jobs / concurrency)
        report = self.job_overhead + 5  # the report job: download and merge
        return rounds * longest + report, longest, jobs


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fleet_simulation", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--per-stack", type=float, default=2.66, help="our seconds a stack (the shards suite, 2 cores)"
    )
    parser.add_argument("--refresh", type=float, default=60.0, help="assumed cloud refresh seconds a stack")
    parser.add_argument("--job-overhead", type=float, default=90.0, help="assumed seconds a job starts in")
    parser.add_argument("--parallel", type=int, default=4, help="stacks a runner checks at once")
    args = parser.parse_args(argv)
    model = Model(args.per_stack, args.refresh, args.job_overhead, args.parallel)
    print(
        f"per stack: {model.per_stack:.1f}s ours (measured) + {model.refresh:.0f}s cloud refresh (assumed); "
        f"{model.parallel} at a time a runner; {model.job_overhead:.0f}s a job to start (assumed)\n"
    )
    header = ["stacks", "one runner", "plan (jobs at once)", "--max-jobs", "jobs", "longest job", "wall time"]
    print("| " + " | ".join([*header, "speed-up"]) + " |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for stacks in FLEETS:
        single = model.one_runner(stacks)
        over = " (over the 6 h job limit: never finishes)" if single > JOB_LIMIT_S else ""
        for plan, concurrency in PLANS.items():
            # The default (256), and as many jobs as the plan runs at once: fewer jobs pay fewer starts.
            for max_jobs in sorted({GITHUB_MAX_JOBS, min(concurrency, GITHUB_MAX_JOBS)}):
                wall, longest, jobs = model.matrix(stacks, concurrency, max_jobs)
                limit = " (over 6 h)" if longest > JOB_LIMIT_S else ""
                cells = [stacks, f"{_hours(single)}{over}", f"{plan} ({concurrency})", max_jobs, jobs]
                cells += [f"{_hours(longest)}{limit}", _hours(wall), f"{single / wall:.1f}x"]
                print("| " + " | ".join(str(cell) for cell in cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
