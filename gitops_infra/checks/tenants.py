"""Tenants: the namespaces a tenant may own, the role it is bound to, its quota's quantities, and where
its manifests live.

Example::

    problems = checks.tenant_namespaces_problems(["team-a", "kube-system", "team-a"])
    assert [index for index, _ in problems] == [1, 2]  # reserved, and a repeat of namespaces[0]
    assert checks.quantity_problem("500m") is None
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gitops_infra.checks._pattern import pattern_problem
from gitops_infra.checks.kubernetes import LABEL_KEY_PATTERN, dns_label_problem
from gitops_infra.defaults import FLUX_NAMESPACE

__all__ = [
    "LIMIT_TYPES",
    "QUANTITY_PATTERN",
    "RESERVED_NAMESPACES",
    "paths_overlap",
    "quantity_problem",
    "rbac_name_problem",
    "reserved_namespace_problem",
    "resource_name_problem",
    "tenant_namespaces_problems",
]


RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", FLUX_NAMESPACE)
"""Namespaces no tenant may own: Kubernetes' own, and Flux's by default (the platform's own, the service
namespace and the configured Flux namespace, are refused by the stack config, which knows them)."""
_RESERVED = f"is reserved: Kubernetes and Flux own {', '.join(RESERVED_NAMESPACES)}"


def reserved_namespace_problem(namespace: object) -> str | None:
    """``None`` for a namespace a tenant may own: not one of ``RESERVED_NAMESPACES``."""
    return _RESERVED if namespace in RESERVED_NAMESPACES else None


def tenant_namespaces_problems(namespaces: Sequence[object]) -> list[tuple[int, str]]:
    """``(index, what was expected)`` for each of a tenant's namespaces it may not own: not a DNS label,
    reserved, or a repeat of an earlier one. An empty list is a problem of index ``-1`` (the whole)."""
    if not namespaces:
        return [(-1, "must name at least one namespace")]
    problems: list[tuple[int, str]] = []
    first: dict[object, int] = {}
    for index, namespace in enumerate(namespaces):
        problem = dns_label_problem(namespace) or reserved_namespace_problem(namespace)
        if problem is None and namespace in first:
            problem = f"repeats namespaces[{first[namespace]}]"
        if problem is not None:
            problems.append((index, problem))
        first.setdefault(namespace, index)
    return problems


_RBAC_NAME_MAX = 253


def rbac_name_problem(value: object) -> str | None:
    """``None`` for a name the API server takes for a ClusterRole (``admin``, ``edit``, ``team:deployer``):
    as its ``ValidateRBACName``, any path segment of at most 253 characters."""
    if (
        isinstance(value, str)
        and 0 < len(value) <= _RBAC_NAME_MAX
        and value not in (".", "..")
        and not re.search(r"[/%\s]", value)
    ):
        return None
    return "must name a ClusterRole: at most 253 characters, without '/', '%' or whitespace"


QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
"""A Kubernetes quantity (``resource.Quantity``): a number and a binary (``Mi``), decimal (``m``, ``k``)
or exponent (``e3``) suffix."""
_QUANTITY = re.compile(QUANTITY_PATTERN)


def quantity_problem(value: object) -> str | None:
    """``None`` for a quantity the API server parses (``500m``, ``2Gi``, ``10``)."""
    return pattern_problem(_QUANTITY, value, "must be a Kubernetes quantity, such as 500m, 2Gi or 10")


_RESOURCE_NAME = re.compile(LABEL_KEY_PATTERN)


def resource_name_problem(value: object) -> str | None:
    """``None`` for a resource a quota or limit names (``requests.cpu``, ``count/deployments.apps``)."""
    return pattern_problem(
        _RESOURCE_NAME,
        value,
        "must name a resource, such as requests.cpu, limits.memory, pods or count/deployments.apps",
    )


LIMIT_TYPES = ("Container", "Pod", "PersistentVolumeClaim")
"""The kinds a LimitRange item limits."""


def _segments(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def paths_overlap(first: str, second: str) -> bool:
    """True when one path of a repository holds the other (or they are one): Flux builds everything under
    a Kustomization's path, so the outer one would apply the inner one's manifests too, as its own."""
    a, b = _segments(first), _segments(second)
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]
