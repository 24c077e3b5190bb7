"""The Flux Operator install mode: the FluxInstance, its options' checks, the bootstrap's graph with it."""

from __future__ import annotations

import dataclasses
import json

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.flux import (
    FLUX_INSTANCE_API_VERSION,
    FLUX_OPERATOR_CHART,
    RUNTIME_INFO_CONFIGMAP,
    WAIT_FOR_ANNOTATION,
    WAIT_FOR_READY,
    FluxBootstrap,
    OperatorOptions,
    flux_instance_manifest,
    runtime_info_data,
)
from gitops_infra.contract import Environment
from gitops_infra.defaults import (
    FLUX_OPERATOR_CHART_VERSION,
    FLUX_OPERATOR_FLUX_VERSION,
    FluxComponent,
)
from gitops_infra.errors import ConfigError

from ..harness import MOCK_KUBECONFIG, Run, run
from .support import (
    CONFIG_MAP_PATCH,
    GIT_REPOSITORY,
    KUSTOMIZATION,
    NAMESPACE,
    NAMESPACE_PATCH,
    RELEASE,
    bootstrap_args,
)

FLUX_INSTANCE = "kubernetes:fluxcd.controlplane.io/v1:FluxInstance"
ENVIRONMENT = Environment(name="dev", base_domain="dev.example.com", service_namespace="apps")


def test_the_instance_pins_flux_and_its_controllers_and_leaves_the_sync_to_the_platform() -> None:
    manifest = flux_instance_manifest(OperatorOptions())
    assert manifest["apiVersion"] == FLUX_INSTANCE_API_VERSION
    assert manifest["metadata"]["name"] == "flux"
    assert manifest["metadata"]["namespace"] == "flux-system"
    assert manifest["metadata"]["annotations"][WAIT_FOR_ANNOTATION] == WAIT_FOR_READY
    spec = manifest["spec"]
    assert spec["distribution"] == {"version": FLUX_OPERATOR_FLUX_VERSION, "registry": "ghcr.io/fluxcd"}
    assert spec["components"] == [
        "source-controller",
        "kustomize-controller",
        "helm-controller",
        "notification-controller",
    ]
    assert spec["cluster"] == {"type": "kubernetes", "networkPolicy": True}
    assert "sync" not in spec  # the platform's own GitRepository and Kustomization are named flux-system


def test_the_instance_follows_the_options() -> None:
    options = OperatorOptions(
        version="2.8.5",
        components_extra=(
            FluxComponent.IMAGE_REFLECTOR_CONTROLLER,
            FluxComponent.IMAGE_AUTOMATION_CONTROLLER,
        ),
        network_policy=False,
        cluster_type="aws",
    )
    spec = flux_instance_manifest(options, "flux")["spec"]
    assert spec["distribution"]["version"] == "2.8.5"
    assert spec["components"][-2:] == ["image-reflector-controller", "image-automation-controller"]
    assert spec["cluster"] == {"type": "aws", "networkPolicy": False}
    assert flux_instance_manifest(options, "flux")["metadata"]["namespace"] == "flux"


def test_with_tenants_flux_is_locked_down_as_the_chart_locks_it() -> None:
    spec = flux_instance_manifest(OperatorOptions(multi_tenancy=True))["spec"]
    assert spec["cluster"]["multitenant"] is True
    assert spec["cluster"]["tenantDefaultServiceAccount"] == "default"
    (patch,) = spec["kustomize"]["patches"]
    assert patch["target"] == {"kind": "Deployment", "name": "kustomize-controller"}
    assert "--no-remote-bases=true" in patch["patch"]


def test_placement_goes_to_every_controller_and_to_the_operator() -> None:
    toleration = {"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"}
    options = OperatorOptions(tolerations=[toleration], node_selector={"pool": "system"})
    (patch,) = flux_instance_manifest(options)["spec"]["kustomize"]["patches"]
    assert patch["target"] == {"kind": "Deployment"}
    merged = json.loads(patch["patch"])  # a strategic merge: the manifests' kubernetes.io/os selector stays
    assert merged["kind"] == "Deployment"
    assert merged["spec"]["template"]["spec"] == {
        "tolerations": [toleration],
        "nodeSelector": {"pool": "system"},
    }
    assert "kustomize" not in flux_instance_manifest(OperatorOptions())["spec"]
    with pytest.raises(ConfigError, match=r"OperatorOptions\.tolerations\[0\]\.effect"):
        OperatorOptions(tolerations=[{"key": "k", "effect": "Sometimes"}])


@pytest.mark.parametrize("version", ["2.8.4", "2.10.0", "2.18.3", "v2.9.4"])
def test_a_release_the_operator_does_not_bundle_is_refused(version: str) -> None:
    with pytest.raises(
        ConfigError, match=r"OperatorOptions\.version: must be a Flux release the Flux Operator"
    ):
        OperatorOptions(version=version)


def test_runtime_info_holds_the_install_s_facts_and_the_environment_s_name() -> None:
    data = runtime_info_data(OperatorOptions(version="2.8.5"), "flux-system", ENVIRONMENT)
    assert data == {
        "FLUX_VERSION": "2.8.5",
        "FLUX_NAMESPACE": "flux-system",
        "CLUSTER_TYPE": "kubernetes",
        "ENVIRONMENT": "dev",
    }


def _bootstrap(options: OperatorOptions) -> Run[FluxBootstrap]:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        args = dataclasses.replace(bootstrap_args(), install=options, environment=ENVIRONMENT)
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(program)


def test_the_platform_installs_the_operator_s_chart_then_the_instance_then_syncs() -> None:
    graph = _bootstrap(OperatorOptions()).graph
    (release,) = graph.of_type(RELEASE)  # the operator's, not the flux2 chart
    assert release.inputs["chart"] == FLUX_OPERATOR_CHART
    assert release.inputs["version"] == FLUX_OPERATOR_CHART_VERSION
    instance = graph.one(FLUX_INSTANCE)
    assert release.urn in instance.dependencies
    assert graph.one(NAMESPACE).urn in instance.dependencies
    for sync_object in (GIT_REPOSITORY, KUSTOMIZATION):
        assert instance.urn in graph.one(sync_object).dependencies
    runtime_info = [
        r for r in graph.of_type(CONFIG_MAP_PATCH) if r.input("metadata.name") == RUNTIME_INFO_CONFIGMAP
    ]
    assert runtime_info[0].input("data")["ENVIRONMENT"] == "dev"


def test_an_operator_that_runs_already_gets_only_the_instance_in_its_namespace() -> None:
    graph = _bootstrap(OperatorOptions(install_operator=False)).graph
    assert graph.of_type(RELEASE) == []
    assert graph.of_type(NAMESPACE) == []
    assert graph.one(NAMESPACE_PATCH).urn in graph.one(FLUX_INSTANCE).dependencies
    assert graph.one(FLUX_INSTANCE).urn in graph.one(KUSTOMIZATION).dependencies
