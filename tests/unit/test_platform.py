"""The whole program: dev vs prod, the stack entrypoint, and the components composed another way."""

from __future__ import annotations

import inspect
import json
import runpy
from collections import Counter
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

import gitops_infra
from gitops_infra import (
    DeployKey,
    DeployKeyArgs,
    FluxBootstrap,
    FluxBootstrapArgs,
    SourceSecretOptions,
    SyncOptions,
    build_platform,
    environment_data,
    load_config,
)
from gitops_infra.platform import Platform

from ..support import REPO_ROOT
from .conftest import LOCAL_TEST_KUBECONFIG, stack_config
from .harness import MOCK_KUBECONFIG, Graph, Run, run

EXPORTS = {
    "clusterName",
    "kubeconfig",
    "oidcProviderArn",
    "deployKeyPublicKey",
    "fluxNamespace",
    "gitRepositoryUrl",
    "gitopsEngine",
    "environment",
}


def platform(stack: str) -> Run[Platform]:
    return run(
        lambda: build_platform(load_config(stack_config(stack), stack=stack)),
        outputs=lambda p: {key: pulumi.Output.from_input(value) for key, value in p.outputs().items()},
        stack=stack,
    )


@pytest.fixture(scope="module")
def dev() -> Run[Platform]:
    return platform("dev")


@pytest.fixture(scope="module")
def prod() -> Run[Platform]:
    return platform("prod")


def test_dev_resource_tree(dev: Run[Platform]) -> None:
    assert dev.graph.counts() == Counter(
        {
            "gitops-infra:index:EksCluster": 1,
            "aws:ec2/vpc:Vpc": 1,
            "aws:ec2/internetGateway:InternetGateway": 1,
            "aws:ec2/subnet:Subnet": 6,
            "aws:ec2/routeTable:RouteTable": 4,
            "aws:ec2/routeTableAssociation:RouteTableAssociation": 6,
            "aws:ec2/eip:Eip": 1,
            "aws:ec2/natGateway:NatGateway": 1,
            "aws:kms/key:Key": 1,
            "aws:iam/role:Role": 1,
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 3,
            "eks:index:Cluster": 1,
            "eks:index:ManagedNodeGroup": 1,
            "pulumi:providers:kubernetes": 1,
            "pulumi:providers:github": 1,
            "gitops-infra:index:DeployKey": 1,
            "tls:index/privateKey:PrivateKey": 1,
            "github:index/repositoryDeployKey:RepositoryDeployKey": 1,
            "gitops-infra:index:FluxBootstrap": 1,
            "kubernetes:core/v1:Namespace": 2,
            "kubernetes:helm.sh/v3:Release": 1,
            "kubernetes:core/v1:SecretPatch": 1,
            "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository": 1,
            "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization": 1,
            "gitops-infra:index:EnvironmentConfig": 1,
            "kubernetes:core/v1:ConfigMapPatch": 2,  # the environment contract: apps and flux-system
        }
    )


def test_prod_differs_from_dev_in_exactly_these_resources(dev: Run[Platform], prod: Run[Platform]) -> None:
    added = prod.graph.counts() - dev.graph.counts()
    removed = dev.graph.counts() - prod.graph.counts()
    assert removed == Counter()
    assert added == Counter(
        {
            "aws:ec2/natGateway:NatGateway": 2,  # one per AZ instead of one
            "aws:ec2/eip:Eip": 2,
            "eks:index:ManagedNodeGroup": 1,  # a workloads group beside system
            "kubernetes:core/v1:SecretPatch": 3,  # the age key, the alert's webhook, the Receiver's token
            "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Provider": 1,
            # Instant sync: the Receiver, its token (kept in a Stash) and the GitHub webhook to it.
            "kubernetes:notification.toolkit.fluxcd.io/v1:Receiver": 1,
            "pulumi:index:Stash": 1,
            "github:index/repositoryWebhook:RepositoryWebhook": 1,
            "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Alert": 1,
            # External Secrets: its role, the Pod Identity agent and association, the controller, the store.
            "gitops-infra:index:ExternalSecrets": 1,
            "aws:iam/role:Role": 1,
            "aws:iam/rolePolicy:RolePolicy": 1,
            "aws:eks/addon:Addon": 1,
            "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
            "kubernetes:core/v1:Namespace": 1,
            "kubernetes:helm.sh/v3:Release": 1,
            "kubernetes:external-secrets.io/v1:ClusterSecretStore": 1,
        }
    )


