"""The local stack with ``gitops.engine: argocd``: Argo CD's controllers, repo server and Redis run beside
the cluster (:class:`~gitops_infra.local.ArgoCd`, installed outside the stack: ``argocd.install:
external``), fetching from the session's SSH fleet server with the stack's deploy key.

Each test has an Argo CD of its own, in a namespace of its own (``argocd-<test>``), so that each stack's
root ``Application`` (``platform``) is the only one its controllers see; the stack is destroyed while its
Argo CD still runs, to clear the root's finalizer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import up
from gitops_infra.components._argocd_scaffold import ArgoCdScaffold
from gitops_infra.components.argocd import REFRESH_ANNOTATION
from gitops_infra.components.fleet_repository import scaffold_files
from gitops_infra.errors import ConfigError, OperationFailedError
from gitops_infra.local import ArgoCd, DeployKeyPair, FleetServer, LocalCluster

from ..support import TOOLCHAIN, unavailable
from .conftest import LocalStack, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

GROUP, VERSION = "argoproj.io", "v1alpha1"
ROOT = "platform"


@pytest.fixture
def argo(local_stack: LocalStack, cluster: LocalCluster, tmp_path: Path) -> Iterator[ArgoCd]:
    """An Argo CD of this test's own, and the local stack switched to it (no ``flux`` section)."""
    if not (TOOLCHAIN.bin_dir / "argocd").is_file():
        unavailable("Argo CD is not built: run `make setup`")
    namespace = f"argocd-{local_stack.name}"
    argocd = ArgoCd(tmp_path / "argocd", cluster, namespace=namespace).start()
    try:
        local_stack.raw_stack().remove_config("gitops-infra:flux")
        local_stack.set_all(
            {"gitops.engine": "argocd", "argocd.install": "external", "argocd.namespace": namespace}
        )
        local_stack.commit("Argo CD as the engine")
        yield argocd
    finally:
        try:
            local_stack.raw_stack().destroy(on_output=None)  # while Argo CD runs: the root's finalizer
        finally:
            argocd.stop()


def _root(stack: LocalStack, argo: ArgoCd) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        GROUP, VERSION, argo.namespace, "applications", ROOT
    )
    return found


def _config_map(name: str, namespace: str, value: str) -> str:
    metadata = f"metadata:\n  name: {name}\n  namespace: {namespace}\n"
    return f"apiVersion: v1\nkind: ConfigMap\n{metadata}data:\n  value: {value}\n"


def _read_config_map(stack: LocalStack, name: str, namespace: str) -> dict[str, str] | None:
    try:
        data: dict[str, str] = client.CoreV1Api(stack.api).read_namespaced_config_map(name, namespace).data
        return data
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _commit_scaffold_and_an_app(stack: LocalStack, fleet: FleetServer) -> None:
    """The Argo CD scaffold of the stack's path, as ``git.scaffold`` writes it, and an app in ``apps/``."""
    files = scaffold_files(stack.fleet_path, "local", argocd=ArgoCdScaffold(url=fleet.url, branch="main"))
    files[f"{stack.fleet_path}/apps/app.yaml"] = _config_map("an-app", stack.service_namespace, "from-apps")
    fleet.commit(files, "the Argo CD scaffold, and an app")


def _commit_scaffold_and_an_app(stack: LocalStack, fleet: FleetServer) -> None:
    """The Argo CD scaffold of the stack's path, as ``git.scaffold`` writes it, and an app in ``apps/``."""
    files = scaffold_files(stack.fleet_path, "local", argocd=ArgoCdScaffold(url=fleet.url, branch="main"))
    files[f"{stack.fleet_path}/apps/app.yaml"] = _config_map("an-app", stack.service_namespace, "from-apps")
    fleet.commit(files, "the Argo CD scaffold, and an app")


