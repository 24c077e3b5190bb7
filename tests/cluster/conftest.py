"""Fixtures for the real-Kubernetes tier: one local cluster and one SSH fleet server per session.

Each test gets a project of its own: this repository's stack program (``stacks/``) on a copy of the
committed ``Pulumi.local.yaml`` (an existing cluster, Flux installed outside the stack, a deploy key
registered on the fleet server), in a temp git repository, on a temp file backend, with namespaces and a
fleet path of its own, so tests neither see nor prune each other's objects. Its stack is destroyed
afterwards. With ``CI`` set, a missing toolchain fails the run instead of skipping it.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from pulumi import automation as auto

from gitops_infra.automation import StackOptions
from gitops_infra.cli import main
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster
from gitops_infra.local._project import set_secrets

from ..support import (
    REPO_ROOT,
    TOOLCHAIN,
    commit_all,
    drain_project,
    engine_env,
    files_under,
    init_repo,
    put_engine_on_path,
    secret_leaks_in_files,
    secret_leaks_in_texts,
    stack_project,
    unavailable,
    workspace,
)

ENGINE = put_engine_on_path()
STACK = "local"
FLUX_WAIT_SECONDS = 120.0


def wait_until(condition: Callable[[], Any], what: str, timeout: float = FLUX_WAIT_SECONDS) -> Any:
    """``condition()``'s first truthy value, polled twice a second; a failure naming ``what`` after
    ``timeout`` seconds, with the last value seen."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what} (last seen: {last!r})")


def gone(read: Any, *args: str) -> bool:
    """Whether ``read(*args)`` (a client's read of one object) finds nothing: 404."""
    from kubernetes.client.exceptions import ApiException

    try:
        read(*args)
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def _require_toolchain() -> None:
    if ENGINE is None or TOOLCHAIN.missing():
        unavailable("the local cluster's toolchain is not built: run `make setup`")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    _require_toolchain()
    local = LocalCluster(tmp_path_factory.mktemp("cluster"), toolchain=TOOLCHAIN).start()
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="session")
def deploy_key() -> DeployKeyPair:
    """The key the fleet server trusts, as a platform team would have registered it."""
    return DeployKeyPair.generate()


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory, deploy_key: DeployKeyPair) -> Iterator[FleetServer]:
    _require_toolchain()
    server = FleetServer(tmp_path_factory.mktemp("fleet"), deploy_key).start()
    server.commit({"README.md": "The fleet repository the cluster tests sync.\n"}, "an empty fleet")
    try:
        yield server
    finally:
        server.stop()


