"""``ArgoCdBootstrap``: Argo CD installed onto a cluster and syncing a path of the fleet repository.

The second GitOps engine (``gitops.engine: argocd``), built like :mod:`gitops_infra.components.flux`:
separable pieces, a module each, each a pure *options → manifest* function and a builder that registers
it:

1. :mod:`.install` (``install_values`` / ``build_install``): Argo CD, from the ``argo-cd`` Helm chart
   at a pinned version, with the fleet's SSH host keys trusted.
2. :mod:`.repository` (``repository_secret_data`` / ``build_repository``): the repository Secret, for a
   deploy key or a GitHub App (the same ``GitAuth`` as Flux's); and the host keys when Argo CD is
   installed elsewhere.
3. :mod:`.project` (``app_project_manifest``): the ``AppProject`` that bounds the root to the fleet
   repository and its namespaces.
4. :mod:`.cluster_secret` (``cluster_secret_metadata`` / ``build_cluster_secret``): the environment
   contract on the in-cluster cluster Secret, for ``ApplicationSet`` cluster generators.
5. :mod:`.application` (``root_application_manifest`` / ``build_root``): the root ``Application`` (app of
   apps), automated with ``prune``, ``selfHeal`` and retry, which ``up`` waits on.

:mod:`.bootstrap` holds the component, ``ArgoCdBootstrap``, and its ``ArgoCdBootstrapArgs``.
"""

from __future__ import annotations

from gitops_infra.components.argocd import (
    _names,
    application,
    bootstrap,
    cluster_secret,
    install,
    project,
    repository,
)
from gitops_infra.components.argocd._names import *  # noqa: F403
from gitops_infra.components.argocd.application import *  # noqa: F403
from gitops_infra.components.argocd.bootstrap import *  # noqa: F403
from gitops_infra.components.argocd.cluster_secret import *  # noqa: F403
from gitops_infra.components.argocd.install import *  # noqa: F403
from gitops_infra.components.argocd.project import *  # noqa: F403
from gitops_infra.components.argocd.repository import *  # noqa: F403
from gitops_infra.defaults import ARGO_CD_CHART_VERSION, ARGO_CD_NAMESPACE, ARGO_CD_ROOT, ARGO_CD_VERSION

__all__ = ["ARGO_CD_CHART_VERSION", "ARGO_CD_NAMESPACE", "ARGO_CD_ROOT", "ARGO_CD_VERSION"]
__all__ += _names.__all__
__all__ += application.__all__
__all__ += bootstrap.__all__
__all__ += cluster_secret.__all__
__all__ += install.__all__
__all__ += project.__all__
__all__ += repository.__all__
