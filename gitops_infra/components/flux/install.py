"""Install: Flux's controllers, from the fluxcd-community ``flux2`` Helm chart at a pinned version.

The first piece of the bootstrap, as Flux's ``pkg/manifestgen/install``: ``install_values`` turns
``InstallOptions`` into the chart's values, and ``build_install`` registers them as a ``helm.v3.Release``
of ``FLUX_CHART_VERSION`` (Flux ``FLUX_VERSION``). Helm renders and applies it inside the Kubernetes
provider, so nothing is downloaded at program time. ``components`` / ``components_extra`` pick the
controllers; network policy and tolerations are chart values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.checks import kubernetes_floor_problem
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource
from gitops_infra.components.flux._controllers import check_controllers
from gitops_infra.defaults import (
    DEFAULT_COMPONENTS,
    DEFAULT_SERVICE_ACCOUNT,
    FLUX_CHART_VERSION,
    FluxComponent,
)

__all__ = [
    "CLUSTER_ADMIN",
    "FLUX_CHART",
    "FLUX_CHART_REPOSITORY",
    "NO_REMOTE_BASES",
    "REQUIRED_COMPONENTS",
    "InstallOptions",
    "build_install",
    "install_values",
    "multi_tenancy_values",
]

FLUX_CHART = "flux2"
FLUX_CHART_REPOSITORY = "https://fluxcd-community.github.io/helm-charts"
FLUX_RELEASE_NAME = "flux2"
RELEASE_TIMEOUT_SECONDS = 600


REQUIRED_COMPONENTS: tuple[FluxComponent, ...] = checks.REQUIRED_FLUX_COMPONENTS
"""The controllers the sync needs (``checks.REQUIRED_FLUX_COMPONENTS``)."""
# The chart's values key for each controller.
_CHART_KEYS: dict[FluxComponent, str] = {
    FluxComponent.SOURCE_CONTROLLER: "sourceController",
    FluxComponent.KUSTOMIZE_CONTROLLER: "kustomizeController",
    FluxComponent.HELM_CONTROLLER: "helmController",
    FluxComponent.NOTIFICATION_CONTROLLER: "notificationController",
    FluxComponent.IMAGE_REFLECTOR_CONTROLLER: "imageReflectionController",
    FluxComponent.IMAGE_AUTOMATION_CONTROLLER: "imageAutomationController",
    FluxComponent.SOURCE_WATCHER: "sourceWatcher",
}


@dataclass(frozen=True)
class InstallOptions:
    """What to install: the chart version, the controllers, network policy, and where they run.

    ``tolerations`` and ``node_selector`` apply to every controller and to the chart's pre-install
    ``flux check --pre`` Job, so Flux can be pinned to a tainted system node group. ``kubernetes_version``
    is the cluster's Kubernetes minor, when known: the pinned chart's Flux refuses an older one.

    ``multi_tenancy`` locks Flux down for tenants (``multi_tenancy_values``): what names no service
    account gets the namespace's ``default``, no object refers to another namespace, and no kustomization
    pulls a remote base.
    """

    version: str = FLUX_CHART_VERSION
    components: Sequence[FluxComponent] = DEFAULT_COMPONENTS
    components_extra: Sequence[FluxComponent] = ()
    network_policy: bool = True
    tolerations: Sequence[Mapping[str, str]] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    kubernetes_version: str | None = None
    multi_tenancy: bool = False

    @property
    def installed(self) -> tuple[FluxComponent, ...]:
        """Every controller that runs."""
        return (*self.components, *self.components_extra)

    def __post_init__(self) -> None:
        problems = Problems("InstallOptions")
        problems.gate("version", checks.chart_version_problem, self.version)
        check_controllers(problems, self.components, self.components_extra, self.tolerations, _CHART_KEYS)
        if self.kubernetes_version is not None:
            problem = kubernetes_floor_problem(self.kubernetes_version, self.version)
            if problem is not None:
                problems.add("kubernetes_version", problem)
        problems.raise_if_any()


def install_values(options: InstallOptions) -> dict[str, Any]:
    """The ``flux2`` chart values for ``options``: every controller is set on or off explicitly."""
    selected = set(options.installed)
    placement: dict[str, Any] = {}
    if options.tolerations:
        placement["tolerations"] = [dict(toleration) for toleration in options.tolerations]
    if options.node_selector:
        placement["nodeSelector"] = dict(options.node_selector)
    values: dict[str, Any] = {
        "installCRDs": True,
        "policies": {"create": options.network_policy},
    }
    for component, key in _CHART_KEYS.items():
        values[key] = {"create": component in selected, **placement}
    if options.multi_tenancy:
        values |= multi_tenancy_values()
        values["kustomizeController"]["container"] = {"additionalArgs": [NO_REMOTE_BASES]}
    if placement:
        # The chart has no global placement: its pre-install Job (`cli`) is placed on its own.
        values["cli"] = dict(placement)
    return values


NO_REMOTE_BASES = "--no-remote-bases=true"
"""kustomize-controller's flag that refuses a kustomization's remote bases (a tenant would fetch manifests
from anywhere, bypassing its source): the chart has no value for it, so it is an extra argument."""


def multi_tenancy_values() -> dict[str, Any]:
    """The ``flux2`` chart's values for a cluster with tenants (chart 2.18.3's ``multitenancy``).

    ``multitenancy.enabled`` gives kustomize-controller and helm-controller
    ``--no-cross-namespace-refs=true`` and ``--default-service-account``, and the other controllers the
    first. Every value the lockdown leans on is stated, not left to the chart's defaults: ``privileged``
    keeps the ``cluster-reconciler`` ClusterRoleBinding of both controllers' service accounts to
    ``rbac.roleRef`` (cluster-admin), which the platform's root Kustomization applies as
    (``defaults.ROOT_SERVICE_ACCOUNT``; with ``privileged: false`` they could only impersonate, and the
    root would apply nothing); ``createAggregation`` grants Kubernetes' ``admin``, ``edit`` and ``view``
    roles on Flux's objects, so a tenant may make its own in its namespaces; and the controllers watch
    every namespace, where tenants' objects live.
    """
    return {
        "multitenancy": {
            "enabled": True,
            "defaultServiceAccount": DEFAULT_SERVICE_ACCOUNT,
            "privileged": True,
        },
        "rbac": {"create": True, "createAggregation": True, "roleRef": {"name": CLUSTER_ADMIN}},
        "watchAllNamespaces": True,
    }


CLUSTER_ADMIN = "cluster-admin"
"""The ClusterRole the chart binds ``ROOT_SERVICE_ACCOUNT`` (and helm-controller's) to."""


def build_install(
    name: str, options: InstallOptions, namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.helm.v3.Release:
    """The controllers, as a Helm release of the pinned chart."""
    return k8s.helm.v3.Release(
        f"{name}-controllers",
        name=FLUX_RELEASE_NAME,
        chart=FLUX_CHART,
        version=options.version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=FLUX_CHART_REPOSITORY),
        namespace=namespace.metadata.name,
        create_namespace=False,
        values=install_values(options),
        cleanup_on_fail=True,
        timeout=RELEASE_TIMEOUT_SECONDS,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )
