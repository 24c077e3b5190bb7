"""External Secrets Operator on the local cluster, reading AWS Secrets Manager from moto's server.

Started on request, after the cluster (``running(cluster, ExternalSecretsController(workdir, cluster))``):
nothing else in the harness needs it, and its CRDs are more than Flux's together.
:class:`ExternalSecretsController` applies the CRD bundle ESO's module ships (server-side: its CRDs are
too big for client-side apply's annotation), starts moto's server (``moto[server]``) on a free loopback
port as Secrets Manager, then the controller (v0.20.4, which ``tools/cluster/build-external-secrets.sh``
builds) out of cluster with ``KUBECONFIG``.

ESO's AWS provider has no spec field for an endpoint: ``AWS_SECRETSMANAGER_ENDPOINT`` on the controller's
process points it at moto, and ``AWS_STS_ENDPOINT`` does the same for a store that assumes a role. The
controller gets dummy static credentials in its environment, which is what the default credential chain
finds first: so a ``ClusterSecretStore`` with no ``auth``, as the platform makes it (EKS Pod Identity
hands the real controller its role the same way, through the chain), works here unchanged. The
controller never sees the user's own AWS configuration or the instance metadata service.
"""

from __future__ import annotations

import importlib.util
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MissingExtraError
from ._crds import apply_crds
from ._processes import Harness, Processes, free_port
from ._project import SETUP_HINT

if TYPE_CHECKING:
    from ._cluster import LocalCluster

__all__ = ["CREDENTIALS", "ExternalSecretsController"]

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
"""The dummy credentials the controller and :meth:`ExternalSecretsController.secrets_manager` sign with:
moto accepts any."""
BUILD_DIR = "external-secrets"
"""Where setup builds the controller and its CRD bundle, beside the cluster's ``bin``."""


class ExternalSecretsController(Harness):
    """ESO's CRDs, moto's server as AWS Secrets Manager, and ESO's controller, beside a started cluster."""

    def __init__(self, workdir: Path, cluster: LocalCluster, *, region: str = "us-east-1") -> None:
        """ESO for ``cluster`` (started first), its logs under ``workdir``; ``region`` is what
        :meth:`secrets_manager` signs for (moto keeps each region's secrets apart, and a store names one)."""
        self.workdir = workdir
        self.cluster = cluster
        self.region = region
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.endpoint = ""
        """moto's URL, once started: where the controller's Secrets Manager and STS calls go."""
        built = cluster.toolchain.bin_dir.parent / BUILD_DIR
        self.binary = built / "external-secrets"
        self.crds = built / "crds.yaml"

    def _start(self) -> None:
        for path in (self.binary, self.crds):
            if not path.is_file():
                raise FileNotFoundError(f"{path} is missing: {SETUP_HINT}")
        # The server's web framework comes with moto's `server` extra only (the `dev` extra has it).
        if any(importlib.util.find_spec(name) is None for name in ("moto", "flask", "flask_cors")):
            raise MissingExtraError(
                "the local External Secrets needs moto's server: pip install 'moto[server]'", extra="dev"
            )
        self._apply_crds()
        self._start_moto()
        self._start_controller()

    def _apply_crds(self) -> None:
        apply_crds(self.cluster.api(), [self.crds])

    def _start_moto(self) -> None:
        port = free_port()
        self.endpoint = f"http://127.0.0.1:{port}"
        # moto's server is a module of the moto package: the same interpreter runs it, in any virtualenv.
        moto = self.processes.start(
            "moto", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        )
        self.processes.wait_until(moto, lambda: _answers(f"{self.endpoint}/moto-api/"), "/moto-api/")

    def _start_controller(self) -> None:
        live = free_port()
        isolated = self.workdir / "aws"
        isolated.mkdir(exist_ok=True)
        controller = self.processes.start(
            "external-secrets",
            [
                str(self.binary),
                "--enable-leader-election=false",
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--live-addr=127.0.0.1:{live}",
            ],
            {
                "KUBECONFIG": str(self.cluster.kubeconfig_path),
                "AWS_SECRETSMANAGER_ENDPOINT": self.endpoint,
                "AWS_STS_ENDPOINT": self.endpoint,
                **CREDENTIALS,
                # Neither the user's profiles nor an instance's role: only the credentials above.
                "AWS_CONFIG_FILE": str(isolated / "config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(isolated / "credentials"),
                "AWS_EC2_METADATA_DISABLED": "true",
            },
        )
        self.processes.wait_until(
            controller, lambda: _answers(f"http://127.0.0.1:{live}/healthz"), "/healthz"
        )

    def secrets_manager(self) -> Any:
        """A boto3 Secrets Manager client for moto's server, in :attr:`region`: how a test writes the
        secrets the controller reads."""
        import boto3

        return boto3.client(
            "secretsmanager",
            region_name=self.region,
            endpoint_url=self.endpoint,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )


def _answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)
