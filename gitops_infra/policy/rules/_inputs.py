"""Reading a resource's inputs as the engine shows them to a policy, for the rules of every kind.

Inputs are the camelCase wire names; a value may be missing, of another shape than the schema says, or
arrive JSON-encoded, so each reader answers ``None`` or empty rather than raise. Tags are read here too,
since the tag rule and the EKS endpoint rule both need a resource's tags, and its provider's default tags.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ENVIRONMENT_TAG_KEYS",
    "at",
    "decoded",
    "default_tags_of",
    "effective_tag_keys",
    "environment_of",
    "names",
    "objects",
    "strings",
    "whole_number",
]

ENVIRONMENT_TAG_KEYS = ("environment", "gitops-infra/environment")
"""Tags that name a resource's environment, first match wins; the platform writes the first."""


def at(props: Mapping[str, Any], *path: str) -> Any:
    """The value at ``path``, or ``None`` where a step is missing or not an object."""
    value: Any = props
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def decoded(value: Any) -> Any:
    """``value``, JSON-decoded when it arrives as a string (the engine sends some object inputs so);
    ``None`` for a string that is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def objects(value: Any) -> list[Mapping[str, Any]]:
    """``value`` as a list of objects; pulumi-aws renders one-item blocks as an object or a list."""
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item for item in value if isinstance(item, Mapping)]
    return []


def names(config: Mapping[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A list-of-strings setting, or ``default`` when it is unset or empty."""
    return tuple(strings(config.get(key))) or default


def strings(value: Any) -> list[str]:
    """The strings of a list; nothing when ``value`` is not a list."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item for item in value if isinstance(item, str)]
    return []


def whole_number(value: Any) -> int | None:
    """``value`` as an ``int``, or ``None`` when it is not a number."""
    # Numbers reach a policy through protobuf Structs, so whole numbers arrive as floats (3.0).
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _tag_keys(tags: Any) -> set[str]:
    """The keys of a ``tags`` input, also in the ``[{key, value}]`` form of autoscaling groups."""
    if isinstance(tags, Mapping):
        # Iterating a mapping reads no values, so an unknown tag value does not stop the tag check.
        return {str(key) for key in tags}
    return {item["key"] for item in objects(tags) if isinstance(item.get("key"), str)}


def default_tags_of(provider_props: Mapping[str, Any] | None) -> dict[str, str]:
    """The AWS provider's ``defaultTags.tags``, which apply to every resource the provider manages.

    Provider inputs may carry object-valued config JSON-encoded, so both forms are accepted.
    """
    default_tags = decoded(at(provider_props or {}, "defaultTags"))
    tags = at(default_tags, "tags") if isinstance(default_tags, Mapping) else None
    if not isinstance(tags, Mapping):
        return {}
    return {str(key): str(value) for key, value in tags.items()}


def effective_tag_keys(props: Mapping[str, Any], default_tags: Mapping[str, str] | None = None) -> set[str]:
    """The tag keys a resource ends up with: its own and its provider's default tags."""
    return set(default_tags or {}) | _tag_keys(props.get("tags"))


def environment_of(props: Mapping[str, Any], default_tags: Mapping[str, str] | None) -> str | None:
    """The environment a resource's tags name: the first of :data:`ENVIRONMENT_TAG_KEYS` that its own tags
    or, failing them, its provider's default tags have; ``None`` when none does."""
    own = props.get("tags")
    for key in ENVIRONMENT_TAG_KEYS:
        if isinstance(own, Mapping) and key in own:
            return str(own[key])
        if default_tags and key in default_tags:
            return str(default_tags[key])
    return None
