"""Frozen, typed results of the automation layer.

Nothing here holds a secret value: stack outputs and drifted properties that the engine marks secret are
replaced by ``SECRET`` before a result is built, so a result's repr, its JSON and its fields are safe to
log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from enum import Enum, StrEnum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from ..errors import ArgumentError
from ..redaction import SECRET

__all__ = [
    "ALL_LAYERS",
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
    "PreviewResult",
    "PropertyDiff",
    "RecordedResult",
    "RefreshResult",
    "Step",
    "SweepResult",
    "UpResult",
    "changes_of",
    "to_jsonable",
]


def changes_of(summary: Mapping[Any, int]) -> dict[str, int]:
    """An engine change summary keyed by plain operation names (the engine may key it by ``OpType``)."""
    return {getattr(op, "value", op): count for op, count in summary.items()}


def _has_changes(changes: Mapping[str, int]) -> bool:
    return any(count for op, count in changes.items() if op != "same")


@dataclass(frozen=True)
class Step:
    """One resource operation the engine plans or performs."""

    urn: str
    op: str
    """The engine's operation name: ``create``, ``update``, ``replace``, ``delete``, ..."""
    type: str
    keys: tuple[str, ...] = ()
    """Top-level properties whose change causes the step (empty for creates and deletes)."""


@dataclass(frozen=True)
class PreviewResult:
    """What ``up`` would do: the change summary and each step that is not a no-op."""

    stack: str
    changes: Mapping[str, int]
    steps: tuple[Step, ...]

    @property
    def has_changes(self) -> bool:
        """True when applying would change anything."""
        return _has_changes(self.changes)


@dataclass(frozen=True)
class RecordedResult:
    """An operation the stack's history records: its changes, its version, and the commit it ran from."""

    stack: str
    changes: Mapping[str, int]
    version: int
    """The operation's position in the stack's history (1 for the first)."""
    commit: str | None
    """The git commit the program ran from (``git.head``), when the project is in a git repository."""


@dataclass(frozen=True)
class UpResult(RecordedResult):
    """An applied update."""

    outputs: Mapping[str, Any]
    """Stack outputs; secret ones are ``SECRET``."""
    rolled_back_to: str | None = None
    """For ``rollback_to_commit``: the full sha the stack was rolled back to."""

    @property
    def has_changes(self) -> bool:
        """True when the update changed anything."""
        return _has_changes(self.changes)


@dataclass(frozen=True)
class RefreshResult(RecordedResult):
    """A refresh that wrote what the cloud reports into the stack's state."""


@dataclass(frozen=True)
class KubeObject:
    """A Kubernetes object the drain before a destroy stopped or deleted, as ``kind namespace/name``
    (``kind name`` when it has no namespace: a PersistentVolume)."""

    kind: str
    namespace: str
    name: str
    finalizers: tuple[str, ...] = ()
    """Its finalizers when it was last read: who holds it back (the AWS controllers, on EKS)."""

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(frozen=True)
class DrainResult:
    """What Flux made that a destroy removed first, so the AWS controllers could delete what it made.

    With ``planned`` it is a preview: what would be suspended and deleted, nothing done.
    """

    suspended: tuple[KubeObject, ...] = ()
    """The Kustomizations and HelmReleases suspended, so nothing is applied again."""
    deleted: tuple[KubeObject, ...] = ()
    """Ingresses and Gateways, LoadBalancer Services, what mounted the claims (a StatefulSet, say), the
    PersistentVolumeClaims and their volumes, then Karpenter's objects: in the order deleted, each one
    gone before the destroy began."""
    skipped: str | None = None
    """Why nothing was drained (the cluster is not the stack's; ``drain=False``), or ``None``."""
    planned: bool = False


@dataclass(frozen=True)
class Orphan:
    """An AWS resource still tagged for the stack's cluster after the stack is gone."""

    arn: str
    type: str
    """The ARN's service and resource type, e.g. ``ec2:volume``, ``elasticloadbalancing:loadbalancer``."""
    tags: Mapping[str, str]
    matched: str
    """The tag it was found by, e.g. ``elbv2.k8s.aws/cluster=dev-eks``."""


@dataclass(frozen=True)
class SweepResult:
    """What the Resource Groups Tagging API still lists for a cluster the stack made, once it is gone."""

    cluster: str
    region: str
    orphans: tuple[Orphan, ...] = ()
    error: str | None = None
    """Why the sweep could not look (no credentials, access denied, a role that cannot be assumed, the
    cluster in another account than the credentials'): then nothing is known."""
    account: str | None = None
    """The AWS account the sweep read, as STS named it; ``None`` when it got no answer that far."""

    @property
    def clean(self) -> bool:
        """True when the sweep looked and found nothing left."""
        return self.error is None and not self.orphans


