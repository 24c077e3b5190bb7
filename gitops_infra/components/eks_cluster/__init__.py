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

One module per part: ``args`` (the Args), ``network`` (the dedicated VPC), ``access`` (the admins' access
entries), ``nodes`` (the node role and groups) and ``component`` (``EksCluster``, which builds them).

Outputs: ``cluster_name``, ``kubeconfig`` (secret), ``provider`` (a ``k8s.Provider`` that waits for the
node groups and the endpoint's security-group rules), ``oidc_provider_arn`` and ``oidc_provider_url``.
"""

from gitops_infra.components.eks_cluster.access import (
    ACCESS_ENTRY_TYPE,
    CLUSTER_ADMIN_POLICY_ARN,
    POLICY_ASSOCIATION_TYPE,
    access_entry_key,
    positional_key_aliases,
)
from gitops_infra.components.eks_cluster.args import (
    EksClusterArgs,
    ExistingVpcArgs,
    NewVpcArgs,
    NodeGroupArgs,
)
from gitops_infra.components.eks_cluster.component import EksCluster
from gitops_infra.components.eks_cluster.network import subnet_cidrs
from gitops_infra.components.eks_cluster.nodes import NODE_ROLE_POLICY_ARNS
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
