"""The Automation API layer: Pulumi operations as typed Python functions for CI.

A thin wrapper over ``pulumi.automation``: each function takes a stack name and options, runs the real
engine, and returns a frozen result; every failure is a :class:`~gitops_infra.errors.GitOpsInfraError`.
``__all__`` below is the API.

The top level is what a user calls, one concept a module:

- the operations on one stack: ``operations`` (preview, up, refresh, history), ``drift``,
  ``stack_status``, ``plan`` (the offline plan), ``promotion``, ``rollback``, ``teardown`` (destroy),
  ``recovery``, ``signals`` (a clean cancel), ``engines`` (moving a stack between GitOps engines), and
  ``sealing_keys`` (the Sealed Secrets keys a stack's
  config holds, and the cert it seals with);
- what they take and return: ``options``, ``stack_name``, ``results``;
- ``fleet/``: many stacks at once (the inventory, the fleet-wide operations, CI runners, merged reports).

No module is named after a name its package exports (``stack_status``, not ``status``; ``teardown``, not
``destroy``): importing the module would put it in the function's place on the package.

The plumbing is private, in three folders named by their job:

- ``_engine/`` runs the engine: the command runner and its one error boundary, streamed commands, a
  program under mocks, and ``compat``, the one door to Pulumi's internals;
- ``_state/`` reads what Pulumi keeps on disk: the project and stack files, the backend and its files,
  the history, git, and the resolved target;
- ``_cluster/`` reaches the cluster a stack made: kube access, the GitOps layer's read, the drain before a
  destroy, the AWS sweep after it.

One rule for result types: every frozen type an operation returns, and every type such a result holds,
lives in the ``results`` module of its package: :mod:`gitops_infra.automation.results` (a module for each
job) for one stack, :mod:`gitops_infra.automation.fleet.results` for the fleet. What an operation takes
(``StackOptions``, ``StackName``, the inventory's ``FleetStack`` and ``Shard``) lives where it is parsed.

This layer runs any Pulumi project: it imports neither ``gitops_infra.config`` nor the components, not
even inside a function. What a program needs of its config is the program's to hand over
(``offline_plan(config_step=...)``).

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
    from .drift import detect_drift
    from .engines import switch_engine
    from .fleet import (
        DriftCause,
        FleetDrift,
        FleetPreview,
        FleetSpec,
        FleetStack,
        Matrix,
        MatrixEntry,
        Operation,
        Shard,
        StackDrift,
        StackError,
        StackPreview,
        changed_since,
        detect_drift_all,
        fleet_matrix,
        fleet_stacks,
        indexed_job,
        merge_drift_reports,
        parse_selector,
        preview_all,
        project_stacks,
        status_all,
    )
    from .operations import history, preview, refresh, up
    from .options import DEFAULT_PARALLEL, PREVIOUS, EventCallback, StackOptions
    from .plan import ConfigStep, offline_plan
    from .promotion import promote, require_promoted
    from .recovery import recover
    from .results import (
        ALL_LAYERS,
        COMPUTED,
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
        Plan,
        PlannedResource,
        PreviewResult,
        PromotionEvidence,
        PromotionResult,
        PropertyDiff,
        RecoverResult,
        RefreshResult,
        SealingCert,
        SealingKey,
        StackLock,
        StackStatus,
        Step,
        SweepResult,
        TenantSync,
        UpResult,
    )
    from .rollback import rollback_to_commit
    from .sealing_keys import SEALING_CERT_OUTPUT, generate_sealing_key, new_sealing_key_pair, sealing_cert
    from .signals import Interruption, cancel_on_signals
    from .stack_name import StackName, parse_stack_name
    from .stack_status import status
    from .teardown import DEFAULT_DRAIN_TIMEOUT, destroy

__all__ = [
    "ALL_LAYERS",
    "COMPUTED",
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_PARALLEL",
    "PREVIOUS",
    "SEALING_CERT_OUTPUT",
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
    "SealingCert",
    "SealingKey",
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
    "TenantSync",
    "UpResult",
    "cancel_on_signals",
    "changed_since",
    "destroy",
    "detect_drift",
    "detect_drift_all",
    "fleet_matrix",
    "fleet_stacks",
    "generate_sealing_key",
    "history",
    "indexed_job",
    "merge_drift_reports",
    "new_sealing_key_pair",
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
    "sealing_cert",
    "status",
    "status_all",
    "switch_engine",
    "up",
]

__getattr__, __dir__ = exports(__name__)