@dataclass(frozen=True)
class DestroyResult(RecordedResult):
    """A destroy: every resource of the stack deleted (the stack itself and its history are kept)."""

    drain: DrainResult | None = None
    """The drain before it; ``None`` for a stack with no cluster to drain."""
    sweeps: tuple[SweepResult, ...] = ()
    """One per cluster the stack made, read after it was gone."""

    @property
    def clean(self) -> bool:
        """True when every sweep looked and found nothing left behind."""
        return all(sweep.clean for sweep in self.sweeps)


@dataclass(frozen=True)
class DestroyPreview(PreviewResult):
    """What a destroy would do: the drain's plan, then the engine's deletes."""

    drain: DrainResult | None = None


class DriftKind(StrEnum):
    """How a resource differs from the state Pulumi recorded for it."""

    CHANGED = "changed"
    DELETED = "deleted"


@dataclass(frozen=True)
class PropertyDiff:
    """One property that differs: ``path`` in Pulumi's property-path form, e.g. ``tags.owner``."""

    path: str
    recorded: Any
    """The value in the stack's state (``None`` if it was absent); ``SECRET`` if secret."""
    actual: Any
    """The value the provider reads now (``None`` if absent); ``SECRET`` if secret."""


@dataclass(frozen=True)
class DriftedResource:
    """A resource whose real state differs from the recorded one."""

    urn: str
    type: str
    kind: DriftKind
    diffs: tuple[PropertyDiff, ...] = ()


class Layer(StrEnum):
    """A layer of the platform that drifts: the resources Pulumi manages, and what Flux applies from git."""

    IAC = "iac"
    GITOPS = "gitops"

    @classmethod
    def parse(cls, text: str) -> tuple[Layer, ...]:
        """``iac,gitops`` (either alone, any order) as layers; ``ArgumentError`` naming what is allowed."""
        names = [part.strip() for part in text.split(",")]
        unknown = [name for name in names if name not in {layer.value for layer in cls}]
        if unknown or not any(names):
            shown = ", ".join(repr(name) for name in unknown) if unknown else "nothing"
            raise ArgumentError(
                f"layers got {shown}: give a comma-separated list of iac and gitops, such as iac,gitops"
            )
        return tuple(layer for layer in cls if layer.value in names)


ALL_LAYERS: tuple[Layer, ...] = tuple(Layer)
"""Both layers: what drift checks unless told otherwise."""


@dataclass(frozen=True)
class FluxStatus:
    """One Flux object as its controller reports it: its ``Ready`` condition, and whether it is suspended."""

    kind: str
    namespace: str
    name: str
    ready: bool | None
    """The ``Ready`` condition: ``None`` while it is ``Unknown`` (reconciling), not reported for the
    object's current spec, or the object is not in the cluster (reason ``NotFound``)."""
    reason: str | None = None
    message: str | None = None
    """Flux's own words (the condition's reason and message)."""
    suspended: bool = False

    @property
    def shown(self) -> str:
        """``Kind namespace/name``, as Flux's own CLI names an object."""
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def problems(self) -> tuple[str, ...]:
        """What keeps this object from being healthy, a line each (empty when it is)."""
        found = [f"{self.shown} is suspended"] if self.suspended else []
        if self.ready is not True:
            state = "not Ready" if self.ready is False else "not Ready yet"
            reason = f" ({self.reason})" if self.reason else ""
            found.append(f"{self.shown} is {state}{reason}" + (f": {self.message}" if self.message else ""))
        return tuple(found)


@dataclass(frozen=True)
class GitOpsSource(FluxStatus):
    """The stack's ``GitRepository``: what it fetched, when, and whether its controller keeps up."""

    revision: str | None = None
    """The artifact's revision (``main@sha1:...``)."""
    fetched_at: datetime | None = None
    """When the artifact was last updated: Flux records a fetch only when it brings a new revision."""
    interval: str | None = None
    stale: bool = False
    """The controller has not reconciled the source's current spec for more than 3 intervals."""

    @property
    def problems(self) -> tuple[str, ...]:
        stale = (
            f"{self.shown} is stale: its controller has not reconciled its current spec for more than "
            f"3 intervals of {self.interval}"
        )
        return super().problems + ((stale,) if self.stale else ())


