"""Tenant: the objects of an app team, the identity its sync applies as, and the order they go in."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra import DeployKeyArgs, GitHubAppSecretOptions, SourceSecretOptions, Tenant, TenantArgs
from gitops_infra.contract import Environment, environment_data
from gitops_infra.errors import ConfigError

from .harness import MOCK_KUBECONFIG, Graph, Registered, run

ENV = Environment(name="dev", base_domain="dev.example.com", service_namespace="apps")
FLEET_KEY = SourceSecretOptions(private_key="mock-openssh-private-key-fleet", public_key="ssh-ed25519 AAAA")
TENANT = "kubernetes:core/v1:Namespace"
GIT_REPOSITORY = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
LABELS = {"toolkit.fluxcd.io/tenant": "shop", "gitops-infra.io/tenant": "shop"}


def args(**overrides: Any) -> TenantArgs:
    values: dict[str, Any] = {
        "name": "shop",
        "url": "ssh://git@github.com/acme/fleet",
        "path": "tenants/shop",
        "auth": FLEET_KEY,
        "environment": ENV,
    }
    return TenantArgs(**(values | overrides))


def graph_of(tenant_args: TenantArgs, *, github: bool = False) -> Graph:
    def program() -> Tenant:
        providers: list[pulumi.ProviderResource] = [k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)]
        if github:
            import pulumi_github

            providers.append(pulumi_github.Provider("github", owner="acme"))
        return Tenant("t-shop", tenant_args, opts=pulumi.ResourceOptions(providers=providers))

    return run(program).graph


@pytest.fixture(scope="module")
def one() -> Graph:
    return graph_of(args(quota={"requests.cpu": "4", "pods": "20"}, limits=[{"type": "Container"}]))


@pytest.fixture(scope="module")
def two() -> Graph:
    return graph_of(args(namespaces=["shop", "shop-jobs"]))


def test_a_tenant_makes_exactly_the_objects_of_the_interface(one: Graph, two: Graph) -> None:
    assert Counter(r.type for r in two if r.custom and not r.type.startswith("pulumi:providers:")) == Counter(
        {
            TENANT: 2,
            "kubernetes:core/v1:ServiceAccount": 1,
            ROLE_BINDING: 2,
            "kubernetes:core/v1:ConfigMapPatch": 2,  # the contract, in each namespace
            "kubernetes:core/v1:SecretPatch": 1,
            GIT_REPOSITORY: 1,
            KUSTOMIZATION: 1,
        }
    )
    namespaces = {r.input("metadata.name"): r.inputs["metadata"]["labels"] for r in two.of_type(TENANT)}
    assert namespaces == {"shop": LABELS, "shop-jobs": LABELS}
    account = two.one("kubernetes:core/v1:ServiceAccount")
    assert (account.input("metadata.name"), account.input("metadata.namespace")) == (
        "shop-reconciler",
        "shop",
    )
    for binding in two.of_type(ROLE_BINDING):
        assert binding.input("metadata.name") == "shop-reconciler"
        assert binding.inputs["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "admin",
        }
        assert binding.inputs["subjects"] == [
            {"kind": "ServiceAccount", "name": "shop-reconciler", "namespace": "shop"}
        ]
        assert binding.delete_before_replace  # roleRef is immutable: a new role is a new binding
    assert sorted(b.input("metadata.namespace") for b in two.of_type(ROLE_BINDING)) == ["shop", "shop-jobs"]
    for config_map in two.of_type("kubernetes:core/v1:ConfigMapPatch"):
        assert config_map.input("metadata.name") == "environment"
        assert config_map.inputs["data"] == environment_data(ENV)
    # Quota and limits where asked for: one of each per namespace, named for the tenant.
    quota = one.one("kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["spec"] == {"hard": {"requests.cpu": "4", "pods": "20"}}
    assert (quota.input("metadata.name"), quota.input("metadata.namespace")) == ("shop", "shop")
    assert one.one("kubernetes:core/v1:LimitRange").inputs["spec"] == {"limits": [{"type": "Container"}]}


def test_the_sync_lives_in_the_home_namespace_and_applies_as_the_reconciler(one: Graph, two: Graph) -> None:
    for graph in (one, two):
        repository = graph.one(GIT_REPOSITORY)
        kustomization = graph.one(KUSTOMIZATION)
        for obj in (repository, kustomization):
            assert obj.input("metadata.name") == "shop"
            assert obj.input("metadata.namespace") == "shop"
            assert obj.inputs["metadata"]["labels"] == {"gitops-infra.io/tenant": "shop"}
        assert repository.inputs["spec"]["secretRef"] == {"name": "shop-git"}
        spec = kustomization.inputs["spec"]
        assert spec["serviceAccountName"] == "shop-reconciler"
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": "shop"}
        assert spec["prune"] is True
        assert spec["path"] == "./tenants/shop"
        assert spec["postBuild"]["substituteFrom"][0]["name"] == "environment"
        # `up` proves the credential, but does not wait on what the team committed.
        assert "pulumi.com/waitFor" in repository.inputs["metadata"]["annotations"]
        assert "pulumi.com/waitFor" not in kustomization.inputs["metadata"]["annotations"]
    assert one.one(KUSTOMIZATION).inputs["spec"]["targetNamespace"] == "shop"
    assert "targetNamespace" not in two.one(KUSTOMIZATION).inputs["spec"]


def test_the_fleets_credential_is_copied_into_the_home_namespace(one: Graph) -> None:
    secret = one.one("kubernetes:core/v1:SecretPatch")
    assert (secret.input("metadata.name"), secret.input("metadata.namespace")) == ("shop-git", "shop")
    assert secret.is_secret("stringData")
    assert secret.inputs["stringData"]["identity"] == "mock-openssh-private-key-fleet"
    assert secret.inputs["stringData"]["identity.pub"] == "ssh-ed25519 AAAA"


def _depends(graph: Graph, dependent: Registered, on: Registered) -> bool:
    """Whether ``dependent`` waits for ``on``, directly or through what it waits for."""
    pending, seen = list(dependent.dependencies), set()
    while pending:
        urn = pending.pop()
        if urn == on.urn:
            return True
        if urn not in seen:
            seen.add(urn)
            pending.extend(graph.by_urn(urn).dependencies)
    return False


def test_removal_deletes_the_kustomization_first_and_the_namespaces_last(one: Graph, two: Graph) -> None:
    # Pulumi deletes dependents first: the Kustomization prunes as the reconciler, so it must go while
    # every other object exists; and every object goes before the namespaces that hold it.
    for graph in (one, two):
        kustomization = graph.one(KUSTOMIZATION)
        namespaces = graph.of_type(TENANT)
        others = [
            r
            for r in graph
            if r.custom and r.type not in (TENANT, KUSTOMIZATION) and not r.type.startswith("pulumi:")
        ]
        assert len(others) >= 6
        for other in others:
            assert _depends(graph, kustomization, other), other.name
            assert any(_depends(graph, other, namespace) for namespace in namespaces), other.name


def test_a_repository_of_its_own_gets_a_deploy_key_registered_there() -> None:
    graph = graph_of(
        args(
            url="ssh://git@github.com/acme/shop-deploy",
            path=".",
            auth=None,
            deploy_key=DeployKeyArgs(repository="shop-deploy", title="flux-shop"),
        ),
        github=True,
    )
    key = graph.one("github:index/repositoryDeployKey:RepositoryDeployKey")
    assert key.inputs["repository"] == "shop-deploy" and key.inputs["readOnly"] is True
    assert key.provider.startswith(graph.one("pulumi:providers:github").urn + "::")
    secret = graph.one("kubernetes:core/v1:SecretPatch")
    assert secret.inputs["stringData"]["identity"].startswith("mock-openssh-private-key-t-shop-repository")
    assert key.urn in secret.dependencies  # the Secret holds a key GitHub has accepted
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["url"] == "ssh://git@github.com/acme/shop-deploy"


def test_a_github_app_of_its_own_fetches_over_https_as_that_app() -> None:
    app = GitHubAppSecretOptions(app_id=1, installation_id=2, private_key="mock-pem")
    graph = graph_of(args(url="https://github.com/acme/shop-deploy", auth=app))
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["provider"] == "github"
    secret = graph.one("kubernetes:core/v1:SecretPatch")
    assert secret.input("metadata.name") == "shop-git"
    assert secret.inputs["stringData"]["githubAppPrivateKey"] == "mock-pem"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"name": "Shop"}, "TenantArgs.name: must be a DNS label"),
        ({"namespaces": ["shop", "kube-system"]}, "TenantArgs.namespaces[1]: is reserved"),
        ({"namespaces": ["shop", "shop"]}, "TenantArgs.namespaces[1]: repeats namespaces[0]"),
        ({"role": "a/b"}, "TenantArgs.role: must name a ClusterRole"),
        ({"deploy_key": DeployKeyArgs(repository="r")}, "TenantArgs.auth: set exactly one"),
        ({"auth": None}, "TenantArgs.auth: set exactly one"),
        ({"quota": {"cpu": "lots"}}, "TenantArgs.quota['cpu']: must be a Kubernetes quantity"),
        ({"limits": [{"type": "Node"}]}, "TenantArgs.limits[0].type: must be one of"),
        ({"path": "../other"}, "SyncOptions.path:"),
    ],
)
def test_bad_args_are_refused_by_field(overrides: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        args(**overrides)
    assert any(problem.startswith(expected) for problem in info.value.problems), info.value.problems
