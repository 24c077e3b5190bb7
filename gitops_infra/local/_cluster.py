"""A real Kubernetes API and Flux's controllers, on loopback, as plain processes.

The cluster half of the harness behind ``make demo`` and the cluster tests. Everything it starts runs from
the binaries ``make setup`` (``tools/cluster/build.sh``) builds into a checkout's ``.tools/cluster/bin``
(see :class:`~gitops_infra.local.Toolchain`), on free loopback ports, in one work directory.
:class:`LocalCluster` starts etcd, kube-apiserver and kube-controller-manager, with a temp PKI
(:mod:`._pki`) and an admin kubeconfig; kube-scheduler and kwok with one fake node (:mod:`._nodes`), so
that pods are scheduled and reported Running, though no container runs; then Flux's CRDs, and
Flux's six controllers (source, kustomize, helm, notification and the two image controllers) as local
processes, as if installed outside the platform (``flux.install: external``); the others post their events
to notification-controller (:attr:`LocalCluster.events_url`), whose webhook receiver listens on
:attr:`LocalCluster.receiver_url`. The fleet repository they sync from is :mod:`._fleet_server`'s.

With tenants, Flux runs locked down (Flux's multi-tenancy lockdown): kustomize-controller with
:data:`LOCKDOWN_FLAGS`, and the platform's root Kustomization impersonating the ServiceAccount
``kustomize-controller`` of Flux's namespace, bound to ``cluster-admin`` as the flux2 chart binds it
(:meth:`LocalCluster.bind_flux_reconciler`). ``LocalCluster(..., lockdown=True)`` starts so;
:meth:`LocalCluster.locked_down` restarts kustomize-controller so for a block, and back after it.

Every process is recorded by pid and stopped by :meth:`~._processes.Harness.stop`, even after a failure;
a component that does not become ready within its bound fails with the tail of its log. The docs'
upstream notes (``docs/upstream-notes.md``) have the checked versions, flags and pitfalls.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._crds import apply_crds
from ._nodes import start_nodes
from ._objects import create_if_absent
from ._pki import Pki, issue
from ._processes import Harness, Processes, component_flags, free_port, says_ok
from ._project import SETUP_HINT, Toolchain, require_local_extra

__all__ = ["FLUX_NAMESPACE", "FLUX_RECONCILER", "LOCKDOWN_FLAGS", "SERVICE_RANGE", "LocalCluster"]

SERVICE_RANGE = "10.0.0.0/24"
"""The cluster's Service IPs; the first is the ``kubernetes`` Service's, which the API's certificate names."""
LOCKDOWN_FLAGS = (
    "--default-service-account=default",
    "--no-cross-namespace-refs=true",
    "--no-remote-bases=true",
)
"""kustomize-controller's flags under Flux's multi-tenancy lockdown: a Kustomization that names no
ServiceAccount impersonates its namespace's ``default`` (which may do nothing), refers to no source in
another namespace, and builds no remote base. source-controller takes none of them: its
``--default-service-account`` (v1.8) is the identity for cloud workload identity, not an impersonation,
and it has no cross-namespace reference to refuse; the flux2 chart's ``multitenancy`` values leave it
alone too."""
FLUX_RECONCILER = "kustomize-controller"
"""The ServiceAccount the flux2 chart binds to ``cluster-admin`` in Flux's namespace: the identity the
platform's root Kustomization states when Flux runs locked down."""
FLUX_NAMESPACE = "flux-system"


