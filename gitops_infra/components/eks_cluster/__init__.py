"""``EksCluster``: an EKS cluster with managed node groups, OIDC, access entries and KMS secrets encryption.

It wraps ``pulumi_eks.Cluster`` in API authentication mode (access entries, no ``aws-auth`` ConfigMap),
with no default node group: one ``eks.ManagedNodeGroup`` per configured group, in the private subnets.
Networking is an existing VPC (``ExistingVpcArgs``) or a dedicated one it builds (``NewVpcArgs``): a
public and a private subnet per availability zone, and a NAT gateway either shared (``single``, cheap,
for dev) or one per zone (``one-per-az``, no cross-zone dependency, for prod). The API endpoint is
public and private (``PUBLIC_AND_PRIVATE``, optionally restricted to CIDRs) or private only
(``PRIVATE``, reachable from the VPC and from the allow-listed CIDRs).

EKS gives whoever creates the cluster an access entry of its own (pulumi-eks always asks for it) and
refuses a second entry for that principal. So the creator is named once (``creator_principal_arn``) and
gets no entry from ``admin_principal_arns``; it is never "whoever runs this update", which would bring a
first creator's entry back on a colleague's run, or delete a listed admin's own entry when they deploy.
Each admin's entry is keyed by its principal (``admin-<account>-<role|user>-<name>``), so removing one
admin leaves the others' entries alone (``principalArn`` is ForceNew, and EKS has one entry per
principal, so a key that moved to another principal would be a replacement EKS refuses).

Outputs: ``cluster_name``, ``kubeconfig`` (secret), ``provider`` (a ``k8s.Provider`` that waits for the
node groups and the endpoint's security-group rules), ``oidc_provider_arn`` and ``oidc_provider_url``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._args import Problems, is_known
from gitops_infra.components._kubernetes import kubernetes_provider
from gitops_infra.defaults import (
    ALL_LOG_TYPES,
    DEFAULT_AMI_TYPE,
    DEFAULT_DISK_SIZE_GIB,
    CapacityType,
    EndpointAccess,
    LogType,
    NatGateways,
    TaintEffect,
)
from gitops_infra.errors import ConfigError

if TYPE_CHECKING:
    import pulumi_aws as aws
    import pulumi_eks as eks
else:
    aws = sdk("pulumi_aws")
    eks = sdk("pulumi_eks")

__all__ = [
    "ACCESS_ENTRY_TYPE",
    "ALL_LOG_TYPES",
    "CLUSTER_ADMIN_POLICY_ARN",
    "DEFAULT_AMI_TYPE",
    "DEFAULT_DISK_SIZE_GIB",
    "NODE_ROLE_POLICY_ARNS",
    "POLICY_ASSOCIATION_TYPE",
    "CapacityType",
    "EksCluster",
    "EksClusterArgs",
    "EndpointAccess",
    "ExistingVpcArgs",
    "LogType",
    "NatGateways",
    "NewVpcArgs",
    "NodeGroupArgs",
    "TaintEffect",
    "access_entry_key",
    "positional_key_aliases",
    "subnet_cidrs",
]

TYPE_TOKEN = "gitops-infra:index:EksCluster"

KMS_DELETION_WINDOW_DAYS = 30
API_PORT = 443
ANYWHERE = "0.0.0.0/0"
CLUSTER_ADMIN_POLICY_ARN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
ACCESS_ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
POLICY_ASSOCIATION_TYPE = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
NODE_ROLE_POLICY_ARNS = {
    "worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "ecr": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
}
NODE_ASSUME_ROLE_POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)
# Subnets are a sixteenth of the VPC each: public ones from the first half, private from the second.
SUBNET_PREFIX_DELTA = 4
PRIVATE_SUBNET_OFFSET = 8


@dataclass(frozen=True)
class NodeGroupArgs:
    """One managed node group; taints are ``(key, value, effect)`` triples. ``ami_type`` is one of EKS's
    (``checks.EKS_AMI_TYPES``), and not Amazon Linux 2 on Kubernetes 1.33 or later."""

    name: str
    instance_types: Sequence[pulumi.Input[str]]
    min_size: pulumi.Input[int]
    max_size: pulumi.Input[int]
    desired_size: pulumi.Input[int]
    disk_size: pulumi.Input[int] = DEFAULT_DISK_SIZE_GIB
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    ami_type: pulumi.Input[str] = DEFAULT_AMI_TYPE
    labels: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    taints: Sequence[tuple[str, str, TaintEffect]] = ()
    scaling_managed_externally: bool = False
    """An autoscaler owns the desired size, so updates leave it alone. Off by default: EKS refuses a
    ``min_size`` raised above the current desired size unless the same update raises that too."""


@dataclass(frozen=True)
class NewVpcArgs:
    """A dedicated VPC: a public and a private subnet in each zone."""

    cidr: str
    availability_zones: Sequence[str]
    nat_gateways: NatGateways = NatGateways.SINGLE


@dataclass(frozen=True)
class ExistingVpcArgs:
    """An existing VPC; nodes go into ``private_subnet_ids``."""

    vpc_id: pulumi.Input[str]
    private_subnet_ids: Sequence[pulumi.Input[str]]
    public_subnet_ids: Sequence[pulumi.Input[str]] = ()


@dataclass(frozen=True)
class EksClusterArgs:
    """Inputs of ``EksCluster``. Plain values are validated when the Args are made.

    ``network_policy`` turns on the VPC CNI's network policy agent, without which Kubernetes
    NetworkPolicy objects are accepted but not enforced. ``kubeconfig_profile`` is the AWS profile the
    deploying runner authenticates with (``aws:profile``), and ``kubeconfig_role_arn`` the role its AWS
    provider assumes (``aws:assumeRoles``): the provider's kubeconfig keeps both, so ``aws eks get-token``
    runs as the same identity that created the cluster.

    ``admin_principal_arns`` are IAM roles or users given cluster-admin access entries, keyed by
    principal. ``creator_principal_arn`` is the role or user that creates the cluster, which EKS gives an
    entry of its own: required when admins are listed, and the same on every run, whoever runs it.
    """

    kubernetes_version: pulumi.Input[str]
    network: NewVpcArgs | ExistingVpcArgs
    node_groups: Sequence[NodeGroupArgs]
    endpoint_access: EndpointAccess = EndpointAccess.PUBLIC_AND_PRIVATE
    allowed_cidrs: Sequence[str] = ()
    admin_principal_arns: Sequence[str] = ()
    creator_principal_arn: str | None = None
    log_types: Sequence[LogType] = ALL_LOG_TYPES
    cluster_name: pulumi.Input[str] | None = None
    tags: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    network_policy: bool = False
    kubeconfig_profile: pulumi.Input[str] | None = None
    kubeconfig_role_arn: pulumi.Input[str] | None = None

    def __post_init__(self) -> None:
        # The stack config runs the same checks (gitops_infra.checks): neither refuses what the other takes.
        problems = Problems("EksClusterArgs")
        problems.gate("kubernetes_version", checks.kubernetes_minor_problem, self.kubernetes_version)
        for index, arn in enumerate(self.admin_principal_arns):
            problems.gate(f"admin_principal_arns[{index}]", checks.iam_principal_problem, arn)
        problems.gate("admin_principal_arns", checks.admins_problem, self.admin_principal_arns)
        if self.creator_principal_arn is not None:
            problems.gate("creator_principal_arn", checks.iam_principal_problem, self.creator_principal_arn)
        elif self.admin_principal_arns:
            problems.add("creator_principal_arn", checks.ADMINS_NEED_CREATOR)
        problems.gate(
            "node_groups", checks.node_group_names_problem, [group.name for group in self.node_groups]
        )
        for index, group in enumerate(self.node_groups):
            where = f"node_groups[{index}]"
            problems.gate(f"{where}.instance_types", checks.instance_types_problem, group.instance_types)
            problems.gate(f"{where}.ami_type", checks.ami_type_problem, group.ami_type)
            if is_known(self.kubernetes_version) and is_known(group.ami_type):
                problem = checks.ami_type_version_problem(group.ami_type, str(self.kubernetes_version))
                if problem is not None:
                    problems.add(f"{where}.ami_type", problem)
            sizes = [_known_size(size) for size in (group.min_size, group.max_size, group.desired_size)]
            for size, problem in checks.node_group_size_problems(*sizes):
                problems.add(f"{where}.{size}", problem)
        for index, cidr in enumerate(self.allowed_cidrs):
            problems.gate(f"allowed_cidrs[{index}]", checks.ipv4_cidr_problem, cidr)
        if isinstance(self.network, NewVpcArgs):
            zones = self.network.availability_zones
            for index, zone in enumerate(zones):
                problems.gate(f"network.availability_zones[{index}]", checks.availability_zone_problem, zone)
            problems.gate("network.availability_zones", checks.availability_zones_problem, zones)
            problems.gate("network.cidr", checks.vpc_cidr_problem, self.network.cidr)
        else:
            subnets = self.network.private_subnet_ids
            problems.gate("network.private_subnet_ids", checks.private_subnets_problem, subnets)
        problems.raise_if_any()


def _known_size(value: pulumi.Input[int]) -> int | None:
    """A size as a number, or ``None`` while it is an ``Output`` (the provider checks it then)."""
    return value if isinstance(value, int) else None


def subnet_cidrs(vpc_cidr: str, zones: int) -> list[tuple[str, str]]:
    """The ``(public, private)`` subnet CIDRs of each zone in a dedicated VPC.

    Raises ``ValueError`` for a block ``checks.vpc_cidr_problem`` refuses, the same rule as the config's.
    """
    problem = checks.vpc_cidr_problem(vpc_cidr)
    if problem is not None:
        raise ValueError(problem)
    network = ipaddress.IPv4Network(vpc_cidr)
    subnets = list(network.subnets(prefixlen_diff=SUBNET_PREFIX_DELTA))
    return [
        (str(subnets[i]), str(subnets[PRIVATE_SUBNET_OFFSET + i]))
        for i in range(min(zones, checks.MAX_ZONES))
    ]


@dataclass(frozen=True)
class _Network:
    vpc_id: pulumi.Input[str]
    public_subnet_ids: Sequence[pulumi.Input[str]]
    private_subnet_ids: Sequence[pulumi.Input[str]]


def _build_vpc(
    name: str, args: NewVpcArgs, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource
) -> _Network:
    """The dedicated VPC: IGW, per-zone public/private subnets, NAT gateways and route tables."""
    opts = pulumi.ResourceOptions(parent=parent)

    def tagged(role: str, **extra: str) -> dict[str, pulumi.Input[str]]:
        return {**tags, "Name": f"{name}-{role}", **extra}

    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=args.cidr,
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags=tagged("vpc"),
        opts=opts,
    )
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tagged("igw"), opts=opts)
    public_routes = aws.ec2.RouteTable(
        f"{name}-public",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block=ANYWHERE, gateway_id=igw.id)],
        tags=tagged("public"),
        opts=opts,
    )
    zones = list(args.availability_zones)
    public: list[aws.ec2.Subnet] = []
    private: list[aws.ec2.Subnet] = []

    def subnet(role: str, zone: str, cidr: str, load_balancer_tag: str) -> aws.ec2.Subnet:
        # The kubernetes.io/role tags tell the AWS load balancer controller which subnets to use.
        tags = tagged(f"{role}-{zone}", **{load_balancer_tag: "1"})
        return aws.ec2.Subnet(
            f"{name}-{role}-{zone}",
            vpc_id=vpc.id,
            cidr_block=cidr,
            availability_zone=zone,
            tags=tags,
            opts=opts,
        )

    for zone, (public_cidr, private_cidr) in zip(zones, subnet_cidrs(args.cidr, len(zones)), strict=True):
        public.append(subnet("public", zone, public_cidr, "kubernetes.io/role/elb"))
        aws.ec2.RouteTableAssociation(
            f"{name}-public-{zone}", subnet_id=public[-1].id, route_table_id=public_routes.id, opts=opts
        )
        private.append(subnet("private", zone, private_cidr, "kubernetes.io/role/internal-elb"))

    _build_private_routes(name, args, vpc, igw, public, private, tagged, parent)
    return _Network(
        vpc_id=vpc.id,
        public_subnet_ids=[subnet.id for subnet in public],
        private_subnet_ids=[subnet.id for subnet in private],
    )


def _build_private_routes(
    name: str,
    args: NewVpcArgs,
    vpc: aws.ec2.Vpc,
    igw: aws.ec2.InternetGateway,
    public: list[aws.ec2.Subnet],
    private: list[aws.ec2.Subnet],
    tagged: Callable[[str], dict[str, pulumi.Input[str]]],
    parent: pulumi.Resource,
) -> None:
    """NAT gateways in the public subnets (one, or one per zone), and each private subnet's route to one."""
    opts = pulumi.ResourceOptions(parent=parent)
    zones = list(args.availability_zones)
    nat_zones = zones[:1] if args.nat_gateways is NatGateways.SINGLE else zones
    nats: list[aws.ec2.NatGateway] = []
    for index, zone in enumerate(nat_zones):
        eip = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags=tagged(f"nat-{zone}"), opts=opts)
        nats.append(
            aws.ec2.NatGateway(
                f"{name}-nat-{zone}",
                allocation_id=eip.id,
                subnet_id=public[index].id,
                tags=tagged(f"nat-{zone}"),
                opts=pulumi.ResourceOptions(parent=parent, depends_on=[igw]),
            )
        )
    for index, (zone, subnet) in enumerate(zip(zones, private, strict=True)):
        nat = nats[0] if len(nats) == 1 else nats[index]
        table = aws.ec2.RouteTable(
            f"{name}-private-{zone}",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block=ANYWHERE, nat_gateway_id=nat.id)],
            tags=tagged(f"private-{zone}"),
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-private-{zone}", subnet_id=subnet.id, route_table_id=table.id, opts=opts
        )


