"""The names AWS derives from the platform's (IAM roles, the EKS cluster and its node groups), within
AWS's length limits.

Example::

    assert checks.cluster_component_name_problem("gitops-dev") is None
    assert checks.node_group_name_problem("gitops-dev", "system") is None
"""

from __future__ import annotations

__all__ = [
    "AUTONAME_SUFFIX_LENGTH",
    "EKS_CLUSTER_NAME_MAX",
    "EKS_NODE_GROUP_NAME_MAX",
    "IAM_ROLE_NAME_MAX",
    "cluster_component_name_problem",
    "max_cluster_component_name",
    "max_node_group_name",
    "node_group_name_problem",
]


IAM_ROLE_NAME_MAX = 64
EKS_CLUSTER_NAME_MAX = 100
EKS_NODE_GROUP_NAME_MAX = 63
AUTONAME_SUFFIX_LENGTH = 8
"""What Pulumi's auto-naming appends to a resource name for its physical name: ``-`` and 7 hex digits."""

# The longest IAM role name derived from an EksCluster named N: pulumi-eks's cluster role, from its
# `${name}-eksRole` ServiceRole around a `${name}-role` Role, where its own name is our `N-cluster`.
# Our node role (`N-node-role`) is shorter. Both are auto-named, so the suffix counts too.
_LONGEST_ROLE_SUFFIX = "-cluster-eksRole-role"


def max_cluster_component_name() -> int:
    """The longest ``EksCluster`` resource name whose derived IAM role names fit IAM's limit."""
    return IAM_ROLE_NAME_MAX - len(_LONGEST_ROLE_SUFFIX) - AUTONAME_SUFFIX_LENGTH


def cluster_component_name_problem(name: str) -> str | None:
    """``None`` when every name AWS derives from the ``EksCluster`` named ``name`` fits its limit."""
    limit = max_cluster_component_name()
    if len(name) <= limit:
        return None
    return (
        f"must be at most {limit} characters: pulumi-eks names the cluster's IAM role "
        f"<name>{_LONGEST_ROLE_SUFFIX} plus an {AUTONAME_SUFFIX_LENGTH}-character suffix, "
        f"and IAM allows {IAM_ROLE_NAME_MAX}"
    )


def max_node_group_name(cluster_component_name: str) -> int:
    """The longest node group name whose EKS node group (``<cluster>-<group>``, auto-named) fits."""
    return EKS_NODE_GROUP_NAME_MAX - len(cluster_component_name) - 1 - AUTONAME_SUFFIX_LENGTH


def node_group_name_problem(cluster_component_name: str, group: str) -> str | None:
    """``None`` when the EKS node group named after ``group`` in that cluster fits EKS's limit."""
    limit = max_node_group_name(cluster_component_name)
    if len(group) <= limit:
        return None
    return (
        f"must be at most {max(limit, 0)} characters here: the EKS node group is named "
        f"<cluster>-<group> plus an {AUTONAME_SUFFIX_LENGTH}-character suffix, and EKS allows "
        f"{EKS_NODE_GROUP_NAME_MAX}"
    )
