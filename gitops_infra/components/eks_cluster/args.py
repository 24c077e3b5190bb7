"""``EksClusterArgs`` and its parts: the node groups, and the network (a dedicated VPC or an existing one).

Plain values are validated when the Args are made, by the rules the stack config runs too
(:mod:`gitops_infra.checks`). Example::

    args = EksClusterArgs(
        kubernetes_version="1.33",
        network=NewVpcArgs(cidr="10.0.0.0/16", availability_zones=["eu-west-1a", "eu-west-1b"]),
        node_groups=[NodeGroupArgs("system", ["m6i.large"], min_size=2, max_size=4, desired_size=2)],
    )
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from gitops_infra import checks, defaults
from gitops_infra.components._args import Problems, is_known

__all__ = ["EksClusterArgs", "ExistingVpcArgs", "NewVpcArgs", "NodeGroupArgs"]


@dataclass(frozen=True)
class NodeGroupArgs:
    """One managed node group; taints are ``(key, value, effect)`` triples. ``ami_type`` is one of EKS's
    (``checks.EKS_AMI_TYPES``), and not Amazon Linux 2 on Kubernetes 1.33 or later."""

    name: str
    instance_types: Sequence[pulumi.Input[str]]
    min_size: pulumi.Input[int]
    max_size: pulumi.Input[int]
    desired_size: pulumi.Input[int]
    disk_size: pulumi.Input[int] = defaults.DEFAULT_DISK_SIZE_GIB
    capacity_type: defaults.CapacityType = defaults.CapacityType.ON_DEMAND
    ami_type: pulumi.Input[str] = defaults.DEFAULT_AMI_TYPE
    labels: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    taints: Sequence[tuple[str, str, defaults.TaintEffect]] = ()
    scaling_managed_externally: bool = False
    """An autoscaler owns the desired size, so updates leave it alone. Off by default: EKS refuses a
    ``min_size`` raised above the current desired size unless the same update raises that too."""


@dataclass(frozen=True)
class NewVpcArgs:
    """A dedicated VPC: a public and a private subnet in each zone."""

    cidr: str
    availability_zones: Sequence[str]
    nat_gateways: defaults.NatGateways = defaults.NatGateways.SINGLE


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
    endpoint_access: defaults.EndpointAccess = defaults.EndpointAccess.PUBLIC_AND_PRIVATE
    allowed_cidrs: Sequence[str] = ()
    admin_principal_arns: Sequence[str] = ()
    creator_principal_arn: str | None = None
    log_types: Sequence[defaults.LogType] = defaults.ALL_LOG_TYPES
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
