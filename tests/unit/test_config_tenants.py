"""``gitops-infra:tenants``: valid tenants load with their defaults, and every bad one names its key path."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from gitops_infra.config import TenantSpec, load_config, named_secret_keys, plan_config
from gitops_infra.errors import ConfigError

from .harness import run

OWN_KEY = {"url": "ssh://git@git.example.com/shop", "knownHosts": "git.example.com ssh-ed25519 AAAA"}


def problems_of(raw: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    return info.value.problems


def with_tenants(minimal: dict[str, Any], *tenants: Any, **secrets: str) -> dict[str, Any]:
    return {**minimal, "tenants": list(tenants), **secrets}


def test_no_tenants_by_default_and_a_tenant_takes_the_defaults(minimal: dict[str, Any]) -> None:
    assert load_config(minimal, stack="test").tenants == ()
    assert load_config(with_tenants(minimal), stack="test").tenants == ()
    (shop,) = load_config(with_tenants(minimal, {"name": "shop"}), stack="test").tenants
    assert shop.tenant_namespaces == ("shop",) and shop.home_namespace == "shop"
    assert shop.role == "admin"
    assert shop.fleet_path == "tenants/shop"
    assert shop.quota is None and shop.limits == ()


def test_a_tenant_of_every_kind_loads(minimal: dict[str, Any]) -> None:
    raw = with_tenants(
        minimal,
        {
            "name": "shop",
            "namespaces": ["shop", "shop-jobs"],
            "source": {"path": "teams/shop"},
            "role": "edit",
            "quota": {"requests.cpu": "4", "pods": 20, "count/deployments.apps": "10"},
            "limits": [
                {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"memory": "1Gi"}}
            ],
        },
        {"name": "key", "source": {"repository": {"url": "ssh://git@github.com/acme/key", "branch": "prod"}}},
        {
            "name": "own",
            "source": {"repository": {**OWN_KEY, "deployKey": {"existing": {"privateKey": "ownKey"}}}},
        },
        {
            "name": "app",
            "source": {
                "repository": {
                    "url": "https://github.com/acme/app",
                    "githubApp": {"appId": 1, "installationId": 2, "privateKey": "appPem"},
                }
            },
        },
        ownKey="mock-openssh-private-key-own",
        appPem="mock-pem",
    )
    config = load_config(raw, stack="test")
    shop, key, own, app = config.tenants
    assert shop.fleet_path == "teams/shop" and shop.quota == {
        "requests.cpu": "4",
        "pods": "20",
        "count/deployments.apps": "10",
    }
    assert shop.limits[0].default_request == {"memory": "1Gi"}
    assert key.fleet_path is None and key.source.repository is not None
    assert key.source.repository.registers_deploy_key and key.source.repository.path == "."
    assert key.source.repository.github_repository == ("acme", "key")
    assert set(config.secrets.tenant_keys) == {"ownKey", "appPem"}
    assert all(isinstance(value, pulumi.Output) for value in config.secrets.tenant_keys.values())
    assert "mock-pem" not in repr(config)
    assert own.source.repository is not None and not own.source.repository.registers_deploy_key
    assert app.source.repository is not None and app.source.repository.github_app is not None


def test_a_tenants_secret_keys_are_read_as_secrets(minimal: dict[str, Any]) -> None:
    raw = with_tenants(
        minimal,
        {
            "name": "own",
            "source": {"repository": {**OWN_KEY, "deployKey": {"existing": {"privateKey": "ownKey"}}}},
        },
        ownKey="mock-openssh-private-key-own",
    )
    assert named_secret_keys(raw) == ("ownKey",)
    secret = run(
        lambda: load_config(raw, stack="test").secrets.tenant_keys["ownKey"], outputs=lambda o: {"k": o}
    )
    assert secret.values["k"].secret and secret.values["k"].value == "mock-openssh-private-key-own"
    # The offline plan plans it with a placeholder, as every secret key a config names.
    del raw["ownKey"]
    planned = plan_config(
        {f"gitops-infra:{key}": value for key, value in raw.items()}, "gitops-infra", "test"
    )
    assert planned["gitops-infra:ownKey"] == {"secure": "[secret]"}


MALFORMED: list[tuple[Any, str]] = [
    ({"name": "x"}, "gitops-infra:tenants: must be a list of tenants"),
    ([{"namespaces": ["a"]}], "gitops-infra:tenants[0].name: required"),
    ([{"name": "Shop"}], "gitops-infra:tenants[0].name: must be a DNS label"),
    (
        [{"name": "a"}, {"name": "b", "namespaces": ["b", "B"]}],
        "gitops-infra:tenants[1].namespaces[1]: must be a DNS",
    ),
    (
        [{"name": "a", "namespaces": []}],
        "gitops-infra:tenants[0].namespaces: must name at least one namespace",
    ),
    (
        [{"name": "a", "namespaces": ["a", "a"]}],
        "gitops-infra:tenants[0].namespaces[1]: repeats namespaces[0]",
    ),
    (
        [{"name": "a", "namespaces": ["a", "kube-system"]}],
        "gitops-infra:tenants[0].namespaces[1]: is reserved",
    ),
    ([{"name": "a", "namespaces": ["default"]}], "gitops-infra:tenants[0].namespaces[0]: is reserved"),
    (
        [{"name": "kube-public"}],
        "gitops-infra:tenants[0].name: as its namespace (namespaces is unset), is reserved",
    ),
    ([{"name": "flux-system"}], "gitops-infra:tenants[0].name: as its namespace (namespaces is unset), is"),
    (
        [{"name": "a", "namespaces": ["a", "apps"]}],
        "gitops-infra:tenants[0].namespaces[1]: is environment.serviceNamespace, the platform's own",
    ),
    (
        [{"name": "a"}, {"name": "a", "namespaces": ["b"]}],
        "gitops-infra:tenants[1].name: repeats tenants[0].name",
    ),
    (
        [{"name": "a"}, {"name": "b", "namespaces": ["b", "a"]}],
        "gitops-infra:tenants[1].namespaces[1]: is also a namespace of tenants[0]",
    ),
    ([{"name": "a", "role": "team/deployer"}], "gitops-infra:tenants[0].role: must name a ClusterRole"),
    ([{"name": "a", "role": ""}], "gitops-infra:tenants[0].role: must name a ClusterRole"),
    (
        [{"name": "a", "quota": {"requests.cpu": "lots"}}],
        "gitops-infra:tenants[0].quota.requests.cpu: must be a",
    ),
    (
        [{"name": "a", "quota": {"pods": True}}],
        "gitops-infra:tenants[0].quota.pods: must be a Kubernetes quantity",
    ),
    ([{"name": "a", "quota": ["pods"]}], "gitops-infra:tenants[0].quota:"),
    ([{"name": "a", "limits": [{"type": "Node"}]}], "gitops-infra:tenants[0].limits[0].type:"),
    (
        [{"name": "a", "limits": [{"type": "Pod", "max": {"cpu": "x"}}]}],
        "gitops-infra:tenants[0].limits[0].max.cpu:",
    ),
    (
        [{"name": "a", "limits": [{"type": "Pod", "maximum": {}}]}],
        "gitops-infra:tenants[0].limits[0].maximum: unknown",
    ),
    ([{"name": "a", "sourcePath": "x"}], "gitops-infra:tenants[0].sourcePath: unknown key"),
    (
        [{"name": "a", "source": {"path": "../x"}}],
        "gitops-infra:tenants[0].source.path: must be a relative path",
    ),
    (
        [{"name": "a", "source": {"path": "clusters"}}],
        "gitops-infra:tenants[0].source.path: holds or lies inside",
    ),
    (
        [{"name": "a"}, {"name": "b", "source": {"path": "tenants/a/b"}}],
        "gitops-infra:tenants[1].source.path: holds or lies inside the path of tenants[0]",
    ),
    (
        [{"name": "a", "source": {"path": "a", "repository": {"url": "ssh://git@github.com/acme/a"}}}],
        "gitops-infra:tenants[0].source: path is in the fleet repository",
    ),
    (
        [{"name": "a", "source": {"repository": {}}}],
        "gitops-infra:tenants[0].source.repository.url: required",
    ),
    (
        [{"name": "a", "source": {"repository": {"url": "ssh://git@git.example.com/a"}}}],
        "gitops-infra:tenants[0].source.repository.knownHosts: required for a git host other than github.com",
    ),
    (
        [{"name": "a", "source": {"repository": {**OWN_KEY}}}],
        "gitops-infra:tenants[0].source.repository: url: a generated deploy key is registered on github.com",
    ),
    (
        [{"name": "a", "source": {"repository": {"url": "ssh://git@github.com/other/a"}}}],
        "gitops-infra:tenants[0].source.repository.url: a generated deploy key is registered through the",
    ),
    (
        [{"name": "a", "source": {"repository": {"url": "https://github.com/acme/a"}}}],
        "gitops-infra:tenants[0].source.repository: url: a deploy key authenticates over SSH",
    ),
    (
        [
            {
                "name": "a",
                "source": {
                    "repository": {
                        "url": "https://github.com/acme/a",
                        "githubApp": {"appId": 1, "installationId": 2, "privateKey": "appPem"},
                        "deployKey": {},
                    }
                },
            }
        ],
        "gitops-infra:tenants[0].source.repository: githubApp and deployKey",
    ),
    (
        [
            {
                "name": "a",
                "source": {"repository": {**OWN_KEY, "deployKey": {"existing": {"privateKey": "nope"}}}},
            }
        ],
        "gitops-infra:tenants[0].source.repository.deployKey.existing.privateKey: names the secret "
        "gitops-infra:nope, which is not set",
    ),
]


@pytest.mark.parametrize(
    ("tenants", "expected"), MALFORMED, ids=[case[1].split(":")[1] for case in MALFORMED]
)
def test_a_bad_tenant_is_named_by_its_key_path(minimal: dict[str, Any], tenants: Any, expected: str) -> None:
    problems = problems_of({**minimal, "tenants": tenants})
    assert any(problem.startswith(expected) for problem in problems), problems


def test_the_flux_namespace_configured_is_the_platforms_too(minimal: dict[str, Any]) -> None:
    minimal["flux"]["namespace"] = "gitops"
    problems = problems_of(with_tenants(minimal, {"name": "gitops"}))
    assert problems == (
        "gitops-infra:tenants[0].name: as its namespace (namespaces is unset), is flux.namespace, the "
        "platform's own namespace",
    )


def test_a_whole_fleet_synced_by_the_root_leaves_no_path_for_a_tenant(minimal: dict[str, Any]) -> None:
    # The root (cluster-admin) would apply a tenant's manifests as its own, past every lock.
    minimal["git"]["path"] = "."
    assert problems_of(with_tenants(minimal, {"name": "a"})) == (
        "gitops-infra:tenants[0].source.path: holds or lies inside the platform's sync path (git.path): "
        "Flux would apply it twice",
    )
    # A tenant with a repository of its own has no path in the fleet.
    own = {"name": "a", "source": {"repository": {"url": "ssh://git@github.com/acme/a"}}}
    assert load_config(with_tenants(minimal, own), stack="test").tenants[0].fleet_path is None


def test_bad_values_are_not_echoed(minimal: dict[str, Any]) -> None:
    problems = problems_of(
        with_tenants(
            minimal, {"name": "s3cr3t_Name", "namespaces": ["s3cr3t-ns", "s3cr3t-ns"], "role": "s3/c"}
        )
    )
    assert not [problem for problem in problems if "s3cr3t" in problem or "s3/c" in problem]


def test_the_model_is_usable_alone() -> None:
    tenant = TenantSpec.model_validate({"name": "shop", "namespaces": ["shop", "shop-jobs"]})
    assert tenant.home_namespace == "shop" and tenant.fleet_path == "tenants/shop"
