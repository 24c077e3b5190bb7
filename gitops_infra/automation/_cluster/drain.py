"""The drain before a destroy: what Flux made goes first, so that what it made in AWS goes with it.

Objects Flux applied made AWS resources outside Pulumi's state: the AWS Load Balancer Controller makes a
load balancer, target groups and security groups for an Ingress, a Gateway or a Service of type
LoadBalancer, and the EBS CSI driver a volume for a PersistentVolumeClaim. Each deletes them in its
finalizer, when the object is deleted. If the cluster goes first, nobody does, and the VPC cannot go
either (``DependencyViolation``: pulumi-eks #1226, pulumi/pulumi #8504). So for a stack that made its
cluster, a destroy first:

1. stops every GitOps engine it finds from applying again: it suspends every Kustomization and
   HelmRelease, and turns off the automated sync of every Argo CD Application (roots first, since a root
   still automated heals its children back) and of what every ApplicationSet makes. Argo CD stays
   installed and its objects stay, as Flux's do: the destroy deletes the root Application, whose
   resources finalizer has Argo CD delete what it applied, while its controllers still run. Deleting the
   root here instead would also delete the AWS controllers a fleet installs, before they have deleted
   what they made;
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

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from ...checks import format_duration
from ...errors import DrainError
from ..results.teardown import DrainResult, KubeObject
from .argocd import STOP_APPLICATION, STOP_APPLICATION_SET, automated, generates_automated, stop_order
from .kinds import (
    APPLICATION_SETS,
    APPLICATIONS,
    CLAIM,
    FLUX,
    GROUPS,
    POD,
    SERVICE,
    VOLUME,
    Apis,
    Kind,
    key,
    kube_object,
    uid,
)
from .kube import Access, client_log, connected, kubeconfig_of, provider_access, secret_strings, why
from .workloads import MOUNTED, Mounts, Ref, engine_pod

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
_SUSPEND = {"spec": {"suspend": True}}
"""The merge patch that suspends a Kustomization or a HelmRelease."""
_K8S_PROVIDER = "pulumi:providers:kubernetes"
_STACK_REFERENCE = "pulumi:pulumi:StackReference"

DrainCallback = Callable[[str, KubeObject], None]
"""Called as the drain goes: ``("suspended" | "deleting" | "waiting" | "gone", object)``."""


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


class _StillSyncing(Exception):
    """Argo CD kept turning automated sync back on until the drain's time ran out."""

    def __init__(self, objects: list[KubeObject]) -> None:
        self.objects = objects


class _Relayed(Exception):
    """An exception of the caller's callback, carried past the handler for the cluster's failures."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


@dataclass
class _Pending:
    """An object the drain waits for: how to read it, and (for one it deleted) how to delete it again."""

    obj: KubeObject
    read: Callable[[], dict[str, Any] | None]
    uid: str | None
    delete: Callable[[], None] | None = None


class _Drainer:
    """The drain of one cluster, through one API client."""

    def __init__(self, api: Any, deadline: float, on_drain: DrainCallback | None) -> None:
        self._apis = Apis(api)
        self._mounts = Mounts(self._apis)
        self._deadline = deadline
        self._on_drain = on_drain

    def _say(self, event: str, obj: KubeObject) -> None:
        if self._on_drain is not None:
            try:
                self._on_drain(event, obj)
            except Exception as exc:
                raise _Relayed(exc) from exc

    def flux(self, *, planned: bool) -> list[KubeObject]:
        """Suspend every Kustomization and HelmRelease not suspended yet (with ``planned``: list them)."""
        suspended = []
        for kind in FLUX:
            for obj in self._apis.listed(kind):
                if (obj.get("spec") or {}).get("suspend") is True:
                    continue
                described = kube_object(kind, obj)
                if not planned:
                    if not self._patch(kind, described, _SUSPEND):
                        continue  # deleted meanwhile: nothing to suspend
                    self._say("suspended", described)
                suspended.append(described)
        return suspended

    def _patch(self, kind: Kind, obj: KubeObject, body: Mapping[str, Any]) -> bool:
        """Merge-patch ``obj``; ``False`` when it was deleted meanwhile."""
        patch = kind.patch
        assert patch is not None
        return self._apis.answer(lambda: patch(self._apis, obj.namespace, obj.name, body)) is not None

    def argo_cd(self, *, planned: bool) -> list[KubeObject]:
        """Turn off the automated sync of every Argo CD Application and of what every ApplicationSet makes
        (with ``planned``: list them), pass after pass until one finds nothing on: a root's self-heal or
        an ApplicationSet's update that began before its own stop may turn a child's back on."""
        said: dict[tuple[str, str, str], KubeObject] = {}
        while found := self._stop_argo_cd(planned=planned):
            for obj in found:
                if (obj.kind, obj.namespace, obj.name) not in said:
                    said[obj.kind, obj.namespace, obj.name] = obj
                    if not planned:
                        self._say("suspended", obj)
            if planned:
                break
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _StillSyncing(found)
            time.sleep(min(_POLL_SECONDS, left))
        return list(said.values())

    def _stop_argo_cd(self, *, planned: bool) -> list[KubeObject]:
        """One pass: each Application still automated, roots first, then each ApplicationSet whose
        template still is; those it stopped (with ``planned``: would stop)."""
        applications = sorted((o for o in self._apis.listed(APPLICATIONS) if automated(o)), key=stop_order)
        application_sets = [o for o in self._apis.listed(APPLICATION_SETS) if generates_automated(o)]
        stopping = [
            *((APPLICATIONS, STOP_APPLICATION, obj) for obj in applications),
            *((APPLICATION_SETS, STOP_APPLICATION_SET, obj) for obj in application_sets),
        ]
        stopped = []
        for kind, body, obj in stopping:
            described = kube_object(kind, obj)
            if planned or self._patch(kind, described, body):  # else deleted meanwhile
                stopped.append(described)
        return stopped

    def targets(self, kinds: tuple[Kind, ...]) -> list[tuple[Kind, Mapping[str, Any]]]:
        """The objects of ``kinds`` to delete: outside Kubernetes' namespaces; of Services, load balancers."""
        found = []
        for kind in kinds:
            for obj in self._apis.listed(kind):
                namespace = (obj.get("metadata") or {}).get("namespace")
                if namespace in SYSTEM_NAMESPACES:
                    continue
                if kind is SERVICE and (obj.get("spec") or {}).get("type") != "LoadBalancer":
                    continue
                found.append((kind, obj))
        if any(kind is CLAIM for kind in kinds):
            # A claim one of the engine's own pods mounts (a persistent source-controller, Argo CD's
            # Redis) stays, with its controller: Pulumi's destroy still needs the engine to clear its
            # objects' finalizers, and uninstalls it, with the claim, after them.
            claims = [obj for kind, obj in found if kind is CLAIM]
            kept = {
                (key(pod)[0], claim)
                for pod, mounted in self._mounts.pods_mounting(claims)
                if engine_pod(pod)
                for claim in mounted
            }
            found = [(kind, obj) for kind, obj in found if kind is not CLAIM or key(obj) not in kept]
        return sorted(found, key=lambda item: (item[0].kind, *key(item[1])))

    def planned(self, kinds: tuple[Kind, ...]) -> list[KubeObject]:
        """What :meth:`remove` would delete: for claims, what mounts them first."""
        targets = self.targets(kinds)
        claims = [obj for kind, obj in targets if kind is CLAIM]
        workloads = list(dict.fromkeys(w.described for w, _, _ in self._mounts.mounting(claims)))
        return [*workloads, *(kube_object(kind, obj) for kind, obj in targets)]

    def _remove_mounting(self, claims: list[Mapping[str, Any]]) -> list[KubeObject]:
        """Delete what keeps the pods that mount ``claims``, and wait until those pods are gone."""
        pending: list[_Pending] = []
        order: list[KubeObject] = []
        mounting = self._mounts.mounting(claims)
        for workload in dict.fromkeys(w for w, _, _ in mounting):
            delete = partial(self._mounts.delete, workload.ref)
            delete()
            self._say("deleting", workload.described)
            order.append(workload.described)
            pending.append(
                _Pending(workload.described, partial(self._mounts.read, workload.ref), workload.uid, delete)
            )
        for workload, pod, _ in mounting:
            if workload.described != pod:
                self._say("waiting", pod)
                at = Ref("", "v1", "pods", pod.namespace, pod.name)
                pending.append(_Pending(pod, partial(self._mounts.read, at), None))
        self._wait(pending)
        return order

    # -- deleting and waiting ---------------------------------------------------------------------------

    def _released_volume(self, claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The claim's PersistentVolume when its provisioner deletes it (reclaim policy Delete)."""
        name = (claim.get("spec") or {}).get("volumeName")
        if not isinstance(name, str) or not name:
            return None
        volume = self._apis.read(VOLUME, "", name)
        if volume is None or (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") != "Delete":
            return None
        return volume

    def remove(self, kinds: tuple[Kind, ...]) -> list[KubeObject]:
        """Delete the group's objects and wait until each is gone (a volume a claim released, too); for
        claims, what mounts them goes first."""
        targets = self.targets(kinds)
        claims = [obj for kind, obj in targets if kind is CLAIM]
        order = self._remove_mounting(claims) if claims else []
        pending: list[_Pending] = []
        for kind, obj in targets:
            described = kube_object(kind, obj)
            volume = self._released_volume(obj) if kind is CLAIM else None
            delete = partial(self._apis.delete, kind, described.namespace, described.name)
            delete()
            self._say("deleting", described)
            order.append(described)
            read = partial(self._apis.read, kind, described.namespace, described.name)
            pending.append(_Pending(described, read, uid(obj), delete))
            if volume is not None:
                gone = kube_object(VOLUME, volume)
                pending.append(_Pending(gone, partial(self._apis.read, VOLUME, "", gone.name), uid(volume)))
                order.append(gone)
                self._say("waiting", gone)
        self._wait(pending)
        return order

    def _wait(self, pending: list[_Pending]) -> None:
        while pending:
            # An Argo CD sync that began before the stop may have turned one back on: off again.
            self._stop_argo_cd(planned=False)
            still: list[KubeObject] = []
            for item in list(pending):
                live = item.read()
                if live is None:
                    pending.remove(item)
                    self._say("gone", replace(item.obj, finalizers=()))
                    continue
                deleting = (live.get("metadata") or {}).get("deletionTimestamp")
                if item.delete is not None and uid(live) != item.uid and not deleting:
                    # Made again after the delete (by a reconcile that began before the suspend): again.
                    item.delete()
                    item.uid = uid(live)
                still.append(kube_object(item.obj.kind, live))
            if not pending:
                return
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut(still, self._mounts.holding(still))
            time.sleep(min(_POLL_SECONDS, left))


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
                    suspended += drainer.argo_cd(planned=planned)
                    for kinds in GROUPS:
                        if planned:
                            deleted += drainer.planned(kinds)
                        else:
                            deleted += drainer.remove(kinds)
            except _Relayed as relayed:
                raise relayed.error from None
            except _TimedOut as timed_out:
                raise _timeout_error(stack, timeout, timed_out.remaining, timed_out.held) from None
            except _StillSyncing as syncing:
                raise _still_syncing_error(stack, timeout, syncing.objects) from None
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
    (MOUNTED, "Kubernetes keeps a claim while a pod mounts it"),
    ("kubernetes.io/pv-protection", "Kubernetes keeps a volume while a claim is bound to it"),
    ("karpenter.sh/termination", "Karpenter lets a NodeClaim go once it has terminated its EC2 instance"),
    (
        "karpenter.k8s.aws/termination",
        "Karpenter lets an EC2NodeClass go once it has deleted its instance profile",
    ),
)
"""Finalizers whose holder is not one of the AWS controllers the drain exists for, and what they wait for."""


def _still_syncing_error(stack: str, timeout: float, objects: list[KubeObject]) -> DrainError:
    listed = ", ".join(map(str, objects))
    return DrainError(
        f"the drain of stack {stack!r} ran out of its {format_duration(timedelta(seconds=timeout))} "
        f"turning off Argo CD's automated sync: it was on again each time it looked, on {listed}. "
        "Something keeps turning it back on: an ApplicationSet whose templatePatch sets it, or a tool that "
        "applies these objects (another GitOps engine, a CI job). Nothing was destroyed and nothing "
        "deleted; stop that, then run destroy again",
        stack=stack,
        remaining=objects,
    )


def _timeout_error(
    stack: str, timeout: float, remaining: list[KubeObject], held: dict[KubeObject, list[str]]
) -> DrainError:
    def listed(obj: KubeObject) -> str:
        mounted = f"; mounted by {', '.join(held[obj])}" if held.get(obj) else ""
        return f"{obj} (finalizers: {', '.join(obj.finalizers) or 'none'}{mounted})"

    finalizers = {f for obj in remaining for f in obj.finalizers}
    why = [words for finalizer, words in _KEEPERS if finalizer in finalizers]
    if any(obj.kind == POD.kind for obj in remaining):
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
        "Nothing was destroyed: the stack's resources are untouched, and the GitOps engine stays stopped "
        "(Flux's objects suspended, Argo CD's automated sync off). "
        f"{said[0].upper()}{said[1:]}: what holds them must be running; run destroy again to go on, with a "
        "longer --drain-timeout if it is only slow",
        stack=stack,
        remaining=remaining,
    )
