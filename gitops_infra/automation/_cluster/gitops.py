"""The GitOps layer: what Flux made of the stack's git source, read from the cluster the stack made.

The stack's state names the ``GitRepository`` and ``Kustomization`` it made (``FluxBootstrap``) and the
Kubernetes provider it made them through, whose kubeconfig reaches the cluster (``kube``). The read is a
few GETs and LISTs: no engine run, no lock, nothing written, to the cluster or to the state.

What Flux records decides what can be said:

- a source's ``Ready`` condition, and its artifact: the revision and when it was stored. Flux records a
  fetch only when it brings a new revision, so a quiet repository's artifact is old without anything
  being wrong. A source is **stale** when its controller has not reconciled its current spec (the
  ``Ready`` condition's own ``observedGeneration`` behind ``metadata.generation``) for more than 3
  intervals since that spec was written: the controller reacts to a spec change at once, so that many
  intervals means it is not running. A spec change that fails is not that: the controller says why
  (``Ready=False``, with a reason such as ``GitOperationFailed``), and its words are reported;
- a Kustomization's ``Ready`` condition, ``spec.suspend``, and ``status.lastAppliedRevision``, which
  **lags** while it differs from the revision its source holds;
- each tenant's Kustomization and GitRepository, by tenant (``tenants``: the stack's ``tenants`` output
  names them, in each tenant's home namespace), judged as the stack's own are; a tenant whose
  Kustomization is not there, or not Ready, is a problem naming the tenant, in Flux's words (which name
  the impersonated ServiceAccount when the API server refused it);
- every other Kustomization and HelmRelease in the cluster that is not Ready or is suspended.

Each kind is read at the version the cluster serves, by API discovery (``flux_apis``): a Flux older than
the pinned one (``flux.install: external``) serves a HelmRelease only at ``v2beta1`` or ``v2beta2``, and
its failures count all the same. A kind the cluster does not serve at all has no object there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ...checks import parse_duration
from .._state.target import StackTarget
from ..results.gitops import ArgoApplication, FluxStatus, GitOpsReport, GitOpsSource, GitOpsSync, TenantSync
from .argocd import APPLICATION, absent_application, application_status
from .flux_apis import GIT_REPOSITORY, KUSTOMIZATION, SYNC_KINDS, FluxKind
from .kube import (
    REQUEST_TIMEOUT,
    Discovery,
    client_log,
    connected,
    decrypted_state,
    kubeconfig_of,
    plain,
    provider_access,
    secret_strings,
    why,
)
from .tenants import Tenant, TenantObjects, tenant_objects, tenants_of

__all__ = ["STALE_INTERVALS", "gitops_of", "gitops_report", "read_gitops"]

STALE_INTERVALS = 3
"""A source whose current spec went unreconciled for this many intervals is stale."""


_SOURCE = GIT_REPOSITORY
_SYNC = KUSTOMIZATION
_MADE_KINDS = {kind.kind: kind for kind in (_SOURCE, _SYNC, APPLICATION)}


@dataclass(frozen=True)
class _Made:
    """A Flux object the stack made, as its state records it."""

    group: str
    version: str
    """As the state records it; the cluster is read at the version it serves."""
    kind: str
    namespace: str
    name: str
    source_ref: tuple[str, str, str] | None = None
    """A Kustomization's ``spec.sourceRef``: kind, namespace and name."""


# -- the state ----------------------------------------------------------------------------------------


def _flux_kind(type_token: str) -> tuple[str, str, str] | None:
    """(group, version, kind) of a Flux sync object's Pulumi type token; ``None`` for any other type."""
    if not type_token.startswith("kubernetes:") or type_token.count(":") != 2:
        return None
    _, api_version, kind = type_token.split(":")
    group, _, version = api_version.partition("/")
    if (group, kind) not in {(k.group, k.kind) for k in _MADE_KINDS.values()}:
        return None
    return group, version, kind


def _made(resource: Mapping[str, Any]) -> _Made | None:
    flux = _flux_kind(str(resource.get("type", "")))
    if resource.get("delete") or flux is None:
        return None
    group, version, kind = flux
    body = plain(resource.get("outputs")) or plain(resource.get("inputs")) or {}
    metadata = plain(body.get("metadata")) or {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str):
        return None
    ref = None
    if kind == _SYNC.kind:
        source = (plain(body.get("spec")) or {}).get("sourceRef") or {}
        ref = (
            str(source.get("kind", "")),
            str(source.get("namespace") or namespace),
            str(source.get("name", "")),
        )
    return _Made(group, version, kind, namespace, name, ref)


# -- the cluster --------------------------------------------------------------------------------------


