"""The local cluster and an SSH fleet repository in a temp directory, for the benches that run Flux.

What ``cluster_layers`` and ``receiver_latency`` both start from: the cluster (``gitops_infra.local``,
from the toolchain ``make setup`` built), a deploy key, and the fleet server holding it; all stopped, and
the directory removed, when the block ends.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster
from tests.support import TOOLCHAIN


@dataclass(frozen=True)
class LocalFleet:
    """A running local cluster and fleet server, and the directory they work in."""

    tmp: Path
    cluster: LocalCluster
    key: DeployKeyPair
    fleet: FleetServer


@contextmanager
def local_fleet(prefix: str) -> Iterator[LocalFleet]:
    """The cluster and the fleet server, started in a temp directory named with ``prefix``. Exits saying
    how to build the toolchain when it is missing."""
    if TOOLCHAIN.missing():
        raise SystemExit("the local cluster's toolchain is not built: run `make setup`")
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        tmp = Path(directory)
        cluster = LocalCluster(tmp / "cluster", toolchain=TOOLCHAIN).start()
        key = DeployKeyPair.generate()
        fleet = FleetServer(tmp / "fleet", key)
        try:
            fleet.start()
            yield LocalFleet(tmp, cluster, key, fleet)
        finally:
            fleet.stop()
            cluster.stop()
