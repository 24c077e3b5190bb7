"""On the local cluster: what the GitOps layer adds to a drift check, and what the drain costs a destroy
when there is nothing to drain.

One local cluster (``gitops_infra.local``: etcd, kube-apiserver, kube-controller-manager, Flux's source-
and kustomize-controller) and one SSH fleet server, as the cluster tests start them. The stack is the
drain tests' program (``tests/cluster/drain_fixture``): a cluster the stack owns, ``FluxBootstrap``
syncing an empty fleet path, and ``size`` ConfigMaps, so that ``size`` is about its resource count.

- **Drift**: ``detect_drift(layers=("iac",))`` (a ``pulumi refresh --preview-only``) against
  ``detect_drift()`` (that, then the GitOps layer: the state's Flux objects and their provider read back,
  and the cluster's Kustomizations and HelmReleases listed), alternating which goes first.
- **Teardown**: ``destroy(drain=True)`` against ``destroy(drain=False)`` of the same stack, each after an
  untimed ``up``, alternating. Nothing is there to drain, so the difference is the drain's fixed cost:
  reading the state's secrets, the lock check, and a few LISTs and one PATCH per Flux object.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from statistics import median
from typing import Any

from gitops_infra.automation import StackOptions, destroy, detect_drift, up
from tests.support import TOOLCHAIN, drain_project

from .fixture import require_engine
from .local_fleet import local_fleet
from .stats import paired_ratio, timed

STACK = "bench"
SIZE = 100
DRIFT_TARGET = 1.10
"""The GitOps layer within 10% of the IaC check of a 100-resource stack (issue 28)."""


@contextmanager
def _stack(size: int) -> Iterator[StackOptions]:
    engine = require_engine()
    with local_fleet("bench-cluster-") as local:
        tmp, fleet = local.tmp, local.fleet
        fleet.commit({"clusters/bench/README.md": "The bench's fleet path.\n"}, "an empty fleet path")
        root, env = drain_project(
            tmp,
            STACK,
            path=[TOOLCHAIN.bin_dir, engine],
            kubeconfig=local.cluster.kubeconfig,
            private_key=local.key.private_key,
            settings={
                "log": str(tmp / "order.log"),
                "knownHosts": fleet.known_hosts,
                "url": fleet.url,
                "path": "clusters/bench",
                "namespace": "flux-bench",
                "configMaps": str(size),
            },
        )
        yield StackOptions(work_dir=root, env=env)


def run(repeats: int, size: int = SIZE) -> dict[str, Any]:
    print(f"[cluster] drift layers and the drain's overhead, {size} ConfigMaps x{repeats}", file=sys.stderr)
    with _stack(size) as options:
        created = up(STACK, options=options)
        resources = sum(created.changes.values())
        detect_drift(STACK, options=options)  # warm-up, untimed
        iac_s: list[float] = []
        both_s: list[float] = []
        for index in range(repeats):
            pair = [
                (iac_s, lambda: detect_drift(STACK, options=options, layers=("iac",))),
                (both_s, lambda: detect_drift(STACK, options=options)),
            ]
            for times, check in pair if index % 2 == 0 else reversed(pair):
                times.append(timed(check))
        drained_s: list[float] = []
        undrained_s: list[float] = []
        for index in range(repeats):
            pair = [(drained_s, True), (undrained_s, False)]
            for times, drain in pair if index % 2 == 0 else reversed(pair):
                up(STACK, options=options)  # untimed: whatever the last destroy removed
                times.append(timed(lambda drain=drain: destroy(STACK, options=options, drain=drain)))
    return {
        "resources": resources,
        "repeats": repeats,
        "iac_s": iac_s,
        "both_layers_s": both_s,
        "iac_median_s": median(iac_s),
        "both_layers_median_s": median(both_s),
        "gitops_layer_ratio": paired_ratio(both_s, iac_s),
        "gitops_layer_target": DRIFT_TARGET,
        "drained_destroy_s": drained_s,
        "undrained_destroy_s": undrained_s,
        "drained_destroy_median_s": median(drained_s),
        "undrained_destroy_median_s": median(undrained_s),
        "drain_overhead_ratio": paired_ratio(drained_s, undrained_s),
    }
