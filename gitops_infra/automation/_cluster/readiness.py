"""Why a Kubernetes object never became Ready, in its controller's own words.

pulumi-kubernetes waits for an object's ``pulumi.com/waitFor`` condition; when the wait times out it
reports only that (``... failed to fully initialize or become live: timed out waiting for the
condition``), which is the "context deadline exceeded" users of other Flux bootstraps complain of. The
object's last observed state is in the stack's checkpoint, though: the provider returns it with the
failure, and the engine records it with the resource's ``initErrors``. Its ``Ready`` condition carries
the controller's message ("authentication required", "kustomization path not found"), which the error
summary then leads with.

An Argo CD ``Application`` (the root, with ``gitops.engine: argocd``) is judged the same way, in Argo CD's
words: its sync and health, its last sync operation and its conditions (``ComparisonError``...); one whose
refresh request is still there has not been compared since the update asked.

A source that handled its credential's reconcile request and is not Ready has already been given the
update's credential: the git-auth Secret is updated in place, so Flux fetches with it from then on. The
error says so, and how to go back, while the credential it replaced is still registered (Pulumi deletes
a replaced deploy key only once an update succeeds).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...checks import RECONCILE_REQUEST_ANNOTATION, REFRESH_ANNOTATION
from .argocd import application_status

__all__ = ["AWAIT_FAILURE", "not_ready_reasons"]

AWAIT_FAILURE = "failed to fully initialize or become live"
"""How pulumi-kubernetes says an object's await (``waitFor``, or its built-in readiness) did not end."""


def _ready_condition(outputs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    status = outputs.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conditions, list):
        return None
    return next(
        (c for c in conditions if isinstance(c, Mapping) and c.get("type") == "Ready"),
        None,
    )


def _unproven(outputs: Mapping[str, Any], metadata: Mapping[str, Any]) -> str | None:
    """Why the object's state cannot show the new credential at work, or ``None``.

    Suspended, a Flux source records a reconcile request as handled and fetches nothing; with its
    request not handled yet, its Ready condition is from before the request. Either way that condition
    tells nothing of the new credential.
    """
    spec = outputs.get("spec")
    if isinstance(spec, Mapping) and spec.get("suspend") is True:
        name, namespace = metadata.get("name"), metadata.get("namespace")
        return (
            "is suspended (spec.suspend: true), so Flux fetched nothing with the new credential: resume "
            f"it (flux resume source git {name} -n {namespace}) and run up again"
        )
    annotations = metadata.get("annotations")
    request = annotations.get(RECONCILE_REQUEST_ANNOTATION) if isinstance(annotations, Mapping) else None
    status = outputs.get("status")
    handled = status.get("lastHandledReconcileAt") if isinstance(status, Mapping) else None
    if request is None or handled == request:
        return None
    return (
        f"has not handled the reconcile request {request} (last handled: {handled or 'none'}): "
        "is its controller running?"
    )


def _already_switched(metadata: Mapping[str, Any], outputs: Mapping[str, Any], stack: str | None) -> str:
    """What a refused credential means when Flux handled its request: Flux has switched to it already."""
    annotations = metadata.get("annotations")
    request = annotations.get(RECONCILE_REQUEST_ANNOTATION) if isinstance(annotations, Mapping) else None
    status = outputs.get("status")
    if request is None or not isinstance(status, Mapping) or status.get("lastHandledReconcileAt") != request:
        return ""
    rollback = f"gitops-infra rollback {stack} previous" if stack else "gitops-infra rollback STACK previous"
    return (
        ". Flux already fetches with the credential this update wrote (its Secret is updated in place), and "
        "applies nothing new from git until that credential works; the credential it replaced stays "
        "registered until an update succeeds. To go back, undo the change and run up, or run "
        f"`{rollback}`"
    )


def _not_ready(deployment: Mapping[str, Any], stack: str | None) -> Iterator[str]:
    for resource in deployment.get("resources") or []:
        if not isinstance(resource, Mapping) or not resource.get("initErrors"):
            continue
        outputs = resource.get("outputs")
        if not isinstance(outputs, Mapping):
            continue
        metadata = outputs.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        name = "/".join(str(p) for p in (metadata.get("namespace"), metadata.get("name")) if p)
        kind = outputs.get("kind") or str(resource.get("type", "")).rsplit(":", 1)[-1]
        if str(outputs.get("apiVersion", "")).startswith("argoproj.io/"):
            yield from _application_not_ready(outputs, metadata, name)
            continue
        unproven = _unproven(outputs, metadata)
        if unproven is not None:
            yield f"{kind} {name} {unproven}"
            continue
        ready = _ready_condition(outputs)
        if ready is None or ready.get("status") == "True" or not ready.get("message"):
            continue
        reason = f" ({ready['reason']})" if ready.get("reason") else ""
        switched = _already_switched(metadata, outputs, stack)
        yield f"{kind} {name} is not Ready{reason}: {ready['message']}{switched}"


def _application_not_ready(
    outputs: Mapping[str, Any], metadata: Mapping[str, Any], name: str
) -> Iterator[str]:
    annotations = metadata.get("annotations")
    problems = application_status(outputs, root=True).problems
    if isinstance(annotations, Mapping) and REFRESH_ANNOTATION in annotations and not problems:
        yield (
            f"Application {name} has not answered the refresh request ({REFRESH_ANNOTATION}): is Argo CD's "
            "application controller running?"
        )
    elif problems:
        yield "; ".join(problems)


def not_ready_reasons(deployment: Mapping[str, Any], *, stack: str | None = None) -> list[str]:
    """For each object the last update left with init errors, its own Ready condition's message.

    ``deployment`` is a checkpoint's ``deployment`` (``Stack.export_stack().deployment``) of ``stack``,
    which the way back names.
    """
    return list(dict.fromkeys(_not_ready(deployment, stack)))
