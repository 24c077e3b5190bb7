"""``FluxBootstrap``: Flux CD installed onto a cluster and syncing a path of the fleet repository.

Like Flux's own ``pkg/manifestgen``, the bootstrap is made of separable pieces, a module each, and each
piece is a pure *options → manifest* function plus a builder that registers it:

1. :mod:`.install` (``install_values`` / ``build_install``): the controllers, from the fluxcd-community
   ``flux2`` Helm chart at a pinned version, as a ``helm.v3.Release``.
2. :mod:`.source_secret` (``source_secret_data`` / ``build_source_secret``): the git-auth Secret, for a
   deploy key (``SourceSecretOptions``) or a GitHub App (``GitHubAppSecretOptions``); and the SOPS age key.
3. :mod:`.sync` (``git_repository_manifest``, ``kustomization_manifest`` / ``build_sync``): the
   ``GitRepository`` and the ``Kustomization`` (``prune: true``), which ``up`` waits on.
   Or :mod:`.operator` (``flux_instance_manifest`` / ``build_operator``): the Flux Operator and a
   ``FluxInstance`` of a pinned Flux release, which installs the controllers.
4. :mod:`.notifications` (``notification_manifests`` / ``build_notifications``), optional: a
   notification ``Provider`` and an ``Alert`` on the sync objects' events.
5. :mod:`.receiver` (``receiver_manifest`` / ``build_receiver``, ``build_repository_webhook``),
   optional: instant sync, a ``Receiver`` of GitHub's pushes with its token, and the GitHub webhook.

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
from gitops_infra.components.flux import (
    _names,
    bootstrap,
    install,
    notifications,
    operator,
    receiver,
    source_secret,
    sync,
)

# Each piece's public names are its `__all__`, re-exported whole, as Pulumi's own SDK packages do.
from gitops_infra.components.flux._names import *  # noqa: F403
from gitops_infra.components.flux.bootstrap import *  # noqa: F403
from gitops_infra.components.flux.install import *  # noqa: F403
from gitops_infra.components.flux.notifications import *  # noqa: F403
from gitops_infra.components.flux.operator import *  # noqa: F403
from gitops_infra.components.flux.receiver import *  # noqa: F403
from gitops_infra.components.flux.source_secret import *  # noqa: F403
from gitops_infra.components.flux.sync import *  # noqa: F403
from gitops_infra.defaults import (
    DEFAULT_COMPONENTS,
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TIMEOUT,
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_OPERATOR_CHART_VERSION,
    FLUX_OPERATOR_FLUX_VERSION,
    FLUX_OPERATOR_VERSION,
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
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_OPERATOR_CHART_VERSION",
    "FLUX_OPERATOR_FLUX_VERSION",
    "FLUX_OPERATOR_VERSION",
    "FLUX_VERSION",
    "KUBERNETES_FLOOR",
    "MIN_KUBERNETES_VERSION",
    "FluxComponent",
    "FluxInstall",
    "image_automation_enabled",
    "kubernetes_floor_problem",
]
__all__ += _names.__all__
__all__ += bootstrap.__all__
__all__ += install.__all__
__all__ += notifications.__all__
__all__ += receiver.__all__
__all__ += operator.__all__
__all__ += source_secret.__all__
__all__ += sync.__all__
