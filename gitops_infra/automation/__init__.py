"""The Automation API layer: Pulumi operations as typed Python functions for CI.

A thin wrapper over ``pulumi.automation``: each function takes a stack name and options, runs the real
engine, and returns a frozen result; every failure is a :class:`~gitops_infra.errors.GitOpsInfraError`.

Example::

    from gitops_infra.automation import StackOptions, detect_drift, rollback_to_commit, up

    options = StackOptions(lock_wait=60)
    up("dev", options=options, message="deploy abc123")
    if detect_drift("dev", options=options).has_drift:
        rollback_to_commit("dev", "previous", options=options)
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports

if TYPE_CHECKING:
    from .constants import DEFAULT_PARALLEL, PREVIOUS
    from .destroy import destroy
    from .drift import detect_drift
    from .fleet import (
        FleetDrift,
        StackDrift,
        StackError,
        StackLock,
        StackStatus,
        detect_drift_all,
        project_stacks,
        status,
        status_all,
    )
    from .markdown import to_markdown
    from .operations import history, preview, refresh, require_promoted, up
    from .plan import COMPUTED, Plan, PlannedResource, offline_plan
    from .promote import promote
    from .recover import RecoverResult, recover
    from .results import (
        SECRET,
        Deployment,
        DestroyResult,
        DriftedResource,
        DriftKind,
        DriftReport,
        PreviewResult,
        PropertyDiff,
        RefreshResult,
        Step,
        UpResult,
    )
    from .rollback import rollback_to_commit
    from .signals import Interruption, cancel_on_signals
    from .stack_target import StackOptions

_EXPORTS = {
    "gitops_infra.automation.destroy": ("destroy",),
    "gitops_infra.automation.drift": ("detect_drift",),
    "gitops_infra.automation.constants": ("DEFAULT_PARALLEL", "PREVIOUS"),
    "gitops_infra.automation.fleet": (
        "FleetDrift",
        "StackDrift",
        "StackError",
        "StackLock",
        "StackStatus",
        "detect_drift_all",
        "project_stacks",
        "status",
        "status_all",
    ),
    "gitops_infra.automation.markdown": ("to_markdown",),
    "gitops_infra.automation.operations": (
        "history",
        "preview",
        "refresh",
        "require_promoted",
        "up",
    ),
    "gitops_infra.automation.plan": (
        "COMPUTED",
        "Plan",
        "PlannedResource",
        "offline_plan",
    ),
    "gitops_infra.automation.promote": ("promote",),
    "gitops_infra.automation.recover": (
        "RecoverResult",
        "recover",
    ),
    "gitops_infra.automation.results": (
        "SECRET",
        "Deployment",
        "DestroyResult",
        "DriftedResource",
        "DriftKind",
        "DriftReport",
        "PreviewResult",
        "PropertyDiff",
        "RefreshResult",
        "Step",
        "UpResult",
    ),
    "gitops_infra.automation.rollback": ("rollback_to_commit",),
    "gitops_infra.automation.signals": (
        "Interruption",
        "cancel_on_signals",
    ),
    "gitops_infra.automation.stack_target": ("StackOptions",),
}

__all__ = [
    "COMPUTED",
    "DEFAULT_PARALLEL",
    "PREVIOUS",
    "SECRET",
    "Deployment",
    "DestroyResult",
    "DriftKind",
    "DriftReport",
    "DriftedResource",
    "FleetDrift",
    "Interruption",
    "Plan",
    "PlannedResource",
    "PreviewResult",
    "PropertyDiff",
    "RecoverResult",
    "RefreshResult",
    "StackDrift",
    "StackError",
    "StackLock",
    "StackOptions",
    "StackStatus",
    "Step",
    "UpResult",
    "cancel_on_signals",
    "destroy",
    "detect_drift",
    "detect_drift_all",
    "history",
    "offline_plan",
    "preview",
    "project_stacks",
    "promote",
    "recover",
    "refresh",
    "require_promoted",
    "rollback_to_commit",
    "status",
    "status_all",
    "to_markdown",
    "up",
]

__getattr__, __dir__ = exports(__name__, _EXPORTS)
