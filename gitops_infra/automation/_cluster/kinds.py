"""The Kubernetes kinds the drain lists, reads, suspends and deletes, and the one client it reaches them by.

Each kind is read at the version the cluster serves (``Discovery``), and every answer is the plain mapping
the API server sent; a 404 is ``None`` (gone, or that kind is not served). The kinds are grouped in the
order the drain deletes them (:data:`GROUPS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..results.teardown import KubeObject
from .argocd import APPLICATION, APPLICATION_SET
from .flux_apis import SYNC_KINDS, FluxKind
from .kube import REQUEST_TIMEOUT, Discovery

__all__ = [
    "APPLICATIONS",
    "APPLICATION_SETS",
    "CLAIM",
    "FLUX",
    "GROUPS",
    "POD",
    "RT",
    "SERVICE",
    "VOLUME",
    "Apis",
    "Kind",
    "key",
    "kube_object",
    "uid",
]

RT = REQUEST_TIMEOUT
"""Each request's connect and read timeouts."""


class Apis:
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
        return self.custom.list_cluster_custom_object(group, version, plural, _request_timeout=RT)

    def plain(self, answer: Any) -> dict[str, Any]:
        return (
            answer
            if isinstance(answer, dict)
            else cast(dict[str, Any], self.api.sanitize_for_serialization(answer))
        )

    def answer(self, call: Callable[[], Any]) -> dict[str, Any] | None:
        """What ``call`` got, as a mapping; ``None`` for 404 (gone, or that kind is not served)."""
        from kubernetes.client.exceptions import ApiException

        try:
            return self.plain(call())
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def listed(self, kind: Kind) -> Iterator[Mapping[str, Any]]:
        found = self.answer(lambda: kind.list(self))
        for obj in (found or {}).get("items") or []:
            if isinstance(obj, Mapping):
                yield obj

    def read(self, kind: Kind, namespace: str, name: str) -> dict[str, Any] | None:
        return self.answer(lambda: kind.read(self, namespace, name))

    def delete(self, kind: Kind, namespace: str, name: str) -> None:
        assert kind.delete is not None
        delete = kind.delete
        self.answer(lambda: delete(self, namespace, name))


_Listed = Callable[[Apis], Any]
_Named = Callable[[Apis, str, str], Any]


@dataclass(frozen=True)
class Kind:
    """How the drain lists, reads, deletes and (a Flux or an Argo CD kind) patches the objects of one kind."""

    kind: str
    list: _Listed
    read: _Named
    delete: _Named | None = None
    patch: Callable[[Apis, str, str, Any], Any] | None = None


def _custom(kind: str, group: str, plural: str, versions: tuple[str, ...]) -> Kind:
    """A custom kind at the version the cluster serves, by discovery (``versions`` newest first): a Flux
    older than the one the chart pins (``install: external``) still serves only a beta, and its objects
    must be suspended all the same."""
    return Kind(
        kind,
        list=lambda a: a.list_custom(group, plural, versions),
        read=lambda a, ns, name: a.custom.get_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, _request_timeout=RT
        ),
        delete=lambda a, ns, name: a.custom.delete_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, _request_timeout=RT
        ),
        # A dict body goes as a JSON merge patch, in every client version this package allows.
        patch=lambda a, ns, name, body: a.custom.patch_namespaced_custom_object(
            group, a.version(group, plural, versions), ns, plural, name, body, _request_timeout=RT
        ),
    )


def _cluster_custom(kind: str, group: str, plural: str, versions: tuple[str, ...]) -> Kind:
    """A cluster-scoped custom kind, at the version the cluster serves (as ``_custom``)."""
    return Kind(
        kind,
        list=lambda a: a.list_custom(group, plural, versions),
        read=lambda a, _ns, name: a.custom.get_cluster_custom_object(
            group, a.version(group, plural, versions), plural, name, _request_timeout=RT
        ),
        delete=lambda a, _ns, name: a.custom.delete_cluster_custom_object(
            group, a.version(group, plural, versions), plural, name, _request_timeout=RT
        ),
    )


def _engine_kind(kind: FluxKind) -> Kind:
    """One of a GitOps engine's kinds, as the drain reaches it."""
    return _custom(kind.kind, kind.group, kind.plural, kind.versions)


FLUX = tuple(map(_engine_kind, SYNC_KINDS))
APPLICATIONS = _engine_kind(APPLICATION)
APPLICATION_SETS = _engine_kind(APPLICATION_SET)
"""Argo CD's kinds whose automated sync the drain turns off."""
_INGRESS = Kind(
    "Ingress",
    list=lambda a: a.networking.list_ingress_for_all_namespaces(_request_timeout=RT),
    read=lambda a, ns, name: a.networking.read_namespaced_ingress(name, ns, _request_timeout=RT),
    delete=lambda a, ns, name: a.networking.delete_namespaced_ingress(name, ns, _request_timeout=RT),
)
_GATEWAY = _custom("Gateway", "gateway.networking.k8s.io", "gateways", ("v1", "v1beta1"))
SERVICE = Kind(
    "Service",
    list=lambda a: a.core.list_service_for_all_namespaces(_request_timeout=RT),
    read=lambda a, ns, name: a.core.read_namespaced_service(name, ns, _request_timeout=RT),
    delete=lambda a, ns, name: a.core.delete_namespaced_service(name, ns, _request_timeout=RT),
)
CLAIM = Kind(
    "PersistentVolumeClaim",
    list=lambda a: a.core.list_persistent_volume_claim_for_all_namespaces(_request_timeout=RT),
    read=lambda a, ns, name: a.core.read_namespaced_persistent_volume_claim(name, ns, _request_timeout=RT),
    delete=lambda a, ns, name: a.core.delete_namespaced_persistent_volume_claim(
        name, ns, _request_timeout=RT
    ),
)
VOLUME = Kind(
    "PersistentVolume",
    list=lambda a: a.core.list_persistent_volume(_request_timeout=RT),
    read=lambda a, _ns, name: a.core.read_persistent_volume(name, _request_timeout=RT),
)
POD = Kind(
    "Pod",
    list=lambda a: a.core.list_pod_for_all_namespaces(_request_timeout=RT),
    read=lambda a, ns, name: a.core.read_namespaced_pod(name, ns, _request_timeout=RT),
)
# Karpenter v1 (karpenter.sh/v1, karpenter.k8s.aws/v1); before 1.0, v1beta1 (0.32 to 0.37).
_NODE_POOL = _cluster_custom("NodePool", "karpenter.sh", "nodepools", ("v1", "v1beta1"))
_NODE_CLAIM = _cluster_custom("NodeClaim", "karpenter.sh", "nodeclaims", ("v1", "v1beta1"))
_NODE_CLASS = _cluster_custom("EC2NodeClass", "karpenter.k8s.aws", "ec2nodeclasses", ("v1", "v1beta1"))
GROUPS = ((_INGRESS, _GATEWAY), (SERVICE,), (CLAIM,), (_NODE_POOL, _NODE_CLAIM), (_NODE_CLASS,))
"""In this order, each group gone before the next is deleted: an Ingress's load balancer sends to its
Services; a claim's volume is released only once nothing of the app is left to hold it (what mounts the
claims goes first, in the claims' group); Karpenter's nodes go last, since the controllers that delete
the rest may run on them, and an EC2NodeClass waits for its NodeClaims anyway."""


def kube_object(kind: Kind | str, obj: Mapping[str, Any]) -> KubeObject:
    """The object as a result names it, with the finalizers it had when it was read."""
    metadata = obj.get("metadata") or {}
    return KubeObject(
        kind=kind if isinstance(kind, str) else kind.kind,
        namespace=str(metadata.get("namespace") or ""),
        name=str(metadata.get("name") or ""),
        finalizers=tuple(str(f) for f in metadata.get("finalizers") or ()),
    )


def key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(namespace, name)``; the namespace is ``""`` for a cluster-scoped object."""
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def uid(obj: Mapping[str, Any]) -> str | None:
    """The object's UID: a different one under the same name is the object made again."""
    found = (obj.get("metadata") or {}).get("uid")
    return found if isinstance(found, str) else None
