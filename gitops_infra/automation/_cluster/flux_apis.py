"""Flux's APIs as the automation layer reaches them: each kind's group, plural, and every version it was
served at, newest first.

The one list: the GitOps layer reads these kinds (``gitops``) and the drain before a destroy suspends
them (``drain``). Which version a request names is the cluster's to say, by API discovery
(``kube.Discovery``): the newest of these it serves. A Flux older than the pinned one, under
``flux.install: external``, serves only a beta (a HelmRelease only at ``v2beta1`` before Flux 2.2); one
newer than this code may serve a version not listed here, and that is read, at the highest it serves
(``kube.served_version`` says why that is safe). A kind served at no version is not installed: that
cluster has none of it.

Example::

    >>> HELM_RELEASE.versions
    ('v2', 'v2beta2', 'v2beta1')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "APPLIED_BY_NAMESPACE_LABEL",
    "APPLIED_BY_NAME_LABEL",
    "GIT_REPOSITORY",
    "HELM_RELEASE",
    "KUSTOMIZATION",
    "SYNC_KINDS",
    "FluxKind",
]


@dataclass(frozen=True)
class FluxKind:
    """One Flux kind: its API group, kind, plural, and the versions Flux served it at, newest first."""

    group: str
    kind: str
    plural: str
    versions: tuple[str, ...]


# v1 from Flux 2.0 (source-controller #1056); v1beta2 until 2.7, removed in 2.8 (Flux roadmap,
# fluxcd/flux2 #5711); v1beta1 in Flux 0.x.
GIT_REPOSITORY = FluxKind(
    "source.toolkit.fluxcd.io", "GitRepository", "gitrepositories", ("v1", "v1beta2", "v1beta1")
)
# v1 from Flux 2.0 (kustomize-controller #822); v1beta2 until 2.7, removed in 2.8; v1beta1 in Flux 0.x.
KUSTOMIZATION = FluxKind(
    "kustomize.toolkit.fluxcd.io", "Kustomization", "kustomizations", ("v1", "v1beta2", "v1beta1")
)
# v2 from Flux 2.3; v2beta2 from 2.2, removed in 2.8 (helm-controller #1404); v2beta1 from Flux 0.x to
# 2.6, removed in 2.7 (helm-controller #1396).
HELM_RELEASE = FluxKind("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", ("v2", "v2beta2", "v2beta1"))

SYNC_KINDS = (KUSTOMIZATION, HELM_RELEASE)
"""The kinds that apply git to the cluster: the GitOps layer reports each one that fails, and the drain
suspends every one before a destroy."""

APPLIED_BY_NAME_LABEL = f"{KUSTOMIZATION.group}/name"
APPLIED_BY_NAMESPACE_LABEL = f"{KUSTOMIZATION.group}/namespace"
"""What kustomize-controller labels every object it applied with: its Kustomization's name and namespace."""
