"""Kubernetes' own rules: DNS labels, labels, tolerations and minor versions.

Example::

    assert checks.dns_label_problem("flux-system") is None
    assert checks.kubernetes_version_problem("1.31", "1.33") == "must be 1.33 or newer"
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "DNS_LABEL_HINT",
    "DNS_LABEL_PATTERN",
    "KUBERNETES_MINOR_PATTERN",
    "LABEL_KEY_PATTERN",
    "LABEL_VALUE_PATTERN",
    "TOLERATION_EFFECTS",
    "dns_label_problem",
    "kubernetes_minor_problem",
    "kubernetes_version_problem",
    "label_problem",
    "toleration_problems",
]


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


_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY_PATTERN = rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$"
"""A Kubernetes label key: an optional DNS prefix and ``/``, then a name of at most 63 characters."""
LABEL_VALUE_PATTERN = rf"^({_LABEL_NAME})?$"
"""A Kubernetes label value: empty, or a name of at most 63 characters."""
_LABEL_KEY = re.compile(LABEL_KEY_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)


def label_problem(key: object, value: object) -> str | None:
    """``None`` for a label Kubernetes would take: fleet labels become selectors and Job labels."""
    return pattern_problem(
        _LABEL_KEY,
        key,
        "a label key is letters, digits, '-', '_' and '.' (at most 63), with an optional DNS prefix and '/'",
    ) or pattern_problem(
        _LABEL_VALUE, value, "a label value is empty, or letters, digits, '-', '_' and '.' (at most 63)"
    )


KUBERNETES_MINOR_PATTERN = r"^1\.[0-9]{2}$"
"""A Kubernetes minor version as EKS takes it (``1.33``): no patch, no ``v``."""
_KUBERNETES_MINOR = re.compile(KUBERNETES_MINOR_PATTERN)


def kubernetes_minor_problem(value: object) -> str | None:
    """``None`` for a Kubernetes minor version such as ``1.33``."""
    return pattern_problem(_KUBERNETES_MINOR, value, "must be a Kubernetes minor version such as 1.33")


def kubernetes_version_problem(version: str, floor: str) -> str | None:
    """``None`` when the ``major.minor`` ``version`` is at least ``floor``."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    try:
        too_old = parts(version) < parts(floor)
    except ValueError:
        return "must be a Kubernetes minor version such as 1.33"
    return f"must be {floor} or newer" if too_old else None
