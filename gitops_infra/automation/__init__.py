"""The Automation API layer: Pulumi operations as typed Python functions for CI.

A thin wrapper over ``pulumi.automation``: each function takes a stack name and options, runs the real
engine, and returns a frozen result; every failure is a :class:`~gitops_infra.errors.GitOpsInfraError`.

The public modules are the operations, one concept each (``operations``: preview, up, refresh, history;
``drift``, ``rollback``, ``promotion``, ``teardown``, ``fleet``, ``recovery``, ``plan``, ``signals``), the
fleet's ``inventory``, their ``results`` and ``options``. No module is named after a function it exports:
importing it would replace the function on the package. The modules with a leading ``_`` are plumbing: the
engine boundary (``_engine``), the resolved target (``_target``), the shared engine work (``_work``), the
files Pulumi keeps (``_stack_files``, ``_file_backend``, ``_project``), git, processes, and the one door
to Pulumi's internals (``_compat``). ``__all__`` below is the API.

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
    from ._stack_name import StackName, parse_stack_name
    from .drift import detect_drift
    from .fleet import (
        DriftCause,
        FleetDrift,
        FleetPreview,
        StackDrift,
        StackError,
        StackLock,
        StackPreview,
        StackStatus,
        detect_drift_all,
        preview_all,
        project_stacks,
        status,
        status_all,
    )
    from .inventory import FleetSpec, FleetStack, Shard, fleet_stacks, parse_selector
    from .operations import history, preview, refresh, up
    from .options import DEFAULT_PARALLEL, PREVIOUS, EventCallback, StackOptions
    from .plan import COMPUTED, ConfigStep, Plan, PlannedResource, offline_plan
    from .promotion import PromotionEvidence, PromotionResult, promote, require_promoted
    from .recovery import RecoverResult, recover
    from .reports import merge_drift_reports
    from .results import (
        ALL_LAYERS,
        SECRET,
        Deployment,
        DeploymentKind,
        DeploymentResult,
        DestroyPreview,
        DestroyResult,
        DrainResult,
        DriftedResource,
        DriftKind,
        DriftReport,
        FluxStatus,
        GitOpsReport,
        GitOpsSource,
        GitOpsSync,
        KubeObject,
        Layer,
        Orphan,
        PreviewResult,
        PropertyDiff,
        RefreshResult,
        Step,
        SweepResult,
        UpResult,
    )
    from .rollback import rollback_to_commit
    from .runners import Matrix, MatrixEntry, Operation, changed_since, fleet_matrix, indexed_job
    from .signals import Interruption, cancel_on_signals
    from .teardown import DEFAULT_DRAIN_TIMEOUT, destroy

_EXPORTS = {
    "gitops_infra.automation._stack_name": (
        "StackName",
        "parse_stack_name",
    ),
    "gitops_infra.automation.teardown": ("DEFAULT_DRAIN_TIMEOUT", "destroy"),
    "gitops_infra.automation.drift": ("detect_drift",),
    "gitops_infra.automation.fleet": (
        "DriftCause",
        "FleetDrift",
        "FleetPreview",
        "StackDrift",
        "StackError",
        "StackLock",
        "StackPreview",
        "StackStatus",
        "detect_drift_all",
        "preview_all",
        "project_stacks",
        "status",
        "status_all",
    ),
    "gitops_infra.automation.reports": ("merge_drift_reports",),
    "gitops_infra.automation.runners": (
        "Matrix",
        "MatrixEntry",
        "Operation",
        "changed_since",
        "fleet_matrix",
        "indexed_job",
    ),
    "gitops_infra.automation.inventory": (
        "FleetSpec",
        "FleetStack",
        "Shard",
        "fleet_stacks",
        "parse_selector",
    ),
    "gitops_infra.automation.operations": (
        "history",
        "preview",
        "refresh",
        "up",
    ),
    "gitops_infra.automation.options": (
        "DEFAULT_PARALLEL",
        "PREVIOUS",
        "EventCallback",
        "StackOptions",
    ),
    "gitops_infra.automation.plan": (
        "COMPUTED",
        "ConfigStep",
        "Plan",
        "PlannedResource",
        "offline_plan",
    ),
    "gitops_infra.automation.promotion": (
        "PromotionEvidence",
        "PromotionResult",
        "promote",
        "require_promoted",
    ),
    "gitops_infra.automation.recovery": (
        "RecoverResult",
        "recover",
    ),
    "gitops_infra.automation.results": (
        "ALL_LAYERS",
        "SECRET",
        "Deployment",
        "DeploymentKind",
        "DeploymentResult",
        "DestroyPreview",
        "DestroyResult",
        "DrainResult",
        "DriftedResource",
        "DriftKind",
        "DriftReport",
        "FluxStatus",
        "GitOpsReport",
        "GitOpsSource",
        "GitOpsSync",
        "KubeObject",
        "Layer",
        "Orphan",
        "PreviewResult",
        "PropertyDiff",
        "RefreshResult",
        "Step",
        "SweepResult",
        "UpResult",
    ),
    "gitops_infra.automation.rollback": ("rollback_to_commit",),
    "gitops_infra.automation.signals": (
        "Interruption",
        "cancel_on_signals",
    ),
}

__all__ = [
    "ALL_LAYERS",
    "COMPUTED",
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_PARALLEL",
    "PREVIOUS",
    "SECRET",
    "ConfigStep",
    "Deployment",
    "DeploymentKind",
    "DeploymentResult",
    "DestroyPreview",
    "DestroyResult",
    "DrainResult",
    "DriftCause",
    "DriftKind",
    "DriftReport",
    "DriftedResource",
    "EventCallback",
    "FleetDrift",
    "FleetPreview",
    "FleetSpec",
    "FleetStack",
    "FluxStatus",
    "GitOpsReport",
    "GitOpsSource",
    "GitOpsSync",
    "Interruption",
    "KubeObject",
    "Layer",
    "Matrix",
    "MatrixEntry",
    "Operation",
    "Orphan",
    "Plan",
    "PlannedResource",
    "PreviewResult",
    "PromotionEvidence",
    "PromotionResult",
    "PropertyDiff",
    "RecoverResult",
    "RefreshResult",
    "Shard",
    "StackDrift",
    "StackError",
    "StackLock",
    "StackName",
    "StackOptions",
    "StackPreview",
    "StackStatus",
    "Step",
    "SweepResult",
    "UpResult",
    "cancel_on_signals",
    "changed_since",
    "destroy",
    "detect_drift",
    "detect_drift_all",
    "fleet_matrix",
    "fleet_stacks",
    "history",
    "indexed_job",
    "merge_drift_reports",
    "offline_plan",
    "parse_selector",
    "parse_stack_name",
    "preview",
    "preview_all",
    "project_stacks",
    "promote",
    "recover",
    "refresh",
    "require_promoted",
    "rollback_to_commit",
    "status",
    "status_all",
    "up",
]

__getattr__, __dir__ = exports(__name__, _EXPORTS)
