"""Drift detection in both layers, writing nothing.

The IaC layer is a refresh preview that compares every resource with the state Pulumi recorded. The
GitOps layer (:mod:`~gitops_infra.automation._cluster.gitops`) is what Flux reports of the cluster the stack
made: whether its source and its sync are Ready, current and not suspended.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from pulumi import automation as auto

from ..checks import RECONCILE_REQUEST_ANNOTATION, REFRESH_ANNOTATION
from ..errors import ArgumentError, StackLockedError
from ..redaction import SECRET
from ._cluster.gitops import read_gitops
from ._engine.runner import EngineEvents, run_engine
from ._engine.streamed import run_preview
from ._engine.wire import is_secret_payload, masked
from ._state.target import StackTarget
from .options import StackOptions
from .results.drift import ALL_LAYERS, DriftedResource, DriftKind, DriftReport, Layer, PropertyDiff
from .results.gitops import GitOpsReport

__all__ = ["detect_drift"]


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DRIFT_OPS = {auto.OpType.UPDATE: DriftKind.CHANGED, auto.OpType.DELETE: DriftKind.DELETED}
_SERVER_MAINTAINED: dict[str, tuple[str, ...]] = {
    "kubernetes:": (
        "metadata.managedFields",
        "metadata.resourceVersion",
        "metadata.generation",
        "metadata.creationTimestamp",
        "metadata.uid",
        "status",
        f'metadata.annotations["{RECONCILE_REQUEST_ANNOTATION}"]',
        f'metadata.annotations["{REFRESH_ANNOTATION}"]',
    ),
}
"""Fields the API server rewrites whenever anyone touches an object, by resource type prefix, and
Flux's reconcile request.

They change with every edit (an out-of-band ``kubectl patch`` moves ``resourceVersion`` and the
``managedFields`` it owns), so a difference in them alone is not drift of anything declared; a
difference in them beside a declared field would only bury that field's line. The platform sets
``reconcile.fluxcd.io/requestedAt`` on its GitRepository to prove a new credential, and ``flux
reconcile`` sets it too, to fetch now: a person asking Flux to fetch has changed nothing declared, and
the platform's value is set again at the next credential change. Argo CD's refresh request
(``argocd.argoproj.io/refresh``) is the same: the platform sets it on its root Application to ask for a
fetch, and Argo CD removes it once it has answered.
"""


def _declared(resource_type: str, diff: PropertyDiff) -> bool:
    for prefix, paths in _SERVER_MAINTAINED.items():
        if resource_type.startswith(prefix) and any(
            diff.path == path or diff.path.startswith((f"{path}.", f"{path}[")) for path in paths
        ):
            return False
    return True


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f'{path}["{key}"]'


def _secret_paths(value: Any, path: str = "") -> Iterator[str]:
    """The property paths of the secret values inside an output value (engine bookkeeping excluded)."""
    if is_secret_payload(value):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            if path or not key.startswith("__"):
                yield from _secret_paths(item, _join(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secret_paths(item, _join(path, index))


def _property_diffs(recorded: Any, actual: Any, path: str = "") -> Iterator[PropertyDiff]:
    """Leaf-level differences between two output values, in Pulumi's property-path notation."""
    if is_secret_payload(recorded) or is_secret_payload(actual):
        # Secret payloads carry only masked ciphertext, so a change cannot be seen, let alone shown.
        return
    if isinstance(recorded, dict) and isinstance(actual, dict):
        for key in sorted(recorded.keys() | actual.keys()):
            if not path and key.startswith("__"):
                continue  # engine bookkeeping such as __provider, not a property of the resource
            yield from _property_diffs(recorded.get(key), actual.get(key), _join(path, key))
    elif isinstance(recorded, list) and isinstance(actual, list) and len(recorded) == len(actual):
        for index, (old, new) in enumerate(zip(recorded, actual, strict=True)):
            yield from _property_diffs(old, new, _join(path, index))
    elif recorded != actual:
        yield PropertyDiff(path=path, recorded=masked(recorded), actual=masked(actual))