def _private_route_targets(graph: Graph) -> set[str]:
    tables = [t for t in graph.of_type("aws:ec2/routeTable:RouteTable") if "-private-" in t.name]
    return {t.inputs["routes"][0]["natGatewayId"] for t in tables}


def test_nat_gateways_dev_shares_one_prod_has_one_per_zone(dev: Run[Platform], prod: Run[Platform]) -> None:
    assert len(_private_route_targets(dev.graph)) == 1
    assert len(_private_route_targets(prod.graph)) == 3
    zones = {n.name.rsplit("-", 3)[-3:][-1] for n in prod.graph.of_type("aws:ec2/natGateway:NatGateway")}
    assert zones == {"1a", "1b", "1c"}


def test_endpoint_access_dev_open_prod_restricted_to_the_runners(
    dev: Run[Platform], prod: Run[Platform]
) -> None:
    dev_cluster = dev.graph.one("eks:index:Cluster").inputs
    prod_cluster = prod.graph.one("eks:index:Cluster").inputs
    assert (dev_cluster["endpointPublicAccess"], dev_cluster["endpointPrivateAccess"]) == (True, True)
    assert dev_cluster["publicAccessCidrs"] == ["0.0.0.0/0"]
    # prod deploys Flux through the API from its runners, so their egress range reaches the endpoint.
    assert (prod_cluster["endpointPublicAccess"], prod_cluster["endpointPrivateAccess"]) == (True, True)
    assert prod_cluster["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert prod.graph.of_type("aws:ec2/securityGroupRule:SecurityGroupRule") == []


def _sizes(graph: Graph) -> dict[str, tuple[list[str], dict[str, int], int]]:
    return {
        g.name: (g.inputs["instanceTypes"], g.inputs["scalingConfig"], g.inputs["diskSize"])
        for g in graph.of_type("eks:index:ManagedNodeGroup")
    }


def test_node_sizes(dev: Run[Platform], prod: Run[Platform]) -> None:
    assert _sizes(dev.graph) == {
        "gitops-dev-system": (["t3.large"], {"minSize": 1, "maxSize": 3, "desiredSize": 2}, 50),
    }
    assert _sizes(prod.graph) == {
        "gitops-prod-system": (["m6i.xlarge"], {"minSize": 3, "maxSize": 6, "desiredSize": 3}, 100),
        "gitops-prod-workloads": (
            ["m6i.2xlarge", "m6a.2xlarge"],
            {"minSize": 3, "maxSize": 12, "desiredSize": 3},
            100,
        ),
    }


def test_deploy_key_is_on_the_fleet_repo_and_read_only_unless_image_automation(
    dev: Run[Platform], prod: Run[Platform]
) -> None:
    for result, read_only in ((dev, True), (prod, False)):
        key = result.graph.one("github:index/repositoryDeployKey:RepositoryDeployKey")
        assert key.inputs["repository"] == "fleet"
        assert key.inputs["readOnly"] is read_only
        github = result.graph.one("pulumi:providers:github")
        assert github.inputs["owner"] == "example-org"
        assert github.is_secret("token")
        assert key.provider.startswith(github.urn + "::")


def test_flux_runs_on_the_clusters_provider_and_syncs_the_env_path(dev: Run[Platform]) -> None:
    cluster_provider = dev.graph.one("pulumi:providers:kubernetes")
    for type_ in ("kubernetes:helm.sh/v3:Release", "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"):
        assert dev.graph.one(type_).provider.startswith(cluster_provider.urn + "::")
    assert dev.graph.one("kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization").inputs["spec"][
        "path"
    ] == ("./clusters/dev")


def test_both_environment_configmaps_come_from_the_one_config_value(dev: Run[Platform]) -> None:
    config_maps = dev.graph.of_type("kubernetes:core/v1:ConfigMapPatch")
    assert sorted(c.input("metadata.namespace") for c in config_maps) == ["apps", "flux-system"]
    assert all(c.input("metadata.name") == "environment" for c in config_maps)
    assert config_maps[0].inputs["data"] == config_maps[1].inputs["data"]
    assert config_maps[0].inputs["data"] == environment_data(dev.result.config.environment)
    assert config_maps[0].inputs["data"]["baseDomain"] == "dev.example.com"


def test_top_level_components_hang_off_the_stack(dev: Run[Platform]) -> None:
    components = [r for r in dev.graph if r.type.startswith("gitops-infra:index:")]
    assert len(components) == 4
    assert all(c.parent.endswith("pulumi:pulumi:Stack::gitops-infra-dev") for c in components)
    component_urns = {c.urn for c in components}
    github_provider = dev.graph.one("pulumi:providers:github")
    assert all(
        r.parent in component_urns for r in dev.graph if r not in components and r is not github_provider
    )


def test_outputs_and_their_secrecy(dev: Run[Platform]) -> None:
    values = dev.values
    assert set(values) == EXPORTS
    assert {key for key, v in values.items() if v.secret} == {"kubeconfig"}
    assert values["clusterName"].value == "gitops-dev"
    assert values["fluxNamespace"].value == "flux-system"
    assert values["gitRepositoryUrl"].value == "ssh://git@github.com/example-org/fleet"
    assert values["environment"].value["name"] == "dev"


def _pulumi_config(stack: str) -> dict[str, str]:
    return {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in stack_config(stack).items()
        if key.startswith("gitops-infra:")
    }


def test_stack_program_exports_the_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    exported: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda key, value: exported.__setitem__(key, value))
    result = run(
        lambda: runpy.run_path(str(REPO_ROOT / "stacks" / "__main__.py")),
        # An export may be a plain value (the engine's name): resolved as an Output like the rest.
        outputs=lambda _: {key: pulumi.Output.from_input(value) for key, value in exported.items()},
        config=_pulumi_config("dev"),
        secret_keys=["gitops-infra:githubToken", "gitops-infra:sopsAgeKey"],
    )
    assert set(exported) == EXPORTS
    assert result.values["kubeconfig"].secret is True
    assert result.values["clusterName"].value == "gitops-dev"