@dataclass(frozen=True)
class _NodeRole:
    role: aws.iam.Role
    attachments: list[aws.iam.RolePolicyAttachment]


def _build_node_role(name: str, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource) -> _NodeRole:
    """The IAM role every managed node group's instances assume, and its three policy attachments."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{name}-node-role", assume_role_policy=NODE_ASSUME_ROLE_POLICY, tags=dict(tags), opts=opts
    )
    attachments = [
        aws.iam.RolePolicyAttachment(f"{name}-node-{short}", role=role.name, policy_arn=arn, opts=opts)
        for short, arn in NODE_ROLE_POLICY_ARNS.items()
    ]
    return _NodeRole(role=role, attachments=attachments)


ADMIN_POLICY_KEY = "cluster-admin"
"""The key of each admin entry's policy association (pulumi-eks names it ``<entry>-cluster-admin``)."""


def access_entry_key(arn: str) -> str:
    """An admin's access entry key, from its principal: it stays with that principal whatever the list."""
    key = checks.principal_key(arn)
    if key is None:
        raise ValueError(f"{arn!r}: {checks.IAM_PRINCIPAL_HINT}")
    _, account, kind, name = key
    return f"admin-{account}-{kind}-{name}"


def _access_entries(
    arns: Sequence[str], creator: str | None, tags: Mapping[str, pulumi.Input[str]]
) -> dict[str, eks.AccessEntryArgs]:
    """Cluster-admin entries keyed by principal; the creator has EKS's own entry, so none of ours."""
    created_by = checks.principal_key(creator) if creator is not None else None
    return {
        access_entry_key(arn): eks.AccessEntryArgs(
            principal_arn=arn,
            access_policies={
                ADMIN_POLICY_KEY: eks.AccessPolicyAssociationArgs(
                    policy_arn=CLUSTER_ADMIN_POLICY_ARN,
                    access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                )
            },
            tags=dict(tags),
        )
        for arn in arns
        if created_by is None or checks.principal_key(arn) != created_by
    }