@dataclass
class LocalStack:
    """One test's copy of the local stack: its project, its names, and a client for the cluster."""

    root: Path
    env: dict[str, str]
    name: str
    """The test's own suffix: its namespaces are ``flux-<name>`` and ``apps-<name>``."""
    fleet_path: str
    api: Any

    @property
    def options(self) -> StackOptions:
        return StackOptions(work_dir=self.root, env=self.env)

    @property
    def flux_namespace(self) -> str:
        return f"flux-{self.name}"

    @property
    def service_namespace(self) -> str:
        return f"apps-{self.name}"

    def raw_stack(self) -> auto.Stack:
        return auto.Stack.select(STACK, workspace(self.root, self.env))

    def set(self, path: str, value: Any, *, secret: bool = False) -> None:
        """Set ``gitops-infra:<path>`` (a dotted path into a section) in Pulumi.local.yaml."""
        self.set_all({path: value}, secrets=[path] if secret else [])

    def set_all(self, values: Mapping[str, Any], *, secrets: Sequence[str] = (), stack: str = STACK) -> None:
        """Set each ``gitops-infra:<path>`` of ``values`` in ``stack``'s file (Pulumi.local.yaml), those in
        ``secrets`` as secrets: on the engine's stdin, as the demo sets its own (never on a command line)."""
        texts = {p: v if isinstance(v, str) else json.dumps(v) for p, v in values.items()}
        config = {f"gitops-infra:{p}": auto.ConfigValue(t) for p, t in texts.items() if p not in secrets}
        if config:
            workspace(self.root, self.env).set_all_config(stack, config, path=True)
        assert ENGINE is not None
        hidden = {f"gitops-infra:{p}": t for p, t in texts.items() if p in secrets}
        set_secrets(self.root, stack, hidden, env=self.env, engine=ENGINE.pulumi)

    def commit(self, message: str) -> str:
        return commit_all(self.root, message)

    def cli(self, *args: str) -> Result:
        """``gitops-infra <args>`` on this project, in-process."""
        return CliRunner().invoke(
            main, [*args, "--cwd", str(self.root)], env=self.env, catch_exceptions=False
        )

    def secret_leaks(self, secrets: Sequence[str], texts: Mapping[str, str]) -> list[str]:
        """Where ``secrets`` show in plaintext: the state, ``PULUMI_HOME``, the engine's ``TMPDIR``, the work
        tree and ``texts``."""
        backend = Path(self.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
        engine_tmp = Path(self.env["TMPDIR"])
        files = files_under(
            backend, Path(self.env["PULUMI_HOME"]), engine_tmp, self.root, skip=[self.root / ".git"]
        )
        return [*secret_leaks_in_files(files, secrets), *secret_leaks_in_texts(texts, secrets)]


LOCAL_SECRETS = ("localKubeconfig", "localDeployKey")


def local_settings(
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    *,
    path: str,
    service_namespace: str,
    flux_namespace: str,
) -> dict[str, str]:
    """What `make demo` writes into a local stack: where the fleet server is and its host key, the fleet
    path and namespaces, and the two secrets (:data:`LOCAL_SECRETS`)."""
    return {
        "git.url": fleet.url,
        "git.knownHosts": fleet.known_hosts,
        "git.path": path,
        "environment.serviceNamespace": service_namespace,
        "flux.namespace": flux_namespace,
        "localKubeconfig": cluster.kubeconfig,
        "localDeployKey": deploy_key.private_key,
    }


def drain_stack(
    tmp_path: Path,
    stack: str,
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    *,
    name: str,
    **more: str,
) -> tuple[Path, dict[str, str]]:
    """The drain fixture as a committed project (``drain_project``) with ``stack`` on this session's
    cluster, with its deploy key, configured for the test ``name``: its log, the fleet server, the fleet
    path ``clusters/<name>``, the engine's namespace ``flux-<name>``, and ``more``. Its root and the
    engine environment."""
    assert ENGINE is not None
    settings = {
        "log": str(tmp_path / "order.log"),
        "knownHosts": fleet.known_hosts,
        "url": fleet.url,
        "path": f"clusters/{name}",
        "namespace": f"flux-{name}",
        **more,
    }
    return drain_project(
        tmp_path,
        stack,
        path=[TOOLCHAIN.bin_dir, ENGINE.bin_dir],
        kubeconfig=cluster.kubeconfig,
        private_key=deploy_key.private_key,
        settings=settings,
    )


@pytest.fixture
def local_stack(
    request: pytest.FixtureRequest,
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    tmp_path: Path,
) -> Iterator[LocalStack]:
    """The committed local stack, configured for this cluster and fleet server; destroyed afterwards."""
    assert ENGINE is not None
    name = request.node.name.removeprefix("test_")[:24].rstrip("_").replace("_", "-")
    root = stack_project(init_repo(tmp_path / "project", "cluster tests"), virtualenv=sys.prefix)
    shutil.copy(REPO_ROOT / "Pulumi.local.yaml", root / "Pulumi.local.yaml")
    # The engine finds the Kubernetes provider on PATH, beside its own binaries.
    env = engine_env(tmp_path, path=[TOOLCHAIN.bin_dir, ENGINE.bin_dir])
    auto.Stack.create(STACK, workspace(root, env))
    fleet_path = f"clusters/{name}"
    stack = LocalStack(root=root, env=env, name=name, fleet_path=fleet_path, api=cluster.api())
    settings = local_settings(
        cluster,
        fleet,
        deploy_key,
        path=fleet_path,
        service_namespace=stack.service_namespace,
        flux_namespace=stack.flux_namespace,
    )
    stack.set_all(settings, secrets=LOCAL_SECRETS)
    stack.commit("the local stack, configured for this cluster")
    # The test's fleet path exists, as `git.scaffold` would make it: `up` waits for Flux to be Ready.
    fleet.commit({f"{fleet_path}/README.md": f"Synced by the cluster test {name}.\n"}, f"the path of {name}")
    try:
        yield stack
    finally:
        stack.raw_stack().destroy(on_output=None)


@pytest.fixture
def no_credentials(cluster: LocalCluster) -> Callable[[str], None]:
    """A check that no credential of the stack's kubeconfig is in a text.

    (That a read leaves no key file behind is checked in the unit tests, with a key of their own: here the
    harness's own client keeps files with this key in the temp directory until the process ends.)
    """
    kubeconfig = yaml.safe_load(cluster.kubeconfig)
    user = kubeconfig["users"][0]["user"]
    authority = kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]
    credentials = [str(value) for value in (*user.values(), authority)]
    key_lines = base64.b64decode(user["client-key-data"]).decode().splitlines()[1:-1]

    def check(text: str) -> None:
        assert "BEGIN" not in text and "PRIVATE KEY" not in text
        assert [c for c in (*credentials, *key_lines) if c in text] == []

    return check


@pytest.fixture
def second_stack(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair, cluster: LocalCluster
) -> Iterator[str]:
    """A second stack, ``target``, in the local stack's project: namespaces and a fleet path of its own."""
    root, name = local_stack.root, "target"
    shutil.copy(REPO_ROOT / "Pulumi.local.yaml", root / "Pulumi.target.yaml")
    stack = auto.Stack.create(name, workspace(root, local_stack.env))
    path = f"{local_stack.fleet_path}-target"
    settings = local_settings(
        cluster,
        fleet,
        deploy_key,
        path=path,
        service_namespace=f"{local_stack.service_namespace}-t",
        flux_namespace=f"{local_stack.flux_namespace}-t",
    )
    local_stack.set_all(settings, secrets=LOCAL_SECRETS, stack=name)
    local_stack.commit("a second stack, target")
    fleet.commit({f"{path}/README.md": "Synced by the target stack.\n"}, f"the path of {path}")
    try:
        yield name
    finally:
        stack.destroy(on_output=None)
