"""The names Argo CD's objects are known by, shared by the pieces and the automation layer."""

from __future__ import annotations

from gitops_infra import checks

__all__ = [
    "APPLICATION_API_VERSION",
    "IN_CLUSTER_SERVER",
    "REFRESH_ANNOTATION",
    "RESOURCES_FINALIZER",
    "SECRET_TYPE_LABEL",
]

APPLICATION_API_VERSION = "argoproj.io/v1alpha1"
"""The API of ``Application``, ``ApplicationSet`` and ``AppProject`` (Argo CD 3.x)."""
SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
"""The label that makes a Secret in Argo CD's namespace a ``repository`` or a ``cluster`` to Argo CD."""
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
"""The destination server Argo CD calls the cluster it runs in."""
REFRESH_ANNOTATION = checks.REFRESH_ANNOTATION
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
"""On an Application, deleting it deletes what it applied first (a cascading delete)."""
