"""``flux.install: operator`` on the local stack: the Flux Operator installs Flux, and ``up`` upgrades it.

The split, on this cluster: the Flux Operator (v0.59.0, built from its module) runs as a process
(:class:`~gitops_infra.local.FluxOperator`), and the stack says so (``flux.operatorInstall: external``).
It reconciles the stack's ``FluxInstance`` for real: it applies the CRDs, RBAC, network policies and the
controllers' Deployments of the Flux release the instance names, from the manifests it bundles, and waits
for them to be healthy. kwok reports the Deployments' pods Running, so they become available, though no
container runs in them. The work a Deployment's pod would do is done by the same controllers, built from
modules and run as processes by :class:`~gitops_infra.local.LocalCluster`: those fetch and apply the fleet,
and prove the sync to ``up`` as in every install mode.

Each test has a cluster of its own: deleting a FluxInstance (the stack's destroy) uninstalls Flux, CRDs
included, and the session's cluster keeps its Flux.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import up
from gitops_infra.components.flux import FLUX_SYNC_NAME, RUNTIME_INFO_CONFIGMAP
from gitops_infra.defaults import FLUX_OPERATOR_BUNDLED, FLUX_OPERATOR_FLUX_VERSION
from gitops_infra.local import FleetServer, FluxOperator, LocalCluster

from ..support import unavailable
from .conftest import TOOLCHAIN, LocalStack, _require_toolchain, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

NAMESPACE = "flux-system"
"""The operator's runtime namespace: it reconciles only the FluxInstance ``flux`` there."""
USERS_PIN = "2.8.5"
"""The Flux release the flux2 chart 2.18.3 installs: where users of ``install: helm`` are today."""
INSTANCE = ("fluxcd.controlplane.io", "v1", NAMESPACE, "fluxinstances", "flux")
SOURCE = ("source.toolkit.fluxcd.io", "v1", NAMESPACE, "gitrepositories", FLUX_SYNC_NAME)
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", NAMESPACE, "kustomizations", FLUX_SYNC_NAME)
# The controllers' image tags of each Flux release (the operator's flux/<version>/*.yaml).
TAGS = {
    "2.8.5": {"source-controller": "v1.8.2", "kustomize-controller": "v1.8.3"},
    "2.9.4": {"source-controller": "v1.9.4", "kustomize-controller": "v1.9.4"},
}


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster of this test's own, with the Flux Operator running beside it (stopped after the stack's
    destroy, which needs it to clear the instance's finalizer)."""
    _require_toolchain()
    if not (TOOLCHAIN.bin_dir / "flux-operator").is_file():
        unavailable("the Flux Operator is not built: run `make setup`")
    work = tmp_path_factory.mktemp("operator-cluster")
    local = LocalCluster(work / "cluster", toolchain=TOOLCHAIN).start()
    operator = FluxOperator(work / "operator", local)
    try:
        operator.start()
        yield local
    finally:
        operator.stop()
        local.stop()


TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "flux", "effect": "NoSchedule"}


def _operator_stack(stack: LocalStack, version: str | None, **more: Any) -> None:
    settings: dict[str, Any] = {
        "flux.install": "operator",
        "flux.operatorInstall": "external",
        "flux.namespace": NAMESPACE,
        **more,
    }
    if version is not None:
        settings["flux.version"] = version
    stack.set_all(settings)
    stack.commit(f"Flux through the operator, {version or 'its default'}")


def _get(stack: LocalStack, kind: tuple[str, str, str, str, str]) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(*kind)
    return found


def _ready(found: dict[str, Any]) -> bool:
    conditions = found.get("status", {}).get("conditions", [])
    ready = next((c for c in conditions if c["type"] == "Ready"), None)
    return (
        ready is not None
        and ready["status"] == "True"
        and ready.get("observedGeneration", found["metadata"]["generation"])
        == found["metadata"]["generation"]
    )


def _image_tags(stack: LocalStack) -> dict[str, str]:
    apps = client.AppsV1Api(stack.api)
    tags = {}
    for name in ("source-controller", "kustomize-controller"):
        image = apps.read_namespaced_deployment(name, NAMESPACE).spec.template.spec.containers[0].image
        tags[name] = image.split("@")[0].rsplit(":", 1)[1]
    return tags


