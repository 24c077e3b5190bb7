"""Install through the Flux Operator: the operator, and a ``FluxInstance`` this component owns.

The install piece of ``flux.install: operator``, beside :mod:`.install`'s chart. ``flux_instance_manifest``
turns ``OperatorOptions`` into the ``FluxInstance`` (``fluxcd.controlplane.io/v1``, named ``flux`` in
Flux's namespace: the only one the operator reconciles) and ``build_operator`` registers it, after the
operator's ``flux-operator`` chart at ``FLUX_OPERATOR_CHART_VERSION`` (from its OCI registry), unless the
operator runs already (``install_operator=False``: installed outside the stack, as on the local cluster).

The instance pins ``distribution.version`` to one Flux release the operator bundles, so it installs with no
network and upgrading Flux is a change of that version. It has no ``.spec.sync``: the platform makes its
own sync objects, named ``flux-system`` as the operator would name its own (:mod:`.sync`), so the sync, the
environment contract and ``up``'s proof are the same in every install mode. It carries
``pulumi.com/waitFor: condition=Ready``, so ``up`` waits until the operator has applied the controllers
and they are healthy, before the sync objects (which need Flux's CRDs) are made.

Beside it, ``flux-runtime-info`` (``runtime_info_data``): the ConfigMap the operator's bootstrap convention
keeps in Flux's namespace for post-build substitution (the operator reads it, it does not write it), with
the facts of this install (Flux's version and namespace, the cluster type) and the environment's name,
which the ``environment`` contract also holds: one :class:`~gitops_infra.contract.Environment` feeds both.

Deleting the instance uninstalls Flux (the operator's finalizer removes the controllers and the CRDs):
``destroy`` deletes the sync objects first, while the controllers still clear their finalizers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource, custom_resource, fixed_config_map
from gitops_infra.components.flux._controllers import check_controllers
from gitops_infra.components.flux.sync import TIMEOUT_ANNOTATION, WAIT_FOR_ANNOTATION, WAIT_FOR_READY
from gitops_infra.contract import Environment
from gitops_infra.defaults import (
    DEFAULT_COMPONENTS,
    DEFAULT_SERVICE_ACCOUNT,
    FLUX_NAMESPACE,
    FLUX_OPERATOR_CHART_VERSION,
    FLUX_OPERATOR_FLUX_VERSION,
    FluxComponent,
)

__all__ = [
    "FLUX_INSTANCE_API_VERSION",
    "FLUX_INSTANCE_NAME",
    "FLUX_OPERATOR_CHART",
    "FLUX_REGISTRY",
    "RUNTIME_INFO_CONFIGMAP",
    "OperatorInstall",
    "OperatorOptions",
    "build_operator",
    "flux_instance_manifest",
    "runtime_info_data",
]

FLUX_INSTANCE_API_VERSION = "fluxcd.controlplane.io/v1"
FLUX_INSTANCE_NAME = "flux"
"""The operator reconciles only the FluxInstance of this name, in its own namespace."""
FLUX_OPERATOR_CHART = "oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator"
FLUX_REGISTRY = "ghcr.io/fluxcd"
"""Where the controllers' images come from (``distribution.registry``): Flux's own registry."""
OPERATOR_RELEASE_NAME = "flux-operator"
RUNTIME_INFO_CONFIGMAP = "flux-runtime-info"
READY_TIMEOUT_SECONDS = 600
"""How long ``up`` waits for the instance to be Ready: the operator's own health check of the controllers
is bounded by its ``timeout`` of 5 minutes, and a first install pulls every image."""
NO_REMOTE_BASES_PATCH = (
    "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --no-remote-bases=true\n"
)
"""kustomize-controller's flag that refuses remote bases, with tenants: the instance's ``multitenant``
sets the other two lockdown flags, not this one (as the flux2 chart's ``multitenancy`` does not)."""


@dataclass(frozen=True)
class OperatorOptions:
    """What the ``FluxInstance`` installs: the Flux release, the controllers, network policy, and who
    installs the operator itself.

    ``version`` is a Flux release the operator bundles (``defaults.FLUX_OPERATOR_BUNDLED``).
    ``cluster_type`` is the instance's ``cluster.type`` (``aws`` on EKS, which the operator uses for
    workload identity defaults; ``kubernetes`` elsewhere). ``multi_tenancy`` locks Flux down for tenants,
    as :func:`.install.multi_tenancy_values` does for the chart. ``tolerations`` and ``node_selector``
    place every controller (a patch of the instance's) and the operator (its chart's values), so Flux can
    be pinned to a tainted system node group. ``install_operator=False`` means the operator runs already:
    only the instance is made.
    """

    version: str = FLUX_OPERATOR_FLUX_VERSION
    components: Sequence[FluxComponent] = DEFAULT_COMPONENTS
    components_extra: Sequence[FluxComponent] = ()
    network_policy: bool = True
    registry: str = FLUX_REGISTRY
    cluster_type: Literal["kubernetes", "aws"] = "kubernetes"
    multi_tenancy: bool = False
    tolerations: Sequence[Mapping[str, str]] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    install_operator: bool = True
    chart_version: str = FLUX_OPERATOR_CHART_VERSION

    @property
    def installed(self) -> tuple[FluxComponent, ...]:
        """Every controller that runs."""
        return (*self.components, *self.components_extra)

    def __post_init__(self) -> None:
        problems = Problems("OperatorOptions")
        problems.gate("version", checks.flux_operator_version_problem, self.version)
        problems.gate("chart_version", checks.chart_version_problem, self.chart_version)
        known = set(FluxComponent)
        check_controllers(problems, self.components, self.components_extra, self.tolerations, known)
        types = ("kubernetes", "aws")
        problems.check(self.cluster_type in types, "cluster_type", "must be kubernetes or aws")
        problems.raise_if_any()


def flux_instance_manifest(options: OperatorOptions, namespace: str = FLUX_NAMESPACE) -> dict[str, Any]:
    """The ``FluxInstance`` for ``options`` in ``namespace``: no ``.spec.sync`` (the platform syncs)."""
    cluster: dict[str, Any] = {"type": options.cluster_type, "networkPolicy": options.network_policy}
    spec: dict[str, Any] = {
        "distribution": {"version": options.version, "registry": options.registry},
        "components": [str(component) for component in options.installed],
        "cluster": cluster,
    }
    patches: list[dict[str, Any]] = []
    if options.multi_tenancy:
        cluster |= {"multitenant": True, "tenantDefaultServiceAccount": DEFAULT_SERVICE_ACCOUNT}
        patches.append(
            {
                "target": {"kind": "Deployment", "name": str(FluxComponent.KUSTOMIZE_CONTROLLER)},
                "patch": NO_REMOTE_BASES_PATCH,
            }
        )
    placement = _placement(options)
    if placement:
        # A strategic merge: the manifests' own nodeSelector (kubernetes.io/os) is kept beside ours.
        patch = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "all"},
            "spec": {"template": {"spec": placement}},
        }
        patches.append({"target": {"kind": "Deployment"}, "patch": json.dumps(patch)})
    if patches:
        spec["kustomize"] = {"patches": patches}
    return {
        "apiVersion": FLUX_INSTANCE_API_VERSION,
        "kind": "FluxInstance",
        "metadata": {
            "name": FLUX_INSTANCE_NAME,
            "namespace": namespace,
            "annotations": {
                WAIT_FOR_ANNOTATION: WAIT_FOR_READY,
                TIMEOUT_ANNOTATION: str(READY_TIMEOUT_SECONDS),
            },
        },
        "spec": spec,
    }


