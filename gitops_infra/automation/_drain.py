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
   volume in the PersistentVolume's finalizer. Kubernetes keeps a claim while a pod mounts it
   (``kubernetes.io/pvc-protection``), and a StatefulSet or Deployment makes its pods again, so before
   the claims go, so does what mounts them: each such pod's top controller (its StatefulSet, the
   Deployment of its ReplicaSet, its DaemonSet, the CronJob of its Job, an operator's object), or the pod
   itself when it has none, and the drain waits for those pods to be gone. A claim one of Flux's own
   controllers mounts stays, with the controller: the destroy still needs Flux to clear its sync
   objects' finalizers, and uninstalls it after them;
3. where Karpenter runs (its CRDs are served), deletes its NodePools and NodeClaims and waits until every
   NodeClaim is gone, which Karpenter allows once it has terminated the node's EC2 instance; then its
   EC2NodeClasses, whose instance profiles it deletes the same way. Karpenter's instances are in no
   Pulumi state, and left running they keep the VPC from being deleted (aws/karpenter-provider-aws
   #1268). Nodes go last, so that the controllers doing the deleting above may run on them;
4. only then lets the engine destroy the stack.

One deadline covers it all. Running out of it, or not reaching the cluster, stops the destroy before it
begins (``DrainError``): a destroy run again goes on from where this one stopped, since a suspended
object stays suspended and a deleted one stays deleted.

A stack drains the clusters it made: those whose Kubernetes provider takes its kubeconfig from a
resource of the stack. A kubeconfig from config (``cluster.existing``) or from another stack (a
``StackReference``) names a cluster that is not the stack's, and nothing in it is touched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, cast

from ..checks import format_duration
from ..errors import DrainError
from ._flux_apis import SYNC_KINDS
from ._kube import (
    REQUEST_TIMEOUT,
    Access,
    Discovery,
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
        self.discovery = Discovery(api)

    def version(self, group: str, plural: str, versions: tuple[str, ...]) -> str:
        """The version the cluster serves the kind at (``Discovery``); where it serves none, the newest,
        whose 404 then says so."""
        return self.discovery.version(group, plural, versions) or versions[0]

    def list_custom(self, group: str, plural: str, versions: tuple[str, ...]) -> Any:
        """The kind's objects, at the version the cluster serves; none where no CRD serves the kind."""
        version = self.discovery.version(group, plural, versions)
        if version is None:
            return {"items": []}
        return self.custom.list_cluster_custom_object(group, version, plural, _request_timeout=_RT)

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
    """A custom kind at the version the cluster serves, by discovery (``versions`` newest first): a Flux
    older than the one the chart pins (``install: external``) still serves only a beta, and its objects
    must be suspended all the same."""
    return _Kind(
        kind,
        list=lambda a: a.list_custom(group, plural, versions),
        read=lambda a, ns, name: a.custom.get_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, _request_timeout=_RT
        ),
        delete=lambda a, ns, name: a.custom.delete_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, _request_timeout=_RT
        ),
        # A dict body goes as a JSON merge patch, in every client version this package allows.
        patch=lambda a, ns, name, body: a.custom.patch_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, body, _request_timeout=_RT
        ),
    )


def _cluster_custom(kind: str, group: str, plural: str, versions: tuple[str, ...]) -> _Kind:
    """A cluster-scoped custom kind, at the version the cluster serves (as ``_custom``)."""
    return _Kind(
        kind,
        list=lambda a: a.list_custom(group, plural, versions),
        read=lambda a, _ns, name: a.custom.get_cluster_custom_object(
            group, a.version(group, plural, versions), plural, name, _request_timeout=_RT
        ),
        delete=lambda a, _ns, name: a.custom.delete_cluster_custom_object(
            group, a.version(group, plural, versions), plural, name, _request_timeout=_RT
        ),
    )


