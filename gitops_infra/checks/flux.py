"""Flux: its controllers, the chart's version and the Kubernetes it needs, and reconcile requests.

Example::

    assert checks.flux_components_problem(DEFAULT_COMPONENTS) is None
    assert checks.notifications_problem([FluxComponent.SOURCE_CONTROLLER]) is not None
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from gitops_infra.checks._pattern import pattern_problem
from gitops_infra.checks.kubernetes import kubernetes_version_problem
from gitops_infra.defaults import FLUX_CHART_VERSION, FLUX_VERSION, MIN_KUBERNETES_VERSION, FluxComponent

__all__ = [
    "CHART_VERSION_PATTERN",
    "NOTIFICATION_CONTROLLER",
    "RECONCILE_REQUEST_ANNOTATION",
    "RECONCILE_REQUEST_PATTERN",
    "REQUIRED_FLUX_COMPONENTS",
    "chart_version_problem",
    "flux_components_extra_problem",
    "flux_components_problem",
    "kubernetes_floor_problem",
    "notifications_problem",
    "reconcile_request_problem",
]


# A StrEnum member is equal to its string, so a component's Args may hand in either.
REQUIRED_FLUX_COMPONENTS: tuple[FluxComponent, ...] = (
    FluxComponent.SOURCE_CONTROLLER,
    FluxComponent.KUSTOMIZE_CONTROLLER,
)
"""The controllers the sync needs: source-controller clones, kustomize-controller applies."""
NOTIFICATION_CONTROLLER = FluxComponent.NOTIFICATION_CONTROLLER
"""The controller that sends the alerts of ``flux.notifications``."""
CHART_VERSION_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+$"
"""A chart version as ``major.minor.patch``: the pinned chart's form, and no range or ``v`` prefix."""
_CHART_VERSION = re.compile(CHART_VERSION_PATTERN)


def chart_version_problem(value: object) -> str | None:
    """``None`` for a Flux chart version (``2.18.3``)."""
    return pattern_problem(_CHART_VERSION, value, "must be a version major.minor.patch, such as 2.18.3")


def _repeated(names: Sequence[str]) -> list[str]:
    return sorted({name for name in names if names.count(name) > 1})


def flux_components_problem(components: Sequence[str]) -> str | None:
    """``None`` when ``components`` holds the controllers the sync needs, each once."""
    missing = [name for name in REQUIRED_FLUX_COMPONENTS if name not in components]
    if missing:
        return f"must include {', '.join(missing)}: the sync needs {' and '.join(REQUIRED_FLUX_COMPONENTS)}"
    repeated = _repeated(components)
    return f"repeats a component ({', '.join(repeated)})" if repeated else None


def flux_components_extra_problem(components_extra: Sequence[str], components: Sequence[str]) -> str | None:
    """``None`` when ``components_extra`` adds controllers ``components`` does not name, each once."""
    overlap = sorted(set(components_extra) & set(components))
    if overlap:
        return f"repeats {', '.join(overlap)} from components"
    repeated = _repeated(components_extra)
    return f"repeats a component ({', '.join(repeated)})" if repeated else None


def notifications_problem(installed: Collection[str]) -> str | None:
    """``None`` when the controllers that run include notification-controller, which sends the alerts."""
    return None if NOTIFICATION_CONTROLLER in installed else f"need {NOTIFICATION_CONTROLLER} in components"


def kubernetes_floor_problem(kubernetes_version: str, chart_version: str) -> str | None:
    """``None`` when the pinned chart's Flux installs on ``kubernetes_version``, or the chart is not the
    pinned one (a chart of the user's own is the user's to match), else what was expected."""
    if chart_version != FLUX_CHART_VERSION:
        return None
    problem = kubernetes_version_problem(kubernetes_version, MIN_KUBERNETES_VERSION)
    if problem is None:
        return None
    return (
        f"{problem}: Flux {FLUX_VERSION} (chart {FLUX_CHART_VERSION}) needs it, and the chart's "
        "pre-install check (flux check --pre) fails on an older cluster"
    )


RECONCILE_REQUEST_ANNOTATION = "reconcile.fluxcd.io/requestedAt"
"""Asks a Flux controller to reconcile now, whatever its interval: any new value is a new request, and
``status.lastHandledReconcileAt`` echoes the value handled. The platform sets it to prove a credential,
``flux reconcile`` sets it to a time."""
RECONCILE_REQUEST_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
_RECONCILE_REQUEST = re.compile(RECONCILE_REQUEST_PATTERN)


def reconcile_request_problem(value: object) -> str | None:
    """``None`` for a ``reconcile.fluxcd.io/requestedAt`` value ``up`` can wait on: the provider's
    ``jsonpath={...}=value`` splits on ``=``, so the value holds none."""
    return pattern_problem(
        _RECONCILE_REQUEST, value, "must be 1-128 letters, digits, '.', '_' or '-' (such as a digest)"
    )
