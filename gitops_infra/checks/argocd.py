"""Argo CD: the chart's version, the root's retry, and the destinations an ``AppProject`` allows.

Example::

    assert checks.argo_cd_chart_version_problem("10.1.1") is None
    assert checks.project_destination_problem("*") is not None
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem
from gitops_infra.checks.flux import CHART_VERSION_PATTERN
from gitops_infra.checks.kubernetes import dns_label_problem
from gitops_infra.defaults import ARGO_CD_CHART_VERSION

__all__ = [
    "MAX_RETRY_LIMIT",
    "REFRESH_ANNOTATION",
    "WILDCARD_DESTINATION",
    "argo_cd_chart_version_problem",
    "project_destination_problem",
    "retry_factor_problem",
    "retry_limit_problem",
]

_CHART_VERSION = re.compile(CHART_VERSION_PATTERN)
REFRESH_ANNOTATION = "argocd.argoproj.io/refresh"
"""Set to ``hard`` on an Application, it asks Argo CD's application controller to fetch and render again,
past its caches; the controller removes it once that comparison is recorded in the status."""
MAX_RETRY_LIMIT = 100
"""The most retries a failed sync gets: beyond it, a broken commit would retry for days."""
WILDCARD_DESTINATION = "*"
"""What an ``AppProject`` destination names to allow every namespace (or server): refused, since it lets
the root deploy anywhere, ``kube-system`` included."""


def argo_cd_chart_version_problem(value: object) -> str | None:
    """``None`` for an ``argo-cd`` chart version (``10.1.1``)."""
    return pattern_problem(
        _CHART_VERSION, value, f"must be a version major.minor.patch, such as {ARGO_CD_CHART_VERSION}"
    )


def retry_limit_problem(value: object) -> str | None:
    """``None`` for how many times a failed sync is retried: 0 (never) to :data:`MAX_RETRY_LIMIT`.

    Argo CD reads a negative limit as "forever", which a failing commit never comes back from."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_RETRY_LIMIT:
        return None
    return f"must be a whole number from 0 to {MAX_RETRY_LIMIT}"


MAX_RETRY_FACTOR = 10


def retry_factor_problem(value: object) -> str | None:
    """``None`` for how many times longer each retry waits than the one before: 1 to 10."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_RETRY_FACTOR:
        return None
    return f"must be a whole number from 1 to {MAX_RETRY_FACTOR}"


def project_destination_problem(value: object) -> str | None:
    """``None`` for a namespace an ``AppProject`` lets the root deploy to: one namespace by name.

    A wildcard (``*``, or a glob such as ``team-*``) is refused: the project is what keeps the fleet's root
    out of namespaces the platform did not give it."""
    if isinstance(value, str) and ("*" in value or "?" in value or "[" in value):
        return "must name one namespace: a wildcard would let the root deploy anywhere it matches"
    return dns_label_problem(value)
