"""The nodes: the IAM role every managed node group's instances assume, and one managed node group per
configured group, in the private subnets.

Example::

    role = build_node_role("gitops-dev", tags, parent)
    groups = build_node_groups("gitops-dev", args, cluster, network, role, tags, parent)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi

from gitops_infra._lazy import sdk
from gitops_infra.components.eks_cluster.args import EksClusterArgs
from gitops_infra.components.eks_cluster.network import Network

if TYPE_CHECKING:
    import pulumi_aws as aws
    import pulumi_eks as eks
else:
    aws = sdk("pulumi_aws")
    eks = sdk("pulumi_eks")

__all__ = ["NODE_ROLE_POLICY_ARNS", "NodeRole", "build_node_groups", "build_node_role"]


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


@dataclass(frozen=True)
class NodeRole:
    """The nodes' IAM role, and its policy attachments (a node group waits for them)."""

    role: aws.iam.Role
    attachments: list[aws.iam.RolePolicyAttachment]


def build_node_role(name: str, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource) -> NodeRole:
    """The IAM role every managed node group's instances assume, and its three policy attachments."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{name}-node-role", assume_role_policy=NODE_ASSUME_ROLE_POLICY, tags=dict(tags), opts=opts
    )
    attachments = [
        aws.iam.RolePolicyAttachment(f"{name}-node-{short}", role=role.name, policy_arn=arn, opts=opts)
        for short, arn in NODE_ROLE_POLICY_ARNS.items()
    ]
    return NodeRole(role=role, attachments=attachments)


def build_node_groups(
    name: str,
    args: EksClusterArgs,
    cluster: eks.Cluster,
    network: Network,
    node_role: NodeRole,
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
