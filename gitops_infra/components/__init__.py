"""The Pulumi components, one module each: ``eks_cluster``, ``deploy_key``, ``flux``, ``environment``.

Each is a ``pulumi.ComponentResource`` with type token ``gitops-infra:index:<Name>``, an ``<Name>Args``
validated when it is made, children named ``<name>-<role>`` and parented to the component, and
``register_outputs``. Each is usable on its own.
"""

from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS, DeployKey, DeployKeyArgs, KeyAlgorithm
from gitops_infra.components.eks_cluster import (
    CapacityType,
    EksCluster,
    EksClusterArgs,
    EndpointAccess,
    ExistingVpcArgs,
    LogType,
    NatGateways,
    NewVpcArgs,
    NodeGroupArgs,
    TaintEffect,
)
from gitops_infra.components.environment import (
    Environment,
    EnvironmentConfig,
    EnvironmentConfigArgs,
    environment_data,
    parse_environment,
)
from gitops_infra.components.flux import (
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_VERSION,
    FluxBootstrap,
    FluxBootstrapArgs,
    FluxComponent,
    InstallOptions,
    NotificationArgs,
    SourceSecretOptions,
    SyncOptions,
)

__all__ = [
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_VERSION",
    "GITHUB_KNOWN_HOSTS",
    "CapacityType",
    "DeployKey",
    "DeployKeyArgs",
    "EksCluster",
    "EksClusterArgs",
    "EndpointAccess",
    "Environment",
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "ExistingVpcArgs",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "InstallOptions",
    "KeyAlgorithm",
    "LogType",
    "NatGateways",
    "NewVpcArgs",
    "NodeGroupArgs",
    "NotificationArgs",
    "SourceSecretOptions",
    "SyncOptions",
    "TaintEffect",
    "environment_data",
    "parse_environment",
]