def positional_key_aliases(component: str, arns: Sequence[str]) -> pulumi.ResourceTransform:
    """A transform that gives each admin's entry the name it had when entries were keyed by position.

    Up to this release an entry was ``admin-<index in the list>``. Without an alias, the upgrade's first
    ``up`` would create each entry under its new name before deleting the old one, and EKS refuses a
    second entry for a principal. pulumi-eks makes the entries inside its own component, so the alias is
    given through a transform on it. It holds while the list is the one the stack was last deployed
    with: change the admins in a later ``up`` than the upgrade.
    """
    renamed: dict[tuple[str, str], str] = {}
    for index, arn in enumerate(arns):
        new, old = f"{component}-{access_entry_key(arn)}", f"{component}-admin-{index}"
        renamed[(ACCESS_ENTRY_TYPE, new)] = old
        renamed[(POLICY_ASSOCIATION_TYPE, f"{new}-{ADMIN_POLICY_KEY}")] = f"{old}-{ADMIN_POLICY_KEY}"

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        old = renamed.get((args.type_, args.name))
        if old is None:
            return None
        aliased = pulumi.ResourceOptions(aliases=[*(args.opts.aliases or []), pulumi.Alias(name=old)])
        return pulumi.ResourceTransformResult(args.props, pulumi.ResourceOptions.merge(args.opts, aliased))

    return transform


