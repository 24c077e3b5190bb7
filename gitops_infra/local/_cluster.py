"""A real Kubernetes API, Flux's controllers and an SSH fleet repository, on loopback, as plain processes.

The harness behind ``make demo`` and the cluster tests. Everything it starts runs from the binaries
``make setup`` (``tools/cluster/build.sh``) builds into a checkout's ``.tools/cluster/bin`` (see
:class:`~gitops_infra.local.Toolchain`), on free loopback ports, in one work directory:

- :class:`LocalCluster`: etcd, kube-apiserver and kube-controller-manager, a temp PKI and an admin
  kubeconfig; kube-scheduler and kwok with one fake node (:mod:`._nodes`), so that pods are scheduled and
  reported Running, though no container runs; then Flux's CRDs, and source-controller and
  kustomize-controller as local processes, as if installed outside the platform (``flux.install:
  external``).
- :class:`FleetServer`: Debian's ``sshd`` with its own config, serving a bare git repository through
  ``git-shell`` to the deploy keys it trusts (ECDSA P-384, OpenSSH format), with its own host key for
  ``known_hosts``. Flux's source-controller authenticates to it exactly as it would to GitHub. The
  trusted keys change as a repository's deploy keys do (:meth:`FleetServer.authorize`), and the server
  says which key each fetch came with (:meth:`FleetServer.accepted`).

Every process is recorded by pid and stopped by :meth:`stop`, even after a failure; a component that does
not become ready within its bound fails with the tail of its log. The docs' upstream notes
(``docs/upstream-notes.md``) have the checked versions, flags and pitfalls.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import getpass
import hashlib
import ipaddress
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from ._nodes import start_nodes
from ._processes import READY_SECONDS, Processes, component_flags, free_port, says_ok
from ._project import SETUP_HINT, SSHD, Toolchain, commit_all, git, require_local_extra, set_identity

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
except ModuleNotFoundError:
    require_local_extra()  # names the `local` extra when that is what is missing
    raise

__all__ = ["DeployKeyPair", "FleetServer", "LocalCluster", "free_port", "running"]

SERVICE_RANGE = "10.0.0.0/24"


# -- PKI --------------------------------------------------------------------------------------------------


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None = None,
    *,
    ca: bool = False,
    san: list[x509.GeneralName] | None = None,
    client: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    if not ca:
        usage = (
            x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.oid.ExtendedKeyUsageOID.SERVER_AUTH
        )
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _name(common: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


@dataclass(frozen=True)
class _Pki:
    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    admin_cert: Path
    admin_key: Path
    service_account_key: Path
    service_account_pub: Path

    @classmethod
    def make(cls, directory: Path) -> _Pki:
        directory.mkdir(parents=True)
        ca_key = _key()
        ca_name = _name("gitops-infra-local-ca")
        ca = _certificate(ca_name, ca_key, ca=True)
        first_service_ip = next(ipaddress.IPv4Network(SERVICE_RANGE).hosts())
        server_key = _key()
        server = _certificate(
            _name("kube-apiserver"),
            server_key,
            (ca_name, ca_key),
            san=[
                x509.DNSName("localhost"),
                x509.DNSName("kubernetes.default.svc"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.IPAddress(first_service_ip),
            ],
        )
        admin_key = _key()
        admin = _certificate(_name("admin", "system:masters"), admin_key, (ca_name, ca_key), client=True)
        service_account_key = _key()
        files = {
            "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
            "ca.key": _pem(ca_key),
            "server.crt": server.public_bytes(serialization.Encoding.PEM),
            "server.key": _pem(server_key),
            "admin.crt": admin.public_bytes(serialization.Encoding.PEM),
            "admin.key": _pem(admin_key),
            "sa.key": _pem(service_account_key),
            "sa.pub": service_account_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
        }
        for name, content in files.items():
            (directory / name).write_bytes(content)
            (directory / name).chmod(0o600)
        return cls(
            ca_cert=directory / "ca.crt",
            ca_key=directory / "ca.key",
            server_cert=directory / "server.crt",
            server_key=directory / "server.key",
            admin_cert=directory / "admin.crt",
            admin_key=directory / "admin.key",
            service_account_key=directory / "sa.key",
            service_account_pub=directory / "sa.pub",
        )


class _Harness:
    """Processes started together: ``start`` brings them all up or, failing, stops what it started."""

    workdir: Path
    processes: Processes

    def start(self) -> Self:
        """Start everything, each part ready before the next; stop what started if anything fails."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop every process this harness started, newest first."""
        self.processes.stop_all()