def test_up_returns_once_the_root_is_synced_and_healthy_at_the_fleets_commit(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer
) -> None:
    namespace = local_stack.service_namespace
    commit = fleet.commit(
        {
            f"{local_stack.fleet_path}/kustomization.yaml": "resources: [config.yaml]\n",
            f"{local_stack.fleet_path}/config.yaml": _config_map("from-the-fleet", namespace, "one"),
        },
        "a ConfigMap for the root",
    )

    up("local", options=local_stack.options)

    # As `up` returned, with no waiting here.
    status = _root(local_stack, argo)["status"]
    assert status["sync"]["status"] == "Synced"
    assert status["sync"]["revision"] == commit
    assert status["health"]["status"] == "Healthy"
    assert REFRESH_ANNOTATION not in _root(local_stack, argo)["metadata"].get("annotations", {})
    assert _read_config_map(local_stack, "from-the-fleet", namespace) == {"value": "one"}

    # Self-heal: an out-of-band delete is put back.
    client.CoreV1Api(local_stack.api).delete_namespaced_config_map("from-the-fleet", namespace)
    assert wait_until(lambda: _read_config_map(local_stack, "from-the-fleet", namespace), "self-heal", 60)

    # The second act: an `up` with nothing changed changes nothing, and returns at once.
    up("local", options=local_stack.options)
    assert _root(local_stack, argo)["status"]["sync"]["revision"] == commit

    # Back to Flux is not made: `up` and `switch-engine` both refuse it, naming it, and change nothing.
    local_stack.set("gitops.engine", "flux")
    local_stack.commit("back to Flux")
    before = local_stack.raw_stack().export_stack().deployment["resources"]
    with pytest.raises(ConfigError, match=r"runs Argo CD: .* a move from Argo CD to Flux is not made"):
        up("local", options=local_stack.options)
    refused = local_stack.cli("switch-engine", "local", "--yes")
    assert refused.exit_code == 1, refused.output
    assert "EngineSwitchError" in refused.output and "from Argo CD to Flux is not made" in refused.output
    assert "Traceback" not in refused.output
    assert local_stack.raw_stack().export_stack().deployment["resources"] == before
    assert _root(local_stack, argo)["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}


def test_a_key_rotation_returns_only_once_argo_cd_has_fetched_with_the_new_key(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    up("local", options=local_stack.options)
    new = DeployKeyPair.generate()
    fleet.authorize(deploy_key, new)  # the overlap: the repository holds both deploy keys
    try:
        local_stack.set("localDeployKey", new.private_key, secret=True)
        seen = len(fleet.accepted())

        up("local", options=local_stack.options)

        fetched = fleet.accepted()[seen:]  # read as `up` returned
        assert new.fingerprint in fetched, (new.fingerprint, fetched)
        assert deploy_key.fingerprint not in fetched
        status = _root(local_stack, argo)["status"]
        assert (status["sync"]["status"], status["health"]["status"]) == ("Synced", "Healthy")
    finally:
        fleet.authorize(deploy_key)


def test_the_scaffolds_application_set_renders_an_application_from_the_contract(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer
) -> None:
    namespace = local_stack.service_namespace
    _commit_scaffold_and_an_app(local_stack, fleet)

    up("local", options=local_stack.options)

    def rendered() -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = client.CustomObjectsApi(local_stack.api).get_namespaced_custom_object(
                GROUP, VERSION, argo.namespace, "applications", "apps-in-cluster"
            )
            return found
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    application = wait_until(rendered, "the ApplicationSet's Application")
    # From the contract on the in-cluster Secret: its service namespace and its base domain.
    assert application["spec"]["destination"]["namespace"] == namespace
    assert application["spec"]["info"] == [{"name": "baseDomain", "value": "local.example.com"}]
    assert wait_until(lambda: _read_config_map(local_stack, "an-app", namespace), "the app applied") == {
        "value": "from-apps"
    }


def _refresh(stack: LocalStack, argo: ArgoCd) -> None:
    """Ask Argo CD to fetch now, as a webhook would: its own resync period is minutes."""
    client.CustomObjectsApi(stack.api).patch_namespaced_custom_object(
        GROUP,
        VERSION,
        argo.namespace,
        "applications",
        ROOT,
        {"metadata": {"annotations": {REFRESH_ANNOTATION: "hard"}}},
    )


def test_a_bad_commit_fails_drift_with_argo_cd_s_words_and_the_fix_passes_it(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer
) -> None:
    up("local", options=local_stack.options)
    path = local_stack.fleet_path
    fleet.commit(
        {f"{path}/kustomization.yaml": "resources: [missing.yaml]\n"}, "a kustomization of a missing file"
    )
    _refresh(local_stack, argo)

    def failing() -> Any:
        conditions = _root(local_stack, argo).get("status", {}).get("conditions", [])
        return next((c for c in conditions if c["type"] == "ComparisonError"), None)

    said = wait_until(failing, "Argo CD's ComparisonError")["message"]
    drift = local_stack.cli("drift", "local", "--layers", "gitops", "--json")
    assert drift.exit_code == 2, drift.output
    document = json.loads(drift.output)
    (root,) = [a for a in document["gitops"]["applications"] if a["root"]]
    assert root["sync"] == "Unknown" and root["ready"] is False
    assert any(
        "missing.yaml" in problem and said[:40] in problem for problem in document["gitops"]["problems"]
    )

    fixed = fleet.commit({f"{path}/kustomization.yaml": "resources: []\n"}, "the fix")
    _refresh(local_stack, argo)
    wait_until(
        lambda: _root(local_stack, argo)["status"]["sync"].get("revision") == fixed, "the fix compared"
    )
    seen: list[str] = []

    def passes() -> bool:
        result = local_stack.cli("drift", "local", "--layers", "gitops")
        seen[:] = [result.output]
        return result.exit_code == 0

    # Argo CD syncs the fix on its own schedule after the comparison: on a loaded machine, minutes (a
    # cold CI run's lanes saw more than 60 s).
    try:
        wait_until(passes, "drift to pass", 180)
    except pytest.fail.Exception:
        pytest.fail(f"drift did not pass within 180 s; it said: {seen[0] if seen else '(nothing)'}")


def test_destroy_deletes_what_argo_cd_applied_and_leaves_nothing(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer
) -> None:
    namespace = local_stack.service_namespace
    _commit_scaffold_and_an_app(local_stack, fleet)
    core = client.CoreV1Api(local_stack.api)
    known_hosts = "argocd-ssh-known-hosts-cm", argo.namespace
    upstream_hosts = [
        line
        for line in core.read_namespaced_config_map(*known_hosts).data["ssh_known_hosts"].splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert any(line.startswith("gitlab.com ") for line in upstream_hosts), upstream_hosts
    up("local", options=local_stack.options)
    assert wait_until(lambda: _read_config_map(local_stack, "an-app", namespace), "the app applied")
    during = core.read_namespaced_config_map(*known_hosts).data["ssh_known_hosts"].splitlines()
    assert set(upstream_hosts) <= set(during)

    local_stack.raw_stack().destroy(on_output=None)

    objects = client.CustomObjectsApi(local_stack.api)
    for plural in ("applications", "applicationsets", "appprojects"):
        left = objects.list_namespaced_custom_object(GROUP, VERSION, argo.namespace, plural)["items"]
        assert [
            item["metadata"]["name"]
            for item in left
            if plural != "appprojects" or item["metadata"]["name"] != "default"
        ] == [], plural
    assert _read_config_map(local_stack, "an-app", namespace) is None
    assert "in-cluster" not in {s.metadata.name for s in core.list_namespaced_secret(argo.namespace).items}
    # The repository Secret is a patch (a fixed name, updated in place under any provider): in a namespace
    # the stack does not own it gives its fields up, key and label, and Argo CD no longer reads it.
    left = core.read_namespaced_secret("platform-repository", argo.namespace)
    assert not left.data and "argocd.argoproj.io/secret-type" not in (left.metadata.labels or {})
    # Argo CD's known hosts are shared with every repository it fetches: upstream's hosts stayed through
    # the stack's life and its destroy, with the fleet's added.
    hosts = core.read_namespaced_config_map("argocd-ssh-known-hosts-cm", argo.namespace).data[
        "ssh_known_hosts"
    ]
    assert set(upstream_hosts) <= set(hosts.splitlines()), hosts
    assert fleet.known_hosts.strip().splitlines()[0] in hosts.splitlines(), hosts

    # The second act: `up` again brings it all back.
    up("local", options=local_stack.options)
    assert wait_until(lambda: _read_config_map(local_stack, "an-app", namespace), "the app applied again")


def test_a_switch_from_flux_to_argo_cd_in_one_up_is_refused_and_changes_nothing(
    local_stack: LocalStack,
) -> None:
    up("local", options=local_stack.options)  # on Flux, as committed
    local_stack.raw_stack().remove_config("gitops-infra:flux")
    local_stack.set_all({"gitops.engine": "argocd", "argocd.install": "external"})
    local_stack.commit("switch to Argo CD")
    with pytest.raises(
        ConfigError, match=r"gitops-infra:gitops\.engine: argocd, and stack 'local' runs Flux"
    ):
        up("local", options=local_stack.options)
    types = {r["type"] for r in local_stack.raw_stack().export_stack().deployment["resources"]}
    assert "gitops-infra:index:FluxBootstrap" in types and "gitops-infra:index:ArgoCdBootstrap" not in types


def test_up_on_a_commit_argo_cd_cannot_render_fails_with_argo_cd_s_condition(
    local_stack: LocalStack, argo: ArgoCd, fleet: FleetServer
) -> None:
    local_stack.set("argocd.readyTimeout", "30s")
    local_stack.commit("a short wait")
    path = local_stack.fleet_path
    fleet.commit(
        {f"{path}/kustomization.yaml": "resources: [missing.yaml]\n"}, "a kustomization of a missing file"
    )

    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    (reason,) = info.value.not_ready
    assert reason.startswith(f"Application {argo.namespace}/platform is Unknown"), reason
    assert "ComparisonError" in reason and "missing.yaml" in reason, reason


def _to_argo_cd(stack: LocalStack, namespace: str) -> None:
    stack.raw_stack().remove_config("gitops-infra:flux")
    stack.set_all({"gitops.engine": "argocd", "argocd.install": "external", "argocd.namespace": namespace})
    stack.commit("to Argo CD")


def test_switch_engine_hands_the_fleet_from_flux_to_argo_cd_with_nothing_deleted(
    local_stack: LocalStack, cluster: LocalCluster, fleet: FleetServer, tmp_path: Path
) -> None:
    namespace = local_stack.service_namespace
    fleet.commit(
        {
            f"{local_stack.fleet_path}/kustomization.yaml": "resources: [config.yaml]\n",
            f"{local_stack.fleet_path}/config.yaml": _config_map("kept", namespace, "one"),
        },
        "a ConfigMap both engines apply",
    )
    up("local", options=local_stack.options)  # on Flux, as committed
    core = client.CoreV1Api(local_stack.api)
    uid = core.read_namespaced_config_map("kept", namespace).metadata.uid

    argo = ArgoCd(tmp_path / "argocd", cluster, namespace=f"argocd-{local_stack.name}").start()
    try:
        _to_argo_cd(local_stack, argo.namespace)
        switched = local_stack.cli("switch-engine", "local", "--yes", "--json")
        assert switched.exit_code == 0, switched.output

        # Never deleted: the same object, now Argo CD's, and Flux's root gone without pruning it.
        assert core.read_namespaced_config_map("kept", namespace).metadata.uid == uid
        status = _root(local_stack, argo)["status"]
        assert (status["sync"]["status"], status["health"]["status"]) == ("Synced", "Healthy")
        kustomizations = client.CustomObjectsApi(local_stack.api).list_namespaced_custom_object(
            "kustomize.toolkit.fluxcd.io", "v1", local_stack.flux_namespace, "kustomizations"
        )["items"]
        assert kustomizations == []
        types = {r["type"] for r in local_stack.raw_stack().export_stack().deployment["resources"]}
        assert (
            "gitops-infra:index:ArgoCdBootstrap" in types and "gitops-infra:index:FluxBootstrap" not in types
        )
        # The second act: a switch with nothing to switch is refused, naming why.
        again = local_stack.cli("switch-engine", "local", "--yes")
        assert again.exit_code == 1 and "nothing to switch" in again.output, again.output
    finally:
        try:
            local_stack.raw_stack().destroy(on_output=None)
        finally:
            argo.stop()


def test_switch_engine_refuses_while_flux_s_root_applied_flux_objects_and_changes_nothing(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    path = local_stack.fleet_path
    child = (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: child\n"
        f"  namespace: {local_stack.flux_namespace}\nspec:\n  interval: 10m\n  path: ./{path}/child\n"
        "  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
    fleet.commit(
        {
            f"{path}/kustomization.yaml": "resources: [child.yaml]\n",
            f"{path}/child.yaml": child,
            f"{path}/child/README.md": "x\n",
        },
        "a child Kustomization",
    )
    up("local", options=local_stack.options)
    _to_argo_cd(local_stack, "argocd-unused")

    refused = local_stack.cli("switch-engine", "local", "--yes")

    assert refused.exit_code == 1, refused.output
    assert f"Kustomization {local_stack.flux_namespace}/child" in refused.output
    root = client.CustomObjectsApi(local_stack.api).get_namespaced_custom_object(
        "kustomize.toolkit.fluxcd.io", "v1", local_stack.flux_namespace, "kustomizations", "flux-system"
    )
    assert not root["spec"].get("suspend") and root["spec"]["deletionPolicy"] == "WaitForTermination"