def _vpc_cni_options(network_policy: bool) -> eks.VpcCniOptionsArgs | None:
    """The VPC CNI's network policy agent, without which NetworkPolicy objects are not enforced."""
    return eks.VpcCniOptionsArgs(enable_network_policy=True) if network_policy else None


def _name_problems(name: str, args: EksClusterArgs) -> list[str]:
    """Names AWS derives from the component's name must fit AWS's limits (``checks``, as the config)."""
    problem = checks.cluster_component_name_problem(name)
    if problem is not None:
        return [f"EksCluster name: {problem}"]
    return [
        f"EksClusterArgs.node_groups[{index}].name: {problem}"
        for index, group in enumerate(args.node_groups)
        if (problem := checks.node_group_name_problem(name, group.name)) is not None
    ]


def _build_kms_key(name: str, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource) -> aws.kms.Key:
    """The cluster's own KMS key for Kubernetes secrets encryption."""
    return aws.kms.Key(
        f"{name}-secrets",
        description=f"EKS secrets encryption for {name}",
        enable_key_rotation=True,
        deletion_window_in_days=KMS_DELETION_WINDOW_DAYS,
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _build_cluster(
    name: str,
    args: EksClusterArgs,
    network: _Network,
    kms_key: aws.kms.Key,
    tags: Mapping[str, pulumi.Input[str]],
    parent: pulumi.Resource,
) -> eks.Cluster:
    """The ``pulumi_eks.Cluster``: API access entries, OIDC, logs, KMS, the endpoint, no default nodes."""
    private_only = args.endpoint_access is EndpointAccess.PRIVATE
    return eks.Cluster(
        f"{name}-cluster",
        name=args.cluster_name if args.cluster_name is not None else name,
        version=args.kubernetes_version,
        authentication_mode=eks.AuthenticationMode.API,
        access_entries=_access_entries(args.admin_principal_arns, args.creator_principal_arn, tags),
        create_oidc_provider=True,
        skip_default_node_group=True,
        enabled_cluster_log_types=[str(log) for log in args.log_types],
        encryption_config_key_arn=kms_key.arn,
        vpc_id=network.vpc_id,
        public_subnet_ids=list(network.public_subnet_ids) or None,
        private_subnet_ids=list(network.private_subnet_ids),
        node_associate_public_ip_address=False,
        endpoint_private_access=True,
        endpoint_public_access=not private_only,
        public_access_cidrs=None if private_only or not args.allowed_cidrs else list(args.allowed_cidrs),
        vpc_cni_options=_vpc_cni_options(args.network_policy),
        tags=dict(tags),
        opts=pulumi.ResourceOptions(
            parent=parent, transforms=[positional_key_aliases(f"{name}-cluster", args.admin_principal_arns)]
        ),
    )


def _build_endpoint_rules(
    name: str, args: EksClusterArgs, cluster: eks.Cluster, parent: pulumi.Resource
) -> list[aws.ec2.SecurityGroupRule]:
    """With no public endpoint, the allow-listed networks reach the private one through the VPC, on 443."""
    if args.endpoint_access is not EndpointAccess.PRIVATE:
        return []
    return [
        aws.ec2.SecurityGroupRule(
            f"{name}-endpoint-{index}",
            type="ingress",
            protocol="tcp",
            from_port=API_PORT,
            to_port=API_PORT,
            cidr_blocks=[cidr],
            security_group_id=cluster.cluster_security_group_id,
            description=f"Kubernetes API from {cidr}",
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for index, cidr in enumerate(args.allowed_cidrs)
    ]


def _build_node_groups(
    name: str,
    args: EksClusterArgs,
    cluster: eks.Cluster,
    network: _Network,
    node_role: _NodeRole,
    tags: Mapping[str, pulumi.Input[str]],
    parent: pulumi.Resource,
) -> dict[str, eks.ManagedNodeGroup]:
    """One managed node group per configured group, in the private subnets, after the role's policies."""
    return {
        group.name: eks.ManagedNodeGroup(
            f"{name}-{group.name}",
            cluster=cluster,
            node_role_arn=node_role.role.arn,
            subnet_ids=list(network.private_subnet_ids),
            instance_types=list(group.instance_types),
            capacity_type=str(group.capacity_type),
            ami_type=group.ami_type,
            disk_size=group.disk_size,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=group.min_size, max_size=group.max_size, desired_size=group.desired_size
            ),
            ignore_scaling_changes=group.scaling_managed_externally,
            labels=dict(group.labels),
            taints=[
                aws.eks.NodeGroupTaintArgs(key=key, value=value, effect=str(effect))
                for key, value, effect in group.taints
            ],
            tags=dict(tags),
            # Nodes join only with the role's policies attached, and must leave before they go.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(node_role.attachments)),
        )
        for group in args.node_groups
    }


def _build_provider(
    name: str,
    cluster: eks.Cluster,
    args: EksClusterArgs,
    depends_on: list[pulumi.Resource],
    parent: pulumi.Resource,
) -> k8s.Provider:
    """The Kubernetes provider for the cluster, secret kubeconfig and all.

    The exported kubeconfig stays profile- and role-less, as pulumi-eks's is: they name this runner's
    credentials, not a reader's. The provider deploys from this runner, so its kubeconfig authenticates as
    the AWS provider does: with the profile, and assuming the role, that created the cluster. Without the
    role, ``aws eks get-token`` would run as the ambient credentials, a principal with no access entry.
    """
    profile, role = args.kubeconfig_profile, args.kubeconfig_role_arn
    kubeconfig: pulumi.Input[str] = (
        cluster.kubeconfig_json
        if profile is None and role is None
        else cluster.get_kubeconfig(profile_name=profile, role_arn=role)
    )
    opts = pulumi.ResourceOptions(parent=parent, depends_on=depends_on)
    return kubernetes_provider(f"{name}-k8s", kubeconfig, opts)


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster ready for Flux: see the module docstring."""

    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    oidc_provider_arn: pulumi.Output[str]
    oidc_provider_url: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    cluster: eks.Cluster
    node_groups: dict[str, eks.ManagedNodeGroup]
    kms_key: aws.kms.Key

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        problems = _name_problems(name, args)
        if problems:
            raise ConfigError(problems)
        super().__init__(TYPE_TOKEN, name, None, opts)
        tags = dict(args.tags)
        network = (
            _build_vpc(name, args.network, tags, self)
            if isinstance(args.network, NewVpcArgs)
            else _Network(
                vpc_id=args.network.vpc_id,
                public_subnet_ids=list(args.network.public_subnet_ids),
                private_subnet_ids=list(args.network.private_subnet_ids),
            )
        )
        self.kms_key = _build_kms_key(name, tags, self)
        self.cluster = _build_cluster(name, args, network, self.kms_key, tags, self)
        endpoint_rules = _build_endpoint_rules(name, args, self.cluster, self)
        node_role = _build_node_role(name, tags, self)
        self.node_groups = _build_node_groups(name, args, self.cluster, network, node_role, tags, self)

        cluster_name = args.cluster_name if args.cluster_name is not None else name
        self.cluster_name = pulumi.Output.all(self.cluster.urn, cluster_name).apply(
            lambda values: str(values[1])
        )
        self.kubeconfig = pulumi.Output.secret(self.cluster.kubeconfig_json)
        self.oidc_provider_arn = self.cluster.oidc_provider_arn
        self.oidc_provider_url = self.cluster.oidc_provider_url
        self.vpc_id = pulumi.Output.from_input(network.vpc_id)
        # Workloads need nodes, and a private endpoint is reached only once its rules exist: anything
        # deployed through this provider waits for both.
        self.provider = _build_provider(
            name, self.cluster, args, [*self.node_groups.values(), *endpoint_rules], self
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "oidcProviderUrl": self.oidc_provider_url,
                "vpcId": self.vpc_id,
            }
        )