# -- the cluster ------------------------------------------------------------------------------------------


class LocalCluster(_Harness):
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and its node, Flux's CRDs and two
    controllers, on loopback."""

    def __init__(self, workdir: Path, *, toolchain: Toolchain | None = None) -> None:
        """A cluster to start in ``workdir``, from ``toolchain`` (by default the one
        :meth:`Toolchain.find` finds from the current directory)."""
        require_local_extra()  # the API client is imported where it is used: fail here, not half-started
        self.workdir = workdir
        self.toolchain = toolchain or Toolchain.find()
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.api_port = 0
        self._flux_flags: dict[str, list[str]] = {}
        self.kubeconfig_path = workdir / "kubeconfig"

    @property
    def kubeconfig(self) -> str:
        """The admin kubeconfig, with its credentials inline (what a secret config value holds)."""
        return self.kubeconfig_path.read_text()

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    def _start(self) -> None:
        pki = _Pki.make(self.workdir / "pki")
        self._start_etcd()
        self._start_apiserver(pki)
        self._write_kubeconfig(pki)
        self._start_controller_manager(pki)
        start_nodes(self.processes, self.toolchain, self.kubeconfig_path, self.workdir, self.api())
        self._apply_crds()
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

    def _start_apiserver(self, pki: _Pki) -> None:
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

    def _write_kubeconfig(self, pki: _Pki) -> None:
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

    def _start_controller_manager(self, pki: _Pki) -> None:
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
        import yaml
        from kubernetes import client

        extensions = client.ApiextensionsV1Api(self.api())
        names = []
        for path in sorted(self.toolchain.crd_dir.glob("*.yaml")):
            for document in yaml.safe_load_all(path.read_text()):
                if document and document.get("kind") == "CustomResourceDefinition":
                    extensions.create_custom_resource_definition(document)
                    names.append(document["metadata"]["name"])
        if not names:
            raise FileNotFoundError(f"no CRDs in {self.toolchain.crd_dir}: {SETUP_HINT}")
        deadline = time.monotonic() + READY_SECONDS
        for name in names:
            while True:
                status = extensions.read_custom_resource_definition(name).status
                conditions = {c.type: c.status for c in (status.conditions or [])} if status else {}
                if conditions.get("Established") == "True":
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"CRD {name} was not established within {READY_SECONDS:.0f} s")
                time.sleep(0.2)

    @property
    def trusted_certificates(self) -> Path:
        """What Flux's controllers trust (``SSL_CERT_FILE``): the system's CAs and this cluster's, so a
        loopback HTTPS service with a :meth:`server_certificate` is trusted as github.com is."""
        return self.workdir / "trusted-cas.pem"

    def server_certificate(self, directory: Path, name: str) -> tuple[Path, Path]:
        """A certificate for ``127.0.0.1`` issued by this cluster's CA, and its key: ``<name>.crt`` and
        ``<name>.key`` in ``directory``."""
        ca = x509.load_pem_x509_certificate(self.pki.ca_cert.read_bytes())
        ca_key = serialization.load_pem_private_key(self.pki.ca_key.read_bytes(), password=None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        key = _key()
        san: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        certificate = _certificate(_name(name), key, (ca.subject, ca_key), san=san)
        directory.mkdir(parents=True, exist_ok=True)
        paths = directory / f"{name}.crt", directory / f"{name}.key"
        paths[0].write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        paths[1].write_bytes(_pem(key))
        paths[1].chmod(0o600)
        return paths

    def _start_flux_controllers(self) -> None:
        system = Path(ssl.get_default_verify_paths().cafile or "/nonexistent")
        bundle = (system.read_bytes() if system.is_file() else b"") + self.pki.ca_cert.read_bytes()
        self.trusted_certificates.write_bytes(bundle)
        storage = free_port()
        (self.workdir / "source-storage").mkdir(exist_ok=True)
        self._flux_flags = {
            "source-controller": [
                "--watch-all-namespaces",
                "--enable-leader-election=false",
                f"--storage-path={self.workdir / 'source-storage'}",
                f"--storage-addr=127.0.0.1:{storage}",
                f"--storage-adv-addr=127.0.0.1:{storage}",
            ],
            "kustomize-controller": ["--watch-all-namespaces", "--enable-leader-election=false"],
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


# -- the fleet repository over SSH ------------------------------------------------------------------------


@dataclass(frozen=True)
class DeployKeyPair:
    """An SSH key pair in OpenSSH formats: what Flux's bootstrap generates (ECDSA P-384)."""

    private_key: str
    public_key: str

    @classmethod
    def generate(cls) -> DeployKeyPair:
        key = ec.generate_private_key(ec.SECP384R1())
        private = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        ).decode()
        public = key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        return cls(private_key=private, public_key=public.decode())

    @property
    def fingerprint(self) -> str:
        """``SHA256:<base64>``: the fingerprint ``ssh-keygen -l`` prints and ``sshd`` logs."""
        blob = base64.b64decode(self.public_key.split()[1])
        return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


