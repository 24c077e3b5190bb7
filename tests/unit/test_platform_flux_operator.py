"""The platform with ``flux.install: operator``: the operator's chart and a FluxInstance, no flux2 chart."""

from __future__ import annotations

import copy
import json
from typing import Any

from gitops_infra import build_platform, load_config
from gitops_infra.components.flux import FLUX_OPERATOR_CHART
from gitops_infra.platform import Platform

from .conftest import MINIMAL, stack_config
from .harness import Run, run

RELEASE = "kubernetes:helm.sh/v3:Release"
FLUX_INSTANCE = "kubernetes:fluxcd.controlplane.io/v1:FluxInstance"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"


def platform(raw: dict[str, Any], **flux: Any) -> Run[Platform]:
    raw = copy.deepcopy(raw)
    key = "gitops-infra:flux" if "gitops-infra:flux" in raw else "flux"  # a stack file's keys are prefixed
    raw[key] = {**raw.get(key, {}), **flux}
    return run(lambda: build_platform(load_config(raw, stack="test")), stack="test")


def test_on_a_cluster_the_platform_makes_the_operator_installs_flux_there_as_aws() -> None:
    graph = platform(MINIMAL, install="operator", version="2.8.5").graph
    (release,) = graph.of_type(RELEASE)
    assert release.inputs["chart"] == FLUX_OPERATOR_CHART
    instance = graph.one(FLUX_INSTANCE)
    assert instance.inputs["spec"]["distribution"]["version"] == "2.8.5"
    assert instance.inputs["spec"]["cluster"]["type"] == "aws"
    assert instance.urn in graph.one(KUSTOMIZATION).dependencies
    assert "kustomize" not in instance.inputs["spec"]  # no tenants, no placement: nothing to patch
    # The root still applies as the controller's own identity, which the instance's RBAC binds.
    assert graph.one(KUSTOMIZATION).inputs["spec"]["serviceAccountName"] == "kustomize-controller"


def test_on_the_local_stack_an_operator_that_runs_already_gets_only_its_instance() -> None:
    local = stack_config("local")
    graph = platform(local, install="operator", operatorInstall="external").graph
    assert graph.of_type(RELEASE) == []
    instance = graph.one(FLUX_INSTANCE)
    assert instance.inputs["spec"]["distribution"]["version"] == "2.9.4"
    assert instance.inputs["spec"]["cluster"]["type"] == "kubernetes"


def test_prod_s_placement_reaches_the_controllers_and_the_operator() -> None:
    prod = stack_config("prod")
    graph = platform(prod, install="operator").graph
    (release,) = [r for r in graph.of_type(RELEASE) if r.inputs["chart"] == FLUX_OPERATOR_CHART]
    tolerations = release.inputs["values"]["tolerations"]
    assert tolerations, "prod pins Flux to its tainted system node group"
    patch = graph.one(FLUX_INSTANCE).inputs["spec"]["kustomize"]["patches"][-1]
    assert json.loads(patch["patch"])["spec"]["template"]["spec"]["tolerations"] == tolerations
