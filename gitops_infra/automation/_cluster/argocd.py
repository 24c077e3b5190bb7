"""Argo CD's ``Application``, as the GitOps layer and the drain read it: its API, its status judged, and
how its automated sync is turned off.

Argo CD serves ``Application`` and ``ApplicationSet`` at ``argoproj.io/v1alpha1`` only (every 2.x and 3.x
release). What it records decides what can be said: ``status.sync`` (``Synced`` when the cluster matches
git at ``status.sync.revision``, the revision it last resolved the target to), ``status.health`` (of what
it applied), ``status.operationState`` (the last sync operation, its phase, its message and the revision
it synced) and ``status.conditions`` (``ComparisonError`` when a fetch or a render failed, ``SyncError``,
``InvalidSpecError``...), each reported in Argo CD's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results.gitops import ArgoApplication
from .flux_apis import FluxKind

__all__ = [
    "APPLICATION",
    "APPLICATION_SET",
    "APPLICATION_TYPE",
    "STOP_APPLICATION",
    "STOP_APPLICATION_SET",
    "absent_application",
    "application_status",
    "automated",
    "generates_automated",
    "stop_order",
]

APPLICATION = FluxKind("argoproj.io", "Application", "applications", ("v1alpha1",))
APPLICATION_SET = FluxKind("argoproj.io", "ApplicationSet", "applicationsets", ("v1alpha1",))
APPLICATION_TYPE = "kubernetes:argoproj.io/v1alpha1:Application"
"""The Pulumi type token of an Application the stack made (``ArgoCdBootstrap``'s root)."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def application_status(obj: Mapping[str, Any], *, root: bool = False) -> ArgoApplication:
    """``obj`` (an Application as the API returns it) judged."""
    metadata = obj.get("metadata") or {}
    status = obj.get("status") or {}
    sync = status.get("sync") or {}
    health = status.get("health") or {}
    operation = status.get("operationState") or {}
    conditions = tuple(
        f"{condition.get('type')}: {condition.get('message', '')}"
        for condition in status.get("conditions") or []
        if isinstance(condition, Mapping) and condition.get("type")
    )
    return ArgoApplication(
        namespace=str(metadata.get("namespace", "")),
        name=str(metadata.get("name", "")),
        # Not compared yet: Argo CD writes both at its first reconcile.
        sync=_text(sync.get("status")) or "Unknown",
        health=_text(health.get("status")) or "Unknown",
        revision=_text(sync.get("revision")),
        synced_revision=_text((operation.get("syncResult") or {}).get("revision")),
        operation=_text(operation.get("phase")),
        operation_message=_text(operation.get("message")),
        conditions=conditions,
        root=root,
    )


def absent_application(namespace: str, name: str) -> ArgoApplication:
    """An Application the stack made that is not in the cluster."""
    return ArgoApplication(namespace=namespace, name=name, sync=None, health=None, root=True)


# -- stopping it (the drain) -----------------------------------------------------------------------------

STOP_APPLICATION: dict[str, Any] = {"spec": {"syncPolicy": {"automated": None}}}
"""The merge patch that turns an Application's automated sync off. Removed, not ``enabled: false``: Argo
CD added ``automated.enabled`` in 3.0, and an older CRD prunes it and keeps syncing."""
STOP_APPLICATION_SET: dict[str, Any] = {"spec": {"template": {"spec": {"syncPolicy": {"automated": None}}}}}
"""The merge patch that has an ApplicationSet make its Applications without automated sync: its controller
then updates each one it made to that, and puts back none the drain turned off. Only the template: a
policy that updates nothing (``applicationsSync``) would stay once the root puts the template back from
git, and leave its Applications stopped; and under ``create-only`` the controller orphans its
Applications when it is deleted, so that the destroy would leave them behind."""
_TRACKED = ("argocd.argoproj.io/tracking-id", "app.kubernetes.io/instance")
"""How Argo CD marks an object it applied: the annotation (3.x's default tracking), or the label (2.x's)."""


def automated(obj: Mapping[str, Any]) -> bool:
    """Whether the Application syncs on its own (and heals, and prunes, as its policy says)."""
    policy = (obj.get("spec") or {}).get("syncPolicy") or {}
    on = policy.get("automated") if isinstance(policy, Mapping) else None
    return isinstance(on, Mapping) and on.get("enabled") is not False


def generates_automated(obj: Mapping[str, Any]) -> bool:
    """Whether the ApplicationSet's template makes Applications that sync on their own."""
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return automated({"spec": template})


def stop_order(obj: Mapping[str, Any]) -> tuple[bool, str, str]:
    """Roots first: an Application no other one applied and no ApplicationSet made. A root still
    automated heals a child the drain stopped back to its git spec."""
    metadata = obj.get("metadata") or {}
    applied = bool(metadata.get("ownerReferences")) or any(
        name in (metadata.get("annotations") or {}) or name in (metadata.get("labels") or {})
        for name in _TRACKED
    )
    return applied, str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
