"""Who administers the cluster: cluster-admin access entries keyed by principal, never one for the creator
(EKS gives it its own), and the aliases that carry entries keyed by position over to them.

Example::

    assert access_entry_key("arn:aws:iam::111111111111:role/ops/Admin") == "admin-111111111111-role-admin"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pulumi

from gitops_infra import checks
from gitops_infra._lazy import sdk

if TYPE_CHECKING:
    import pulumi_aws as aws
    import pulumi_eks as eks
else:
    aws = sdk("pulumi_aws")
    eks = sdk("pulumi_eks")

__all__ = [
    "ACCESS_ENTRY_TYPE",
    "ADMIN_POLICY_KEY",
    "CLUSTER_ADMIN_POLICY_ARN",
    "POLICY_ASSOCIATION_TYPE",
    "access_entries",
    "access_entry_key",
    "positional_key_aliases",
]


CLUSTER_ADMIN_POLICY_ARN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
ACCESS_ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
POLICY_ASSOCIATION_TYPE = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"


ADMIN_POLICY_KEY = "cluster-admin"
"""The key of each admin entry's policy association (pulumi-eks names it ``<entry>-cluster-admin``)."""


def access_entry_key(arn: str) -> str:
    """An admin's access entry key, from its principal: it stays with that principal whatever the list."""
    key = checks.principal_key(arn)
    if key is None:
        raise ValueError(f"{arn!r}: {checks.IAM_PRINCIPAL_HINT}")
    _, account, kind, name = key
    return f"admin-{account}-{kind}-{name}"


def access_entries(
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
