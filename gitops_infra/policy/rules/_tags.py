"""The rule on AWS tags (``aws-required-tags``): every taggable AWS resource carries the required tags,
counting its provider's default tags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._eks import EKS_CLUSTER_TYPE, EKS_NODE_GROUP_TYPE
from ._inputs import effective_tag_keys, names

__all__ = [
    "ALWAYS_TAGGABLE_TYPES",
    "DEFAULT_REQUIRED_TAGS",
    "UNTAGGABLE_IN_COMPONENT",
    "TagSettings",
    "required_tag_violations",
]

ALWAYS_TAGGABLE_TYPES = frozenset(
    {
        EKS_CLUSTER_TYPE,
        EKS_NODE_GROUP_TYPE,
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:ec2/internetGateway:InternetGateway",
        "aws:ec2/natGateway:NatGateway",
        "aws:ec2/eip:Eip",
        "aws:ec2/routeTable:RouteTable",
        "aws:ec2/securityGroup:SecurityGroup",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:iam/role:Role",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "aws:kms/key:Key",
    }
)
"""AWS types that take tags even when a program sets none.

A policy sees only the inputs a program set, so an ``aws:`` resource counts as taggable when it has a
``tags`` input or is one of these (the types the platform creates). Listing every taggable AWS type
would need the provider's schema, which is not available to a policy pack at run time.
"""

UNTAGGABLE_IN_COMPONENT: Mapping[str, frozenset[str]] = {
    # pulumi-eks's Cluster makes its IAM OIDC provider with no tags and no argument to set them
    # (`createCore` in nodejs/eks/cluster/cluster.ts); every other AWS child it makes takes `tags`.
    "eks:index:Cluster": frozenset({"aws:iam/openIdConnectProvider:OpenIdConnectProvider"}),
}
"""By component type, the always-taggable types it makes without a way for a program to tag them.

``aws-required-tags`` judges what a program can tag; one of these, made by that component, it cannot.
"""

DEFAULT_REQUIRED_TAGS = ("environment", "owner")


@dataclass(frozen=True)
class TagSettings:
    """Config of ``aws-required-tags``."""

    required: tuple[str, ...] = DEFAULT_REQUIRED_TAGS
    """Tag keys every taggable AWS resource must carry (config ``requiredTags``)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TagSettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(required=names(config, "requiredTags", DEFAULT_REQUIRED_TAGS))


def _ancestor_types(urn: str) -> tuple[str, ...]:
    """The types of a resource's ancestors, from its URN (``...::<parent type>$<type>::<name>``)."""
    parts = urn.split("::")
    return tuple(parts[2].split("$")[:-1]) if len(parts) >= 4 else ()


def required_tag_violations(
    resource_type: str,
    props: Mapping[str, Any],
    settings: TagSettings = TagSettings(),
    default_tags: Mapping[str, str] | None = None,
    urn: str = "",
) -> list[str]:
    """Every taggable AWS resource carries the required tags, counting the provider's default tags.

    Taggable means an ``aws:`` type with a ``tags`` input or one of :data:`ALWAYS_TAGGABLE_TYPES`, and
    taggable by the program: one a component makes with no way to tag it
    (:data:`UNTAGGABLE_IN_COMPONENT`, read from the ``urn``) is not judged, unless it carries tags.
    """
    if not resource_type.startswith("aws:"):
        return []
    if "tags" not in props and resource_type not in ALWAYS_TAGGABLE_TYPES:
        return []
    if "tags" not in props and any(
        resource_type in UNTAGGABLE_IN_COMPONENT.get(ancestor, ()) for ancestor in _ancestor_types(urn)
    ):
        return []
    present = effective_tag_keys(props, default_tags)
    missing = [key for key in settings.required if key not in present]
    if not missing:
        return []
    return [f"missing required tag{'s' if len(missing) > 1 else ''}: {', '.join(missing)}"]
