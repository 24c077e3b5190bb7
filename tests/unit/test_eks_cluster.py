"""EksCluster under mocks: its resources, their key inputs, parents, dependencies and secrets."""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pytest

from gitops_infra.components.eks_cluster import (
    ACCESS_ENTRY_TYPE,
    ALL_LOG_TYPES,
    CLUSTER_ADMIN_POLICY_ARN,
    NODE_ROLE_POLICY_ARNS,
    POLICY_ASSOCIATION_TYPE,
    CapacityType,
    EksCluster,
    EksClusterArgs,
    EndpointAccess,
    ExistingVpcArgs,
    NatGateways,
    NewVpcArgs,
    NodeGroupArgs,
    TaintEffect,
    positional_key_aliases,
    subnet_cidrs,
)
from gitops_infra.errors import ConfigError

from .harness import DEPLOYER_ARN, Run, run

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
ADMIN = "arn:aws:iam::111111111111:role/admin"
CREATOR = "arn:aws:iam::111111111111:role/gitops-deploy"


def group(name: str = "system", **overrides: Any) -> NodeGroupArgs:
    values: dict[str, Any] = {
        "name": name,
        "instance_types": ["t3.large"],
        "min_size": 1,
        "max_size": 3,
        "desired_size": 2,
    }
    return NodeGroupArgs(**(values | overrides))


def new_vpc_args(nat: NatGateways = NatGateways.SINGLE, **overrides: Any) -> EksClusterArgs:
    values: dict[str, Any] = {
        "kubernetes_version": "1.33",
        "network": NewVpcArgs(cidr="10.20.0.0/16", availability_zones=ZONES, nat_gateways=nat),
        "node_groups": [group()],
        "admin_principal_arns": [ADMIN],
        "creator_principal_arn": CREATOR,
        "tags": {"team": "platform"},
    }
    return EksClusterArgs(**(values | overrides))


def build(args: EksClusterArgs, name: str = "c") -> Run[EksCluster]:
    return run(
        lambda: EksCluster(name, args),
        outputs=lambda c: {
            "name": c.cluster_name,
            "kubeconfig": c.kubeconfig,
            "oidc_arn": c.oidc_provider_arn,
            "oidc_url": c.oidc_provider_url,
        },
    )


def test_cluster_inputs_follow_the_design() -> None:
    graph = build(new_vpc_args()).graph
    cluster = graph.one("eks:index:Cluster")
    assert cluster.name == "c-cluster"
    assert cluster.inputs["name"] == "c"
    assert cluster.inputs["version"] == "1.33"
    assert cluster.inputs["authenticationMode"] == "API"
    assert cluster.inputs["createOidcProvider"] is True
    assert cluster.inputs["skipDefaultNodeGroup"] is True
    assert cluster.inputs["enabledClusterLogTypes"] == [str(log) for log in ALL_LOG_TYPES]
    assert cluster.inputs["tags"] == {"team": "platform"}
    assert cluster.inputs["nodeAssociatePublicIpAddress"] is False
    assert cluster.inputs["accessEntries"] == {
        "admin-111111111111-role-admin": {
            "principalArn": ADMIN,
            "accessPolicies": {
                "cluster-admin": {"policyArn": CLUSTER_ADMIN_POLICY_ARN, "accessScope": {"type": "cluster"}}
            },
            "tags": {"team": "platform"},
        }
    }