def _assert_installed(stack: LocalStack, version: str) -> None:
    """The instance Ready at ``version``, its Deployments at that release's tags and available, and the
    platform's sync Ready: all as ``up`` returned, with no waiting here."""
    instance = _get(stack, INSTANCE)
    assert _ready(instance), instance.get("status")
    assert instance["status"]["lastAppliedRevision"].startswith(f"v{version}@")
    assert _image_tags(stack) == TAGS[version]
    apps = client.AppsV1Api(stack.api)
    for name in TAGS[version]:
        assert apps.read_namespaced_deployment(name, NAMESPACE).status.available_replicas == 1
    for kind in (SOURCE, KUSTOMIZE):
        assert _ready(_get(stack, kind))


def _applied(stack: LocalStack, fleet: FleetServer, name: str) -> None:
    """A ConfigMap committed to the stack's fleet path reaches the cluster: the sync holds."""
    fleet.commit(
        {
            f"{stack.fleet_path}/{name}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
            "  namespace: default\ndata:\n  host: shop.${baseDomain}\n"
        },
        f"add {name}",
    )
    client.CustomObjectsApi(stack.api).patch_namespaced_custom_object(
        *SOURCE, {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": name}}}
    )

    def present() -> dict[str, str] | None:
        try:
            return client.CoreV1Api(stack.api).read_namespaced_config_map(name, "default").data
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    assert wait_until(present, f"{name} applied from the fleet") == {"host": "shop.local.example.com"}


def test_the_operator_installs_flux_and_up_proves_the_sync(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    _operator_stack(local_stack, None, **{f"flux.tolerations[0].{k}": v for k, v in TOLERATION.items()})
    up("local", options=local_stack.options)
    _assert_installed(local_stack, FLUX_OPERATOR_FLUX_VERSION)
    # The placement reached every controller through the instance's patch, beside the manifests' own.
    apps = client.AppsV1Api(local_stack.api)
    for name in ("source-controller", "notification-controller"):
        pod = apps.read_namespaced_deployment(name, NAMESPACE).spec.template.spec
        assert pod.tolerations[0].to_dict() | {"toleration_seconds": None} == {
            "key": "dedicated",
            "operator": "Equal",
            "value": "flux",
            "effect": "NoSchedule",
            "toleration_seconds": None,
        }
        assert pod.node_selector == {"kubernetes.io/os": "linux"}
    spec = _get(local_stack, INSTANCE)["spec"]
    assert "sync" not in spec  # the platform's own GitRepository and Kustomization sync
    assert spec["components"] == [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
        "notification-controller",
    ]
    _applied(local_stack, fleet, "through-the-operator")

    # flux-runtime-info and the environment contract agree where they overlap: the environment's name
    # and Flux's namespace; and its Flux version is the one the operator applied.
    core = client.CoreV1Api(local_stack.api)
    runtime = core.read_namespaced_config_map(RUNTIME_INFO_CONFIGMAP, NAMESPACE)
    contract = core.read_namespaced_config_map("environment", NAMESPACE)
    assert runtime.data["ENVIRONMENT"] == contract.data["name"] == "local"
    assert runtime.data["FLUX_NAMESPACE"] == contract.metadata.namespace == NAMESPACE
    applied = _get(local_stack, INSTANCE)["status"]["lastAppliedRevision"]
    assert f"v{runtime.data['FLUX_VERSION']}@" in applied


def test_up_upgrades_flux_by_the_instance_s_version(local_stack: LocalStack, fleet: FleetServer) -> None:
    _operator_stack(local_stack, USERS_PIN)
    up("local", options=local_stack.options)
    _assert_installed(local_stack, USERS_PIN)
    _applied(local_stack, fleet, "before-the-upgrade")

    _operator_stack(local_stack, FLUX_OPERATOR_FLUX_VERSION)
    up("local", options=local_stack.options)
    # `up` returned once the operator had applied the new release and found it healthy.
    _assert_installed(local_stack, FLUX_OPERATOR_FLUX_VERSION)
    _applied(local_stack, fleet, "after-the-upgrade")


def test_the_bundled_releases_are_the_built_operator_s() -> None:
    # Here, not among the unit tests: the engine lane runs while setup may still be building the operator.
    data = TOOLCHAIN.bin_dir.parent / "flux-operator-data" / "flux"
    if not data.is_dir():
        unavailable(f"{data} is not built: run `make setup`")
    assert sorted(path.name for path in data.iterdir()) == sorted(f"v{v}" for v in FLUX_OPERATOR_BUNDLED)
