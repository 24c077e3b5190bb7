"""The Flux Operator on the local cluster, as a process: what ``flux.install: operator`` stacks install with.

Started on request, after the cluster (``running(cluster, FluxOperator(workdir, cluster))``): only a test
of the operator mode needs it, and it costs memory. :class:`FluxOperator` applies the operator's CRDs
(``FluxInstance``, ``FluxReport``, ``ResourceSet``, ``ResourceSetInputProvider``, as its module ships them),
makes Flux's namespace, and starts the operator (v0.59.0, which ``tools/cluster/build-flux-operator.sh``
builds) out of cluster with ``KUBECONFIG`` and ``RUNTIME_NAMESPACE=flux-system``. Its storage path is the
copy of Flux's distribution manifests its module bundles, so a ``FluxInstance`` installs with no network.
The operator is installed outside the stack here: such a stack says ``operatorInstall: external``.

The split: the operator applies what a ``FluxInstance`` asks for (the CRDs, RBAC, the controllers'
Deployments and Services, network policies) and checks their health, and kwok reports the Deployments'
pods Running, so they become available, though no container runs in them. The work is done by the
cluster's own controllers, the same ones built from modules and run as processes
(:class:`~gitops_infra.local.LocalCluster`). So the operator's install, its upgrade and its Ready are
real; what a FluxInstance's images would do is what those processes do.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from ._crds import apply_crds
from ._objects import create_if_absent
from ._processes import Harness, Processes, free_port
from ._project import SETUP_HINT

if TYPE_CHECKING:
    from ._cluster import LocalCluster

__all__ = ["FluxOperator"]

DATA_DIR = "flux-operator-data"
"""Where setup copies the Flux manifests the operator's module bundles, beside the cluster's ``bin``."""
CRD_DIR = "flux-operator"
"""The operator's CRDs, under the cluster's CRD directory (not applied to every cluster)."""
NAMESPACE = "flux-system"


class FluxOperator(Harness):
    """The Flux Operator's CRDs, Flux's namespace, and the operator, beside a started cluster."""

    def __init__(self, workdir: Path, cluster: LocalCluster, *, namespace: str = NAMESPACE) -> None:
        """The operator for ``cluster`` (started first), its logs under ``workdir``, watching
        ``namespace`` (its ``RUNTIME_NAMESPACE``, where it reconciles the ``FluxInstance`` named ``flux``)."""
        self.workdir = workdir
        self.cluster = cluster
        self.namespace = namespace
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.data = cluster.toolchain.bin_dir.parent / DATA_DIR
        self.crds = cluster.toolchain.crd_dir / CRD_DIR

    def _start(self) -> None:
        binary = self.cluster.toolchain.binary("flux-operator")
        for path in (self.data / "flux", self.crds):
            if not path.is_dir():
                raise FileNotFoundError(f"{path} is missing: {SETUP_HINT}")
        self._apply_crds()
        self._make_namespace()
        health = free_port()
        operator = self.processes.start(
            "flux-operator",
            [
                binary,
                f"--storage-path={self.data}",
                "--enable-leader-election=false",
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--health-addr=127.0.0.1:{health}",
                "--web-server-port=0",  # its UI: not built here, and not wanted on a port
            ],
            {
                "KUBECONFIG": str(self.cluster.kubeconfig_path),
                "RUNTIME_NAMESPACE": self.namespace,
                # Set in a pod, it makes the operator check its container's OS: this is no container.
                "KUBERNETES_SERVICE_HOST": "",
            },
        )

        def ready() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as response:
                return bool(response.status == 200)

        self.processes.wait_until(operator, ready, "/readyz")

    def _apply_crds(self) -> None:
        apply_crds(self.cluster.api(), sorted(self.crds.glob("*.yaml")))

    def _make_namespace(self) -> None:
        from kubernetes import client

        core = client.CoreV1Api(self.cluster.api())
        create_if_absent(
            lambda: core.create_namespace(
                client.V1Namespace(metadata=client.V1ObjectMeta(name=self.namespace))
            )
        )
