"""The fleet's sync path as ``FleetRepository`` scaffolds it for Argo CD (``gitops.engine: argocd``).

The root ``Application`` renders the path with kustomize, so the path holds a ``kustomization.yaml`` that
lists one ``ApplicationSet``, ``apps``. Its cluster generator selects the cluster Secrets labelled with the
environment's name, which the platform publishes the contract on (:mod:`.argocd.cluster_secret`), and
renders one ``Application`` per such cluster: ``<path>/apps`` into the contract's ``serviceNamespace``, with
the contract's ``baseDomain`` in its ``info``. App teams list their manifests in ``apps/``; a template
reads any contract key as ``{{index .metadata.annotations "gitops-infra.io/<key>"}}``.

Argo CD refuses an Application whose path does not exist, and git keeps no empty directory: ``apps/``
starts with a README.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitops_infra.components.argocd._names import RESOURCES_FINALIZER
from gitops_infra.components.argocd.cluster_secret import CONTRACT_ANNOTATION_PREFIX, ENVIRONMENT_LABEL
from gitops_infra.contract import CLUSTER_SECRET_STORE_KEY, CONTRACT_KEYS
from gitops_infra.defaults import ARGO_CD_ROOT

__all__ = ["APPLICATION_SET_FILE", "APPS_DIR", "ArgoCdScaffold", "argocd_files"]

APPLICATION_SET_FILE = "applicationset.yaml"
APPS_DIR = "apps"


@dataclass(frozen=True)
class ArgoCdScaffold:
    """What the Argo CD scaffold names: the fleet repository's URL and branch, and the root's project."""

    url: str
    branch: str
    project: str = ARGO_CD_ROOT


def _annotation(key: str) -> str:
    return f'{{{{index .metadata.annotations "{CONTRACT_ANNOTATION_PREFIX}{key}"}}}}'


def application_set(path: str, environment: str, scaffold: ArgoCdScaffold) -> str:
    """The ``apps`` ApplicationSet, as YAML."""
    return f"""\
# One Application per cluster of this environment, from the contract the platform publishes on the
# cluster's Secret: labels select it, annotations hold every contract key.
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: apps
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
    - clusters:
        selector:
          matchLabels:
            {ENVIRONMENT_LABEL}: {environment}
  template:
    metadata:
      name: 'apps-{{{{.name}}}}'
      # Deleting the Application (the platform's destroy, a cluster leaving the set) deletes what it applied.
      finalizers: [{RESOURCES_FINALIZER}]
    spec:
      project: {scaffold.project}
      source:
        repoURL: {scaffold.url}
        targetRevision: {scaffold.branch}
        path: {path}/{APPS_DIR}
      destination:
        server: '{{{{.server}}}}'
        namespace: '{_annotation("serviceNamespace")}'
      info:
        - name: baseDomain
          value: '{_annotation("baseDomain")}'
      syncPolicy:
        automated:
          prune: true
          selfHeal: true
"""


def argocd_files(
    path: str, environment: str, scaffold: ArgoCdScaffold, *, secret_store: bool = False
) -> dict[str, str]:
    """The starter files of ``path`` for Argo CD, by their path in the repository."""
    keys = [key for key in CONTRACT_KEYS if key != CLUSTER_SECRET_STORE_KEY or secret_store]
    annotations = "".join(f"- `{CONTRACT_ANNOTATION_PREFIX}{key}`\n" for key in keys)
    readme = (
        f"# {path}\n\n"
        f"Argo CD syncs this directory to the {environment} cluster: its root Application renders it\n"
        "with kustomize. List your Applications and ApplicationSets under `resources` in\n"
        "`kustomization.yaml`.\n\n"
        f"`{APPLICATION_SET_FILE}` renders one Application per cluster of this environment, from\n"
        f"`{APPS_DIR}/`, into the contract's `serviceNamespace`. The platform publishes the environment\n"
        f"contract on the cluster's Secret in Argo CD's namespace: the label `{ENVIRONMENT_LABEL}` (the\n"
        f"environment's name), and one annotation per contract key:\n\n{annotations}\n"
        "A template reads one as\n"
        f'`{{{{index .metadata.annotations "{CONTRACT_ANNOTATION_PREFIX}baseDomain"}}}}`.\n\n'
        "gitops-infra created these files once and never changes them again: they are yours.\n"
    )
    kustomization = (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {APPLICATION_SET_FILE}\n"
    )
    apps_readme = (
        f"# {path}/{APPS_DIR}\n\nThe manifests of the `apps` Application: write them here, as plain YAML.\n"
    )
    return {
        f"{path}/kustomization.yaml": kustomization,
        f"{path}/README.md": readme,
        f"{path}/{APPLICATION_SET_FILE}": application_set(path, environment, scaffold),
        f"{path}/{APPS_DIR}/README.md": apps_readme,
    }