def test_stack_program_reports_bad_config_without_a_traceback() -> None:
    config = _pulumi_config("dev")
    cluster = json.loads(config["gitops-infra:cluster"])
    cluster["nodeGroups"][0] |= {"minSize": 3, "maxSize": 2, "desiredSize": 2}
    config["gitops-infra:cluster"] = json.dumps(cluster)
    with pytest.raises(pulumi.RunError) as info:
        run(lambda: runpy.run_path(str(REPO_ROOT / "stacks" / "__main__.py")), config=config)
    assert "gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize" in str(info.value)
    assert info.value.__suppress_context__ is True  # `from None`: the host prints the message alone


def test_components_compose_onto_an_existing_cluster() -> None:
    """Someone else's program: Flux and a deploy key on a cluster it did not create."""

    def program() -> FluxBootstrap:
        provider = k8s.Provider("existing", kubeconfig=pulumi.Output.secret(MOCK_KUBECONFIG))
        key = DeployKey("apps", DeployKeyArgs(repository="apps-fleet", rotation="r1"))
        return FluxBootstrap(
            "apps-flux",
            FluxBootstrapArgs(
                source=SourceSecretOptions(private_key=key.private_key, public_key=key.public_key),
                sync=SyncOptions(
                    url="ssh://git@github.com/acme/apps-fleet",
                    path="clusters/staging",
                    branch="release",
                    namespace="gitops",
                ),
            ),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )

    graph = run(program).graph
    assert not [r for r in graph if r.type.startswith(("aws:", "eks:"))]
    provider = graph.one("pulumi:providers:kubernetes", "existing")
    assert provider.parent.endswith("pulumi:pulumi:Stack::gitops-infra-dev")
    secret = graph.one("kubernetes:core/v1:SecretPatch")
    assert secret.input("metadata.namespace") == "gitops"
    assert secret.is_secret("stringData")
    assert secret.inputs["stringData"]["identity.pub"] == ("ssh-ecdsa AAAA-apps-key")
    assert graph.one("github:index/repositoryDeployKey:RepositoryDeployKey").urn in secret.dependencies
    repo = graph.one("kubernetes:source.toolkit.fluxcd.io/v1:GitRepository")
    assert repo.inputs["spec"]["ref"] == {"branch": "release"}
    assert all(r.provider.startswith(provider.urn + "::") for r in graph if r.type.startswith("kubernetes:"))


