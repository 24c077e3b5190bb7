"""The Pulumi components, one module each: ``eks_cluster``, ``deploy_key``, ``fleet_repository``, ``flux``,
``argocd``, ``environment``, ``tenant``, ``sealed_secrets``, ``external_secrets``.

Each is a ``pulumi.ComponentResource`` with type token ``gitops-infra:index:<Name>``, an ``<Name>Args``
validated when it is made, children named ``<name>-<role>`` and parented to the component, and
``register_outputs``. Each is usable on its own.
"""

from gitops_infra.components.argocd import (
    ARGO_CD_CHART_VERSION,
    ARGO_CD_NAMESPACE,
    ARGO_CD_VERSION,
    ArgoCdBootstrap,
    ArgoCdBootstrapArgs,
    ArgoCdInstallOptions,
    RetryOptions,
    RootOptions,
)
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
from gitops_infra.components.environment import EnvironmentConfig, EnvironmentConfigArgs, read_environment
from gitops_infra.components.external_secrets import ExternalSecrets, ExternalSecretsArgs
from gitops_infra.components.fleet_repository import (
    FleetRepository,
    FleetRepositoryArgs,
    RepositoryVisibility,
)
from gitops_infra.components.flux import (
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_VERSION,
    FluxBootstrap,
    FluxBootstrapArgs,
    FluxComponent,
    GitHubAppSecretOptions,
    InstallOptions,
    NotificationArgs,
    OperatorOptions,
    SourceSecretOptions,
    SyncOptions,
)
from gitops_infra.components.sealed_secrets import HeldKey, SealedSecrets, SealedSecretsArgs
from gitops_infra.components.tenant import Tenant, TenantArgs

__all__ = [
    "ARGO_CD_CHART_VERSION",
    "ARGO_CD_NAMESPACE",
    "ARGO_CD_VERSION",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_VERSION",
    "GITHUB_KNOWN_HOSTS",
    "ArgoCdBootstrap",
    "ArgoCdBootstrapArgs",
    "ArgoCdInstallOptions",
    "CapacityType",
    "DeployKey",
    "DeployKeyArgs",
    "EksCluster",
    "EksClusterArgs",
    "EndpointAccess",
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "ExistingVpcArgs",
    "ExternalSecrets",
    "ExternalSecretsArgs",
    "FleetRepository",
    "FleetRepositoryArgs",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "GitHubAppSecretOptions",
    "HeldKey",
    "InstallOptions",
    "KeyAlgorithm",
    "LogType",
    "NatGateways",
    "NewVpcArgs",
    "NodeGroupArgs",
    "NotificationArgs",
    "OperatorOptions",
    "RepositoryVisibility",
    "RetryOptions",
    "RootOptions",
    "SealedSecrets",
    "SealedSecretsArgs",
    "SourceSecretOptions",
    "SyncOptions",
    "TaintEffect",
    "Tenant",
    "TenantArgs",
    "read_environment",
]