class _Cluster:
    """Reads of Flux's objects through one API client, each kind at the version the cluster serves."""

    def __init__(self, api: Any) -> None:
        from kubernetes import client

        self._objects = client.CustomObjectsApi(api)
        self._discovery = Discovery(api)

    def get(self, kind: FluxKind, namespace: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        version = self._discovery.version(kind.group, kind.plural, kind.versions)
        if version is None:  # no CRD serves the kind: nothing of it is there
            return None
        try:
            found = cast(
                dict[str, Any],
                self._objects.get_namespaced_custom_object(
                    kind.group, version, namespace, kind.plural, name, _request_timeout=REQUEST_TIMEOUT
                ),
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return found

    def labelled(self, kind: FluxKind, namespace: str, selector: str) -> list[dict[str, Any]]:
        version = self._discovery.version(kind.group, kind.plural, kind.versions)
        if version is None:
            return []
        found = cast(
            dict[str, Any],
            self._objects.list_namespaced_custom_object(
                kind.group,
                version,
                namespace,
                kind.plural,
                label_selector=selector,
                _request_timeout=REQUEST_TIMEOUT,
            ),
        )
        return list(found.get("items") or [])

    def list(self, kind: FluxKind) -> list[dict[str, Any]]:
        version = self._discovery.version(kind.group, kind.plural, kind.versions)
        if version is None:  # that kind's CRD is not installed (no helm-controller, say)
            return []
        found = cast(
            dict[str, Any],
            self._objects.list_cluster_custom_object(
                kind.group, version, kind.plural, _request_timeout=REQUEST_TIMEOUT
            ),
        )
        return list(found.get("items") or [])


# -- judging what Flux reports ------------------------------------------------------------------------


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ready_condition(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if isinstance(c, Mapping) and c.get("type") == "Ready"), None)


def _observed(obj: Mapping[str, Any]) -> int | None:
    """The generation the object's Ready condition speaks of; ``None`` when nothing says.

    Flux moves ``status.observedGeneration`` only when a reconcile succeeds, but stamps every condition
    it writes, a failure's ``Ready=False`` included, with the current generation (fluxcd/pkg
    ``runtime/conditions.Set``). Judged by the former, a spec change that fails would read as "not
    reconciled yet" for ever, hiding Flux's reason. So the condition's own ``observedGeneration``
    decides, and ``status.observedGeneration`` only where the condition carries none: what ``kubectl
    wait --for=condition`` does (kubectl ``pkg/cmd/wait/condition.go``, ``getObservedGeneration``), and
    pulumi-kubernetes' ``pulumi.com/waitFor: condition=Ready`` with it (``await/condition/kubectl.go``).
    """
    ready = _ready_condition(obj)
    observed = ready.get("observedGeneration") if ready is not None else None
    if not isinstance(observed, int):
        observed = (obj.get("status") or {}).get("observedGeneration")
    return observed if isinstance(observed, int) else None


def _ready(obj: Mapping[str, Any]) -> tuple[bool | None, str | None, str | None]:
    """The Ready condition as (ready, reason, message), ``None`` unless it speaks of the current spec."""
    generation = (obj.get("metadata") or {}).get("generation")
    observed = _observed(obj)
    if isinstance(generation, int) and observed is not None and observed < generation:
        return None, "Progressing", f"generation {generation} is not reconciled yet (observed {observed})"
    ready = _ready_condition(obj)
    if ready is None:
        return None, None, "no Ready condition reported yet"
    state = {"True": True, "False": False}.get(str(ready.get("status")))
    return state, ready.get("reason") or None, ready.get("message") or None


def _status(kind: str, obj: Mapping[str, Any]) -> FluxStatus:
    metadata = obj.get("metadata") or {}
    ready, reason, message = _ready(obj)
    return FluxStatus(
        kind=kind,
        namespace=str(metadata.get("namespace", "")),
        name=str(metadata.get("name", "")),
        ready=ready,
        reason=reason,
        message=message,
        suspended=bool((obj.get("spec") or {}).get("suspend")),
    )


def _absent(made: _Made) -> FluxStatus:
    return FluxStatus(
        kind=made.kind,
        namespace=made.namespace,
        name=made.name,
        ready=None,
        reason="NotFound",
        message="the stack made it, and it is not in the cluster",
    )


def _key(obj: Mapping[str, Any], kind: str) -> tuple[str, str, str]:
    metadata = obj.get("metadata") or {}
    return kind, str(metadata.get("namespace", "")), str(metadata.get("name", ""))


def _tenant(found: TenantObjects, now: datetime) -> TenantSync:
    tenant: Tenant = found.tenant
    source = _source(found.source, now) if found.source is not None else None
    if found.kustomization is None:
        missing = _Made(_SYNC.group, _SYNC.versions[0], _SYNC.kind, tenant.namespace, tenant.kustomization)
        sync = _as(GitOpsSync, _absent(missing))
    else:
        sync = _sync(found.kustomization, source.revision if source is not None else None)
    return TenantSync(
        name=tenant.name, namespace=tenant.namespace, namespaces=tenant.namespaces, sync=sync, source=source
    )


def _spec_written_at(obj: Mapping[str, Any]) -> datetime | None:
    """When the object's spec was last written: its newest non-status managed field, else its creation."""
    metadata = obj.get("metadata") or {}
    times = [
        _time(entry.get("time"))
        for entry in metadata.get("managedFields") or []
        if isinstance(entry, Mapping) and not entry.get("subresource")
    ]
    known = [t for t in times if t is not None]
    return max(known) if known else _time(metadata.get("creationTimestamp"))


def _source(obj: Mapping[str, Any], now: datetime) -> GitOpsSource:
    base = _status(_SOURCE.kind, obj)
    status = obj.get("status") or {}
    artifact = status.get("artifact") or {}
    interval = (obj.get("spec") or {}).get("interval")
    stale = False
    generation, observed = (obj.get("metadata") or {}).get("generation"), _observed(obj) or 0
    written = _spec_written_at(obj)
    if isinstance(interval, str) and isinstance(generation, int) and written is not None:
        try:
            period = parse_duration(interval)
        except ValueError:
            period = None
        stale = bool(period and observed < generation and now - written > STALE_INTERVALS * period)
    return GitOpsSource(
        **asdict(base),
        revision=artifact.get("revision"),
        fetched_at=_time(artifact.get("lastUpdateTime")),
        interval=interval if isinstance(interval, str) else None,
        stale=stale,
    )


def _sync(obj: Mapping[str, Any], source_revision: str | None) -> GitOpsSync:
    base = _status(_SYNC.kind, obj)
    return GitOpsSync(
        **asdict(base),
        applied_revision=(obj.get("status") or {}).get("lastAppliedRevision") or None,
        source_revision=source_revision,
    )


def _argo_cd_namespaces(made: Sequence[_Made]) -> set[str]:
    """Where the stack's own Argo CD keeps its Applications: its roots' namespaces. Argo CD is namespaced,
    and another namespace's Applications are another Argo CD's."""
    return {m.namespace for m in made if m.kind == APPLICATION.kind}


def gitops_report(
    made: Sequence[_Made],
    read: Mapping[tuple[str, str, str], Mapping[str, Any] | None],
    others: Sequence[tuple[str, Mapping[str, Any]]],
    now: datetime,
    tenants: Sequence[TenantObjects] = (),
) -> GitOpsReport:
    """Judge what the cluster returned: ``read`` holds each object by (kind, namespace, name), ``None``
    for one that is not there; ``others`` every Kustomization and HelmRelease, and the Applications of the
    stack's Argo CD, with its kind; ``tenants``
    each tenant's objects. A tenant's objects are reported by tenant only, even where the stack made them."""
    theirs = set()
    for found in tenants:
        tenant = found.tenant
        theirs.add((_SYNC.kind, tenant.namespace, tenant.kustomization))
        if found.source is not None:
            theirs.add(_key(found.source, _SOURCE.kind))
    made = [m for m in made if (m.kind, m.namespace, m.name) not in theirs]
    sources: list[GitOpsSource | FluxStatus] = []
    revisions: dict[tuple[str, str, str], str | None] = {}
    for key, obj in read.items():
        if key[0] == _SOURCE.kind and obj is not None:
            revisions[key] = ((obj.get("status") or {}).get("artifact") or {}).get("revision")
    syncs: list[GitOpsSync | FluxStatus] = []
    applications: list[ArgoApplication] = []
    for item in made:
        obj = read.get((item.kind, item.namespace, item.name))
        if item.kind == APPLICATION.kind:
            applications.append(
                application_status(obj, root=True)
                if obj is not None
                else absent_application(item.namespace, item.name)
            )
        elif obj is None:
            (sources if item.kind == _SOURCE.kind else syncs).append(_absent(item))
        elif item.kind == _SOURCE.kind:
            sources.append(_source(obj, now))
        else:
            syncs.append(_sync(obj, revisions.get(item.source_ref) if item.source_ref else None))
    own = {(m.kind, m.namespace, m.name) for m in made} | theirs
    failing = []
    argo_namespaces = _argo_cd_namespaces(made)
    for kind, obj in others:
        if kind == APPLICATION.kind:
            application = application_status(obj)
            key = (kind, application.namespace, application.name)
            if application.namespace in argo_namespaces and key not in own and application.problems:
                applications.append(application)
            continue
        status = _status(kind, obj)
        if (kind, status.namespace, status.name) not in own and status.problems:
            failing.append(status)
    return GitOpsReport(
        sources=tuple(_as(GitOpsSource, s) for s in sources),
        syncs=tuple(_as(GitOpsSync, s) for s in syncs),
        failing=tuple(sorted(failing, key=lambda s: (s.kind, s.namespace, s.name))),
        tenants=tuple(_tenant(found, now) for found in tenants),
        applications=tuple(sorted(applications, key=lambda a: (not a.root, a.namespace, a.name))),
        checked_at=now,
    )


def _as(cls: type[Any], status: FluxStatus) -> Any:
    if isinstance(status, cls):
        return status
    return cls(**asdict(status))


def read_gitops(target: StackTarget) -> GitOpsReport | None:
    """The GitOps layer of the stack ``target`` names: ``None`` when the stack made no Flux sync object.

    A cluster that cannot be reached (or refuses the stack's credentials) is the report's ``error``;
    a stack whose state cannot be read raises, as any engine command does.
    """
    files = target.file_backend()
    types = files.resource_types() if files is not None else None
    if types is not None and not any(_flux_kind(t) is not None for t in types):
        # Read straight from a file backend, no secret decrypted: a stack without Flux costs no engine
        # command.
        return None
    return gitops_of(decrypted_state(target), base=target.project.path)


def gitops_of(deployment: Mapping[str, Any], *, base: Path | None = None) -> GitOpsReport | None:
    """:func:`read_gitops` of a decrypted checkpoint; a relative kubeconfig path is from ``base``."""
    resources = [r for r in deployment.get("resources") or [] if isinstance(r, Mapping)]
    made = []
    provider_ref = None
    for resource in resources:
        item = _made(resource)
        if item is not None:
            made.append(item)
            provider_ref = provider_ref or resource.get("provider")
    if not made:
        return None
    access = replace(provider_access(deployment, str(provider_ref or "")), base=base)
    secrets = [access.kubeconfig] if access.kubeconfig else []
    with client_log() as logged:
        try:
            kubeconfig = kubeconfig_of(access)
            secrets += secret_strings(kubeconfig)
            read, others, tenants = _read(kubeconfig, access.context, made, tenants_of(deployment))
        except Exception as exc:  # any failure to read the cluster is this layer's answer, not a crash
            # Why credentials failed (an exec plugin that is not installed) the client only logs.
            said = [why(exc, secrets), *(f"the client said: {why(message, secrets)}" for message in logged)]
            return GitOpsReport(error="; ".join(said), checked_at=datetime.now(UTC))
    return gitops_report(made, read, others, datetime.now(UTC), tenants)


_Read = tuple[
    dict[tuple[str, str, str], Mapping[str, Any] | None],
    list[tuple[str, Mapping[str, Any]]],
    list[TenantObjects],
]


def _read(
    kubeconfig: dict[str, Any] | None, context: str | None, made: Sequence[_Made], tenants: Sequence[Tenant]
) -> _Read:
    """The stack's Flux objects by (kind, namespace, name), ``None`` for one not there, every other
    Kustomization and HelmRelease with its kind, and each tenant's objects."""
    with connected(kubeconfig, context) as api:
        cluster = _Cluster(api)
        read: dict[tuple[str, str, str], Mapping[str, Any] | None] = {}
        for item in made:
            read[(item.kind, item.namespace, item.name)] = cluster.get(
                _MADE_KINDS[item.kind], item.namespace, item.name
            )
        for item in made:
            ref = item.source_ref
            if ref is not None and ref[0] == _SOURCE.kind and ref not in read:
                read[ref] = cluster.get(_SOURCE, ref[1], ref[2])
        others: list[tuple[str, Mapping[str, Any]]] = [
            (kind.kind, obj) for kind in SYNC_KINDS for obj in cluster.list(kind)
        ]
        for namespace in sorted(_argo_cd_namespaces(made)):
            others += [(APPLICATION.kind, obj) for obj in cluster.labelled(APPLICATION, namespace, "")]
        theirs = [
            tenant_objects(
                tenant,
                lambda namespace, name: cluster.get(_SYNC, namespace, name),
                lambda namespace, name: cluster.get(_SOURCE, namespace, name),
                lambda namespace, selector: cluster.labelled(_SOURCE, namespace, selector),
            )
            for tenant in tenants
        ]
    return read, others, theirs