def test_secrets_are_encrypted_with_the_components_own_kms_key() -> None:
    graph = build(new_vpc_args()).graph
    key = graph.one("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    cluster = graph.one("eks:index:Cluster")
    assert cluster.inputs["encryptionConfigKeyArn"] == f"arn:aws:mock::123456789012:{key.name}"
    assert key.urn in cluster.dependencies


def test_every_child_is_parented_to_the_component() -> None:
    graph = build(new_vpc_args()).graph
    component = graph.one("gitops-infra:index:EksCluster")
    assert component.name == "c"
    assert component.custom is False
    others = [r for r in graph if r is not component]
    assert others, "the component made no children"
    assert all(r.parent == component.urn for r in others), [
        r.name for r in others if r.parent != component.urn
    ]
    assert all(r.name.startswith("c-") for r in others)


def test_one_managed_node_group_per_group_in_private_subnets() -> None:
    args = new_vpc_args(
        node_groups=[
            group(
                "system",
                taints=[("CriticalAddonsOnly", "true", TaintEffect.NO_SCHEDULE)],
                labels={"role": "sys"},
            ),
            group("spot", capacity_type=CapacityType.SPOT, min_size=0, max_size=10, desired_size=0),
        ]
    )
    graph = build(args).graph
    groups = {g.name: g for g in graph.of_type("eks:index:ManagedNodeGroup")}
    assert set(groups) == {"c-system", "c-spot"}
    cluster = graph.one("eks:index:Cluster")
    # Registration order is not deterministic; the input order (the zones') is.
    private = [graph.one("aws:ec2/subnet:Subnet", f"c-private-{zone}") for zone in ZONES]
    for node_group in groups.values():
        assert node_group.inputs["cluster"] == cluster.urn
        assert node_group.inputs["subnetIds"] == [f"{s.name}-id" for s in private]
        assert node_group.inputs["nodeRoleArn"] == "arn:aws:mock::123456789012:c-node-role"
    assert groups["c-system"].inputs["scalingConfig"] == {"minSize": 1, "maxSize": 3, "desiredSize": 2}
    assert groups["c-system"].inputs["taints"] == [
        {"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"}
    ]
    assert groups["c-system"].inputs["labels"] == {"role": "sys"}
    assert groups["c-spot"].inputs["capacityType"] == "SPOT"
    assert groups["c-spot"].inputs["scalingConfig"] == {"minSize": 0, "maxSize": 10, "desiredSize": 0}


def test_node_role_has_the_three_worker_policies() -> None:
    graph = build(new_vpc_args()).graph
    attached = {
        a.inputs["policyArn"] for a in graph.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert attached == set(NODE_ROLE_POLICY_ARNS.values())


@pytest.mark.parametrize(("nat", "expected"), [(NatGateways.SINGLE, 1), (NatGateways.ONE_PER_AZ, 3)])
def test_dedicated_vpc_subnets_and_nat_gateways(nat: NatGateways, expected: int) -> None:
    graph = build(new_vpc_args(nat)).graph
    vpc = graph.one("aws:ec2/vpc:Vpc")
    assert vpc.inputs["cidrBlock"] == "10.20.0.0/16"
    subnets = graph.of_type("aws:ec2/subnet:Subnet")
    assert sorted((s.inputs["availabilityZone"], s.inputs["cidrBlock"]) for s in subnets) == sorted(
        (zone, cidr)
        for zone, pair in zip(ZONES, subnet_cidrs("10.20.0.0/16", 3), strict=True)
        for cidr in pair
    )
    nats = graph.of_type("aws:ec2/natGateway:NatGateway")
    assert len(nats) == expected
    assert len(graph.of_type("aws:ec2/eip:Eip")) == expected
    public_ids = {f"{s.name}-id" for s in subnets if "-public-" in s.name}
    assert all(n.inputs["subnetId"] in public_ids for n in nats)
    private_tables = [t for t in graph.of_type("aws:ec2/routeTable:RouteTable") if "-private-" in t.name]
    targets = {t.inputs["routes"][0]["natGatewayId"] for t in private_tables}
    assert len(private_tables) == 3
    assert targets == {f"{n.name}-id" for n in nats}


def test_subnet_cidrs_do_not_overlap() -> None:
    pairs = subnet_cidrs("10.0.0.0/16", 6)
    flat = [cidr for pair in pairs for cidr in pair]
    assert len(set(flat)) == 12
    assert pairs[0] == ("10.0.0.0/20", "10.0.128.0/20")
    with pytest.raises(ValueError, match="must be /20 or larger"):
        subnet_cidrs("10.0.0.0/26", 2)


def test_existing_vpc_builds_no_network() -> None:
    args = new_vpc_args(
        network=ExistingVpcArgs(vpc_id="vpc-0abc", private_subnet_ids=["subnet-a", "subnet-b"]),
    )
    graph = build(args).graph
    assert not [r for r in graph if r.type.startswith("aws:ec2/")]
    cluster = graph.one("eks:index:Cluster")
    assert cluster.inputs["vpcId"] == "vpc-0abc"
    assert cluster.inputs["privateSubnetIds"] == ["subnet-a", "subnet-b"]
    assert "publicSubnetIds" not in cluster.inputs


def test_public_and_private_endpoint_restricted_to_cidrs() -> None:
    graph = build(new_vpc_args(allowed_cidrs=["203.0.113.0/24"])).graph
    cluster = graph.one("eks:index:Cluster")
    assert cluster.inputs["endpointPrivateAccess"] is True
    assert cluster.inputs["endpointPublicAccess"] is True
    assert cluster.inputs["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert not graph.of_type("aws:ec2/securityGroupRule:SecurityGroupRule")


def test_private_endpoint_allows_listed_cidrs_on_443() -> None:
    args = new_vpc_args(endpoint_access=EndpointAccess.PRIVATE, allowed_cidrs=["10.100.0.0/16"])
    graph = build(args).graph
    cluster = graph.one("eks:index:Cluster")
    assert cluster.inputs["endpointPrivateAccess"] is True
    assert cluster.inputs["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in cluster.inputs
    rule = graph.one("aws:ec2/securityGroupRule:SecurityGroupRule")
    assert rule.inputs | {"description": ""} == {
        "type": "ingress",
        "protocol": "tcp",
        "fromPort": 443,
        "toPort": 443,
        "cidrBlocks": ["10.100.0.0/16"],
        "securityGroupId": "sg-c-cluster",
        "description": "",
    }


def test_outputs_kubeconfig_is_secret_and_provider_waits_for_nodes() -> None:
    result = build(new_vpc_args(node_groups=[group("a"), group("b")]))
    assert result.values["kubeconfig"].secret is True
    assert result.values["name"].value == "c"
    assert result.values["name"].secret is False
    assert result.values["oidc_arn"].value.startswith("arn:aws:iam::123456789012:oidc-provider/")
    assert result.values["oidc_url"].value.startswith("oidc.eks.")
    provider = result.graph.one("pulumi:providers:kubernetes")
    assert provider.is_secret("kubeconfig")
    groups = {g.urn for g in result.graph.of_type("eks:index:ManagedNodeGroup")}
    assert groups <= set(provider.dependencies)


def test_two_instances_live_in_one_stack() -> None:
    def program() -> tuple[EksCluster, EksCluster]:
        return EksCluster("blue", new_vpc_args()), EksCluster("green", new_vpc_args())

    graph = run(program).graph
    urns = [r.urn for r in graph]
    assert len(urns) == len(set(urns))  # the engine would reject a duplicate URN
    assert {r.name.split("-")[0] for r in graph} == {"blue", "green"}
    assert len(graph.of_type("eks:index:Cluster")) == 2


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"node_groups": []}, "EksClusterArgs.node_groups: needs at least one node group"),
        ({"node_groups": [group(), group()]}, "EksClusterArgs.node_groups: node group names must be unique"),
        (
            {"node_groups": [group(max_size=0)]},
            "EksClusterArgs.node_groups[0].max_size: must be >= min_size and >= 1",
        ),
        (
            {"node_groups": [group(desired_size=9)]},
            "EksClusterArgs.node_groups[0].desired_size: must be within min/max",
        ),
        (
            {"node_groups": [group(instance_types=[])]},
            "EksClusterArgs.node_groups[0].instance_types: must not be empty",
        ),
        ({"allowed_cidrs": ["10.0.0.0/40"]}, "EksClusterArgs.allowed_cidrs[0]: must be an IPv4 CIDR block"),
        (
            {"network": NewVpcArgs(cidr="10.0.0.0/16", availability_zones=["eu-west-1a"])},
            "EksClusterArgs.network.availability_zones: needs 2 to 6 zones",
        ),
        (
            {"network": NewVpcArgs(cidr="nope", availability_zones=ZONES)},
            "EksClusterArgs.network.cidr: must be an IPv4 CIDR block",
        ),
        (
            {"network": ExistingVpcArgs(vpc_id="vpc-1", private_subnet_ids=["subnet-a"])},
            "EksClusterArgs.network.private_subnet_ids: needs subnets in at least two zones",
        ),
    ],
)
def test_bad_args_fail_before_any_resource(overrides: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        new_vpc_args(**overrides)
    assert any(problem.startswith(expected) for problem in info.value.problems), info.value.problems


def test_an_ami_type_eks_refuses_is_named_by_its_group_before_any_resource() -> None:
    groups = [group(), group("gpu", ami_type="AL2_x86_64_GPU"), group("custom", ami_type="CUSTOM")]
    with pytest.raises(ConfigError) as info:
        new_vpc_args(kubernetes_version="1.34", node_groups=groups)
    assert info.value.problems == (
        "EksClusterArgs.node_groups[1].ami_type: Amazon Linux 2 has no EKS AMI for Kubernetes 1.33 or later, "
        "so EKS refuses it there: use AL2023_x86_64_NVIDIA (Amazon Linux 2023) or BOTTLEROCKET_x86_64_NVIDIA "
        "(Bottlerocket)",
        "EksClusterArgs.node_groups[2].ami_type: CUSTOM is for a launch template with an AMI of its own, and "
        "the platform makes none: use an EKS-optimized type such as AL2023_x86_64_STANDARD or "
        "BOTTLEROCKET_x86_64",
    )


def test_an_ami_type_or_version_not_known_yet_is_left_to_eks() -> None:
    # An Output is checked by the provider when it resolves, as every Args field is.
    al2 = group(ami_type="AL2_x86_64")
    with pytest.raises(ConfigError, match=re.escape("node_groups[0].ami_type: Amazon Linux 2")):
        new_vpc_args(node_groups=[al2])
    new_vpc_args(kubernetes_version=pulumi.Output.from_input("1.34"), node_groups=[al2])
    new_vpc_args(node_groups=[group(ami_type=pulumi.Output.from_input("AL2_x86_64"))])


# -- what a real `pulumi up` would get wrong -------------------------------------------------------------

OTHER_ADMIN = "arn:aws:iam::111111111111:role/break-glass"
THIRD_ADMIN = "arn:aws:iam::111111111111:user/alice"


def _entries(admins: list[str], caller: str = DEPLOYER_ARN, **overrides: Any) -> dict[str, str]:
    """The access entries a plan gives pulumi-eks, as key -> principal, with ``caller`` deploying."""
    args = new_vpc_args(admin_principal_arns=admins, **overrides)
    cluster = run(lambda: EksCluster("c", args), caller_arn=caller).graph.one("eks:index:Cluster")
    return {key: entry["principalArn"] for key, entry in cluster.inputs["accessEntries"].items()}


def test_removing_an_admin_leaves_the_other_entries_alone() -> None:
    # Keyed by position, dropping the first admin moved every later principal to another key: a
    # replacement (principalArn is ForceNew) whose create EKS refuses, one entry per principal.
    before = _entries([ADMIN, OTHER_ADMIN, THIRD_ADMIN])
    after = _entries([OTHER_ADMIN, THIRD_ADMIN])
    assert after == {key: arn for key, arn in before.items() if arn != ADMIN}
    assert set(after) == {"admin-111111111111-role-break-glass", "admin-111111111111-user-alice"}


@pytest.mark.parametrize(
    "second",
    [
        "arn:aws:sts::111111111111:assumed-role/admin/laptop",  # a listed admin deploys
        "arn:aws:iam::111111111111:user/bob",  # someone else deploys
    ],
)
def test_a_second_deployer_changes_no_entry(second: str) -> None:
    # Dropping "whoever runs this update" brought the first creator's entry back on a colleague's run
    # (EKS refuses it: the creator has EKS's own), and deleted a listed admin's entry when they deployed.
    first = _entries([ADMIN, OTHER_ADMIN], caller="arn:aws:sts::111111111111:assumed-role/gitops-deploy/ci")
    assert _entries([ADMIN, OTHER_ADMIN], caller=second) == first
    assert set(first.values()) == {ADMIN, OTHER_ADMIN}


@pytest.mark.parametrize("creator", [ADMIN, "arn:aws:iam::111111111111:role/team/ADMIN"])
def test_the_creator_gets_no_second_entry(creator: str) -> None:
    # EKS already made the creator's entry (pulumi-eks#2373): a second fails with ResourceInUseException.
    # IAM names ignore case and path, as EKS does.
    assert _entries([ADMIN, OTHER_ADMIN], creator_principal_arn=creator) == {
        "admin-111111111111-role-break-glass": OTHER_ADMIN
    }


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"creator_principal_arn": None}, "creator_principal_arn"),
        ({"admin_principal_arns": [ADMIN, "arn:aws:iam::111111111111:role/x/Admin"]}, "admin_principal_arns"),
        (
            {"admin_principal_arns": ["arn:aws:sts::111111111111:assumed-role/admin/s"]},
            "admin_principal_arns[0]",
        ),
        ({"creator_principal_arn": "admin"}, "creator_principal_arn"),
    ],
)
def test_admins_need_a_named_creator_and_distinct_principals(overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"EksClusterArgs.{key}:")):
        new_vpc_args(**overrides)


