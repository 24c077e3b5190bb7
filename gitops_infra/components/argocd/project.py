"""Project: the ``AppProject`` that bounds the root ``Application`` to the fleet repository and the
namespaces the platform gives it.

The third piece of :mod:`gitops_infra.components.argocd`: ``app_project_manifest`` turns
``ProjectOptions`` into the object. The project allows one source, the fleet repository, and one
destination per namespace, on the cluster Argo CD runs in; no wildcard (the policy pack refuses one). Of
what is cluster-scoped, it allows only Namespaces, which the root makes for what it syncs
(``CreateNamespace``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components.argocd._names import APPLICATION_API_VERSION, IN_CLUSTER_SERVER
from gitops_infra.defaults import ARGO_CD_NAMESPACE, ARGO_CD_ROOT

__all__ = ["ProjectOptions", "app_project_manifest"]


@dataclass(frozen=True)
class ProjectOptions:
    """The ``AppProject`` ``name`` in ``namespace`` (Argo CD's): ``repository`` its only source, and
    ``destinations`` the namespaces it may deploy to."""

    repository: pulumi.Input[str]
    destinations: Sequence[str]
    name: str = ARGO_CD_ROOT
    namespace: str = ARGO_CD_NAMESPACE

    def __post_init__(self) -> None:
        problems = Problems("ProjectOptions")
        problems.gate("name", checks.dns_label_problem, self.name)
        problems.gate("namespace", checks.dns_label_problem, self.namespace)
        problems.check(bool(self.destinations), "destinations", "must name at least one namespace")
        for index, destination in enumerate(self.destinations):
            problems.gate(f"destinations[{index}]", checks.project_destination_problem, destination)
        problems.raise_if_any()


def app_project_manifest(options: ProjectOptions) -> dict[str, Any]:
    """The ``AppProject`` object."""
    return {
        "apiVersion": APPLICATION_API_VERSION,
        "kind": "AppProject",
        "metadata": {"name": options.name, "namespace": options.namespace},
        "spec": {
            "description": "The platform's root: the fleet repository, into the namespaces it was given",
            "sourceRepos": [options.repository],
            "destinations": [
                {"server": IN_CLUSTER_SERVER, "namespace": namespace}
                for namespace in dict.fromkeys(options.destinations)
            ],
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
        },
    }