def detect_drift(
    stack: str, *, options: StackOptions | None = None, layers: Collection[Layer] = ALL_LAYERS
) -> DriftReport:
    """Compare the stack with reality in each of ``layers``, without writing any state.

    The IaC layer runs the engine's refresh in preview mode and reports each resource that changed or
    disappeared out of band, with its property differences (``has_drift``). Follow with :func:`refresh`
    to accept reality, or :func:`up` to restore the code's intent. The GitOps layer reads Flux's objects
    through the stack's own kubeconfig (``gitops``, ``healthy``); a stack that bootstraps no Flux has no
    GitOps section, and a cluster that cannot be reached is that section's ``error``.

    Example::

        report = detect_drift("prod")
        for resource in report.resources:
            print(resource.kind.value, resource.urn, [d.path for d in resource.diffs])
        print(report.healthy, report.gitops.problems if report.gitops else "no Flux")
    """
    chosen = tuple(layer for layer in ALL_LAYERS if layer in layers)
    if not chosen:
        raise ArgumentError("layers is empty: check iac, gitops or both")
    target = StackTarget.resolve(stack, options)
    if Layer.IAC not in chosen:
        return DriftReport(
            stack=stack,
            project=target.project.name,
            gitops=read_gitops(target),
            layers=chosen,
            checked_at=datetime.now(UTC),
        )
    drifted: list[DriftedResource] = []

    def collect(event: auto.EngineEvent) -> None:
        outputs = event.res_outputs_event
        if outputs is None or (kind := _DRIFT_OPS.get(outputs.metadata.op)) is None:
            return
        meta = outputs.metadata
        recorded = meta.old.outputs if meta.old else {}
        actual = meta.new.outputs if meta.new else {}
        diffs = (
            tuple(d for d in _property_diffs(recorded, actual) if _declared(meta.type, d))
            if kind is DriftKind.CHANGED
            else ()
        )
        if kind is DriftKind.CHANGED and not diffs:
            # Nothing visible changed. Either a secret did (the engine masks both sides, so which one
            # cannot be told: each secret property is reported, masked), or only the recorded inputs
            # would be rewritten (a provider's read normalising them) and the resource is unchanged.
            secrets = sorted(set(_secret_paths(recorded)) | set(_secret_paths(actual)))
            if not secrets:
                return
            diffs = tuple(PropertyDiff(path=path, recorded=SECRET, actual=SECRET) for path in secrets)
        drifted.append(DriftedResource(urn=meta.urn, type=meta.type, kind=kind, diffs=diffs))

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> DriftReport:
        # A refresh preview takes no lock, so mid-update it compared a half-written state and said "no
        # drift". A locked stack is reported as such (and waited for, with lock_wait).
        files = target.file_backend()
        held = files.locks() if files is not None else []
        if held:
            raise StackLockedError(
                f"stack {stack!r} is locked by an update ({held[0]}): its state is changing, so its drift "
                "cannot be told now; retry when it is done (lock_wait), or, if that update died, run "
                "`gitops-infra recover`",
                stack=stack,
            )
        # The GitOps layer is read while the refresh runs: both only read, and the refresh's processes
        # leave a core idle most of the time. Leaving the block waits for the read either way, so a
        # failed refresh leaves no connection, thread or temporary file behind.
        gitops: Future[GitOpsReport | None] | None = None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gitops-layer") as alongside:
            if Layer.GITOPS in chosen:
                gitops = alongside.submit(read_gitops, target)
            run_preview(pulumi_stack, events, collect, "refresh", "--preview-only")
        return DriftReport(
            stack=stack,
            resources=tuple(sorted(drifted, key=lambda r: r.urn)),
            project=target.project.name,
            gitops=gitops.result() if gitops is not None else None,
            layers=chosen,
            checked_at=datetime.now(UTC),
        )

    return run_engine(target, "detect_drift", work)
