"""The drain before a destroy: what Flux made goes first, so that what it made in AWS goes with it.

Objects Flux applied made AWS resources outside Pulumi's state: the AWS Load Balancer Controller makes a
load balancer, target groups and security groups for an Ingress, a Gateway or a Service of type
LoadBalancer, and the EBS CSI driver a volume for a PersistentVolumeClaim. Each deletes them in its
finalizer, when the object is deleted. If the cluster goes first, nobody does, and the VPC cannot go
either (``DependencyViolation``: pulumi-eks #1226, pulumi/pulumi #8504). So for a stack that made its
cluster, a destroy first:

1. suspends every Kustomization and HelmRelease in the cluster, so that Flux applies nothing again;
2. deletes Ingresses and Gateways, then Services of type LoadBalancer, then PersistentVolumeClaims, in
   every namespace but Kubernetes' own, and after each group waits until every object is gone: a
   claim's PersistentVolume too, when its reclaim policy is Delete, since its provisioner deletes the
   volume in the PersistentVolume's finalizer;
3. only then lets the engine destroy the stack.

One deadline covers it all. Running out of it, or not reaching the cluster, stops the destroy before it
begins (``DrainError``): a destroy run again goes on from where this one stopped, since a suspended
object stays suspended and a deleted one stays deleted.

A stack drains the clusters it made: those whose Kubernetes provider takes its kubeconfig from a
resource of the stack. A kubeconfig from config (``cluster.existing``) or from another stack (a
``StackReference``) names a cluster that is not the stack's, and nothing in it is touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

from ..checks import format_duration
from ..errors import DrainError
from ._kube import (
    REQUEST_TIMEOUT,
    Access,
    client_log,
    connected,
    kubeconfig_of,
    provider_access,
    secret_strings,
    why,
)
from .results import DrainResult, KubeObject

__all__ = [
    "DEFAULT_DRAIN_TIMEOUT",
    "SYSTEM_NAMESPACES",
    "DrainCallback",
    "drain_clusters",
    "owned_clusters",
]

DEFAULT_DRAIN_TIMEOUT = 600.0
"""Seconds the whole drain may take (``--drain-timeout 10m``)."""
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
"""Kubernetes' own namespaces: the controllers that do the deleting run there, and nothing is drained."""
_POLL_SECONDS = 1.0
_K8S_PROVIDER = "pulumi:providers:kubernetes"
_STACK_REFERENCE = "pulumi:pulumi:StackReference"

DrainCallback = Callable[[str, KubeObject], None]
"""Called as the drain goes: ``("suspended" | "deleting" | "waiting" | "gone", object)``."""


class _Apis:
    """The typed APIs of one client; every answer as the plain mapping the API server sent."""

    def __init__(self, api: Any) -> None:
        from kubernetes import client

        self.api = api
        self.core = client.CoreV1Api(api)
        self.networking = client.NetworkingV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.served: dict[str, str] = {}
        """The version of each custom kind the cluster serves, as its list found it."""

    def list_custom(self, kind: str, group: str, plural: str, versions: tuple[str, ...]) -> Any:
        """The kind's objects in the first of ``versions`` the cluster serves (404 when it serves none)."""
        from kubernetes.client.exceptions import ApiException

        missing: ApiException | None = None
        for version in versions:
            try:
                found = self.custom.list_cluster_custom_object(group, version, plural, _request_timeout=_RT)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                missing = exc
                continue
            self.served[kind] = version
            return found
        assert missing is not None
        raise missing

    def plain(self, answer: Any) -> dict[str, Any]:
        return (
            answer
            if isinstance(answer, dict)
            else cast(dict[str, Any], self.api.sanitize_for_serialization(answer))
        )


_Listed = Callable[[_Apis], Any]
_Named = Callable[[_Apis, str, str], Any]
_RT = REQUEST_TIMEOUT


@dataclass(frozen=True)
class _Kind:
    kind: str
    list: _Listed
    read: _Named
    delete: _Named | None = None
    patch: Callable[[_Apis, str, str, Any], Any] | None = None


