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

from .drift import detect_drift
from .operations import history, preview, refresh, up
from .plan import COMPUTED, Plan, PlannedResource, offline_plan
from .recover import RecoverResult, recover
from .results import (
    SECRET,
    Deployment,
    DriftedResource,
    DriftKind,
    DriftReport,
    PreviewResult,
    PropertyDiff,
    RefreshResult,
    Step,
    UpResult,
)
from .rollback import PREVIOUS, rollback_to_commit
from .signals import Interruption, cancel_on_signals
from .stack_target import StackOptions

__all__ = [
    "COMPUTED",
    "PREVIOUS",
    "SECRET",
    "Deployment",
    "DriftKind",
    "DriftReport",
    "DriftedResource",
    "Interruption",
    "Plan",
    "PlannedResource",
    "PreviewResult",
    "PropertyDiff",
    "RecoverResult",
    "RefreshResult",
    "StackOptions",
    "Step",
    "UpResult",
    "cancel_on_signals",
    "detect_drift",
    "history",
    "offline_plan",
    "preview",
    "recover",
    "refresh",
    "rollback_to_commit",
    "up",
]
