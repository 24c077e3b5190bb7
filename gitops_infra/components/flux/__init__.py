"""``FluxBootstrap``: Flux CD installed onto a cluster and syncing a path of the fleet repository.

Like Flux's own ``pkg/manifestgen``, the bootstrap is made of separable pieces, a module each, and each
piece is a pure *options → manifest* function plus a builder that registers it:

1. :mod:`.install` (``install_values`` / ``build_install``): the controllers, from the fluxcd-community
   ``flux2`` Helm chart at a pinned version, as a ``helm.v3.Release``.
2. :mod:`.source_secret` (``source_secret_data`` / ``build_source_secret``): the git-auth Secret, for a
   deploy key (``SourceSecretOptions``) or a GitHub App (``GitHubAppSecretOptions``); and the SOPS age key.
3. :mod:`.sync` (``git_repository_manifest``, ``kustomization_manifest`` / ``build_sync``): the
   ``GitRepository`` and the ``Kustomization`` (``prune: true``), which ``up`` waits on.
4. :mod:`.notifications` (``notification_manifests`` / ``build_notifications``), optional: a
   notification ``Provider`` and an ``Alert`` on the sync objects' events.

:mod:`.bootstrap` holds the component, ``FluxBootstrap``, and its ``FluxBootstrapArgs``, which take the
option groups whole, as Flux's ``bootstrap.Run`` does; it orders the pieces so that ``destroy`` removes
the sync objects while the controllers still run.

The bootstrap proves itself, as ``flux bootstrap`` does: ``up`` succeeds only once Flux has cloned the
repository and applied the path, and a new credential is proven to work before the old one goes (see
:mod:`.sync`).

This package re-exports every piece's public names, and the modes and defaults of
:mod:`gitops_infra.defaults` that Flux's settings take.
"""

from __future__ import annotations

from gitops_infra.checks import DEFAULT_BRANCH, kubernetes_floor_problem
from gitops_infra.components.flux._names import FLUX_SECRET_NAME, FLUX_SYNC_NAME
from gitops_infra.components.flux.bootstrap import FluxBootstrap, FluxBootstrapArgs
from gitops_infra.components.flux.install import (
    FLUX_CHART,
    FLUX_CHART_REPOSITORY,
    REQUIRED_COMPONENTS,
    InstallOptions,
    build_install,
    install_values,
)
from gitops_infra.components.flux.notifications import (
    NOTIFICATION_ADDRESS_KEY,
    NOTIFICATION_API_VERSION,
    NOTIFICATION_WEBHOOK_SECRET_NAME,
    NotificationArgs,
    Notifications,
    build_notifications,
    notification_manifests,
)
from gitops_infra.components.flux.source_secret import (
    GITHUB_APP_BASE_URL_KEY,
    GITHUB_APP_ID_KEY,
    GITHUB_APP_INSTALLATION_ID_KEY,
    GITHUB_APP_PRIVATE_KEY_KEY,
    GITHUB_APP_SECRET_NAME,
    GITHUB_PROVIDER,
    IDENTITY_KEY,
    IDENTITY_PUB_KEY,
    KNOWN_HOSTS_KEY,
    SOPS_AGE_KEY,
    SOPS_SECRET_NAME,
    GitAuth,
    GitHubAppSecretOptions,
    SourceSecretOptions,
    build_sops_secret,
    build_source_secret,
    credential_digest,
    source_secret_data,
)
from gitops_infra.components.flux.sync import (
    GIT_REPOSITORY_API_VERSION,
    HANDLED_REQUEST_PATH,
    KUSTOMIZATION_API_VERSION,
    KUSTOMIZATION_DELETION_POLICY,
    RECONCILE_REQUEST_ANNOTATION,
    TIMEOUT_ANNOTATION,
    WAIT_FOR_ANNOTATION,
    WAIT_FOR_READY,
    SyncObjects,
    SyncOptions,
    build_sync,
    git_repository_manifest,
    kustomization_manifest,
    ready_annotations,
)
from gitops_infra.defaults import (
    DEFAULT_COMPONENTS,
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TIMEOUT,
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_VERSION,
    KUBERNETES_FLOOR,
    MIN_KUBERNETES_VERSION,
    FluxComponent,
    FluxInstall,
    image_automation_enabled,
)

__all__ = [
    "DEFAULT_BRANCH",
    "DEFAULT_COMPONENTS",
    "DEFAULT_GIT_INTERVAL",
    "DEFAULT_INTERVAL",
    "DEFAULT_RETRY_INTERVAL",
    "DEFAULT_TIMEOUT",
    "FLUX_CHART",
    "FLUX_CHART_REPOSITORY",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_SECRET_NAME",
    "FLUX_SYNC_NAME",
    "FLUX_VERSION",
    "GITHUB_APP_BASE_URL_KEY",
    "GITHUB_APP_ID_KEY",
    "GITHUB_APP_INSTALLATION_ID_KEY",
    "GITHUB_APP_PRIVATE_KEY_KEY",
    "GITHUB_APP_SECRET_NAME",
    "GITHUB_PROVIDER",
    "GIT_REPOSITORY_API_VERSION",
    "HANDLED_REQUEST_PATH",
    "IDENTITY_KEY",
    "IDENTITY_PUB_KEY",
    "KNOWN_HOSTS_KEY",
    "KUBERNETES_FLOOR",
    "KUSTOMIZATION_API_VERSION",
    "KUSTOMIZATION_DELETION_POLICY",
    "MIN_KUBERNETES_VERSION",
    "NOTIFICATION_ADDRESS_KEY",
    "NOTIFICATION_API_VERSION",
    "NOTIFICATION_WEBHOOK_SECRET_NAME",
    "RECONCILE_REQUEST_ANNOTATION",
    "REQUIRED_COMPONENTS",
    "SOPS_AGE_KEY",
    "SOPS_SECRET_NAME",
    "TIMEOUT_ANNOTATION",
    "WAIT_FOR_ANNOTATION",
    "WAIT_FOR_READY",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "FluxInstall",
    "GitAuth",
    "GitHubAppSecretOptions",
    "InstallOptions",
    "NotificationArgs",
    "Notifications",
    "SourceSecretOptions",
    "SyncObjects",
    "SyncOptions",
    "build_install",
    "build_notifications",
    "build_sops_secret",
    "build_source_secret",
    "build_sync",
    "credential_digest",
    "git_repository_manifest",
    "image_automation_enabled",
    "install_values",
    "kubernetes_floor_problem",
    "kustomization_manifest",
    "notification_manifests",
    "ready_annotations",
    "source_secret_data",
]