_FLUX = tuple(_custom(k.kind, k.group, k.plural, k.versions) for k in SYNC_KINDS)
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
_POD = _Kind(
    "Pod",
    list=lambda a: a.core.list_pod_for_all_namespaces(_request_timeout=_RT),
    read=lambda a, ns, name: a.core.read_namespaced_pod(name, ns, _request_timeout=_RT),
)
# Karpenter v1 (karpenter.sh/v1, karpenter.k8s.aws/v1); before 1.0, v1beta1 (0.32 to 0.37).
_NODE_POOL = _cluster_custom("NodePool", "karpenter.sh", "nodepools", ("v1", "v1beta1"))
_NODE_CLAIM = _cluster_custom("NodeClaim", "karpenter.sh", "nodeclaims", ("v1", "v1beta1"))
_NODE_CLASS = _cluster_custom("EC2NodeClass", "karpenter.k8s.aws", "ec2nodeclasses", ("v1", "v1beta1"))
_GROUPS = ((_INGRESS, _GATEWAY), (_SERVICE,), (_CLAIM,), (_NODE_POOL, _NODE_CLAIM), (_NODE_CLASS,))
"""In this order, each group gone before the next is deleted: an Ingress's load balancer sends to its
Services; a claim's volume is released only once nothing of the app is left to hold it (what mounts the
claims goes first, in the claims' group); Karpenter's nodes go last, since the controllers that delete
the rest may run on them, and an EC2NodeClass waits for its NodeClaims anyway."""
_MOUNTED = "kubernetes.io/pvc-protection"
"""The finalizer by which Kubernetes keeps a claim that a pod mounts."""
_OWNER_DEPTH = 8
"""How far up a pod's controllers are followed (a pod, its ReplicaSet, its Deployment: 3)."""


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
    def __init__(self, remaining: list[KubeObject], held: dict[KubeObject, list[str]]) -> None:
        self.remaining = remaining
        self.held = held


class _Relayed(Exception):
    """An exception of the caller's callback, carried past the handler for the cluster's failures."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _described(kind: _Kind | str, obj: Mapping[str, Any]) -> KubeObject:
    metadata = obj.get("metadata") or {}
    return KubeObject(
        kind=kind if isinstance(kind, str) else kind.kind,
        namespace=str(metadata.get("namespace") or ""),
        name=str(metadata.get("name") or ""),
        finalizers=tuple(str(f) for f in metadata.get("finalizers") or ()),
    )


@dataclass
class _Pending:
    """An object the drain waits for: how to read it, and (for one it deleted) how to delete it again."""

    obj: KubeObject
    read: Callable[[], dict[str, Any] | None]
    uid: str | None
    delete: Callable[[], None] | None = None


@dataclass(frozen=True)
class _Ref:
    """Where an object of any kind is read and deleted: a pod's owner may be an operator's object."""

    group: str
    """``""`` for the core group."""
    version: str
    plural: str
    namespace: str
    name: str


@dataclass(frozen=True)
class _Workload:
    """What keeps a pod that mounts a claim: its top controller, or the pod itself when it has none."""

    described: KubeObject
    ref: _Ref
    uid: str | None


_CORE_OWNERS = {"ReplicationController": "replicationcontrollers"}
"""The core group's one kind that controls pods (``Node`` owns a static pod's mirror: not the app's)."""


_FLUX_IMAGE = re.compile(r"(^|/)(fluxcd/[a-z-]+-controller|controlplaneio-fluxcd/flux-operator)([:@]|$)")


