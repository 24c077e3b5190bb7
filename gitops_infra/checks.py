"""The small rules that more than one edge enforces, each written once. No Pulumi import.

The stack config models (:mod:`gitops_infra.config`), the component Args and the policy pack all call
these, so a value one of them accepts is never refused by another, in the manner of awsx's single
``validateVpcArgs`` gate. Each check returns ``None`` when the value passes, or what was expected, as a
short phrase (``"must be a Go duration such as 30s, 5m or 1h"``); the caller puts its own key path in front
(``gitops-infra:flux.interval`` in the config, ``FluxBootstrapArgs.interval`` in the Args). A check never
echoes the value it refused: config values may be secret-adjacent, and the key path says where to look.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta

__all__ = [
    "AUTONAME_SUFFIX_LENGTH",
    "DNS_LABEL_PATTERN",
    "EKS_CLUSTER_NAME_MAX",
    "EKS_NODE_GROUP_NAME_MAX",
    "GO_DURATION_PATTERN",
    "IAM_ROLE_NAME_MAX",
    "MAX_READY_TIMEOUT",
    "MIN_VPC_PREFIX",
    "PROD_ENVIRONMENTS",
    "TOLERATION_EFFECTS",
    "cluster_component_name_problem",
    "dns_label_problem",
    "go_duration_problem",
    "ipv4_cidr_problem",
    "kubernetes_version_problem",
    "max_cluster_component_name",
    "max_node_group_name",
    "node_group_name_problem",
    "parse_duration",
    "ready_timeout_problem",
    "relative_path_problem",
    "toleration_problems",
    "vpc_cidr_problem",
]

# -- Go durations --------------------------------------------------------------------------------------

GO_DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
"""What Flux's CRDs accept for ``interval``, ``retryInterval`` and ``timeout`` (their OpenAPI ``pattern``).

Narrower than Go's ``time.ParseDuration``: no bare ``0``, no ``.5m`` or ``1.m``, no ``ns``/``us``/``µs``.
A value the API server would refuse must be refused here first, by the same pattern.
"""
_DURATION = re.compile(GO_DURATION_PATTERN)
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
GO_DURATION_HINT = "must be a Go duration such as 30s, 5m, 1m30s or 1h (units ms, s, m, h)"


def go_duration_problem(value: object) -> str | None:
    """``None`` for a duration Flux's CRDs accept, else what was expected."""
    if isinstance(value, str) and _DURATION.fullmatch(value):
        return None
    return GO_DURATION_HINT


PROD_ENVIRONMENTS = ("prod", "production")
"""Environment names that mean prod: the policy pack's default, and where ``destroy`` asks to confirm."""

MAX_READY_TIMEOUT = timedelta(hours=24)


def ready_timeout_problem(value: object) -> str | None:
    """``None`` for a wait ``up`` can make: a Go duration of at most a day (``0s``: no wait)."""
    problem = go_duration_problem(value)
    if problem is not None:
        return problem
    assert isinstance(value, str)  # go_duration_problem accepts strings only
    # A day is already a hung pipeline; far beyond it, the provider's seconds overflow to no wait at all.
    return "must be at most 24h" if parse_duration(value) > MAX_READY_TIMEOUT else None


def parse_duration(text: str) -> timedelta:
    """Parse a duration Flux accepts (``1m30s``, ``5m``, ``1.5h``); raise ``ValueError`` otherwise."""
    if go_duration_problem(text) is not None:
        raise ValueError(f"{text!r} is not a Go duration such as 1m30s, 5m or 60s")
    seconds = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(text))
    return timedelta(seconds=seconds)


# -- networks ------------------------------------------------------------------------------------------

MIN_VPC_PREFIX = 20
"""The smallest dedicated VPC: a /20, cut into sixteen /24s, a public and a private one per zone.

Anything smaller leaves /25 or narrower private subnets, and every pod takes a VPC address with the
VPC CNI: a node group outgrows them long before it reaches its ``maxSize``.
"""


def ipv4_cidr_problem(value: object) -> str | None:
    """``None`` for an IPv4 CIDR block with no host bits set (``10.0.0.0/16``)."""
    try:
        ipaddress.IPv4Network(str(value), strict=True)
    except ValueError:
        return "must be an IPv4 CIDR block such as 10.0.0.0/16, with no host bits set"
    return None


def vpc_cidr_problem(value: object) -> str | None:
    """``None`` for a CIDR block that fits the dedicated VPC's subnet layout (``MIN_VPC_PREFIX``)."""
    problem = ipv4_cidr_problem(value)
    if problem is not None:
        return problem
    if ipaddress.IPv4Network(str(value)).prefixlen > MIN_VPC_PREFIX:
        return f"must be /{MIN_VPC_PREFIX} or larger, to fit a /24 public and private subnet per zone"
    return None


# -- Kubernetes ----------------------------------------------------------------------------------------

DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
"""An RFC 1123 label, as Kubernetes names namespaces (at most 63 characters)."""
_DNS_LABEL = re.compile(DNS_LABEL_PATTERN)
DNS_LABEL_HINT = "must be a DNS label (lowercase letters, digits and '-', at most 63 characters)"

TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""The effects Kubernetes accepts on a toleration; empty means every effect."""


def dns_label_problem(value: object) -> str | None:
    """``None`` for an RFC 1123 label (a namespace name, a node group name)."""
    if isinstance(value, str) and _DNS_LABEL.fullmatch(value):
        return None
    return DNS_LABEL_HINT


def relative_path_problem(value: object) -> str | None:
    """``None`` for a path inside a repository: relative, no ``..`` step, no whitespace."""
    if (
        isinstance(value, str)
        and value
        and not value.startswith("/")
        and ".." not in value.split("/")
        and not re.search(r"\s", value)
    ):
        return None
    return "must be a relative path inside the repository, without '..' or whitespace"


def toleration_problems(
    key: str | None, operator: str | None, value: str | None, effect: str | None
) -> list[tuple[str, str]]:
    """``(field, what was expected)`` for each way a toleration breaks the API server's own validation.

    As ``ValidateTolerations`` in Kubernetes: ``Exists`` takes no value, an empty key matches every taint
    and so needs ``Exists``, and the effect is one of ``TOLERATION_EFFECTS`` (or empty, for all).
    """
    problems: list[tuple[str, str]] = []
    operator = operator or "Equal"
    if operator not in ("Exists", "Equal"):
        problems.append(("operator", "must be Exists or Equal"))
    if operator == "Exists" and value:
        problems.append(("value", "must be empty when operator is Exists"))
    if not key and operator != "Exists":
        problems.append(("operator", "must be Exists when key is empty (a toleration of every taint)"))
    if effect and effect not in TOLERATION_EFFECTS:
        problems.append(("effect", f"must be one of {', '.join(TOLERATION_EFFECTS)}"))
    return problems


def kubernetes_version_problem(version: str, floor: str) -> str | None:
    """``None`` when the ``major.minor`` ``version`` is at least ``floor``."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    try:
        too_old = parts(version) < parts(floor)
    except ValueError:
        return "must be a Kubernetes minor version such as 1.33"
    return f"must be {floor} or newer" if too_old else None


# -- names AWS derives from ours -----------------------------------------------------------------------

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