def test_existing_vpc_config_builds_no_network(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["network"] = {
        "existingVpc": {
            "vpcId": "vpc-0123456789abcdef0",
            "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
            "publicSubnetIds": ["subnet-0123456789abcdef2"],
        }
    }
    graph = run(lambda: build_platform(load_config(minimal, stack="test"))).graph
    assert not [r for r in graph if r.type.startswith("aws:ec2/")]
    cluster = graph.one("eks:index:Cluster")
    assert cluster.name == "gitops-test-cluster"
    assert cluster.inputs["vpcId"] == "vpc-0123456789abcdef0"
    assert cluster.inputs["publicSubnetIds"] == ["subnet-0123456789abcdef2"]
    for node_group in graph.of_type("eks:index:ManagedNodeGroup"):
        assert node_group.inputs["subnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]


def test_substitution_can_be_left_off_the_root(minimal: dict[str, Any]) -> None:
    # A fleet whose manifests hold ${...} of their own: strict substitution (kustomize-controller 1.9+)
    # would fail its build on every one the contract does not define.
    minimal["flux"]["substitute"] = False
    graph = run(lambda: build_platform(load_config(minimal, stack="test"))).graph
    assert (
        "postBuild" not in graph.one("kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization").inputs["spec"]
    )
    # The contract is still written for app teams, and only there: Flux's namespace needs no copy.
    (configmap,) = graph.of_type("kubernetes:core/v1:ConfigMapPatch")
    assert configmap.input("metadata.namespace") == "apps"


def test_public_api_is_what_all_lists() -> None:
    # Submodules become package attributes once anything imports them; they are not API names.
    exported = {
        name
        for name in dir(gitops_infra)
        if not name.startswith("_") and not inspect.ismodule(getattr(gitops_infra, name))
    }
    assert exported == set(gitops_infra.__all__)
    for name in (
        "EksCluster",
        "DeployKey",
        "FluxBootstrap",
        "EnvironmentConfig",
        "build_platform",
        "load_config",
    ):
        assert name in gitops_infra.__all__


def test_the_contracts_network_policy_promise_is_kept_by_the_cni(
    dev: Run[Platform], prod: Run[Platform]
) -> None:
    # prod's environment says networkPoliciesEnforced: the VPC CNI's policy agent is what enforces them.
    assert prod.result.config.environment.network_policies_enforced is True
    assert prod.graph.one("eks:index:Cluster").inputs["vpcCniOptions"]["enableNetworkPolicy"] is True
    assert dev.result.config.environment.network_policies_enforced is False
    assert "vpcCniOptions" not in dev.graph.one("eks:index:Cluster").inputs


def test_the_stack_programs_provider_keeps_the_aws_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pulumi, "export", lambda key, value: None)
    config = _pulumi_config("dev") | {"aws:profile": "platform-deployer"}
    graph = run(lambda: runpy.run_path(str(REPO_ROOT / "stacks" / "__main__.py")), config=config).graph
    kubeconfig = json.loads(graph.one("pulumi:providers:kubernetes").inputs["kubeconfig"])
    assert kubeconfig["users"][0]["user"]["exec"]["args"][-2:] == ["--profile", "platform-deployer"]


def test_the_providers_kubeconfig_assumes_the_role_the_aws_provider_assumes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The creator is the assumed role; `aws eks get-token` with the ambient credentials got no access.
    monkeypatch.setattr(pulumi, "export", lambda key, value: None)
    chain = [{"roleArn": "arn:aws:iam::123456789012:role/hop"}, {"roleArn": DEPLOY_ROLE}]
    config = _pulumi_config("dev") | {"aws:assumeRoles": json.dumps(chain)}
    graph = run(lambda: runpy.run_path(str(REPO_ROOT / "stacks" / "__main__.py")), config=config).graph
    kubeconfig = json.loads(graph.one("pulumi:providers:kubernetes").inputs["kubeconfig"])
    assert kubeconfig["users"][0]["user"]["exec"]["args"] == ["--role-arn", DEPLOY_ROLE]


DEPLOY_ROLE = "arn:aws:iam::123456789012:role/platform-deployer"


# -- the local stack: an existing cluster, an existing key, Flux installed elsewhere ----------------------


@pytest.fixture(scope="module")
def local() -> Run[Platform]:
    return platform("local")


def test_the_local_stack_makes_no_cloud_resource(local: Run[Platform]) -> None:
    assert local.graph.counts() == Counter(
        {
            "pulumi:providers:kubernetes": 1,
            "gitops-infra:index:FluxBootstrap": 1,
            "kubernetes:core/v1:Namespace": 1,  # the service namespace; Flux's exists, and is patched
            "kubernetes:core/v1:NamespacePatch": 1,
            "kubernetes:core/v1:SecretPatch": 1,
            "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository": 1,
            "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization": 1,
            "gitops-infra:index:EnvironmentConfig": 1,
            "kubernetes:core/v1:ConfigMapPatch": 2,  # the environment contract: apps and flux-system
        }
    )
    assert local.result.cluster is None and local.result.deploy_key is None


def test_the_local_stack_deploys_through_its_kubeconfig_with_its_own_key(local: Run[Platform]) -> None:
    provider = local.graph.one("pulumi:providers:kubernetes")
    assert provider.is_secret("kubeconfig")
    # A create of what exists is an update, set rather than left to the provider version's default
    # (pulumi-kubernetes 4.29 and later fail it with AlreadyExists, older ones always upserted).
    assert provider.inputs["upsertExistingObjects"] == "true"
    # And on a cluster the stack did not make, the service namespace it may have adopted stays on destroy.
    assert local.graph.one("kubernetes:core/v1:Namespace").retain_on_delete
    assert provider.inputs["kubeconfig"] == LOCAL_TEST_KUBECONFIG
    secret = local.graph.one("kubernetes:core/v1:SecretPatch")
    assert secret.is_secret("stringData")
    assert secret.inputs["stringData"]["identity"] == "mock-openssh-private-key-local"
    assert "identity.pub" not in secret.inputs["stringData"]
    assert secret.inputs["stringData"]["known_hosts"].startswith("[127.0.0.1]:2222 ")
    repository = local.graph.one("kubernetes:source.toolkit.fluxcd.io/v1:GitRepository")
    assert repository.inputs["spec"]["url"] == "ssh://git@127.0.0.1:2222/fleet.git"
    assert set(local.values) == {
        "clusterName",
        "fluxNamespace",
        "gitRepositoryUrl",
        "gitopsEngine",
        "environment",
    }
