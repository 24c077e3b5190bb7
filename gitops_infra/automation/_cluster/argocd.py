"""Argo CD's ``Application``, as the GitOps layer and the drain read it: its API, and its status judged.

Argo CD serves ``Application`` at ``argoproj.io/v1alpha1`` only (every 2.x and 3.x release). What it
records decides what can be said: ``status.sync`` (``Synced`` when the cluster matches git at
``status.sync.revision``, the revision it last resolved the target to), ``status.health`` (of what it
applied), ``status.operationState`` (the last sync operation, its phase, its message and the revision it
synced) and ``status.conditions`` (``ComparisonError`` when a fetch or a render failed, ``SyncError``,
``InvalidSpecError``...), each reported in Argo CD's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results.gitops import ArgoApplication
from .flux_apis import FluxKind

__all__ = ["APPLICATION", "APPLICATION_TYPE", "absent_application", "application_status"]

APPLICATION = FluxKind("argoproj.io", "Application", "applications", ("v1alpha1",))
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