# sshd at LogLevel VERBOSE: "Accepted publickey for <user> from <ip> port <n> ssh2: ECDSA SHA256:<b64>".
_ACCEPTED = re.compile(r"Accepted publickey for \S+ from \S+ port \d+ ssh2: \S+ (SHA256:[A-Za-z0-9+/]+)")


class FleetServer(_Harness):
    """A bare fleet repository served over SSH (Debian's sshd and git-shell) to its deploy keys."""

    def __init__(self, workdir: Path, deploy_key: DeployKeyPair) -> None:
        self.workdir = workdir
        self.deploy_key = deploy_key
        self.authorized_keys = workdir / "authorized_keys"
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.repository = workdir / "fleet.git"
        self.checkout = workdir / "fleet"
        self.port = 0
        self.user = getpass.getuser()

    @property
    def url(self) -> str:
        """The ``ssh://`` URL a GitRepository clones."""
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.repository}"

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        git(self.workdir, "init", "-q", "--bare", "-b", "main", str(self.repository))
        git(self.workdir, "clone", "-q", str(self.repository), str(self.checkout))
        set_identity(self.checkout, "fleet")
        host_key = self.workdir / "ssh_host_ed25519_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fleet-server", "-f", str(host_key)],
            check=True,
        )
        self.authorize(self.deploy_key)
        self.port = free_port()
        config = self.workdir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"PidFile {self.workdir / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.authorized_keys}",
                    f"AllowUsers {self.user}",
                    "PermitRootLogin prohibit-password",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        sshd = self.processes.start("sshd", [str(SSHD), "-D", "-e", "-f", str(config)])

        def banner() -> bool:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                return connection.recv(8).startswith(b"SSH-2.0")

        self.processes.wait_until(sshd, banner, "SSH banner")
        public_host_key = (host_key.with_name(host_key.name + ".pub")).read_text().split()
        self.known_hosts = f"[127.0.0.1]:{self.port} {public_host_key[0]} {public_host_key[1]}"

    def authorize(self, *keys: DeployKeyPair) -> None:
        """Trust exactly ``keys`` from the next connection on, as a repository's deploy keys change.

        sshd reads the file at each login; it is replaced whole, so a login never reads half of it.
        """
        # Only git-upload-pack/receive-pack of these keys', through git-shell: no shell, no forwarding.
        restrictions = ",".join(
            [
                'command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\""',
                "no-port-forwarding",
                "no-X11-forwarding",
                "no-agent-forwarding",
                "no-pty",
            ]
        )
        staged = self.authorized_keys.with_suffix(".new")
        staged.write_text("".join(f"{restrictions} {key.public_key}\n" for key in keys))
        staged.chmod(0o600)
        os.replace(staged, self.authorized_keys)

    def accepted(self) -> list[str]:
        """The fingerprint of the key each login was accepted with, oldest first (from sshd's log)."""
        log = self.workdir / "logs" / "sshd.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return _ACCEPTED.findall(text)

    def commit(self, files: dict[str, str], message: str) -> str:
        """Commit ``files`` (path: content) to ``main`` and push; return the commit's sha."""
        for relative, content in files.items():
            path = self.checkout / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        commit = commit_all(self.checkout, message)
        git(self.checkout, "push", "-q", "origin", "main")
        return commit


@contextlib.contextmanager
def running(*parts: _Harness) -> Iterator[None]:
    """Start ``parts`` in order; stop all of them, newest first, whatever happens."""
    started: list[_Harness] = []
    try:
        for part in parts:
            part.start()
            started.append(part)
        yield
    finally:
        for part in reversed(started):
            part.stop()
        for part in parts:
            shutil.rmtree(part.workdir / "etcd", ignore_errors=True)
