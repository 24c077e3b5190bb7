"""Why a Kubernetes object never became Ready, in its controller's own words.

pulumi-kubernetes waits for an object's ``pulumi.com/waitFor`` condition; when the wait times out it
reports only that (``... failed to fully initialize or become live: timed out waiting for the
condition``), which is the "context deadline exceeded" users of other Flux bootstraps complain of. The
object's last observed state is in the stack's checkpoint, though: the provider returns it with the
failure, and the engine records it with the resource's ``initErrors``. Its ``Ready`` condition carries
the controller's message ("authentication required", "kustomization path not found"), which the error
summary then leads with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

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


def _not_ready(deployment: Mapping[str, Any]) -> Iterator[str]:
    for resource in deployment.get("resources") or []:
        if not isinstance(resource, Mapping) or not resource.get("initErrors"):
            continue
        outputs = resource.get("outputs")
        if not isinstance(outputs, Mapping):
            continue
        ready = _ready_condition(outputs)
        if ready is None or ready.get("status") == "True" or not ready.get("message"):
            continue
        metadata = outputs.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        name = "/".join(str(p) for p in (metadata.get("namespace"), metadata.get("name")) if p)
        kind = outputs.get("kind") or str(resource.get("type", "")).rsplit(":", 1)[-1]
        reason = f" ({ready['reason']})" if ready.get("reason") else ""
        yield f"{kind} {name} is not Ready{reason}: {ready['message']}"


def not_ready_reasons(deployment: Mapping[str, Any]) -> list[str]:
    """For each object the last update left with init errors, its own Ready condition's message.

    ``deployment`` is a checkpoint's ``deployment`` (``Stack.export_stack().deployment``).
    """
    return list(dict.fromkeys(_not_ready(deployment)))
