"""EnvironmentConfig: the ConfigMap contract, written and parsed back."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.environment import (
    ENVIRONMENT_CONFIGMAP,
    Environment,
    EnvironmentConfig,
    EnvironmentConfigArgs,
    environment_data,
    parse_environment,
)
from gitops_infra.errors import ConfigError

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
    config_map = graph.one("kubernetes:core/v1:ConfigMap", "env-configmap")
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
