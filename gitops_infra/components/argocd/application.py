"""Root: the ``Application`` (app of apps) that syncs the fleet's path, which ``up`` waits on.

The fifth piece of :mod:`gitops_infra.components.argocd`: ``root_application_manifest`` turns
``RootOptions`` into the object, and ``build_root`` registers it. It syncs ``path`` of the fleet
repository at ``branch`` automatically, with ``prune`` and ``selfHeal``, retrying a failed sync with
backoff, and makes the namespaces it syncs into (``CreateNamespace=true``). Its resources finalizer makes
a delete of the root (the stack's destroy) delete what it applied first, as Flux's
``WaitForTermination`` does.

The root proves itself, as Flux's sync does (:mod:`gitops_infra.components.flux.sync`): it carries
pulumi-kubernetes' ``pulumi.com/waitFor`` with three conditions, so ``up`` succeeds only once Argo CD
reports it ``Synced`` and ``Healthy``, and has answered the platform's refresh request. Each apply of
the root (a first ``up``, and every change of it) asks for a hard refresh
(``argocd.argoproj.io/refresh: hard``), which makes the application controller fetch and render again,
past its caches, and which it removes once it has recorded that comparison in the status. The root
carries a digest of the fleet's credential (``credential``), so a new key or App changes the root and so
asks again: ``up`` then returns only once Argo CD fetched with the new credential, and Pulumi deletes
the old key after that. A failed fetch leaves the sync status ``Unknown`` with Argo CD's
``ComparisonError``, and the wait ends in a timeout that the automation layer reports with Argo CD's
condition. A ``ready_timeout`` of ``0s`` turns the wait off.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.checks import DEFAULT_BRANCH
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import custom_resource
from gitops_infra.components.argocd._names import (
    APPLICATION_API_VERSION,
    IN_CLUSTER_SERVER,
    REFRESH_ANNOTATION,
    RESOURCES_FINALIZER,
)
from gitops_infra.components.flux.sync import TIMEOUT_ANNOTATION, WAIT_FOR_ANNOTATION
from gitops_infra.defaults import (
    ARGO_CD_NAMESPACE,
    ARGO_CD_RETRY_BACKOFF,
    ARGO_CD_RETRY_LIMIT,
    ARGO_CD_RETRY_MAX_BACKOFF,
    ARGO_CD_ROOT,
    DEFAULT_TIMEOUT,
)

__all__ = [
    "CREDENTIAL_ANNOTATION",
    "HARD_REFRESH",
    "ROOT_WAIT_CONDITIONS",
    "RetryOptions",
    "RootOptions",
    "build_root",
    "root_application_manifest",
]

HARD_REFRESH = "hard"
CREDENTIAL_ANNOTATION = "gitops-infra.io/credential"
"""A digest of the credential the root is fetched with (its change asks Argo CD to fetch again)."""
ROOT_WAIT_CONDITIONS = (
    "jsonpath={.status.sync.status}=Synced",
    "jsonpath={.status.health.status}=Healthy",
    # Matches once the refresh request is gone (the controller removes it with the status it recorded):
    # `annotations` is a member of metadata only, which always has some (the wait's own).
    f"jsonpath={{$[?@.annotations && !@.annotations['{REFRESH_ANNOTATION}']]}}",
)
"""What ``up`` waits for on the root, all at once on one observed object."""


@dataclass(frozen=True)
class RetryOptions:
    """``syncPolicy.retry``: ``limit`` retries, the first after ``backoff``, each next ``factor`` times
    longer, up to ``max_backoff``."""

    limit: int = ARGO_CD_RETRY_LIMIT
    backoff: str = ARGO_CD_RETRY_BACKOFF
    factor: int = 2
    max_backoff: str = ARGO_CD_RETRY_MAX_BACKOFF

    def __post_init__(self) -> None:
        problems = Problems("RetryOptions")
        problems.gate("limit", checks.retry_limit_problem, self.limit)
        problems.gate("backoff", checks.go_duration_problem, self.backoff)
        problems.gate("max_backoff", checks.go_duration_problem, self.max_backoff)
        problems.gate("factor", checks.retry_factor_problem, self.factor)
        problems.raise_if_any()


@dataclass(frozen=True)
class RootOptions:
    """The root ``Application`` ``name`` in ``namespace`` (Argo CD's), in the ``AppProject`` ``project``:
    ``path`` of ``url`` at ``branch``, applied to the cluster Argo CD runs in."""

    url: pulumi.Input[str]
    path: str
    branch: str = DEFAULT_BRANCH
    name: str = ARGO_CD_ROOT
    project: str = ARGO_CD_ROOT
    namespace: str = ARGO_CD_NAMESPACE
    destination_namespace: str = ARGO_CD_NAMESPACE
    """Where the path's namespaced objects that name no namespace go (the child ``Application``s)."""
    prune: bool = True
    self_heal: bool = True
    retry: RetryOptions = RetryOptions()
    ready_timeout: str = DEFAULT_TIMEOUT
    credential: pulumi.Input[str] | None = None
    """A digest naming the credential Argo CD fetches with (the source's ``reconcile_request``)."""

    def __post_init__(self) -> None:
        problems = Problems("RootOptions")
        if isinstance(self.url, str):  # an Output (a created repository's URL) is checked where it is made
            problems.gate("url", checks.git_url_problem, self.url)
        problems.gate("path", checks.relative_path_problem, self.path)
        problems.gate("branch", checks.branch_problem, self.branch)
        for key in ("name", "project", "namespace", "destination_namespace"):
            problems.gate(key, checks.dns_label_problem, getattr(self, key))
        problems.gate("ready_timeout", checks.ready_timeout_problem, self.ready_timeout)
        problems.check(isinstance(self.retry, RetryOptions), "retry", "must be a RetryOptions")
        problems.raise_if_any()


def _annotations(options: RootOptions) -> dict[str, Any]:
    annotations: dict[str, Any] = {REFRESH_ANNOTATION: HARD_REFRESH}
    if options.credential is not None:
        annotations[CREDENTIAL_ANNOTATION] = options.credential
    seconds = math.ceil(checks.parse_duration(options.ready_timeout).total_seconds())
    if seconds:
        annotations |= {
            WAIT_FOR_ANNOTATION: json.dumps(list(ROOT_WAIT_CONDITIONS)),
            TIMEOUT_ANNOTATION: str(seconds),
        }
    return annotations


def root_application_manifest(options: RootOptions) -> dict[str, Any]:
    """The root ``Application`` object."""
    retry = options.retry
    return {
        "apiVersion": APPLICATION_API_VERSION,
        "kind": "Application",
        "metadata": {
            "name": options.name,
            "namespace": options.namespace,
            "finalizers": [RESOURCES_FINALIZER],
            "annotations": _annotations(options),
        },
        "spec": {
            "project": options.project,
            "source": {
                "repoURL": options.url,
                "targetRevision": options.branch,
                "path": options.path.strip("/"),
            },
            "destination": {"server": IN_CLUSTER_SERVER, "namespace": options.destination_namespace},
            "syncPolicy": {
                "automated": {"prune": options.prune, "selfHeal": options.self_heal},
                "syncOptions": ["CreateNamespace=true"],
                "retry": {
                    "limit": retry.limit,
                    "backoff": {
                        "duration": retry.backoff,
                        "factor": retry.factor,
                        "maxDuration": retry.max_backoff,
                    },
                },
            },
        },
    }


def build_root(
    name: str, options: RootOptions, depends_on: list[pulumi.Resource], parent: pulumi.Resource
) -> k8s.apiextensions.CustomResource:
    """The root ``Application``, after Argo CD (its CRDs), the repository, the project and the contract.

    Its delete outlasts Argo CD's cascading delete of what it applied (never below the provider's 10m)."""
    deletes = pulumi.CustomTimeouts(delete=checks.delete_timeout(options.ready_timeout))
    return custom_resource(
        f"{name}-root",
        root_application_manifest(options),
        pulumi.ResourceOptions(parent=parent, depends_on=depends_on, custom_timeouts=deletes),
    )
