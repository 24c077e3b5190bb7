"""Pulumi components and an Automation API layer for an EKS + Flux CD GitOps platform.

The public API is what ``__all__`` lists (docs/design.md has the contracts). Use the components in your own
Pulumi program, for example Flux and a deploy key on a cluster you already have::

    import pulumi
    import pulumi_kubernetes as k8s
    from gitops_infra import DeployKey, DeployKeyArgs, FluxBootstrap, FluxBootstrapArgs
    from gitops_infra import SourceSecretOptions, SyncOptions

    provider = k8s.Provider("existing", kubeconfig=pulumi.Config().require_secret("kubeconfig"))
    key = DeployKey("fleet", DeployKeyArgs(repository="fleet"))
    FluxBootstrap(
        "flux",
        FluxBootstrapArgs(
            source=SourceSecretOptions(private_key=key.private_key, public_key=key.public_key),
            sync=SyncOptions(url="ssh://git@github.com/acme/fleet", path="clusters/staging"),
        ),
        opts=pulumi.ResourceOptions(providers=[provider]),
    )

or build the whole platform from a stack's config, as ``stacks/__main__.py`` does::

    platform = build_platform(load_stack_config())
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports
from gitops_infra._metadata import package_version

if TYPE_CHECKING:
    from gitops_infra.components import (
        FLUX_CHART_VERSION,
        FLUX_NAMESPACE,
        FLUX_VERSION,
        GITHUB_KNOWN_HOSTS,
        ArgoCdBootstrap,
        ArgoCdBootstrapArgs,
        ArgoCdInstallOptions,
        CapacityType,
        DeployKey,
        DeployKeyArgs,
        EksCluster,
        EksClusterArgs,
        EndpointAccess,
        EnvironmentConfig,
        EnvironmentConfigArgs,
        ExistingVpcArgs,
        ExternalSecrets,
        ExternalSecretsArgs,
        FleetRepository,
        FleetRepositoryArgs,
        FluxBootstrap,
        FluxBootstrapArgs,
        FluxComponent,
        GitHubAppSecretOptions,
        HeldKey,
        InstallOptions,
        KeyAlgorithm,
        LogType,
        NatGateways,
        NewVpcArgs,
        NodeGroupArgs,
        NotificationArgs,
        OperatorOptions,
        RepositoryVisibility,
        RetryOptions,
        RootOptions,
        SealedSecrets,
        SealedSecretsArgs,
        SourceSecretOptions,
        SyncOptions,
        TaintEffect,
        Tenant,
        TenantArgs,
        read_environment,
    )
    from gitops_infra.config import StackConfig, StackSecrets, load_config, load_stack_config
    from gitops_infra.contract import (
        CONTRACT_VERSION,
        Environment,
        contract_schema,
        environment_data,
        parse_environment,
    )
    from gitops_infra.errors import ConfigError, EnvironmentContractError, GitOpsInfraError
    from gitops_infra.platform import Platform, build_platform

__all__ = [
    "CONTRACT_VERSION",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_VERSION",
    "GITHUB_KNOWN_HOSTS",
    "ArgoCdBootstrap",
    "ArgoCdBootstrapArgs",
    "ArgoCdInstallOptions",
    "CapacityType",
    "ConfigError",
    "DeployKey",
    "DeployKeyArgs",
    "EksCluster",
    "EksClusterArgs",
    "EndpointAccess",
    "Environment",
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "EnvironmentContractError",
    "ExistingVpcArgs",
    "ExternalSecrets",
    "ExternalSecretsArgs",
    "FleetRepository",
    "FleetRepositoryArgs",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "GitHubAppSecretOptions",
    "GitOpsInfraError",
    "HeldKey",
    "InstallOptions",
    "KeyAlgorithm",
    "LogType",
    "NatGateways",
    "NewVpcArgs",
    "NodeGroupArgs",
    "NotificationArgs",
    "OperatorOptions",
    "Platform",
    "RepositoryVisibility",
    "RetryOptions",
    "RootOptions",
    "SealedSecrets",
    "SealedSecretsArgs",
    "SourceSecretOptions",
    "StackConfig",
    "StackSecrets",
    "SyncOptions",
    "TaintEffect",
    "Tenant",
    "TenantArgs",
    "build_platform",
    "contract_schema",
    "environment_data",
    "load_config",
    "load_stack_config",
    "parse_environment",
    "read_environment",
]

__version__: str
"""The installed distribution's version (from its metadata, read on first use)."""

__getattr__, __dir__ = exports(__name__, computed={"__version__": package_version})
