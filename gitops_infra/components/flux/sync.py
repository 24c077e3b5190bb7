"""Sync: the ``GitRepository`` and the ``Kustomization`` that sync a path of the fleet repository.

The third piece of the bootstrap, as Flux's ``pkg/manifestgen/sync``: ``git_repository_manifest`` and
``kustomization_manifest`` turn ``SyncOptions`` into the two objects, and ``build_sync`` registers them.
The Kustomization prunes (``prune: true``), with optional SOPS decryption and health checks, and the
``environment`` contract handed to post-build substitution.

The bootstrap proves itself, as ``flux bootstrap`` does: both sync objects carry pulumi-kubernetes'
``pulumi.com/waitFor: condition=Ready`` (with ``pulumi.com/timeoutSeconds`` from ``ready_timeout``), so
``up`` succeeds only once Flux has cloned the repository and applied the path.

A credential change is proven the same way. The GitRepository carries ``reconcile.fluxcd.io/requestedAt``
set to a digest of its credential (the source's ``reconcile_request``, :mod:`.source_secret`): a new key
changes it, which asks source-controller to fetch now, and ``up`` waits until
``status.lastHandledReconcileAt`` echoes that value with the GitRepository Ready and not suspended. A Ready
condition alone cannot show it, since an annotation does not bump the generation and the old Ready still
stands; and a suspended GitRepository records a request as handled without fetching. Pulumi deletes what an
update replaced or dropped (the old deploy key, the old Secret) only after every resource of the update is
done, so the old credential outlives the proof that the new one works. The wait outlasts Flux's own
``timeout`` (by default it is that ``timeout`` plus a margin), so ``up`` fails with Flux's verdict, never
before it. A ``ready_timeout`` of ``0s`` turns the wait off, for a cluster Flux cannot reach yet.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.checks import DEFAULT_BRANCH
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import custom_resource
from gitops_infra.components.flux._names import FLUX_SECRET_NAME, FLUX_SYNC_NAME
from gitops_infra.defaults import (
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TIMEOUT,
    FLUX_NAMESPACE,
)

__all__ = [
    "GIT_REPOSITORY_API_VERSION",
    "HANDLED_REQUEST_PATH",
    "KUSTOMIZATION_API_VERSION",
    "KUSTOMIZATION_DELETION_POLICY",
    "RECONCILE_REQUEST_ANNOTATION",
    "TIMEOUT_ANNOTATION",
    "WAIT_FOR_ANNOTATION",
    "WAIT_FOR_READY",
    "SyncObjects",
    "SyncOptions",
    "build_sync",
    "git_repository_manifest",
    "kustomization_manifest",
    "ready_annotations",
]

GIT_REPOSITORY_API_VERSION = "source.toolkit.fluxcd.io/v1"
KUSTOMIZATION_API_VERSION = "kustomize.toolkit.fluxcd.io/v1"
KUSTOMIZATION_DELETION_POLICY = "WaitForTermination"  # Flux >= 2.6 (kustomize-controller v1.6)
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"  # pulumi-kubernetes >= 4.18
TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds"
WAIT_FOR_READY = "condition=Ready"
RECONCILE_REQUEST_ANNOTATION = checks.RECONCILE_REQUEST_ANNOTATION
HANDLED_REQUEST_PATH = "{.status.lastHandledReconcileAt}"  # the request value a reconcile has handled
# Matches only while the GitRepository is not suspended: a suspended one records a request as handled
# without fetching (source-controller v1.8.2 records it on every return, suspend included; v1.8.5 and
# v1.9.4 too), so the request alone proves nothing then. `interval` is a spec field the status does not have.
NOT_SUSPENDED_PATH = "{$[?@.interval && (!@.suspend || @.suspend == false)]}"


@dataclass(frozen=True)
class SyncOptions:
    """The GitRepository and Kustomization that sync ``path`` of ``url`` at ``branch``, in ``namespace``.

    ``ready_timeout`` is how long ``up`` waits for each to report Ready (``0s``: it does not wait); it
    must be longer than ``timeout``, and is ``timeout`` plus a margin when not given (:attr:`ready_wait`).
    ``substitute_from`` names ConfigMaps in ``namespace`` whose keys fleet manifests use as ``${key}``.
    ``provider`` is the GitRepository's ``spec.provider`` (``github`` for a GitHub App), and
    ``reconcile_request`` the value of its ``reconcile.fluxcd.io/requestedAt``, which ``up`` waits for
    Flux to have handled: ``FluxBootstrap`` sets both from its source.

    ``service_account_name`` is who kustomize-controller applies as (``spec.serviceAccountName``): unset,
    the controller's own identity, unless Flux runs locked down (``--default-service-account``), when an
    object that names none gets nothing. ``target_namespace`` puts every namespaced object the path holds
    in that namespace; ``labels`` go on both objects.
    """

    url: pulumi.Input[str]
    path: str
    branch: str = DEFAULT_BRANCH
    namespace: str = FLUX_NAMESPACE
    name: str = FLUX_SYNC_NAME
    secret_name: str = FLUX_SECRET_NAME
    git_interval: str = DEFAULT_GIT_INTERVAL
    interval: str = DEFAULT_INTERVAL
    retry_interval: str = DEFAULT_RETRY_INTERVAL
    timeout: str = DEFAULT_TIMEOUT
    decryption_secret: str | None = None
    health_checks: Sequence[Mapping[str, str]] = ()
    ready_timeout: str | None = None
    substitute_from: Sequence[str] = ()
    provider: str | None = None
    reconcile_request: pulumi.Input[str] | None = None
    service_account_name: str | None = None
    target_namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = Problems("SyncOptions")
        for key, value in self.labels.items():
            problem = checks.label_problem(key, value)
            if problem is not None:
                problems.add("labels", problem)
        for field_name, check in _SYNC_CHECKS.items():
            value = getattr(self, field_name)
            if value is not None:
                problems.gate(field_name, check, value)
        if self.ready_timeout is not None and not _refused(self.ready_timeout, self.timeout):
            problem = checks.ready_timeout_after_timeout_problem(self.ready_timeout, self.timeout)
            if problem is not None:
                problems.add("ready_timeout", problem)
        problems.raise_if_any()

    @property
    def ready_wait(self) -> str:
        """How long ``up`` waits for Ready: ``ready_timeout``, else ``timeout`` plus a margin."""
        return self.ready_timeout or checks.default_ready_timeout(self.timeout)


def _refused(*durations: str) -> bool:
    """True when any of ``durations`` is not one (its own check reports it)."""
    return any(checks.go_duration_problem(duration) is not None for duration in durations)


# The fields of SyncOptions, and the one check each shares with the stack config.
_SYNC_CHECKS = {
    "url": checks.git_url_problem,
    "provider": checks.git_provider_problem,
    "reconcile_request": checks.reconcile_request_problem,
    "path": checks.relative_path_problem,
    "branch": checks.branch_problem,
    "namespace": checks.dns_label_problem,
    "service_account_name": checks.dns_label_problem,
    "target_namespace": checks.dns_label_problem,
    "git_interval": checks.go_duration_problem,
    "interval": checks.go_duration_problem,
    "retry_interval": checks.go_duration_problem,
    "timeout": checks.go_duration_problem,
    "ready_timeout": checks.ready_timeout_problem,
}


def ready_annotations(ready_timeout: str) -> dict[str, str]:
    """The annotations that make ``up`` wait for a Flux object's Ready condition, up to ``ready_timeout``.

    None for ``0s``. The provider's timeout is whole seconds, so a fraction rounds up.
    """
    seconds = math.ceil(checks.parse_duration(ready_timeout).total_seconds())
    if seconds == 0:
        return {}
    return {WAIT_FOR_ANNOTATION: WAIT_FOR_READY, TIMEOUT_ANNOTATION: str(seconds)}


def _metadata(options: SyncOptions) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": options.name, "namespace": options.namespace}
    if options.labels:
        metadata["labels"] = dict(options.labels)
    annotations = ready_annotations(options.ready_wait)
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def _git_repository_metadata(options: SyncOptions) -> dict[str, Any]:
    """The GitRepository's metadata: with a reconcile request, the wait is for Flux to have handled it
    (``lastHandledReconcileAt``) and to be Ready, not suspended, all on the same observed object."""
    metadata = _metadata(options)
    request = options.reconcile_request
    if request is None:
        return metadata
    annotations: dict[str, Any] = {**metadata.get("annotations", {}), RECONCILE_REQUEST_ANNOTATION: request}
    if WAIT_FOR_ANNOTATION in annotations:
        annotations[WAIT_FOR_ANNOTATION] = pulumi.Output.from_input(request).apply(
            lambda value: json.dumps(
                [f"jsonpath={HANDLED_REQUEST_PATH}={value}", WAIT_FOR_READY, f"jsonpath={NOT_SUSPENDED_PATH}"]
            )
        )
    return {**metadata, "annotations": annotations}


def git_repository_manifest(options: SyncOptions) -> dict[str, Any]:
    """The ``GitRepository`` object."""
    spec: dict[str, Any] = {
        "url": options.url,
        "ref": {"branch": options.branch},
        "interval": options.git_interval,
        "secretRef": {"name": options.secret_name},
    }
    if options.provider is not None:
        spec["provider"] = options.provider
    return {
        "apiVersion": GIT_REPOSITORY_API_VERSION,
        "kind": "GitRepository",
        "metadata": _git_repository_metadata(options),
        "spec": spec,
    }


def kustomization_manifest(options: SyncOptions) -> dict[str, Any]:
    """The ``Kustomization`` object: prune on; the identity it applies as, a target namespace, SOPS
    decryption, health checks and post-build substitution when asked for."""
    spec: dict[str, Any] = {
        "interval": options.interval,
        "retryInterval": options.retry_interval,
        "timeout": options.timeout,
        "path": f"./{options.path.strip('/')}",
        "prune": True,
        "deletionPolicy": KUSTOMIZATION_DELETION_POLICY,
        "sourceRef": {"kind": "GitRepository", "name": options.name},
    }
    if options.service_account_name is not None:
        spec["serviceAccountName"] = options.service_account_name
    if options.target_namespace is not None:
        spec["targetNamespace"] = options.target_namespace
    if options.decryption_secret is not None:
        spec["decryption"] = {"provider": "sops", "secretRef": {"name": options.decryption_secret}}
    if options.health_checks:
        spec["healthChecks"] = [dict(check) for check in options.health_checks]
    if options.substitute_from:
        spec["postBuild"] = {
            # Not optional: without the ConfigMap, Flux would substitute nothing and apply ${baseDomain}.
            "substituteFrom": [
                {"kind": "ConfigMap", "name": name, "optional": False} for name in options.substitute_from
            ]
        }
    return {
        "apiVersion": KUSTOMIZATION_API_VERSION,
        "kind": "Kustomization",
        "metadata": _metadata(options),
        "spec": spec,
    }


@dataclass(frozen=True)
class SyncObjects:
    """The two sync custom resources."""

    git_repository: k8s.apiextensions.CustomResource
    kustomization: k8s.apiextensions.CustomResource


def build_sync(
    name: str,
    options: SyncOptions,
    controllers: pulumi.Resource | None,
    secrets: Sequence[k8s.core.v1.SecretPatch],
    parent: pulumi.Resource,
    sync_after: Sequence[pulumi.Resource] = (),
) -> SyncObjects:
    """The GitRepository and Kustomization, after the controllers (their CRDs) and the Secrets they use.

    ``controllers`` is ``None`` when Flux is installed outside this component. Both also wait for
    ``sync_after``: what the path needs to exist (the scaffolded path, the ConfigMaps the Kustomization
    substitutes from). The GitRepository too: it fetches once when made, and a fetch before the scaffold's
    commit would leave the Kustomization an artifact without its path until the next interval.
    """
    installed = [controllers] if controllers is not None else []
    # `pulumi.com/timeoutSeconds` bounds every operation on the object, deletes included; a delete gets
    # its own, longer bound: kustomize-controller holds its finalizer while what it applied goes
    # (WaitForTermination), up to `timeout`, so a delete must outlast that (never below the provider's 10m).
    deletes = pulumi.CustomTimeouts(delete=checks.delete_timeout(options.timeout))
    git_repository = custom_resource(
        f"{name}-git-repository",
        git_repository_manifest(options),
        pulumi.ResourceOptions(
            parent=parent, depends_on=[*installed, *secrets, *sync_after], custom_timeouts=deletes
        ),
    )
    kustomization = custom_resource(
        f"{name}-kustomization",
        kustomization_manifest(options),
        pulumi.ResourceOptions(
            parent=parent,
            depends_on=[*installed, git_repository, *sync_after],
            custom_timeouts=deletes,
        ),
    )
    return SyncObjects(git_repository=git_repository, kustomization=kustomization)
