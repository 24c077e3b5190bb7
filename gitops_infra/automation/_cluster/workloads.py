"""What mounts a claim the drain deletes: each pod that mounts it, and what keeps that pod.

Kubernetes keeps a claim while a pod mounts it (``kubernetes.io/pvc-protection``), and a StatefulSet or
Deployment makes its pods again, so before the claims go, so does what mounts them: each such pod's top
controller (its StatefulSet, the Deployment of its ReplicaSet, its DaemonSet, the CronJob of its Job, an
operator's object), found by its owner references, or the pod itself when it has none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..results.teardown import KubeObject
from .kinds import CLAIM, RT, Apis, key, kube_object, uid

__all__ = ["MOUNTED", "Mounts", "Ref", "Workload", "engine_pod"]

MOUNTED = "kubernetes.io/pvc-protection"
"""The finalizer by which Kubernetes keeps a claim that a pod mounts."""
_OWNER_DEPTH = 8
"""How far up a pod's controllers are followed (a pod, its ReplicaSet, its Deployment: 3)."""
_CORE_OWNERS = {"ReplicationController": "replicationcontrollers"}
"""The core group's one kind that controls pods (``Node`` owns a static pod's mirror: not the app's)."""
_ENGINE_IMAGE = re.compile(
    r"(^|/)(fluxcd/[a-z-]+-controller|controlplaneio-fluxcd/flux-operator|argoproj/argocd)([:@]|$)"
)
_ENGINES = frozenset({"flux", "argocd"})


@dataclass(frozen=True)
class Ref:
    """Where an object of any kind is read and deleted: a pod's owner may be an operator's object."""

    group: str
    """``""`` for the core group."""
    version: str
    plural: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Workload:
    """What keeps a pod that mounts a claim: its top controller, or the pod itself when it has none."""

    described: KubeObject
    ref: Ref
    uid: str | None


def engine_pod(pod: Mapping[str, Any]) -> bool:
    """Whether the pod runs part of a GitOps engine: one of Flux's controllers or of Argo CD's pods (by its
    image, or the ``part-of`` label Flux's manifests and the argo-cd chart set)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get("app.kubernetes.io/part-of") in _ENGINES:
        return True
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(isinstance(c, Mapping) and _ENGINE_IMAGE.search(str(c.get("image") or "")) for c in containers)


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


class Mounts:
    """The pods that mount claims, and what keeps them, in one cluster."""

    def __init__(self, apis: Apis) -> None:
        self._apis = apis

    def _plural(self, api_version: str, kind: str) -> tuple[str, bool] | None:
        """The kind's plural and whether it is namespaced, by discovery of its API version."""
        group, _, version = api_version.rpartition("/")
        if not group:
            return (_CORE_OWNERS[kind], True) if kind in _CORE_OWNERS else None
        return self._apis.discovery.kind(group, version, kind)

    def _top(self, pod: Mapping[str, Any]) -> Workload:
        """The pod's top controller still there (an owner in its namespace), or the pod itself."""
        namespace, name = key(pod)
        current = Workload(kube_object("Pod", pod), Ref("", "v1", "pods", namespace, name), uid(pod))
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
            at = Ref(group, version, found[0], namespace, str(ref.get("name")))
            owner = self.read(at)
            if owner is None or uid(owner) != ref.get("uid"):
                break  # already gone
            obj = owner
            current = Workload(kube_object(kind, owner), at, uid(owner))
        return current

    def pods_mounting(
        self, claims: Sequence[Mapping[str, Any]]
    ) -> Iterator[tuple[Mapping[str, Any], frozenset[str]]]:
        """Each pod that mounts one of ``claims``, with the claims it mounts (one LIST per namespace)."""
        wanted: dict[str, set[str]] = {}
        for claim in claims:
            namespace, name = key(claim)
            wanted.setdefault(namespace, set()).add(name)
        for namespace, names in sorted(wanted.items()):
            pods = self._apis.answer(
                partial(self._apis.core.list_namespaced_pod, namespace, _request_timeout=RT)
            )
            for pod in (pods or {}).get("items") or []:
                mounted = _mounted_claims(pod) & names if isinstance(pod, Mapping) else set()
                if mounted:
                    yield pod, frozenset(mounted)

    def mounting(
        self, claims: Sequence[Mapping[str, Any]]
    ) -> list[tuple[Workload, KubeObject, frozenset[str]]]:
        """Each pod that mounts one of ``claims``: what keeps it, the pod, and the claims it mounts."""
        found = [
            (self._top(pod), kube_object("Pod", pod), mounted) for pod, mounted in self.pods_mounting(claims)
        ]
        return sorted(found, key=lambda item: (str(item[0].described), str(item[1])))

    def read(self, ref: Ref) -> dict[str, Any] | None:
        apis = self._apis
        if ref.group:
            return apis.answer(
                partial(
                    apis.custom.get_namespaced_custom_object,
                    ref.group,
                    ref.version,
                    ref.namespace,
                    ref.plural,
                    ref.name,
                    _request_timeout=RT,
                )
            )
        read = (
            apis.core.read_namespaced_pod
            if ref.plural == "pods"
            else apis.core.read_namespaced_replication_controller
        )
        return apis.answer(partial(read, ref.name, ref.namespace, _request_timeout=RT))

    def delete(self, ref: Ref) -> None:
        # Background: the object goes at once, and the garbage collector deletes what it owns (the pods).
        apis, policy = self._apis, "Background"
        if ref.group:
            apis.answer(
                partial(
                    apis.custom.delete_namespaced_custom_object,
                    ref.group,
                    ref.version,
                    ref.namespace,
                    ref.plural,
                    ref.name,
                    propagation_policy=policy,
                    _request_timeout=RT,
                )
            )
            return
        delete = (
            apis.core.delete_namespaced_pod
            if ref.plural == "pods"
            else apis.core.delete_namespaced_replication_controller
        )
        apis.answer(partial(delete, ref.name, ref.namespace, propagation_policy=policy, _request_timeout=RT))

    def holding(self, remaining: list[KubeObject]) -> dict[KubeObject, list[str]]:
        """For each claim still kept because a pod mounts it: that pod, and what keeps the pod."""
        kept = [o for o in remaining if o.kind == CLAIM.kind and MOUNTED in o.finalizers]
        claims = [{"metadata": {"namespace": o.namespace, "name": o.name}} for o in kept]
        held: dict[KubeObject, list[str]] = {}
        for workload, pod, mounted in self.mounting(claims):
            owner = "" if workload.described == pod else f" of {workload.described}"
            for claim in kept:
                if claim.namespace == pod.namespace and claim.name in mounted:
                    held.setdefault(claim, []).append(f"{pod}{owner}")
        return held
