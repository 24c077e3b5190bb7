"""EnvironmentConfig: the ConfigMap contract, written and parsed back."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.environment import EnvironmentConfig, EnvironmentConfigArgs, read_environment
from gitops_infra.contract import (
    CONTRACT_KEYS,
    CONTRACT_VERSION,
    CONTRACT_VERSION_KEY,
    ENVIRONMENT_CONFIGMAP,
    SUBSTITUTION_NAME_PATTERN,
    Environment,
    contract_schema,
    environment_data,
    parse_environment,
)
from gitops_infra.errors import ConfigError, EnvironmentContractError

from .harness import MOCK_KUBECONFIG, run

ENV = Environment(
    name="dev",
    base_domain="dev.example.com",
    service_namespace="apps",
    ingress_enabled=True,
    network_policies_enforced=False,
)


def test_data_is_strings_with_camel_case_keys() -> None:
    assert environment_data(ENV) == {
        "contractVersion": "1.1",
        "name": "dev",
        "baseDomain": "dev.example.com",
        "serviceNamespace": "apps",
        "ingressEnabled": "true",
        "networkPoliciesEnforced": "false",
    }


def test_parse_round_trips() -> None:
    assert parse_environment(environment_data(ENV)) == ENV


def test_parse_names_the_bad_key() -> None:
    data = environment_data(ENV) | {"ingressEnabled": "perhaps"}
    with pytest.raises(ValueError, match="ingressEnabled"):
        parse_environment(data)
    with pytest.raises(ValueError, match="baseDomain"):
        parse_environment({k: v for k, v in environment_data(ENV).items() if k != "baseDomain"})


def test_component_creates_namespace_then_configmap() -> None:
    def program() -> EnvironmentConfig:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        opts = pulumi.ResourceOptions(providers=[provider])
        return EnvironmentConfig("env", EnvironmentConfigArgs(environment=ENV), opts=opts)

    result = run(program, outputs=lambda e: {"environment": e.environment})
    graph = result.graph
    component = graph.one("gitops-infra:index:EnvironmentConfig")
    namespace = graph.one("kubernetes:core/v1:Namespace", "env-namespace")
    config_map = graph.one("kubernetes:core/v1:ConfigMapPatch", "env-configmap")
    assert namespace.input("metadata.name") == "apps"
    assert config_map.inputs["metadata"] == {
        "name": ENVIRONMENT_CONFIGMAP,
        "namespace": "apps",
        # The platform's apply takes back fields edited out of band, so `up` can restore drift.
        "annotations": {"pulumi.com/patchForce": "true"},
    }
    assert config_map.inputs["data"] == environment_data(ENV)
    assert namespace.urn in config_map.dependencies
    assert namespace.parent == config_map.parent == component.urn
    assert parse_environment(result.values["environment"].value) == ENV
    provider = graph.one("pulumi:providers:kubernetes")
    assert namespace.provider.startswith(provider.urn + "::") and config_map.provider.startswith(provider.urn)


def test_args_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        EnvironmentConfigArgs(environment={"name": "dev"})  # type: ignore[arg-type]
    assert info.value.problems == ("EnvironmentConfigArgs.environment: must be an Environment",)


# -- the contract version ------------------------------------------------------------------------------


def test_data_carry_the_contract_version() -> None:
    assert environment_data(ENV)[CONTRACT_VERSION_KEY] == CONTRACT_VERSION == "1.1"


# -- 1.1: the store External Secrets reads through, a key added in a minor version -----------------------

STORE = ENV.model_copy(update={"cluster_secret_store": "aws-secrets-manager"})


def test_the_store_is_written_when_there_is_one_and_absent_otherwise() -> None:
    assert environment_data(STORE)["clusterSecretStore"] == "aws-secrets-manager"
    assert "clusterSecretStore" not in environment_data(ENV)  # absent, never "None"
    assert parse_environment(environment_data(STORE)) == STORE


def test_a_reader_reads_version_1_data_which_lack_the_store() -> None:
    # What a platform before 1.1 wrote: still the same major version, and the store is optional.
    old = environment_data(ENV) | {CONTRACT_VERSION_KEY: "1"}
    assert parse_environment(old) == ENV
    assert parse_environment(old | {CONTRACT_VERSION_KEY: "1.0"}) == ENV


def test_version_1_data_may_not_hold_a_key_added_in_1_1() -> None:
    with pytest.raises(EnvironmentContractError) as info:
        parse_environment(environment_data(STORE) | {CONTRACT_VERSION_KEY: "1"})
    assert info.value.problems == ("clusterSecretStore: not a key of contract version 1 (added in 1.1)",)


def test_the_store_is_a_name() -> None:
    with pytest.raises(EnvironmentContractError, match="clusterSecretStore: 'Not A Name' does not match"):
        parse_environment(environment_data(STORE) | {"clusterSecretStore": "Not A Name"})


@pytest.mark.parametrize("version", ["2", "2.0", "0"])
def test_a_reader_refuses_a_major_version_it_does_not_know(version: str) -> None:
    with pytest.raises(EnvironmentContractError) as info:
        parse_environment(environment_data(ENV) | {CONTRACT_VERSION_KEY: version})
    assert f"contractVersion: {version!r} is major version {version.split('.')[0]}" in str(info.value)
    assert "upgrade gitops-infra" in str(info.value)
    assert isinstance(info.value, ValueError)  # callers that caught ValueError still do


def test_data_without_a_contract_version_are_refused() -> None:
    data = {k: v for k, v in environment_data(ENV).items() if k != CONTRACT_VERSION_KEY}
    with pytest.raises(EnvironmentContractError, match="contractVersion: missing"):
        parse_environment(data)
    with pytest.raises(EnvironmentContractError, match="'v1' is not a contract version"):
        parse_environment(environment_data(ENV) | {CONTRACT_VERSION_KEY: "v1"})


@pytest.mark.parametrize("version", ["01", "1.01", "\u0661", "1.\u0663", "\uff11"])
def test_a_leading_zero_or_a_non_ascii_digit_is_not_a_version(version: str) -> None:
    # "01" read as major 1... or as an unknown major: either way not what a writer meant. Refused as such.
    with pytest.raises(EnvironmentContractError, match="is not a contract version"):
        parse_environment(environment_data(ENV) | {CONTRACT_VERSION_KEY: version})


def test_a_newer_minor_version_only_adds_keys_which_are_ignored() -> None:
    newer = environment_data(ENV) | {CONTRACT_VERSION_KEY: "1.3", "clusterIssuer": "letsencrypt"}
    assert parse_environment(newer) == ENV
    # At the version this reader knows, an unknown key is a typo, and said so.
    with pytest.raises(EnvironmentContractError, match="clusterIssuer: not a key of the contract"):
        parse_environment(environment_data(ENV) | {"clusterIssuer": "letsencrypt"})


def test_flags_read_only_as_the_platform_writes_them() -> None:
    for spelling in ("True", "yes", "1", ""):
        with pytest.raises(EnvironmentContractError, match='ingressEnabled: must be "true" or "false"'):
            parse_environment(environment_data(ENV) | {"ingressEnabled": spelling})


def test_every_key_is_a_variable_flux_can_substitute() -> None:
    # kustomize-controller refuses a whole Kustomization whose substituteFrom has a key outside this.
    keys = set(environment_data(ENV)) | set(CONTRACT_KEYS)
    assert keys == set(CONTRACT_KEYS)
    assert all(re.match(SUBSTITUTION_NAME_PATTERN, key) for key in keys)
    assert not any(re.match(SUBSTITUTION_NAME_PATTERN, bad) for bad in ("base-domain", "1st", "a.b"))


def test_the_schema_describes_the_data_as_written() -> None:
    schema = contract_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"contractVersion", "name", "baseDomain", "serviceNamespace"}
    assert set(schema["properties"]) == set(CONTRACT_KEYS)
    properties = schema["properties"]
    assert properties["ingressEnabled"] == {
        "type": "string",
        "enum": ["true", "false"],
        "default": "true",
        "description": "Whether an ingress controller serves it.",
    }
    assert properties["contractVersion"]["pattern"] == r"^1(\.[0-9]+)?$"
    assert "default" not in properties["clusterSecretStore"]  # absent when there is none, never null
    assert "clusterSecretStore" not in schema["required"]
    assert all(prop["type"] == "string" and prop["description"] for prop in properties.values())
    # What the platform writes matches the schema's patterns and enums.
    for key, value in environment_data(ENV.model_copy(update={"cluster_secret_store": "store"})).items():
        prop = properties[key]
        assert re.match(prop.get("pattern", ".*"), value) and value in prop.get("enum", [value])


# -- reading it from a Pulumi program ------------------------------------------------------------------


def _read(data: dict[str, str], namespace: str = "apps") -> Any:
    state = {"metadata": {"name": ENVIRONMENT_CONFIGMAP, "namespace": namespace}, "data": data}
    return run(
        lambda: read_environment(namespace),
        outputs=lambda environment: {"environment": environment},
        reads={f"{namespace}/{ENVIRONMENT_CONFIGMAP}": state},
    )


def test_read_environment_reads_the_configmap_and_types_it() -> None:
    result = _read(environment_data(ENV))
    assert result.values["environment"].value == ENV
    assert result.graph.of_type("kubernetes:core/v1:ConfigMap") == []  # read, never registered: not managed


def test_read_environment_fails_the_program_with_the_bad_key() -> None:
    with pytest.raises(
        Exception, match=r"apps/environment: invalid environment ConfigMap: baseDomain"
    ) as info:
        _read(environment_data(ENV) | {"baseDomain": "Not A Domain"})
    assert isinstance(info.value, pulumi.RunError)  # its message alone, no traceback


@pytest.mark.parametrize("namespace", ["", "Apps", "apps/other"])
def test_read_environment_checks_the_namespace_before_reading(namespace: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_environment(namespace)
    assert info.value.problems[0].startswith("read_environment.namespace: ")