def _custom(kind: str, group: str, plural: str, versions: tuple[str, ...]) -> _Kind:
    """A custom kind in the first of ``versions`` (newest first) the cluster serves: a Flux older than
    the one the chart pins (``install: external``) still serves only a beta, and its objects must be
    suspended all the same."""
    return _Kind(
        kind,
        list=lambda a: a.list_custom(kind, group, plural, versions),
        read=lambda a, ns, name: a.custom.get_namespaced_custom_object(
            group, a.served.get(kind, versions[0]), ns, plural, name, _request_timeout=_RT
        ),
        delete=lambda a, ns, name: a.custom.delete_namespaced_custom_object(
            group, a.served.get(kind, versions[0]), ns, plural, name, _request_timeout=_RT
        ),
        # A dict body goes as a JSON merge patch, in every client version this package allows.
        patch=lambda a, ns, name, body: a.custom.patch_namespaced_custom_object(
            group, a.served.get(kind, versions[0]), ns, plural, name, body, _request_timeout=_RT
        ),
    )


_FLUX = (
    _custom("Kustomization", "kustomize.toolkit.fluxcd.io", "kustomizations", ("v1", "v1beta2")),
    _custom("HelmRelease", "helm.toolkit.fluxcd.io", "helmreleases", ("v2", "v2beta2", "v2beta1")),
)
_INGRESS = _Kind(
    "Ingress",
    list=lambda a: a.networking.list_ingress_for_all_namespaces(_request_timeout=_RT),
    read=lambda a, ns, name: a.networking.read_namespaced_ingress(name, ns, _request_timeout=_RT),
    delete=lambda a, ns, name: a.networking.delete_namespaced_ingress(name, ns, _request_timeout=_RT),
)
_GATEWAY = _custom("Gateway", "gateway.networking.k8s.io", "gateways", ("v1", "v1beta1"))
_SERVICE = _Kind(
    "Service",
    list=lambda a: a.core.list_service_for_all_namespaces(_request_timeout=_RT),
    read=lambda a, ns, name: a.core.read_namespaced_service(name, ns, _request_timeout=_RT),
    delete=lambda a, ns, name: a.core.delete_namespaced_service(name, ns, _request_timeout=_RT),
)
_CLAIM = _Kind(
    "PersistentVolumeClaim",
    list=lambda a: a.core.list_persistent_volume_claim_for_all_namespaces(_request_timeout=_RT),
    read=lambda a, ns, name: a.core.read_namespaced_persistent_volume_claim(name, ns, _request_timeout=_RT),
    delete=lambda a, ns, name: a.core.delete_namespaced_persistent_volume_claim(
        name, ns, _request_timeout=_RT
    ),
)
_VOLUME = _Kind(
    "PersistentVolume",
    list=lambda a: a.core.list_persistent_volume(_request_timeout=_RT),
    read=lambda a, _ns, name: a.core.read_persistent_volume(name, _request_timeout=_RT),
)
_GROUPS = ((_INGRESS, _GATEWAY), (_SERVICE,), (_CLAIM,))
"""In this order, each group gone before the next is deleted: an Ingress's load balancer sends to its
Services, and a claim's volume is released only once nothing of the app is left to hold it."""


def owned_clusters(deployment: Mapping[str, Any], *, base: Path | None = None) -> tuple[Access, ...]:
    """How to reach each cluster the stack made (see the module docstring), once each."""
    resources = {r.get("urn"): r for r in deployment.get("resources") or [] if isinstance(r, Mapping)}
    found: dict[tuple[str | None, str | None], Access] = {}
    for urn, resource in resources.items():
        if resource.get("type") != _K8S_PROVIDER or resource.get("delete"):
            continue
        sources = (resource.get("propertyDependencies") or {}).get("kubeconfig") or []
        if not any(
            isinstance(source, str)
            and source in resources
            and resources[source].get("type") != _STACK_REFERENCE
            for source in sources
        ):
            continue
        access = replace(provider_access(deployment, f"{urn}::{resource.get('id', '')}"), base=base)
        found.setdefault((access.kubeconfig, access.context), access)
    return tuple(found.values())


class _TimedOut(Exception):
    def __init__(self, remaining: list[KubeObject]) -> None:
        self.remaining = remaining