class LocalCluster(Harness):
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and its node, Flux's CRDs and six
    controllers, on loopback."""

    def __init__(self, workdir: Path, *, toolchain: Toolchain | None = None, lockdown: bool = False) -> None:
        """A cluster to start in ``workdir``, from ``toolchain`` (by default the one
        :meth:`Toolchain.find` finds from the current directory); with ``lockdown``, Flux locked down
        (:data:`LOCKDOWN_FLAGS`), and its reconciler's identity bound in ``flux-system``."""
        require_local_extra()  # the API client is imported where it is used: fail here, not half-started
        self.workdir = workdir
        self.toolchain = toolchain or Toolchain.find()
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.api_port = 0
        self.events_url = ""
        """notification-controller's event endpoint, where the other controllers post their events."""
        self.receiver_url = ""
        """notification-controller's webhook receiver: a Receiver's ``status.webhookPath`` is under it."""
        self._flux_flags: dict[str, list[str]] = {}
        self.lockdown = lockdown
        """Whether kustomize-controller runs with :data:`LOCKDOWN_FLAGS` now."""
        self.kubeconfig_path = workdir / "kubeconfig"

    @property
    def kubeconfig(self) -> str:
        """The admin kubeconfig, with its credentials inline (what a secret config value holds)."""
        return self.kubeconfig_path.read_text()

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    def _start(self) -> None:
        pki = Pki.make(self.workdir / "pki", SERVICE_RANGE)
        self._start_etcd()
        self._start_apiserver(pki)
        self._write_kubeconfig(pki)
        self._start_controller_manager(pki)
        start_nodes(self.processes, self.toolchain, self.kubeconfig_path, self.workdir, self.api())
        self._apply_crds()
        if self.lockdown:
            self.bind_flux_reconciler(FLUX_NAMESPACE)
        self._start_flux_controllers()

    def _start_etcd(self) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        etcd = self.processes.start(
            "etcd",
            [
                self.toolchain.binary("etcd"),
                "--name=local",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=local=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )

        def healthy() -> bool:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as response:
                return bool(json.load(response).get("health") == "true")

        self.processes.wait_until(etcd, healthy, "health")

    def _start_apiserver(self, pki: Pki) -> None:
        self.api_port = free_port()
        self.pki = pki
        apiserver = self.processes.start(
            "kube-apiserver",
            [
                self.toolchain.binary("kube-apiserver"),
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.api_port}",
                f"--tls-cert-file={pki.server_cert}",
                f"--tls-private-key-file={pki.server_key}",
                f"--client-ca-file={pki.ca_cert}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={pki.service_account_pub}",
                f"--service-account-signing-key-file={pki.service_account_key}",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
                "--authorization-mode=RBAC",
                "--allow-privileged=true",
                "--enable-priority-and-fairness=false",
                "--profiling=false",
                "--endpoint-reconciler-type=none",
            ],
        )
        context = ssl.create_default_context(cafile=str(pki.ca_cert))
        context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))

        self.processes.wait_until(apiserver, lambda: says_ok(f"{self.server}/readyz", context), "/readyz")

    def _write_kubeconfig(self, pki: Pki) -> None:
        def encoded(path: Path) -> str:
            return base64.b64encode(path.read_bytes()).decode()

        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {"server": self.server, "certificate-authority-data": encoded(pki.ca_cert)},
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate-data": encoded(pki.admin_cert),
                        "client-key-data": encoded(pki.admin_key),
                    },
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
            "current-context": "local",
        }
        self.kubeconfig_path.write_text(json.dumps(config, indent=2))
        self.kubeconfig_path.chmod(0o600)

    def _start_controller_manager(self, pki: Pki) -> None:
        # Without it a deleted namespace stays Terminating for ever, and Pulumi's delete waits on it.
        port = free_port()
        kubeconfig = str(self.kubeconfig_path)
        manager = self.processes.start(
            "kube-controller-manager",
            [
                self.toolchain.binary("kube-controller-manager"),
                *component_flags(kubeconfig, port),
                f"--service-account-private-key-file={pki.service_account_key}",
                f"--root-ca-file={pki.ca_cert}",
                f"--cluster-signing-cert-file={pki.ca_cert}",
                f"--cluster-signing-key-file={pki.ca_key}",
                "--use-service-account-credentials=false",
                # No node-lifecycle controller: kwok, as run here, renews no node Lease and sets the
                # Ready condition once, so the controller would find kwok's node silent after its grace
                # period (50 s), taint it unreachable and evict its pods. Nothing lifts the API server's
                # not-ready taint then: the harness does (_nodes). No nodeipam: kwok hands out pod IPs.
                "--controllers=*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-service-lb-controller,"
                "-node-route-controller",
            ],
        )
        unverified = ssl._create_unverified_context()  # its serving certificate is self-signed
        healthz = f"https://127.0.0.1:{port}/healthz"
        self.processes.wait_until(manager, lambda: says_ok(healthz, unverified), "/healthz")

    def api(self) -> Any:
        """A ``kubernetes`` client ``ApiClient`` for this cluster."""
        from kubernetes import config

        # The client's config loader carries no annotations.
        return config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(self.kubeconfig_path), persist_config=False
        )

    def _apply_crds(self) -> None:
        if not apply_crds(self.api(), sorted(self.toolchain.crd_dir.glob("*.yaml"))):
            raise FileNotFoundError(f"no CRDs in {self.toolchain.crd_dir}: {SETUP_HINT}")

    @property
    def trusted_certificates(self) -> Path:
        """What Flux's controllers trust (``SSL_CERT_FILE``): the system's CAs and this cluster's, so a
        loopback HTTPS service with a :meth:`server_certificate` is trusted as github.com is."""
        return self.workdir / "trusted-cas.pem"

    def server_certificate(self, directory: Path, name: str) -> tuple[Path, Path]:
        """A certificate for ``127.0.0.1`` issued by this cluster's CA, and its key: ``<name>.crt`` and
        ``<name>.key`` in ``directory``."""
        return issue(self.pki, directory, name)

    def _start_flux_controllers(self) -> None:
        system = Path(ssl.get_default_verify_paths().cafile or "/nonexistent")
        bundle = (system.read_bytes() if system.is_file() else b"") + self.pki.ca_cert.read_bytes()
        self.trusted_certificates.write_bytes(bundle)
        storage, events, receiver = free_port(), free_port(), free_port()
        self.events_url = f"http://127.0.0.1:{events}"
        self.receiver_url = f"http://127.0.0.1:{receiver}"
        (self.workdir / "source-storage").mkdir(exist_ok=True)
        common = ("--watch-all-namespaces", "--enable-leader-election=false")
        # notification-controller first: the others send it their events, as in-cluster to its Service.
        sends = (*common, f"--events-addr={self.events_url}")
        self._flux_flags = {
            "notification-controller": [
                *common,
                f"--events-addr=127.0.0.1:{events}",
                f"--receiverAddr=127.0.0.1:{receiver}",
            ],
            "source-controller": [
                *sends,
                f"--storage-path={self.workdir / 'source-storage'}",
                f"--storage-addr=127.0.0.1:{storage}",
                f"--storage-adv-addr=127.0.0.1:{storage}",
            ],
            "kustomize-controller": [*sends, *(LOCKDOWN_FLAGS if self.lockdown else ())],
            "helm-controller": [*sends],
            "image-reflector-controller": [*sends, f"--storage-path={self.workdir / 'image-storage'}"],
            "image-automation-controller": [*sends],
        }
        for name in self._flux_flags:
            self._start_flux_controller(name)

    def _start_flux_controller(self, name: str, extra: tuple[str, ...] = ()) -> None:
        health = free_port()
        process = self.processes.start(
            name,
            [
                self.toolchain.binary(name),
                *self._flux_flags[name],
                *extra,
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--health-addr=127.0.0.1:{health}",
            ],
            {"KUBECONFIG": str(self.kubeconfig_path), "SSL_CERT_FILE": str(self.trusted_certificates)},
        )

        def ready() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as response:
                return bool(response.status == 200)

        self.processes.wait_until(process, ready, "/readyz")

    @contextlib.contextmanager
    def feature_gates(self, controller: str, gates: dict[str, bool]) -> Iterator[None]:
        """Run one Flux ``controller`` with these feature gates inside the block, as it was after it.

        The gates are how a controller of one version shows another version's default (kustomize-
        controller's ``StrictPostBuildSubstitutions``, on from v1.9), so both can be tested here.
        """
        flag = "--feature-gates=" + ",".join(f"{gate}={str(on).lower()}" for gate, on in gates.items())
        self._restart_flux_controller(controller, (flag,))
        try:
            yield
        finally:
            self._restart_flux_controller(controller, ())

    def _restart_flux_controller(self, name: str, extra: tuple[str, ...]) -> None:
        (current,) = [process for process in self.processes.running if process.name == name]
        self.processes.stop(current)
        self._start_flux_controller(name, extra)

    @contextlib.contextmanager
    def locked_down(self) -> Iterator[None]:
        """Run kustomize-controller locked down (:data:`LOCKDOWN_FLAGS`) inside the block, as it was after it.

        A restart of that one controller, so the tests of tenants share the session's cluster with the
        others, whose root Kustomizations state no ServiceAccount.
        """
        was = self.lockdown
        self._set_lockdown(True)
        try:
            yield
        finally:
            self._set_lockdown(was)

    def _set_lockdown(self, on: bool) -> None:
        if on == self.lockdown:
            return
        flags = [f for f in self._flux_flags["kustomize-controller"] if f not in LOCKDOWN_FLAGS]
        self._flux_flags["kustomize-controller"] = [*flags, *(LOCKDOWN_FLAGS if on else ())]
        self._restart_flux_controller("kustomize-controller", ())
        self.lockdown = on

    def bind_flux_reconciler(self, namespace: str = FLUX_NAMESPACE) -> None:
        """The ServiceAccount ``kustomize-controller`` in ``namespace`` (made if missing), bound to
        ``cluster-admin`` by the ClusterRoleBinding ``<namespace>:flux-cluster-reconciler``, as the flux2
        chart makes them; what is there already is kept.

        With Flux installed outside the platform it is the install's, not the stack's: the platform's root
        Kustomization states it (``serviceAccountName: kustomize-controller``) when Flux runs locked down.
        """
        from kubernetes import client

        api = self.api()
        core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
        binding = client.V1ClusterRoleBinding(
            metadata=client.V1ObjectMeta(name=f"{namespace}:flux-cluster-reconciler"),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="cluster-admin"
            ),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=FLUX_RECONCILER, namespace=namespace)],
        )
        create_if_absent(
            lambda: core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace))),
            lambda: core.create_namespaced_service_account(
                namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=FLUX_RECONCILER))
            ),
            lambda: rbac.create_cluster_role_binding(binding),
        )
