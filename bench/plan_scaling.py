"""How the offline plan's time grows with the number of node groups and of Flux health checks.

The config model allows one notification Provider/Alert pair (``flux.notifications`` is a single
object), so notifications cannot be scaled; every generated config enables that one pair and the Flux
list that does scale, the Kustomization's ``healthChecks``, is scaled instead. Each N gets its own
``Pulumi.<stack>.yaml`` in a temp project whose ``Pulumi.yaml`` has ``main:`` pointing at this
repository's ``stacks/``; ``offline_plan`` runs in-process after one untimed warm-up (so SDK imports are
not counted), and the repeats interleave the Ns.
"""

from __future__ import annotations

import copy
import gc
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

import yaml

from gitops_infra.automation import StackOptions, offline_plan
from gitops_infra.config import plan_config
from tests.support import REPO_ROOT, stack_project

from .stats import linear_fit, timed

STACK = "bench"
NS = "gitops-infra"
LINEAR_MAX_DEVIATION = 0.10
"""Growth is called linear when every median lies within 10% of the least-squares line. R² is reported
too, but it says little when the line is nearly flat (a tiny slope under run-to-run noise)."""


def _base() -> dict[str, Any]:
    settings = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())
    config: dict[str, Any] = settings["config"]
    config[f"{NS}:flux"]["notifications"] = {
        "providerType": "slack",
        "channel": "platform-alerts",
        "secretName": "slack-webhook",
    }
    return config


def _node_groups(config: dict[str, Any], n: int) -> dict[str, Any]:
    config = copy.deepcopy(config)
    template = config[f"{NS}:cluster"]["nodeGroups"][0]
    config[f"{NS}:cluster"]["nodeGroups"] = [{**template, "name": f"group-{i:02d}"} for i in range(n)]
    return config


def _health_checks(config: dict[str, Any], n: int) -> dict[str, Any]:
    config = copy.deepcopy(config)
    config[f"{NS}:flux"]["healthChecks"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"app-{i:02d}", "namespace": "apps"}
        for i in range(n)
    ]
    return config


DIMENSIONS: dict[str, Callable[[dict[str, Any], int], dict[str, Any]]] = {
    "node groups": _node_groups,
    "flux health checks": _health_checks,
}


def _project(tmp: Path, name: str, config: dict[str, Any]) -> Path:
    project = stack_project(tmp / name)
    (project / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump({"config": config}))
    return project


def _plan(project: Path) -> int:
    return len(offline_plan(STACK, options=StackOptions(work_dir=project), config_step=plan_config).resources)


def run(ns: Sequence[int], repeats: int) -> list[dict[str, Any]]:
    base = _base()
    rows: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="gitops-infra-bench-plan-"))
    try:
        _plan(_project(tmp, "warm-up", base))  # imports and first-run caches, untimed
        for dimension, scale in DIMENSIONS.items():
            print(f"[scaling] offline plan vs {dimension}, N={list(ns)} x{repeats}", file=sys.stderr)
            projects = {n: _project(tmp, f"{dimension.replace(' ', '-')}-{n}", scale(base, n)) for n in ns}
            resources = {n: _plan(project) for n, project in projects.items()}
            times: dict[int, list[float]] = {n: [] for n in ns}
            for index in range(repeats):
                order = list(ns) if index % 2 == 0 else list(reversed(ns))
                for n in order:
                    gc.collect()  # a full collection mid-plan costs more than a small plan; start clean
                    times[n].append(timed(lambda project=projects[n]: _plan(project)))
            medians = [median(times[n]) for n in ns]
            fit = linear_fit([float(n) for n in ns], medians)
            rows.append(
                {
                    "dimension": dimension,
                    "repeats": repeats,
                    "points": [
                        {
                            "n": n,
                            "resources": resources[n],
                            "times_s": times[n],
                            "median_s": m,
                            "fit_s": fit.predict(n),
                        }
                        for n, m in zip(ns, medians, strict=True)
                    ],
                    "fit": {
                        "intercept_s": fit.intercept,
                        "slope_s_per_n": fit.slope,
                        "r_squared": fit.r_squared,
                        "max_rel_deviation": fit.max_rel_deviation,
                    },
                    "linear": fit.max_rel_deviation <= LINEAR_MAX_DEVIATION,
                }
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