@dataclass(frozen=True)
class GitOpsSync(FluxStatus):
    """The stack's root ``Kustomization``: what it applied against what its source holds."""

    applied_revision: str | None = None
    """``status.lastAppliedRevision``."""
    source_revision: str | None = None
    """The revision of the source it applies from, as that source reports it."""

    @property
    def lag(self) -> bool:
        """The source holds a revision this Kustomization has not applied."""
        return self.source_revision is not None and self.applied_revision != self.source_revision

    @property
    def problems(self) -> tuple[str, ...]:
        lag = (
            f"{self.shown} lags its source: applied {self.applied_revision or 'nothing'}, the source is at "
            f"{self.source_revision}"
        )
        return super().problems + ((lag,) if self.lag else ())


@dataclass(frozen=True)
class GitOpsReport:
    """The GitOps layer of a stack: its Flux sync objects, and every other Flux object that is unwell."""

    sources: tuple[GitOpsSource, ...] = ()
    syncs: tuple[GitOpsSync, ...] = ()
    failing: tuple[FluxStatus, ...] = ()
    """Every other Kustomization and HelmRelease in the cluster that is not Ready or is suspended."""
    error: str | None = None
    """Why the cluster could not be read (then nothing else is known)."""
    checked_at: datetime | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        """Each reason the layer is not healthy, a line each: empty when it is."""
        if self.error is not None:
            return (f"the cluster could not be read: {self.error}",)
        return tuple(
            line for status in (*self.sources, *self.syncs, *self.failing) for line in status.problems
        )

    @property
    def healthy(self) -> bool:
        """True when the cluster was read, and every object is Ready, not suspended, not stale, not behind."""
        return not self.problems


@dataclass(frozen=True)
class DriftReport:
    """A stack's drift in each layer checked: every drifted resource (a refresh preview that wrote
    nothing), and what Flux reports of the cluster the stack made."""

    stack: str
    resources: tuple[DriftedResource, ...] = field(default=())
    project: str | None = None
    """The stack's project: a fleet report (``fleet report``) names the stack by both."""
    checked_at: datetime | None = None
    """When the check ended: of two results for one stack (a retried job), the newer one counts."""
    gitops: GitOpsReport | None = None
    """The GitOps layer, when it was checked and the stack bootstraps Flux."""
    layers: tuple[Layer, ...] = (Layer.IAC,)
    """The layers checked: ``has_drift`` says nothing when ``iac`` is not among them."""

    @property
    def has_drift(self) -> bool:
        """True when any resource drifted (the IaC layer)."""
        return bool(self.resources)

    @property
    def healthy(self) -> bool:
        """False when the GitOps layer was read and is not healthy, or could not be read."""
        return self.gitops is None or self.gitops.healthy


class _Open(StrEnum):
    """A mode read from the engine's history: a value this version does not list is kept, not refused.

    The history is written by whichever engine ran the update, which may know a mode we do not.
    """

    @classmethod
    def _missing_(cls, value: object) -> _Open | None:
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper().replace("-", "_")
        member._value_ = value
        return member


class DeploymentKind(_Open):
    """What a deployment did, as the engine's history names it (``apitype.UpdateKind``)."""

    UPDATE = "update"
    PREVIEW = "preview"
    REFRESH = "refresh"
    RENAME = "rename"
    DESTROY = "destroy"
    IMPORT = "import"
    RESOURCE_IMPORT = "resource-import"


class DeploymentResult(_Open):
    """How a deployment ended, as the engine's history names it (``apitype.UpdateResult``)."""

    NOT_STARTED = "not-started"
    IN_PROGRESS = "in-progress"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class Deployment:
    """One entry of a stack's history."""

    version: int
    kind: DeploymentKind
    result: DeploymentResult
    start_time: datetime
    end_time: datetime | None
    message: str
    commit: str | None
    dirty: bool = False
    """The engine recorded uncommitted changes in the work tree (``git.dirty``): ``commit`` is not all
    that ran, so the deployment proves nothing about it."""


def to_jsonable(value: Any) -> Any:
    """A result (or a tuple of them) as plain JSON data: enums by value, times in ISO 8601."""
    if is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value)}
        # Derived flags are part of what a CI script reads, so they are in the document too.
        for name in (
            "has_changes",
            "has_drift",
            "has_errors",
            "valid",
            "clean",
            "name",
            "causes",
            "healthy",
            "problems",
            "lag",
        ):
            if hasattr(value, name):
                data[name] = to_jsonable(getattr(value, name))
        return data
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value
