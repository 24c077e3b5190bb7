"""The platform with tenants: each after Flux, Flux locked down, the root's own identity, and the output."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from gitops_infra import build_platform, load_config
from gitops_infra.platform import Platform

from .conftest import MINIMAL
from .harness import Run, run

RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
SECRET = "kubernetes:core/v1:SecretPatch"
TENANTS = [
    {"name": "shop", "namespaces": ["shop", "shop-jobs"], "quota": {"pods": 20}},
    {"name": "blog", "source": {"repository": {"url": "ssh://git@github.com/acme/blog-deploy"}}},
    {
        "name": "ads",
        "source": {
            "repository": {
                "url": "ssh://git@git.example.com/ads",
                "knownHosts": "git.example.com ssh-ed25519 AAAA",
                "deployKey": {"existing": {"privateKey": "adsKey"}},
            }
        },
    },
]


def platform(tenants: list[dict[str, Any]] | None, **more: Any) -> Run[Platform]:
    raw = copy.deepcopy(MINIMAL) | more
    if tenants is not None:
        raw |= {"tenants": tenants, "adsKey": "mock-openssh-private-key-ads"}
    return run(
        lambda: build_platform(load_config(raw, stack="test")),
        outputs=lambda p: {key: pulumi.Output.from_input(value) for key, value in p.outputs().items()},
        stack="test",
    )


@pytest.fixture(scope="module")
def with_tenants() -> Run[Platform]:
    return platform(TENANTS)


@pytest.fixture(scope="module")
def without() -> Run[Platform]:
    return platform(None)


def _root(result: Run[Platform]) -> dict[str, Any]:
    root = result.graph.one(KUSTOMIZATION, "gitops-test-flux-kustomization")
    spec: dict[str, Any] = root.inputs["spec"]
    return spec


def test_tenants_lock_flux_down_and_the_root_states_its_identity(
    with_tenants: Run[Platform], without: Run[Platform]
) -> None:
    values = with_tenants.graph.one(RELEASE).inputs["values"]
    assert values["multitenancy"] == {"enabled": True, "defaultServiceAccount": "default", "privileged": True}
    assert values["kustomizeController"]["container"] == {"additionalArgs": ["--no-remote-bases=true"]}
    assert _root(with_tenants)["serviceAccountName"] == "kustomize-controller"
    # Without tenants, Flux is not locked down; the root states the identity the chart binds all the
    # same, so that a first tenant's `up`, which restarts the controllers locked down before it updates
    # the root, finds it stated (it would otherwise reconcile once as `default`, and fail).
    assert "multitenancy" not in without.graph.one(RELEASE).inputs["values"]
    assert _root(without)["serviceAccountName"] == "kustomize-controller"
    # A Flux installed outside the stack may bind no such account: the root names none until tenants.
    external = platform(None, flux={"install": "external"})
    assert external.graph.of_type(RELEASE) == []
    assert "serviceAccountName" not in _root(external)


def test_each_tenant_comes_after_flux_on_the_clusters_provider(with_tenants: Run[Platform]) -> None:
    graph = with_tenants.graph
    flux = graph.one("gitops-infra:index:FluxBootstrap")
    tenants = graph.of_type("gitops-infra:index:Tenant")
    assert sorted(t.name for t in tenants) == [
        "gitops-test-tenant-ads",
        "gitops-test-tenant-blog",
        "gitops-test-tenant-shop",
    ]
    # Waiting on the component waits on every resource in it: the controllers (CRDs) among them.
    assert all(graph.one(RELEASE).urn in t.dependencies for t in tenants), flux.urn
    provider = graph.one("pulumi:providers:kubernetes")
    tenant_urns = {t.urn for t in tenants}
    for resource in graph:
        if resource.type.startswith("kubernetes:") and resource.parent in tenant_urns:
            assert resource.provider.startswith(provider.urn + "::"), resource.name
    kustomizations = {k.input("metadata.namespace"): k.inputs["spec"] for k in graph.of_type(KUSTOMIZATION)}
    assert kustomizations["shop"]["serviceAccountName"] == "shop-reconciler"
    assert kustomizations["shop"]["path"] == "./tenants/shop"
    assert kustomizations["blog"]["path"] == "./."  # the root of its own repository


def test_each_tenant_fetches_with_its_own_credential_or_the_fleets(with_tenants: Run[Platform]) -> None:
    graph = with_tenants.graph
    secrets = {s.input("metadata.namespace"): s for s in graph.of_type(SECRET)}
    fleet_key = secrets["flux-system"].inputs["stringData"]["identity"]
    # From the fleet, the platform's own read-only key, copied into the tenant's home namespace.
    assert secrets["shop"].input("metadata.name") == "shop-git"
    assert secrets["shop"].inputs["stringData"]["identity"] == fleet_key
    # Its own repository on GitHub: a key made for it, registered there through the platform's provider.
    keys = {
        k.inputs["repository"]: k
        for k in graph.of_type("github:index/repositoryDeployKey:RepositoryDeployKey")
    }
    assert set(keys) == {"fleet", "blog-deploy"}
    assert keys["blog-deploy"].inputs["readOnly"] is True
    assert keys["blog-deploy"].inputs["title"] == "flux-gitops-test-tenant-blog"
    assert secrets["blog"].inputs["stringData"]["identity"] != fleet_key
    # A key registered elsewhere: the secret config key the tenant names.
    assert secrets["ads"].inputs["stringData"]["identity"] == "mock-openssh-private-key-ads"
    assert secrets["ads"].inputs["stringData"]["known_hosts"] == "git.example.com ssh-ed25519 AAAA"
    assert all(secret.is_secret("stringData") for secret in secrets.values())


def test_the_tenants_output_is_plain_and_sorted_by_name(
    with_tenants: Run[Platform], without: Run[Platform]
) -> None:
    output = with_tenants.values["tenants"]
    assert output.secret is False
    assert output.value == [
        {"name": "ads", "namespace": "ads", "namespaces": ["ads"], "kustomization": "ads"},
        {"name": "blog", "namespace": "blog", "namespaces": ["blog"], "kustomization": "blog"},
        {"name": "shop", "namespace": "shop", "namespaces": ["shop", "shop-jobs"], "kustomization": "shop"},
    ]
    assert "tenants" not in without.values
    assert len(with_tenants.result.tenants) == 3
