"""The GitOps layer as the engine reports it: with Flux, each Flux object's Ready state, the stack's source
and sync, and each tenant's own sync, by tenant; with Argo CD, each Application's sync and health."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["ArgoApplication", "FluxStatus", "GitOpsReport", "GitOpsSource", "GitOpsSync", "TenantSync"]


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
class ArgoApplication:
    """One Argo CD ``Application`` as its controller reports it: whether the cluster matches git at the
    revision Argo CD resolved, whether what it applied is healthy, its last sync operation, and its
    conditions, in Argo CD's words."""

    namespace: str
    name: str
    sync: str | None
    """``status.sync.status``: ``Synced``, ``OutOfSync`` or ``Unknown`` (Argo CD could not compare: a fetch
    or a render failed); ``None`` when the Application is not in the cluster."""
    health: str | None
    """``status.health.status``: ``Healthy``, ``Progressing``, ``Degraded``, ``Suspended``, ``Missing``."""
    revision: str | None = None
    """``status.sync.revision``: the repository's revision, as Argo CD last resolved the target."""
    synced_revision: str | None = None
    """The revision of the last sync operation (``status.operationState.syncResult.revision``)."""
    operation: str | None = None
    """The last sync operation's phase: ``Succeeded``, ``Running``, ``Failed``, ``Error``."""
    operation_message: str | None = None
    conditions: tuple[str, ...] = ()
    """Each condition as ``Type: message`` (``ComparisonError: ...``, ``SyncError: ...``)."""
    root: bool = False
    """The stack made it (its root); otherwise it is reported only when it has a problem."""
    kind: str = "Application"

    @property
    def shown(self) -> str:
        """``Application namespace/name``."""
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def ready(self) -> bool | None:
        """Synced and Healthy: ``None`` while Argo CD has not said (not there, or not compared yet)."""
        if self.sync is None or self.health is None:
            return None
        return self.sync == "Synced" and self.health == "Healthy"

    @property
    def problems(self) -> tuple[str, ...]:
        """What keeps this Application from being synced and healthy, a line each (empty when it is)."""
        if self.sync is None:
            return (f"{self.shown} is not in the cluster (the stack made it)",) if self.root else ()
        found = []
        if self.sync != "Synced":
            found.append(f"{self.shown} is {self.sync}" + (f" at {self.revision}" if self.revision else ""))
        if self.health not in ("Healthy", None):
            found.append(f"{self.shown} is {self.health}")
        if self.operation in ("Failed", "Error"):
            found.append(
                f"{self.shown}: its last sync {self.operation.lower()}: {self.operation_message or ''}"
            )
        found += [f"{self.shown}: {condition}" for condition in self.conditions]
        return tuple(found)


@dataclass(frozen=True)
class TenantSync:
    """One tenant's own sync, found in its home namespace: its Kustomization and the GitRepository it
    applies from, reconciled as the tenant's ServiceAccount (Flux impersonates it)."""

    name: str
    """The tenant's name, as the stack's ``tenants`` output gives it."""
    namespace: str
    """Its home namespace, where its Kustomization and GitRepository live."""
    namespaces: tuple[str, ...]
    """Every namespace of the tenant, the home one first."""
    sync: GitOpsSync
    """Its Kustomization; ``ready`` ``None`` with reason ``NotFound`` when it is not in the cluster."""
    source: GitOpsSource | None = None
    """The GitRepository it applies from; ``None`` when none was found."""

    @property
    def problems(self) -> tuple[str, ...]:
        """What keeps this tenant's sync from being healthy, a line each, each naming the tenant."""
        found = (*(self.source.problems if self.source is not None else ()), *self.sync.problems)
        return tuple(f"tenant {self.name}: {problem}" for problem in found)

    @property
    def healthy(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class GitOpsReport:
    """The GitOps layer of a stack: its Flux sync objects, and every other Flux object that is unwell."""

    sources: tuple[GitOpsSource, ...] = ()
    syncs: tuple[GitOpsSync, ...] = ()
    failing: tuple[FluxStatus, ...] = ()
    """Every other Kustomization and HelmRelease in the cluster that is not Ready or is suspended."""
    tenants: tuple[TenantSync, ...] = ()
    """Each tenant the stack's ``tenants`` output names, by name: its own sync, kept out of ``syncs``,
    ``sources`` and ``failing``."""
    applications: tuple[ArgoApplication, ...] = ()
    """With Argo CD: the stack's root Application, and every other Application of its Argo CD (in the
    root's namespace) that has a problem."""
    error: str | None = None
    """Why the cluster could not be read (then nothing else is known)."""
    checked_at: datetime | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        """Each reason the layer is not healthy, a line each: empty when it is."""
        if self.error is not None:
            return (f"the cluster could not be read: {self.error}",)
        return (
            *(line for status in (*self.sources, *self.syncs) for line in status.problems),
            *(line for tenant in self.tenants for line in tenant.problems),
            *(line for status in self.failing for line in status.problems),
            *(line for application in self.applications for line in application.problems),
        )

    @property
    def healthy_tenants(self) -> int:
        """How many of ``tenants`` are healthy: what a promotion's evidence counts."""
        return sum(1 for tenant in self.tenants if tenant.healthy)

    @property
    def healthy(self) -> bool:
        """True when the cluster was read, and every object is Ready, not suspended, not stale, not behind."""
        return not self.problems
