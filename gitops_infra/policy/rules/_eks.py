"""The rules on EKS: a prod cluster's API endpoint, secrets encryption, and node group sizes.

Policies see the AWS resources under pulumi-eks's components (``aws:eks/cluster:Cluster``,
``aws:eks/nodeGroup:NodeGroup``), never the components' own inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitops_infra.checks import PROD_ENVIRONMENTS

from ._inputs import at, environment_of, names, objects, strings, whole_number

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_MIN_NODES",
    "DEFAULT_PROD_ENVIRONMENTS",
    "EKS_CLUSTER_TYPE",
    "EKS_NODE_GROUP_TYPE",
    "OPEN_CIDRS",
    "EndpointSettings",
    "NodeGroupSettings",
    "endpoint_violations",
    "node_group_size_violations",
    "secrets_encryption_violations",
]

EKS_CLUSTER_TYPE = "aws:eks/cluster:Cluster"
"""The AWS resource under ``pulumi_eks.Cluster`` (a component, whose own inputs policies never see)."""
EKS_NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
"""The AWS resource under ``pulumi_eks.ManagedNodeGroup``."""

OPEN_CIDRS = frozenset({"0.0.0.0/0", "::/0"})
DEFAULT_PROD_ENVIRONMENTS = PROD_ENVIRONMENTS
DEFAULT_MIN_NODES = 1
DEFAULT_MAX_NODES = 20
SECRETS_RESOURCE = "secrets"


@dataclass(frozen=True)
class EndpointSettings:
    """Config of ``eks-prod-endpoint-not-public``."""

    prod_environments: tuple[str, ...] = DEFAULT_PROD_ENVIRONMENTS
    """Environment tag values that mean prod (config ``prodEnvironments``)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> EndpointSettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(prod_environments=names(config, "prodEnvironments", DEFAULT_PROD_ENVIRONMENTS))


@dataclass(frozen=True)
class NodeGroupSettings:
    """Config of ``eks-node-group-size-bounds``: the smallest ``minSize`` and largest ``maxSize`` allowed."""

    min_nodes: int = DEFAULT_MIN_NODES
    max_nodes: int = DEFAULT_MAX_NODES

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> NodeGroupSettings:
        """Settings from a policy's config (``minNodes``, ``maxNodes``), with defaults."""
        low, high = whole_number(config.get("minNodes")), whole_number(config.get("maxNodes"))
        return cls(
            min_nodes=DEFAULT_MIN_NODES if low is None else low,
            max_nodes=DEFAULT_MAX_NODES if high is None else high,
        )


def endpoint_violations(
    props: Mapping[str, Any],
    settings: EndpointSettings = EndpointSettings(),
    default_tags: Mapping[str, str] | None = None,
) -> list[str]:
    """A prod EKS cluster's public API endpoint must not be open to the whole internet.

    The endpoint is open when ``vpcConfig.endpointPublicAccess`` is not ``false`` (AWS defaults it to
    true) and ``vpcConfig.publicAccessCidrs`` is empty (AWS then allows ``0.0.0.0/0``) or contains
    ``0.0.0.0/0`` or ``::/0``.

    A cluster is prod when its ``environment`` tag (or ``gitops-infra/environment``, from its own tags or
    the provider's default tags) is one of ``settings.prod_environments``. A cluster with no environment
    tag counts as prod: the rule fails closed rather than letting an untagged cluster through.
    """
    vpc = at(props, "vpcConfig")
    vpc = vpc if isinstance(vpc, Mapping) else {}
    if vpc.get("endpointPublicAccess", True) is False:
        return []
    cidrs = strings(vpc.get("publicAccessCidrs"))
    open_cidrs = sorted(OPEN_CIDRS.intersection(cidrs)) if cidrs else ["0.0.0.0/0 (the AWS default)"]
    if not open_cidrs:
        return []
    environment = environment_of(props, default_tags)
    if environment is not None and environment not in settings.prod_environments:
        return []
    which = f"environment {environment!r}" if environment else "no environment tag, so treated as prod"
    return [
        f"the public API endpoint of this EKS cluster ({which}) is open to {', '.join(open_cidrs)}; "
        "set vpcConfig.endpointPublicAccess to false or allow-list CIDRs in vpcConfig.publicAccessCidrs"
    ]


def secrets_encryption_violations(props: Mapping[str, Any]) -> list[str]:
    """An EKS cluster encrypts Kubernetes secrets with KMS: ``encryptionConfig.resources`` has ``secrets``."""
    blocks = objects(props.get("encryptionConfig"))
    if not blocks:
        return ["this EKS cluster has no encryptionConfig; encrypt Kubernetes secrets with a KMS key"]
    if any(SECRETS_RESOURCE in strings(block.get("resources")) for block in blocks):
        return []
    return [f"this EKS cluster's encryptionConfig.resources does not include {SECRETS_RESOURCE!r}"]


def node_group_size_violations(
    props: Mapping[str, Any],
    settings: NodeGroupSettings = NodeGroupSettings(),
) -> list[str]:
    """A node group's ``scalingConfig`` stays within the configured bounds and is self-consistent."""
    scaling = at(props, "scalingConfig")
    if not isinstance(scaling, Mapping):
        return ["this node group has no scalingConfig"]
    low, high, desired = (whole_number(scaling.get(key)) for key in ("minSize", "maxSize", "desiredSize"))
    messages: list[str] = []
    if low is not None and low < settings.min_nodes:
        messages.append(f"scalingConfig.minSize {low} is below the allowed minimum {settings.min_nodes}")
    if high is not None and high > settings.max_nodes:
        messages.append(f"scalingConfig.maxSize {high} is above the allowed maximum {settings.max_nodes}")
    if low is not None and high is not None and low > high:
        messages.append(f"scalingConfig.minSize {low} is greater than maxSize {high}")
    elif desired is not None and (
        (low is not None and desired < low) or (high is not None and desired > high)
    ):
        messages.append(f"scalingConfig.desiredSize {desired} is outside minSize..maxSize ({low}..{high})")
    return messages