def _placement(options: OperatorOptions) -> dict[str, Any]:
    placement: dict[str, Any] = {}
    if options.tolerations:
        placement["tolerations"] = [dict(toleration) for toleration in options.tolerations]
    if options.node_selector:
        placement["nodeSelector"] = dict(options.node_selector)
    return placement


def runtime_info_data(
    options: OperatorOptions, namespace: str = FLUX_NAMESPACE, environment: Environment | None = None
) -> dict[str, str]:
    """``flux-runtime-info``'s data, named as the operator's docs name substitution variables."""
    data = {
        "FLUX_VERSION": options.version,
        "FLUX_NAMESPACE": namespace,
        "CLUSTER_TYPE": options.cluster_type,
    }
    if environment is not None:
        data["ENVIRONMENT"] = environment.name
    return data


@dataclass(frozen=True)
class OperatorInstall:
    """What ``build_operator`` made: the operator's chart (``None`` when it runs already), the instance,
    which the sync objects wait for, and ``flux-runtime-info``."""

    operator: k8s.helm.v3.Release | None
    instance: k8s.apiextensions.CustomResource
    runtime_info: k8s.core.v1.ConfigMapPatch


def build_operator(
    name: str,
    options: OperatorOptions,
    namespace: NamespaceResource,
    parent: pulumi.Resource,
    namespace_name: str = FLUX_NAMESPACE,
    environment: Environment | None = None,
) -> OperatorInstall:
    """The operator's chart (unless it runs already), then the ``FluxInstance``, in ``namespace``
    (named ``namespace_name``: the operator's own, where it reconciles the instance), and
    ``flux-runtime-info`` there."""
    operator = (
        k8s.helm.v3.Release(
            f"{name}-operator",
            name=OPERATOR_RELEASE_NAME,
            chart=FLUX_OPERATOR_CHART,
            version=options.chart_version,
            namespace=namespace.metadata.name,
            create_namespace=False,
            values={"installCRDs": True, **_placement(options)},
            cleanup_on_fail=True,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
        )
        if options.install_operator
        else None
    )
    manifest = flux_instance_manifest(options, namespace_name)
    instance = custom_resource(
        f"{name}-instance",
        manifest,
        pulumi.ResourceOptions(
            parent=parent,
            depends_on=[namespace, *([operator] if operator is not None else [])],
            # The operator's finalizer uninstalls Flux before the instance goes: as long as a first install.
            custom_timeouts=pulumi.CustomTimeouts(delete=f"{READY_TIMEOUT_SECONDS}s"),
        ),
    )
    runtime_info = fixed_config_map(
        f"{name}-runtime-info",
        RUNTIME_INFO_CONFIGMAP,
        runtime_info_data(options, namespace_name, environment),
        namespace,
        parent,
    )
    return OperatorInstall(operator=operator, instance=instance, runtime_info=runtime_info)
