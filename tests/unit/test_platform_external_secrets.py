"""The platform with ``secrets.externalSecrets``: the component from the config, on the cluster's providers,
and the store's name in the environment contract (contract version 1.1)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pulumi
import pytest

from gitops_infra import build_platform, load_config
from gitops_infra.components.external_secrets import ExternalSecretsArgs
from gitops_infra.components.fleet_repository import scaffold_files
from gitops_infra.contract import CONTRACT_VERSION, parse_environment
from gitops_infra.errors import ConfigError
from gitops_infra.platform import Platform

from .conftest import LOCAL_TEST_KUBECONFIG, MINIMAL, stack_config
from .harness import Run, run

COMPONENT = "gitops-infra:index:ExternalSecrets"
STORE = "kubernetes:external-secrets.io/v1:ClusterSecretStore"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMapPatch"
ON = {"externalSecrets": {"enabled": True, "clusterSecretStore": "team-secrets"}}


def platform(secrets: dict[str, Any] | None, raw: dict[str, Any] | None = None, **flux: Any) -> Run[Platform]:
    raw = copy.deepcopy(raw if raw is not None else {**MINIMAL, "aws:region": "eu-west-1"})
    if "owner" in raw["git"]:  # the fleet on GitHub, its path scaffolded
        raw["git"]["scaffold"] = True
    raw["flux"] = {**raw.get("flux", {}), **flux}
    if secrets is not None:
        raw["secrets"] = secrets
    return run(
        lambda: build_platform(load_config(raw, stack="test")),
        outputs=lambda p: {key: pulumi.Output.from_input(value) for key, value in p.outputs().items()},
        stack="test",
    )


def _local(secrets: dict[str, Any]) -> dict[str, Any]:
    """The committed local stack (an existing cluster, Flux installed elsewhere), bare keys, with
    ``secrets``."""
    raw = {key.removeprefix("gitops-infra:"): value for key, value in stack_config("local").items()}
    raw["localKubeconfig"] = LOCAL_TEST_KUBECONFIG
    return {**raw, "secrets": secrets}


def _contracts(result: Run[Platform]) -> list[dict[str, str]]:
    return [
        r.inputs["data"]
        for r in result.graph.of_type(CONFIG_MAP)
        if r.input("metadata.name") == "environment"
    ]


def test_off_by_default_nothing_is_made_and_the_contract_names_no_store() -> None:
    result = platform(None)
    assert result.graph.of_type(COMPONENT) == [] and result.result.external_secrets is None
    contracts = _contracts(result)
    assert len(contracts) == 2 and all("clusterSecretStore" not in data for data in contracts)
    assert all(data["contractVersion"] == CONTRACT_VERSION for data in contracts)


def test_on_a_made_cluster_the_role_goes_through_pod_identity_and_the_contract_names_the_store() -> None:
    result = platform(ON)
    graph = result.graph
    component = graph.one(COMPONENT, "gitops-test-external-secrets")
    children = [r for r in graph if r.parent == component.urn]
    assert Counter(r.type for r in children) == Counter(
        {
            "aws:iam/role:Role": 1,
            "aws:iam/rolePolicy:RolePolicy": 1,
            "aws:eks/addon:Addon": 1,
            "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
            "kubernetes:core/v1:Namespace": 1,
            RELEASE: 1,
            STORE: 1,
        }
    )
    # The AWS resources on the provider the cluster is made with, the objects on the cluster's own.
    (cluster_node,) = [r for r in graph if r.type == "aws:ec2/vpc:Vpc"]
    flux_release = next(r for r in graph.of_type(RELEASE) if r.parent != component.urn)
    for child in children:
        expected = cluster_node.provider if child.type.startswith("aws:") else flux_release.provider
        assert child.provider == expected, child.name
    association = graph.one("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert association.inputs["clusterName"] == "gitops-test"
    assert association.inputs["serviceAccount"] == "external-secrets"
    assert graph.one("aws:eks/addon:Addon").inputs["clusterName"] == "gitops-test"
    assert graph.one("aws:iam/role:Role", "gitops-test-external-secrets-role").inputs["tags"] == {
        "owner": "platform",
        "environment": "test",
    }
    (statement,) = json.loads(graph.one("aws:iam/rolePolicy:RolePolicy").inputs["policy"])["Statement"]
    assert statement["Resource"] == ["arn:aws:secretsmanager:eu-west-1:123456789012:secret:test/*"]
    store = graph.one(STORE)
    assert store.input("metadata.name") == "team-secrets"
    assert store.input("spec.provider.aws.region") == "eu-west-1"

    # Every copy of the contract names the store: app teams' and the one Flux substitutes from.
    contracts = _contracts(result)
    assert len(contracts) == 2 and all(data["clusterSecretStore"] == "team-secrets" for data in contracts)
    assert parse_environment(contracts[0]).cluster_secret_store == "team-secrets"
    assert result.values["environment"].value["clusterSecretStore"] == "team-secrets"


def test_with_flux_installed_elsewhere_the_store_is_made_but_not_the_controller() -> None:
    result = platform(ON, install="external")
    component = result.graph.one(COMPONENT)
    assert [r for r in result.graph.of_type(RELEASE) if r.parent == component.urn] == []
    assert result.graph.one(STORE).parent == component.urn


def test_on_an_existing_cluster_the_role_is_made_and_the_association_is_yours() -> None:
    result = platform(None, _local({"externalSecrets": {**ON["externalSecrets"], "region": "eu-west-1"}}))
    types = {r.type for r in result.graph if r.parent == result.graph.one(COMPONENT).urn}
    assert types == {"aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy", STORE}
    (statement,) = json.loads(result.graph.one("aws:iam/rolePolicy:RolePolicy").inputs["policy"])["Statement"]
    assert statement["Resource"] == ["arn:aws:secretsmanager:eu-west-1:123456789012:secret:local/*"]


def test_without_an_iam_role_nothing_is_made_on_aws() -> None:
    secrets = {"externalSecrets": {"enabled": True, "region": "eu-west-1", "iamRole": False}}
    result = platform(None, _local(secrets))
    assert [r.type for r in result.graph if r.type.startswith("aws:")] == []
    assert result.graph.one(STORE).input("metadata.name") == "aws-secrets-manager"
    assert all(data["clusterSecretStore"] == "aws-secrets-manager" for data in _contracts(result))


def test_the_contract_s_store_is_the_platform_s_to_write() -> None:
    raw = copy.deepcopy({**MINIMAL, "aws:region": "eu-west-1"})
    raw["environment"]["clusterSecretStore"] = "mine"
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    assert info.value.problems == (
        "gitops-infra:environment.clusterSecretStore: written by the platform, from "
        "secrets.externalSecrets.clusterSecretStore when externalSecrets is enabled: remove it here",
    )


def test_a_cluster_the_platform_makes_needs_the_role() -> None:
    raw = {**copy.deepcopy(MINIMAL), "aws:region": "eu-west-1"}
    raw["secrets"] = {"externalSecrets": {"enabled": True, "iamRole": False}}
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    assert info.value.problems == (
        "gitops-infra:secrets.externalSecrets.iamRole: false only with cluster.existing; the cluster the "
        "platform makes reads Secrets Manager through the role it makes",
    )
    with pytest.raises(ConfigError, match=r"ExternalSecretsArgs\.cluster_name: needs iam_role"):
        ExternalSecretsArgs(region="eu-west-1", secret_prefix="dev/", cluster_name="c", iam_role=False)


def _readme(result: Run[Platform]) -> str:
    (readme,) = [
        r
        for r in result.graph.of_type("github:index/repositoryFile:RepositoryFile")
        if r.name.endswith("-readme")
    ]
    content: str = readme.inputs["content"]
    return content


def test_the_scaffolded_readme_says_how_to_read_a_secret_through_the_store_only_when_it_is_on() -> None:
    on = _readme(platform(ON))
    assert "## Secrets from AWS Secrets Manager (External Secrets)" in on
    assert "ClusterSecretStore `team-secrets`" in on and "`${clusterSecretStore}`" in on
    assert "remoteRef: {key: shop/db, property: password}" in on  # the store puts the prefix before it
    assert "`shop/db` reads\n`test/shop/db`" in on
    # Off, the README is what it was: no section, and no variable the contract does not define.
    off = _readme(platform(None))
    assert "External Secrets" not in off and "clusterSecretStore" not in off
    assert off == scaffold_files("clusters/test", "test")["clusters/test/README.md"]


def test_the_scaffolded_readme_says_how_to_seal_a_secret_only_when_sealed_secrets_is_on() -> None:
    on = _readme(platform({"sealedSecrets": {"enabled": True}}))
    assert "## Secrets sealed for git (Sealed Secrets)" in on
    assert "gitops-infra sealed-secrets cert STACK > cert.pem" in on and "kubeseal --cert cert.pem" in on
    assert "External Secrets" not in on  # each provider's section only when it is on
    both = _readme(platform({**ON, "sealedSecrets": {"enabled": True}}))
    assert "(External Secrets)" in both and "(Sealed Secrets)" in both
    assert "Sealed Secrets" not in _readme(platform(ON))