class _Relayed(Exception):
    """An exception of the caller's callback, carried past the handler for the cluster's failures."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _described(kind: _Kind, obj: Mapping[str, Any]) -> KubeObject:
    metadata = obj.get("metadata") or {}
    return KubeObject(
        kind=kind.kind,
        namespace=str(metadata.get("namespace") or ""),
        name=str(metadata.get("name") or ""),
        finalizers=tuple(str(f) for f in metadata.get("finalizers") or ()),
    )


class _Drainer:
    """The drain of one cluster, through one API client."""

    def __init__(self, api: Any, deadline: float, on_drain: DrainCallback | None) -> None:
        self._apis = _Apis(api)
        self._deadline = deadline
        self._on_drain = on_drain

    def _say(self, event: str, obj: KubeObject) -> None:
        if self._on_drain is not None:
            try:
                self._on_drain(event, obj)
            except Exception as exc:
                raise _Relayed(exc) from exc

    def _answer(self, call: Callable[[], Any]) -> dict[str, Any] | None:
        """What ``call`` got, as a mapping; ``None`` for 404 (gone, or that kind is not served)."""
        from kubernetes.client.exceptions import ApiException

        try:
            return self._apis.plain(call())
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def _listed(self, kind: _Kind) -> Iterator[Mapping[str, Any]]:
        found = self._answer(lambda: kind.list(self._apis))
        for obj in (found or {}).get("items") or []:
            if isinstance(obj, Mapping):
                yield obj

    def _read(self, kind: _Kind, namespace: str, name: str) -> dict[str, Any] | None:
        return self._answer(lambda: kind.read(self._apis, namespace, name))

    def _delete(self, kind: _Kind, namespace: str, name: str) -> None:
        assert kind.delete is not None
        delete = kind.delete
        self._answer(lambda: delete(self._apis, namespace, name))

    def flux(self, *, planned: bool) -> list[KubeObject]:
        """Suspend every Kustomization and HelmRelease not suspended yet (with ``planned``: list them)."""
        suspended = []
        for kind in _FLUX:
            patch = kind.patch
            assert patch is not None
            for obj in self._listed(kind):
                if (obj.get("spec") or {}).get("suspend") is True:
                    continue
                described = _described(kind, obj)
                if not planned:
                    if not self._suspend(patch, described):
                        continue  # deleted meanwhile: nothing to suspend
                    self._say("suspended", described)
                suspended.append(described)
        return suspended

    def _suspend(self, patch: Callable[[_Apis, str, str, Any], Any], obj: KubeObject) -> bool:
        body = {"spec": {"suspend": True}}
        return self._answer(lambda: patch(self._apis, obj.namespace, obj.name, body)) is not None

    def targets(self, kinds: tuple[_Kind, ...]) -> list[tuple[_Kind, Mapping[str, Any]]]:
        """The objects of ``kinds`` to delete: outside Kubernetes' namespaces; of Services, load balancers."""
        found = []
        for kind in kinds:
            for obj in self._listed(kind):
                namespace = (obj.get("metadata") or {}).get("namespace")
                if namespace in SYSTEM_NAMESPACES:
                    continue
                if kind is _SERVICE and (obj.get("spec") or {}).get("type") != "LoadBalancer":
                    continue
                found.append((kind, obj))
        return sorted(found, key=lambda item: (item[0].kind, *_key(item[1])))

    def _released_volume(self, claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The claim's PersistentVolume when its provisioner deletes it (reclaim policy Delete)."""
        name = (claim.get("spec") or {}).get("volumeName")
        if not isinstance(name, str) or not name:
            return None
        volume = self._read(_VOLUME, "", name)
        if volume is None or (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") != "Delete":
            return None
        return volume

    def remove(self, kinds: tuple[_Kind, ...]) -> list[KubeObject]:
        """Delete the group's objects and wait until each is gone (a volume a claim released, too)."""
        pending: dict[tuple[str, str, str], tuple[_Kind, str | None, bool]] = {}
        order = []
        for kind, obj in self.targets(kinds):
            described = _described(kind, obj)
            volume = self._released_volume(obj) if kind is _CLAIM else None
            self._delete(kind, described.namespace, described.name)
            self._say("deleting", described)
            order.append(described)
            pending[(kind.kind, *_key(obj))] = (kind, _uid(obj), True)
            if volume is not None:
                pending[(_VOLUME.kind, *_key(volume))] = (_VOLUME, _uid(volume), False)
                order.append(_described(_VOLUME, volume))
                self._say("waiting", order[-1])
        self._wait(pending)
        return order

    def _wait(self, pending: dict[tuple[str, str, str], tuple[_Kind, str | None, bool]]) -> None:
        while pending:
            still: list[KubeObject] = []
            for key, (kind, uid, ours) in list(pending.items()):
                live = self._read(kind, key[1], key[2])
                if live is None:
                    del pending[key]
                    self._say("gone", KubeObject(kind.kind, key[1], key[2]))
                    continue
                if ours and _uid(live) != uid and not (live.get("metadata") or {}).get("deletionTimestamp"):
                    # Made again after the delete (by a reconcile that began before the suspend): again.
                    self._delete(kind, key[1], key[2])
                    pending[key] = (kind, _uid(live), ours)
                still.append(_described(kind, live))
            if not pending:
                return
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut(still)
            time.sleep(min(_POLL_SECONDS, left))


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _uid(obj: Mapping[str, Any]) -> str | None:
    uid = (obj.get("metadata") or {}).get("uid")
    return uid if isinstance(uid, str) else None


def drain_clusters(
    clusters: tuple[Access, ...],
    *,
    stack: str,
    timeout: float,
    on_drain: DrainCallback | None = None,
    planned: bool = False,
) -> DrainResult:
    """Drain each of ``clusters`` within ``timeout`` seconds in all; with ``planned``, only say what
    would go. ``DrainError`` when a cluster cannot be reached or time runs out: nothing was destroyed."""
    deadline = time.monotonic() + timeout
    suspended: list[KubeObject] = []
    deleted: list[KubeObject] = []
    for access in clusters:
        secrets = [access.kubeconfig] if access.kubeconfig else []
        with client_log() as logged:
            try:
                kubeconfig = kubeconfig_of(access)
                secrets += secret_strings(kubeconfig)
                with connected(kubeconfig, access.context) as api:
                    drainer = _Drainer(api, deadline, on_drain)
                    suspended += drainer.flux(planned=planned)
                    for kinds in _GROUPS:
                        if planned:
                            deleted += [_described(kind, obj) for kind, obj in drainer.targets(kinds)]
                        else:
                            deleted += drainer.remove(kinds)
            except _Relayed as relayed:
                raise relayed.error from None
            except _TimedOut as timed_out:
                raise _timeout_error(stack, timeout, timed_out.remaining) from None
            except Exception as exc:  # any failure to reach or work the cluster stops the destroy
                said = [why(exc, secrets), *(f"the client said: {why(m, secrets)}" for m in logged)]
                raise DrainError(
                    f"cannot drain the cluster of stack {stack!r} before destroying it: {'; '.join(said)}. "
                    "Nothing was destroyed. Run destroy again once the cluster answers, or pass --no-drain "
                    "(drain=False) to destroy without draining: AWS resources its objects made may be left",
                    stack=stack,
                ) from None
    return DrainResult(suspended=tuple(suspended), deleted=tuple(deleted), planned=planned)


def _timeout_error(stack: str, timeout: float, remaining: list[KubeObject]) -> DrainError:
    listed = "; ".join(f"{obj} (finalizers: {', '.join(obj.finalizers) or 'none'})" for obj in remaining)
    count = len(remaining)
    return DrainError(
        f"the drain of stack {stack!r} ran out of its {format_duration(timedelta(seconds=timeout))} with "
        f"{count} object{'s' if count != 1 else ''} still there: {listed}. Nothing was destroyed: the "
        "stack's resources are untouched, and Flux stays suspended. Their finalizers belong to the "
        "controllers that delete what the objects made in AWS (the AWS Load Balancer Controller, the EBS CSI "
        "driver), which must be running; run destroy again to go on, with a longer --drain-timeout if they "
        "are only slow",
        stack=stack,
        remaining=remaining,
    )
