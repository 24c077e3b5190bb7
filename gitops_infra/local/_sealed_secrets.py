"""The Sealed Secrets controller on a :class:`~._cluster.LocalCluster`, out of cluster, started on request.

The controller only reads in-cluster config (``rest.InClusterConfig``): no kubeconfig flag. So it runs
unmodified in a mount namespace of its own (``unshare --mount --propagation private``, as root or in a
user namespace), where a tmpfs covers ``/run`` and a service-account directory of this harness's work
directory (``token``, ``ca.crt``, ``namespace``) is bound at ``/run/secrets/kubernetes.io/serviceaccount``;
``KUBERNETES_SERVICE_HOST`` and ``KUBERNETES_SERVICE_PORT`` point at the API server. Nothing outside the
work directory changes, and the mounts go with the process.

It starts only when a test asks (:class:`SealedSecretsController`): its CRD sits apart from Flux's
(``.tools/cluster/crds/sealed-secrets``), and the cluster every test shares neither applies it nor runs the
controller. The controller's ServiceAccount is bound to ``cluster-admin``: what the chart's own RBAC grants
is the component's to pin, and the cluster tests install no chart (no container runs here). Key renewal is
off (``--key-renew-period=0``): the platform owns the keys, so the controller must not make its own.
"""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path
from typing import Any

from ._cluster import LocalCluster
from ._crds import apply_crds
from ._objects import create_if_absent
from ._processes import Harness, Processes, free_port

__all__ = [
    "CONTROLLER",
    "CRD_FILE",
    "KEY_LABEL",
    "SERVICE_ACCOUNT_MOUNT",
    "SealedSecretsController",
]

CONTROLLER = "sealed-secrets-controller"
"""The binary's name in the toolchain, and the controller's ServiceAccount (as the chart names it)."""
CRD_FILE = Path("sealed-secrets") / "bitnami.com_sealedsecrets.yaml"
"""The SealedSecret CRD, relative to the toolchain's CRD directory."""
KEY_LABEL = "sealedsecrets.bitnami.com/sealed-secrets-key"
"""The label (value ``active``) by which the controller finds the key pairs it decrypts with."""
SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where ``rest.InClusterConfig`` reads the token."""
TOKEN_SECONDS = 24 * 3600


class SealedSecretsController(Harness):
    """The controller of namespace ``namespace``, against ``cluster``: its CRD, ServiceAccount and token,
    and the process, in ``workdir``."""

    def __init__(
        self,
        cluster: LocalCluster,
        workdir: Path,
        *,
        namespace: str = "sealed-secrets",
        flags: tuple[str, ...] = (),
    ) -> None:
        """``flags`` are added to the controller's (``--watch-for-secrets``, say)."""
        self.cluster = cluster
        self.workdir = workdir
        self.namespace = namespace
        self.flags = flags
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.port = 0

    @property
    def url(self) -> str:
        """The controller's HTTP address: ``/v1/cert.pem`` serves the cert it seals with."""
        return f"http://127.0.0.1:{self.port}"

    def cert_pem(self) -> str:
        """The certificate the controller seals with now (what ``kubeseal --fetch-cert`` prints)."""
        with urllib.request.urlopen(f"{self.url}/v1/cert.pem", timeout=5) as response:
            return str(response.read().decode())

    def _start(self) -> None:
        self._apply_crd()
        mount = self._service_account()
        self._start_controller(mount)

    def restart(self) -> None:
        """Stop the controller and start it again (with a fresh token): it reads its keys when it starts."""
        self.processes.stop_all()
        self._start_controller(self._service_account())

    def _apply_crd(self) -> None:
        path = self.cluster.toolchain.crd_dir / CRD_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run `make setup` to build the local cluster")
        apply_crds(self.cluster.api(), [path])

    def _service_account(self) -> Path:
        """The namespace, the ServiceAccount bound to ``cluster-admin``, and a directory holding what a pod's
        projected volume would: a token of it, the cluster's CA and the namespace."""
        from kubernetes import client

        api = self.cluster.api()
        core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
        binding = client.V1ClusterRoleBinding(
            metadata=client.V1ObjectMeta(name=f"{self.namespace}:{CONTROLLER}"),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="cluster-admin"
            ),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=CONTROLLER, namespace=self.namespace)],
        )
        namespace = client.V1Namespace(metadata=client.V1ObjectMeta(name=self.namespace))
        create_if_absent(  # a second controller, or a restart, finds them made
            lambda: core.create_namespace(namespace),
            lambda: core.create_namespaced_service_account(
                self.namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=CONTROLLER))
            ),
            lambda: rbac.create_cluster_role_binding(binding),
        )
        request = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=TOKEN_SECONDS)
        )
        token: Any = core.create_namespaced_service_account_token(CONTROLLER, self.namespace, request)
        mount = self.workdir / "serviceaccount"
        mount.mkdir(mode=0o700, exist_ok=True)
        (mount / "token").write_text(token.status.token)
        (mount / "token").chmod(0o600)
        shutil.copyfile(self.cluster.pki.ca_cert, mount / "ca.crt")
        (mount / "namespace").write_text(self.namespace)
        return mount

    def _start_controller(self, mount: Path) -> None:
        self.port = free_port()
        binary = self.cluster.toolchain.binary(CONTROLLER)
        # The mounts are made inside the new mount namespace, private, so the host's /run stays as it was;
        # the controller then replaces the shell.
        script = (
            'set -e; mount -t tmpfs -o mode=0755 tmpfs "$RUN_DIR"; mkdir -p "$SA_MOUNT"; '
            'mount --bind "$SA_DIR" "$SA_MOUNT"; exec "$@"'
        )
        # /var/run is a link to /run on most systems: cover whichever holds the mount point.
        run_dir = Path("/var/run").resolve()
        argv = [
            binary,
            f"--listen-addr=127.0.0.1:{self.port}",
            f"--listen-metrics-addr=127.0.0.1:{free_port()}",
            "--key-renew-period=0",
            # The platform makes the key Secrets: watched, a rotation's new key is registered as it is
            # made, before the `up` that made it drops any other (Pulumi deletes last).
            "--watch-for-secrets",
            *self.flags,
        ]
        process = self.processes.start(
            CONTROLLER,
            [*_unshare(), "sh", "-c", script, "sh", *argv],
            {
                "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": str(self.cluster.api_port),
                "SA_DIR": str(mount),
                "SA_MOUNT": str(run_dir / Path(SERVICE_ACCOUNT_MOUNT).relative_to("/var/run")),
                "RUN_DIR": str(run_dir),
            },
        )

        def ready() -> bool:
            with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response:
                return bool(response.status == 200)

        self.processes.wait_until(process, ready, "/readyz")


def _unshare() -> list[str]:
    """A private mount namespace: as root directly, otherwise inside a user namespace mapped to root."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise FileNotFoundError("unshare (util-linux) is missing: the Sealed Secrets controller runs in one")
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return [unshare, *user, "--mount", "--propagation", "private"]