def test_every_admin_gets_an_entry_when_the_creator_is_not_one() -> None:
    assert _entries([ADMIN, OTHER_ADMIN]) == {
        "admin-111111111111-role-admin": ADMIN,
        "admin-111111111111-role-break-glass": OTHER_ADMIN,
    }


def test_the_upgrade_from_positional_keys_is_a_rename() -> None:
    # pulumi-eks names an entry `<component>-<key>` and its association `<entry>-cluster-admin`. The
    # transform on pulumi-eks's component aliases each to the name its position gave it before.
    transform = positional_key_aliases("c-cluster", [ADMIN, OTHER_ADMIN])

    def aliases(type_: str, name: str) -> list[Any] | None:
        args = pulumi.ResourceTransformArgs(True, type_, name, {}, pulumi.ResourceOptions())
        result = transform(args)
        return None if result is None else [alias.name for alias in result.opts.aliases or []]

    assert aliases(ACCESS_ENTRY_TYPE, "c-cluster-admin-111111111111-role-break-glass") == [
        "c-cluster-admin-1"
    ]
    assert aliases(POLICY_ASSOCIATION_TYPE, "c-cluster-admin-111111111111-role-admin-cluster-admin") == [
        "c-cluster-admin-0-cluster-admin"
    ]
    assert aliases(ACCESS_ENTRY_TYPE, "c-cluster-admin-0") is None  # nothing else is touched
    assert aliases("aws:eks/cluster:Cluster", "c-cluster-admin-111111111111-role-admin") is None