def _flux_pod(pod: Mapping[str, Any]) -> bool:
    """Whether the pod runs one of Flux's controllers (by its image, or the label Flux's manifests set)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get("app.kubernetes.io/part-of") == "flux":
        return True
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(isinstance(c, Mapping) and _FLUX_IMAGE.search(str(c.get("image") or "")) for c in containers)


def _mounted_claims(pod: Mapping[str, Any]) -> set[str]:
    """The claims a pod that has not ended mounts (pvc-protection ignores an ended pod)."""
    if (pod.get("status") or {}).get("phase") in {"Succeeded", "Failed"}:
        return set()
    return {
        str(claim["claimName"])
        for volume in (pod.get("spec") or {}).get("volumes") or []
        if isinstance(volume, Mapping)
        and isinstance(claim := volume.get("persistentVolumeClaim"), Mapping)
        and claim.get("claimName")
    }


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
        if any(kind is _CLAIM for kind in kinds):
            # A claim one of Flux's controllers mounts (a persistent source-controller) stays, with its
            # controller: Pulumi's destroy still needs Flux to clear its sync objects' finalizers, and
            # uninstalls Flux, with the claim, after them.
            claims = [obj for kind, obj in found if kind is _CLAIM]
            kept = {
                (_key(pod)[0], claim)
                for pod, mounted in self._pods_mounting(claims)
                if _flux_pod(pod)
                for claim in mounted
            }
            found = [(kind, obj) for kind, obj in found if kind is not _CLAIM or _key(obj) not in kept]
        return sorted(found, key=lambda item: (item[0].kind, *_key(item[1])))

    def planned(self, kinds: tuple[_Kind, ...]) -> list[KubeObject]:
        """What :meth:`remove` would delete: for claims, what mounts them first."""
        targets = self.targets(kinds)
        claims = [obj for kind, obj in targets if kind is _CLAIM]
        workloads = list(dict.fromkeys(w.described for w, _, _ in self._mounting(claims)))
        return [*workloads, *(_described(kind, obj) for kind, obj in targets)]

    # -- what mounts the claims -----------------------------------------------------------------------

    def _plural(self, api_version: str, kind: str) -> tuple[str, bool] | None:
        """The kind's plural and whether it is namespaced, by discovery of its API version."""
        group, _, version = api_version.rpartition("/")
        if not group:
            return (_CORE_OWNERS[kind], True) if kind in _CORE_OWNERS else None
        return self._apis.discovery.kind(group, version, kind)

    def _top(self, pod: Mapping[str, Any]) -> _Workload:
        """The pod's top controller still there (an owner in its namespace), or the pod itself."""
        namespace, name = _key(pod)
        current = _Workload(_described("Pod", pod), _Ref("", "v1", "pods", namespace, name), _uid(pod))
        obj: Mapping[str, Any] = pod
        for _ in range(_OWNER_DEPTH):
            refs = (obj.get("metadata") or {}).get("ownerReferences") or []
            ref = next((r for r in refs if isinstance(r, Mapping) and r.get("controller")), None)
            if ref is None:
                break
            api_version, kind = str(ref.get("apiVersion")), str(ref.get("kind"))
            found = self._plural(api_version, kind)
            if found is None or not found[1]:
                break  # a kind not served, or cluster-scoped (a static pod's Node): not the app's to delete
            group, _, version = api_version.rpartition("/")
            at = _Ref(group, version, found[0], namespace, str(ref.get("name")))
            owner = self._read_ref(at)
            if owner is None or _uid(owner) != ref.get("uid"):
                break  # already gone
            obj = owner
            current = _Workload(_described(kind, owner), at, _uid(owner))
        return current

    def _pods_mounting(
        self, claims: Sequence[Mapping[str, Any]]
    ) -> Iterator[tuple[Mapping[str, Any], frozenset[str]]]:
        """Each pod that mounts one of ``claims``, with the claims it mounts (one LIST per namespace)."""
        wanted: dict[str, set[str]] = {}
        for claim in claims:
            namespace, name = _key(claim)
            wanted.setdefault(namespace, set()).add(name)
        for namespace, names in sorted(wanted.items()):
            pods = self._answer(partial(self._apis.core.list_namespaced_pod, namespace, _request_timeout=_RT))
            for pod in (pods or {}).get("items") or []:
                mounted = _mounted_claims(pod) & names if isinstance(pod, Mapping) else set()
                if mounted:
                    yield pod, frozenset(mounted)

    def _mounting(
        self, claims: Sequence[Mapping[str, Any]]
    ) -> list[tuple[_Workload, KubeObject, frozenset[str]]]:
        """Each pod that mounts one of ``claims``: what keeps it, the pod, and the claims it mounts."""
        found = [
            (self._top(pod), _described("Pod", pod), mounted) for pod, mounted in self._pods_mounting(claims)
        ]
        return sorted(found, key=lambda item: (str(item[0].described), str(item[1])))

    def _remove_mounting(self, claims: list[Mapping[str, Any]]) -> list[KubeObject]:
        """Delete what keeps the pods that mount ``claims``, and wait until those pods are gone."""
        pending: list[_Pending] = []
        order: list[KubeObject] = []
        mounting = self._mounting(claims)
        for workload in dict.fromkeys(w for w, _, _ in mounting):
            delete = partial(self._delete_ref, workload.ref)
            delete()
            self._say("deleting", workload.described)
            order.append(workload.described)
            pending.append(
                _Pending(workload.described, partial(self._read_ref, workload.ref), workload.uid, delete)
            )
        for workload, pod, _ in mounting:
            if workload.described != pod:
                self._say("waiting", pod)
                at = _Ref("", "v1", "pods", pod.namespace, pod.name)
                pending.append(_Pending(pod, partial(self._read_ref, at), None))
        self._wait(pending)
        return order

    def _read_ref(self, ref: _Ref) -> dict[str, Any] | None:
        apis = self._apis
        if ref.group:
            return self._answer(
                partial(
                    apis.custom.get_namespaced_custom_object,
                    ref.group,
                    ref.version,
                    ref.namespace,
                    ref.plural,
                    ref.name,
                    _request_timeout=_RT,
                )
            )
        read = (
            apis.core.read_namespaced_pod
            if ref.plural == "pods"
            else apis.core.read_namespaced_replication_controller
        )
        return self._answer(partial(read, ref.name, ref.namespace, _request_timeout=_RT))

    def _delete_ref(self, ref: _Ref) -> None:
        # Background: the object goes at once, and the garbage collector deletes what it owns (the pods).
        apis, policy = self._apis, "Background"
        if ref.group:
            self._answer(
                partial(
                    apis.custom.delete_namespaced_custom_object,
                    ref.group,
                    ref.version,
                    ref.namespace,
                    ref.plural,
                    ref.name,
                    propagation_policy=policy,
                    _request_timeout=_RT,
                )
            )
            return
        delete = (
            apis.core.delete_namespaced_pod
            if ref.plural == "pods"
            else apis.core.delete_namespaced_replication_controller
        )
        self._answer(
            partial(delete, ref.name, ref.namespace, propagation_policy=policy, _request_timeout=_RT)
        )

    # -- deleting and waiting ---------------------------------------------------------------------------

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
        """Delete the group's objects and wait until each is gone (a volume a claim released, too); for
        claims, what mounts them goes first."""
        targets = self.targets(kinds)
        claims = [obj for kind, obj in targets if kind is _CLAIM]
        order = self._remove_mounting(claims) if claims else []
        pending: list[_Pending] = []
        for kind, obj in targets:
            described = _described(kind, obj)
            volume = self._released_volume(obj) if kind is _CLAIM else None
            delete = partial(self._delete, kind, described.namespace, described.name)
            delete()
            self._say("deleting", described)
            order.append(described)
            read = partial(self._read, kind, described.namespace, described.name)
            pending.append(_Pending(described, read, _uid(obj), delete))
            if volume is not None:
                gone = _described(_VOLUME, volume)
                pending.append(_Pending(gone, partial(self._read, _VOLUME, "", gone.name), _uid(volume)))
                order.append(gone)
                self._say("waiting", gone)
        self._wait(pending)
        return order

    def _wait(self, pending: list[_Pending]) -> None:
        while pending:
            still: list[KubeObject] = []
            for item in list(pending):
                live = item.read()
                if live is None:
                    pending.remove(item)
                    self._say("gone", replace(item.obj, finalizers=()))
                    continue
                deleting = (live.get("metadata") or {}).get("deletionTimestamp")
                if item.delete is not None and _uid(live) != item.uid and not deleting:
                    # Made again after the delete (by a reconcile that began before the suspend): again.
                    item.delete()
                    item.uid = _uid(live)
                still.append(_described(item.obj.kind, live))
            if not pending:
                return
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut(still, self._holding(still))
            time.sleep(min(_POLL_SECONDS, left))

    def _holding(self, remaining: list[KubeObject]) -> dict[KubeObject, list[str]]:
        """For each claim still kept because a pod mounts it: that pod, and what keeps the pod."""
        kept = [o for o in remaining if o.kind == _CLAIM.kind and _MOUNTED in o.finalizers]
        claims = [{"metadata": {"namespace": o.namespace, "name": o.name}} for o in kept]
        held: dict[KubeObject, list[str]] = {}
        for workload, pod, mounted in self._mounting(claims):
            owner = "" if workload.described == pod else f" of {workload.described}"
            for claim in kept:
                if claim.namespace == pod.namespace and claim.name in mounted:
                    held.setdefault(claim, []).append(f"{pod}{owner}")
        return held


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
                            deleted += drainer.planned(kinds)
                        else:
                            deleted += drainer.remove(kinds)
            except _Relayed as relayed:
                raise relayed.error from None
            except _TimedOut as timed_out:
                raise _timeout_error(stack, timeout, timed_out.remaining, timed_out.held) from None
            except Exception as exc:  # any failure to reach or work the cluster stops the destroy
                said = [why(exc, secrets), *(f"the client said: {why(m, secrets)}" for m in logged)]
                raise DrainError(
                    f"cannot drain the cluster of stack {stack!r} before destroying it: {'; '.join(said)}. "
                    "Nothing was destroyed. Run destroy again once the cluster answers, or pass --no-drain "
                    "(drain=False) to destroy without draining: AWS resources its objects made may be left",
                    stack=stack,
                ) from None
    return DrainResult(suspended=tuple(suspended), deleted=tuple(deleted), planned=planned)


