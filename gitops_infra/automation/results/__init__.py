"""Frozen, typed results of one stack's operations, a module for each job.

A result type lives in the ``results`` module of its package: here for what an operation on one stack
returns (``deployments``, ``drift``, ``gitops``, ``teardown``, ``status``, ``plan``, ``sealing_keys``), and
:mod:`gitops_infra.automation.fleet.results` for the fleet's. So do the types a result holds (``Layer``,
``Deployment``, ``StackLock``). ``jsonable`` writes any of them as JSON data.

Nothing here holds a secret value: stack outputs and drifted properties that the engine marks secret are
replaced by ``SECRET`` before a result is built, so a result's repr, its JSON and its fields are safe to
log. Nothing here imports the engine, either: a result is read without ``pulumi``.
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports

if TYPE_CHECKING:
    from ...redaction import SECRET
    from .deployments import (
        Deployment,
        DeploymentKind,
        DeploymentResult,
        PreviewResult,
        PromotionEvidence,
        PromotionResult,
        RecordedResult,
        RefreshResult,
        Step,
        UpResult,
        changes_of,
    )
    from .drift import ALL_LAYERS, DriftedResource, DriftKind, DriftReport, Layer, PropertyDiff
    from .gitops import FluxStatus, GitOpsReport, GitOpsSource, GitOpsSync, TenantSync
    from .jsonable import to_jsonable
    from .plan import COMPUTED, NOTE, Plan, PlannedResource
    from .sealing_keys import SealingCert, SealingKey
    from .status import RecoverResult, StackError, StackLock, StackStatus
    from .teardown import DestroyPreview, DestroyResult, DrainResult, KubeObject, Orphan, SweepResult

__all__ = [
    "ALL_LAYERS",
    "COMPUTED",
    "NOTE",
    "SECRET",
    "Deployment",
    "DeploymentKind",
    "DeploymentResult",
    "DestroyPreview",
    "DestroyResult",
    "DrainResult",
    "DriftKind",
    "DriftReport",
    "DriftedResource",
    "FluxStatus",
    "GitOpsReport",
    "GitOpsSource",
    "GitOpsSync",
    "KubeObject",
    "Layer",
    "Orphan",
    "Plan",
    "PlannedResource",
    "PreviewResult",
    "PromotionEvidence",
    "PromotionResult",
    "PropertyDiff",
    "RecordedResult",
    "RecoverResult",
    "RefreshResult",
    "SealingCert",
    "SealingKey",
    "StackError",
    "StackLock",
    "StackStatus",
    "Step",
    "SweepResult",
    "TenantSync",
    "UpResult",
    "changes_of",
    "to_jsonable",
]

__getattr__, __dir__ = exports(__name__)