def test_node_groups_depend_on_their_role_policy_attachments() -> None:
    graph = build(new_vpc_args(node_groups=[group("a"), group("b")])).graph
    attachments = {a.urn for a in graph.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert len(attachments) == 3
    for node_group in graph.of_type("eks:index:ManagedNodeGroup"):
        assert attachments <= set(node_group.dependencies), node_group.name


def test_scaling_changes_are_applied_unless_an_autoscaler_owns_the_group() -> None:
    graph = build(new_vpc_args(node_groups=[group("a"), group("b", scaling_managed_externally=True)])).graph
    groups = {g.name: g for g in graph.of_type("eks:index:ManagedNodeGroup")}
    assert groups["c-a"].inputs["ignoreScalingChanges"] is False
    assert groups["c-b"].inputs["ignoreScalingChanges"] is True


def test_network_policy_turns_on_the_vpc_cni_policy_agent() -> None:
    assert "vpcCniOptions" not in build(new_vpc_args()).graph.one("eks:index:Cluster").inputs
    cluster = build(new_vpc_args(network_policy=True)).graph.one("eks:index:Cluster")
    assert cluster.inputs["vpcCniOptions"]["enableNetworkPolicy"] is True


def test_a_name_whose_derived_iam_role_is_too_long_fails_before_any_resource() -> None:
    def program() -> None:
        EksCluster("c" * 36, new_vpc_args())

    with pytest.raises(ConfigError, match="EksCluster name: must be at most 35 characters"):
        run(program)
    with pytest.raises(ConfigError, match=r"node_groups\[0\]\.name: must be at most"):
        run(lambda: EksCluster("c" * 35, new_vpc_args(node_groups=[group("g" * 20)])))


def test_the_provider_keeps_the_aws_profile_but_the_exported_kubeconfig_does_not() -> None:
    result = build(new_vpc_args(kubeconfig_profile="platform-deployer"))
    provider = result.graph.one("pulumi:providers:kubernetes")
    assert provider.is_secret("kubeconfig")
    exec_args = json.loads(provider.inputs["kubeconfig"])["users"][0]["user"]["exec"]["args"]
    assert exec_args[-2:] == ["--profile", "platform-deployer"]
    assert "platform-deployer" not in json.dumps(result.values["kubeconfig"].value)


def test_the_provider_waits_for_the_private_endpoints_rules() -> None:
    args = new_vpc_args(
        network=ExistingVpcArgs(vpc_id="vpc-1", private_subnet_ids=["subnet-a", "subnet-b"]),
        endpoint_access=EndpointAccess.PRIVATE,
        allowed_cidrs=["10.100.0.0/16", "10.101.0.0/16"],
    )
    graph = build(args).graph
    rules = {r.urn for r in graph.of_type("aws:ec2/securityGroupRule:SecurityGroupRule")}
    assert len(rules) == 2
    assert rules <= set(graph.one("pulumi:providers:kubernetes").dependencies)


def test_the_provider_updates_configmaps_and_secrets_in_place() -> None:
    # Without it, a changed contract or key replaces the fixed-name object, deleting it first.
    provider = build(new_vpc_args()).graph.one("pulumi:providers:kubernetes")
    # Provider config reaches the engine as strings.
    assert provider.inputs["enableConfigMapMutable"] == "true"
    assert provider.inputs["enableSecretMutable"] == "true"
