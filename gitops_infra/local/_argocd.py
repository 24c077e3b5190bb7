"""Argo CD on the local cluster, as processes: what ``gitops.engine: argocd`` stacks sync with.

Started on request, after the cluster (``running(cluster, ArgoCd(workdir, cluster))``): only the tests of the
Argo CD engine need it, and it costs memory. It is Argo CD's "core" shape, as upstream's own
``Procfile`` runs it out of cluster, from the multi-call binary ``tools/cluster/build-argo-cd.sh`` builds
(v3.6.2), whose role is its ``ARGOCD_BINARY_NAME``:

- Redis (Debian's ``redis-server``), its cache, with nothing saved to disk;
- ``argocd-dev-mounter``, upstream's stand-in for the kubelet's ConfigMap volumes: it writes
  ``argocd-ssh-known-hosts-cm`` and ``argocd-tls-certs-cm`` to the paths the repo server reads;
- the repo server, which clones with ``git`` and renders with ``kustomize`` (both on its ``PATH``, with
  upstream's git and gpg wrappers);
- the application controller, and the ApplicationSet controller.

No API server, UI or Dex: nothing here needs them. Before the processes it installs what a cluster that
"already runs Argo CD" has: the CRDs (``Application``, ``ApplicationSet``, ``AppProject``), the ``argocd``
namespace, and the settings ConfigMaps and Secrets of Argo CD's install manifest, each created only when
absent, so a second start on the same cluster keeps what a stack or a test changed in them. A stack that
syncs with it says ``argocd.install: external``. ``ARGOCD_FAKE_IN_CLUSTER`` maps the in-cluster
destination (``https://kubernetes.default.svc``) to the cluster's kubeconfig. The repo server talks to the
controllers in plain gRPC on loopback (upstream's TLS between them is not what anything here tests).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import tempfile
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._crds import apply_crds
from ._objects import create_if_absent
from ._processes import Harness, Process, Processes, free_port
from ._project import SETUP_HINT

if TYPE_CHECKING:
    from ._cluster import LocalCluster

__all__ = ["NAMESPACE", "ArgoCd"]

NAMESPACE = "argocd"
DATA_DIR = "argo-cd"
"""Where setup copies Argo CD's CRDs, install manifest and wrappers, beside the cluster's ``bin``."""
MOUNTED_CONFIG_MAPS = {"argocd-ssh-known-hosts-cm": "ssh", "argocd-tls-certs-cm": "tls"}
"""The ConfigMaps a pod of Argo CD's mounts, and the directory under the harness's ``config`` each is
written to (the repo server's ``ARGOCD_SSH_DATA_PATH`` and ``ARGOCD_TLS_DATA_PATH``)."""


class ArgoCd(Harness):
    """Argo CD's CRDs, settings and controllers, beside a started cluster."""

    def __init__(self, workdir: Path, cluster: LocalCluster, *, namespace: str = NAMESPACE) -> None:
        """Argo CD for ``cluster`` (started first), in ``namespace``, its logs and files under ``workdir``."""
        self.workdir = workdir
        self.cluster = cluster
        self.namespace = namespace
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.data = cluster.toolchain.bin_dir.parent / DATA_DIR
        self.repo_server = ""
        """``host:port`` of the repo server's gRPC, once started."""
        self.applicationset_webhook = ""
        """The ApplicationSet controller's webhook URL (Git providers' push events), once started."""
        self._sockets: Path | None = None

    # --- starting ---------------------------------------------------------------------------------

    def _start(self) -> None:
        argocd = self.cluster.toolchain.binary("argocd")
        for path in (self.data / "crds", self.data / "install.yaml", self.data / "hack"):
            if not path.exists():
                raise FileNotFoundError(f"{path} is missing: {SETUP_HINT}")
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            raise FileNotFoundError(f"redis-server is not on PATH (Argo CD's cache): {SETUP_HINT}")
        apply_crds(self.cluster.api(), sorted((self.data / "crds").glob("*.yaml")))
        self._install_settings()
        config = self.workdir / "config"
        for directory in (*MOUNTED_CONFIG_MAPS.values(), "gpg/keys", "gpg/source"):
            (config / directory).mkdir(parents=True, exist_ok=True)
        # A unix socket's path is at most 107 bytes, and a test's workdir can be longer than that.
        self._sockets = Path(tempfile.mkdtemp(prefix="argocd-"))
        redis = self._start_redis(redis_server)
        env = self._environment(config)
        self._start_mounter(env)

        repo_port, repo_metrics = free_port(), free_port()
        repo = self.processes.start(
            "argocd-repo-server",
            [
                argocd,
                "--loglevel=info",
                "--address=127.0.0.1",
                f"--port={repo_port}",
                "--disable-tls",
                "--client-ca-path=",
                "--metrics-address=127.0.0.1",
                f"--metrics-port={repo_metrics}",
                f"--redis={redis}",
            ],
            {
                **env,
                "ARGOCD_BINARY_NAME": "argocd-repo-server",
                "TMPDIR": str(self._tmp("repo-server")),
                "PATH": os.pathsep.join(
                    [str(self.data / "hack"), str(self.data / "bin"), os.environ.get("PATH", "")]
                ),
                "ARGOCD_ASK_PASS_SOCK": str(self._sockets / "ask-pass.sock"),
            },
        )
        self._wait_healthy(repo, repo_metrics, "/healthz")
        self.repo_server = f"127.0.0.1:{repo_port}"

        controller_metrics = free_port()
        controller = self.processes.start(
            "argocd-application-controller",
            [
                argocd,
                "--loglevel=info",
                f"--namespace={self.namespace}",
                f"--redis={redis}",
                f"--repo-server={self.repo_server}",
                "--repo-server-plaintext",
                f"--metrics-port={controller_metrics}",
            ],
            # Its shard is its hostname's ordinal, as in the StatefulSet it runs as upstream.
            {
                **env,
                "ARGOCD_BINARY_NAME": "argocd-application-controller",
                "HOSTNAME": "argocd-application-controller-0",
                "TMPDIR": str(self._tmp("application-controller")),
            },
        )
        self._wait_healthy(controller, controller_metrics, "/healthz")

        metrics, webhook = free_port(), free_port()
        applicationsets = self.processes.start(
            "argocd-applicationset-controller",
            [
                argocd,
                "--loglevel=info",
                f"--namespace={self.namespace}",
                f"--argocd-repo-server={self.repo_server}",
                "--repo-server-plaintext",
                "--enable-leader-election=false",
                f"--metrics-addr=127.0.0.1:{metrics}",
                f"--probe-addr=127.0.0.1:{free_port()}",
                f"--webhook-addr=127.0.0.1:{webhook}",
            ],
            {
                **env,
                "ARGOCD_BINARY_NAME": "argocd-applicationset-controller",
                "TMPDIR": str(self._tmp("applicationset-controller")),
            },
        )
        # It registers no health check (its probe answers 404): its metrics are served once it runs.
        self._wait_healthy(applicationsets, metrics, "/metrics")
        self.applicationset_webhook = f"http://127.0.0.1:{webhook}/api/webhook"

    def _environment(self, config: Path) -> dict[str, str]:
        return {
            "KUBECONFIG": str(self.cluster.kubeconfig_path),
            "ARGOCD_FAKE_IN_CLUSTER": "true",
            "ARGOCD_SSH_DATA_PATH": str(config / MOUNTED_CONFIG_MAPS["argocd-ssh-known-hosts-cm"]),
            "ARGOCD_TLS_DATA_PATH": str(config / MOUNTED_CONFIG_MAPS["argocd-tls-certs-cm"]),
            "ARGOCD_GNUPGHOME": str(config / "gpg" / "keys"),
            "ARGOCD_GPG_DATA_PATH": str(config / "gpg" / "source"),
            "ARGOCD_GPG_ENABLED": "false",
            # Not a pod: the controllers would read a service account's namespace file otherwise.
            "KUBERNETES_SERVICE_HOST": "",
        }

    def _tmp(self, name: str) -> Path:
        path = self.workdir / "tmp" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _start_redis(self, redis_server: str) -> str:
        port = free_port()
        redis = self.processes.start(
            "redis",
            [
                redis_server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self._tmp("redis")),
            ],
        )

        def pong() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")

        self.processes.wait_until(redis, pong, "PONG")
        return f"127.0.0.1:{port}"

    def _start_mounter(self, env: dict[str, str]) -> None:
        mounter = self.cluster.toolchain.binary("argocd-dev-mounter")
        flags = [
            f"--configmap={name}={env_path}"
            for name, env_path in (
                ("argocd-ssh-known-hosts-cm", env["ARGOCD_SSH_DATA_PATH"]),
                ("argocd-tls-certs-cm", env["ARGOCD_TLS_DATA_PATH"]),
            )
        ]
        process = self.processes.start(
            "argocd-dev-mounter",
            [mounter, f"--namespace={self.namespace}", *flags],
            {"KUBECONFIG": str(self.cluster.kubeconfig_path)},
        )
        known_hosts = Path(env["ARGOCD_SSH_DATA_PATH"]) / "ssh_known_hosts"
        self.processes.wait_until(process, known_hosts.exists, "argocd-ssh-known-hosts-cm written")

    def _wait_healthy(self, process: Process, port: int, path: str) -> None:
        def ready() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
                return bool(response.status == 200)

        self.processes.wait_until(process, ready, path)

    def stop(self) -> None:
        super().stop()
        if self._sockets is not None:
            shutil.rmtree(self._sockets, ignore_errors=True)
            self._sockets = None

    # --- the install's settings ----------------------------------------------------------------------

    def _install_settings(self) -> None:
        from kubernetes import client

        core = client.CoreV1Api(self.cluster.api())
        namespace = client.V1Namespace(metadata=client.V1ObjectMeta(name=self.namespace))
        creates: list[Callable[[], object]] = [lambda: core.create_namespace(namespace)]
        for document in self.settings():
            if document["kind"] == "Secret" and document["metadata"]["name"] == "argocd-secret":
                # What argocd-server would generate at its first start; the ApplicationSet controller's
                # webhook handler needs it, and no API server runs here.
                document = {**document, "stringData": {"server.secretkey": secrets.token_urlsafe(32)}}
            body = {**document, "metadata": {**document["metadata"], "namespace": self.namespace}}
            create: Any = (
                core.create_namespaced_config_map
                if document["kind"] == "ConfigMap"
                else core.create_namespaced_secret
            )
            creates.append(partial(create, self.namespace, body))
        create_if_absent(*creates)  # already installed: what is there stays

    def settings(self) -> list[dict[str, Any]]:
        """The ConfigMaps and Secrets of Argo CD's install manifest (``argocd-cm``, ``argocd-secret``...)."""
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        documents = yaml.load_all((self.data / "install.yaml").read_text(), Loader=loader)
        return [d for d in documents if d and d.get("kind") in ("ConfigMap", "Secret")]