_KEEPERS = (
    (_MOUNTED, "Kubernetes keeps a claim while a pod mounts it"),
    ("kubernetes.io/pv-protection", "Kubernetes keeps a volume while a claim is bound to it"),
    ("karpenter.sh/termination", "Karpenter lets a NodeClaim go once it has terminated its EC2 instance"),
    (
        "karpenter.k8s.aws/termination",
        "Karpenter lets an EC2NodeClass go once it has deleted its instance profile",
    ),
)
"""Finalizers whose holder is not one of the AWS controllers the drain exists for, and what they wait for."""


def _timeout_error(
    stack: str, timeout: float, remaining: list[KubeObject], held: dict[KubeObject, list[str]]
) -> DrainError:
    def listed(obj: KubeObject) -> str:
        mounted = f"; mounted by {', '.join(held[obj])}" if held.get(obj) else ""
        return f"{obj} (finalizers: {', '.join(obj.finalizers) or 'none'}{mounted})"

    finalizers = {f for obj in remaining for f in obj.finalizers}
    why = [words for finalizer, words in _KEEPERS if finalizer in finalizers]
    if any(obj.kind == _POD.kind for obj in remaining):
        why.append("a pod goes once its node's kubelet has stopped it")
    if finalizers - {finalizer for finalizer, _ in _KEEPERS}:
        why.append(
            "the other finalizers belong to the controllers that delete what the objects made in AWS "
            "(the AWS Load Balancer Controller, the EBS CSI driver)"
        )
    said = "; ".join(why) or "their controllers let them go"
    count = len(remaining)
    return DrainError(
        f"the drain of stack {stack!r} ran out of its {format_duration(timedelta(seconds=timeout))} with "
        f"{count} object{'s' if count != 1 else ''} still there: {'; '.join(map(listed, remaining))}. "
        "Nothing was destroyed: the stack's resources are untouched, and Flux stays suspended. "
        f"{said[0].upper()}{said[1:]}: what holds them must be running; run destroy again to go on, with a "
        "longer --drain-timeout if it is only slow",
        stack=stack,
        remaining=remaining,
    )
