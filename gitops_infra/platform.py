"""Compose the components from a validated config: cluster → deploy key → Flux → environment.

dev and prod differ only in their config; this module has no per-environment branches.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_github as github

from gitops_infra.components.deploy_key import DeployKey, DeployKeyArgs
from gitops_infra.components.eks_cluster import (
    EksCluster,
    EksClusterArgs,
    ExistingVpcArgs,
    NewVpcArgs,
    NodeGroupArgs,
)
from gitops_infra.components.environment import EnvironmentConfig, EnvironmentConfigArgs
from gitops_infra.components.flux import (
    FluxBootstrap,
    FluxBootstrapArgs,
    InstallOptions,
    NotificationArgs,
    SourceSecretOptions,
    SyncOptions,
)
from gitops_infra.config import FluxSpec, StackConfig

__all__ = ["Platform", "build_platform", "platform_name"]


@dataclass(frozen=True)
class Platform:
    """What ``build_platform`` made: the components, and the GitHub provider the deploy key uses."""

    config: StackConfig
    github_provider: github.Provider
    cluster: EksCluster
    deploy_key: DeployKey
    flux: FluxBootstrap
    environment: EnvironmentConfig

    def outputs(self) -> dict[str, pulumi.Input[object]]:
        """The stack outputs, by their exported names (the kubeconfig stays secret)."""
        return {
            "clusterName": self.cluster.cluster_name,
            "kubeconfig": self.cluster.kubeconfig,
            "oidcProviderArn": self.cluster.oidc_provider_arn,
            "deployKeyPublicKey": self.deploy_key.public_key,
            "fluxNamespace": self.flux.namespace,
            "gitRepositoryUrl": self.flux.repository_url,
            "environment": self.environment.environment,
        }


ENVIRONMENT_TAG = "environment"
"""The AWS tag naming the environment a resource belongs to."""


def platform_name(config: StackConfig) -> str:
    """The prefix of every component name: ``cluster.name``, else ``gitops-<environment>``."""
    return config.platform_name


def _cluster_args(config: StackConfig, tags: dict[str, str]) -> EksClusterArgs:
    cluster = config.cluster
    network: NewVpcArgs | ExistingVpcArgs
    if cluster.network.vpc is not None:
        network = NewVpcArgs(
            cidr=cluster.network.vpc.cidr,
            availability_zones=cluster.network.vpc.availability_zones,
            nat_gateways=cluster.network.vpc.nat_gateways,
        )
    else:
        existing = cluster.network.existing_vpc
        assert existing is not None  # NetworkSpec guarantees exactly one
        network = ExistingVpcArgs(
            vpc_id=existing.vpc_id,
            private_subnet_ids=existing.private_subnet_ids,
            public_subnet_ids=existing.public_subnet_ids,
        )
    return EksClusterArgs(
        cluster_name=cluster.name,
        kubernetes_version=cluster.kubernetes_version,
        network=network,
        node_groups=[
            NodeGroupArgs(
                name=group.name,
                instance_types=group.instance_types,
                min_size=group.min_size,
                max_size=group.max_size,
                desired_size=group.desired,
                disk_size=group.disk_size,
                capacity_type=group.capacity_type,
                ami_type=group.ami_type,
                labels=dict(group.labels),
                taints=[(taint.key, taint.value, taint.effect) for taint in group.taints],
                scaling_managed_externally=group.scaling_managed_externally,
            )
            for group in cluster.node_groups
        ],
        endpoint_access=cluster.endpoint.access,
        allowed_cidrs=cluster.endpoint.allowed_cidrs,
        admin_principal_arns=cluster.admins,
        log_types=cluster.log_types,
        tags=tags,
        # The contract says policies are enforced: the CNI's policy agent is what enforces them.
        network_policy=config.environment.network_policies_enforced,
        kubeconfig_profile=config.aws_profile,
    )


def _install_options(flux: FluxSpec) -> InstallOptions:
    return InstallOptions(
        version=flux.version,
        components=flux.components,
        components_extra=flux.components_extra,
        network_policy=flux.network_policy,
        tolerations=[t.model_dump(by_alias=True, exclude_none=True) for t in flux.tolerations],
        node_selector=flux.node_selector,
    )


def _sync_options(config: StackConfig) -> SyncOptions:
    flux = config.flux
    return SyncOptions(
        url=config.git.ssh_url,
        path=config.git.sync_path(config.environment.name),
        branch=config.git.branch,
        namespace=flux.namespace,
        git_interval=flux.git_interval,
        interval=flux.interval,
        retry_interval=flux.retry_interval,
        timeout=flux.timeout,
        health_checks=[check.model_dump(by_alias=True) for check in flux.health_checks],
    )


def _notifications(config: StackConfig) -> NotificationArgs | None:
    notifications = config.flux.notifications
    if notifications is None:
        return None
    return NotificationArgs(
        provider_type=notifications.provider_type,
        channel=notifications.channel,
        address=notifications.address,
        secret_name=notifications.secret_name,
        event_severity=notifications.event_severity,
        webhook=config.secrets.notification_webhook,
    )


def _deploy_key(
    config: StackConfig, name: str, opts: pulumi.ResourceOptions
) -> tuple[github.Provider, DeployKey]:
    github_provider = github.Provider(
        f"{name}-github", owner=config.git.owner, token=config.secrets.github_token, opts=opts
    )
    deploy_key = DeployKey(
        f"{name}-fleet",
        DeployKeyArgs(
            repository=config.git.repository,
            read_only=not config.flux.image_automation,
            algorithm=config.git.deploy_key.algorithm,
            title=f"flux-{name}",
            rotation=config.git.deploy_key.rotation,
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(providers=[github_provider])),
    )
    return github_provider, deploy_key


def build_platform(config: StackConfig, opts: pulumi.ResourceOptions | None = None) -> Platform:
    """Build the whole platform for ``config``; ``opts`` apply to every top-level component."""
    name = platform_name(config)
    # `environment` and `owner` are on every AWS resource (the policy pack requires them); config
    # validation guarantees `owner`, and the environment's own name wins over a stray tag.
    tags = {**config.tags, ENVIRONMENT_TAG: config.environment.name}
    base = opts or pulumi.ResourceOptions()

    cluster = EksCluster(name, _cluster_args(config, tags), opts=base)
    github_provider, deploy_key = _deploy_key(config, name, base)
    # Everything Kubernetes goes through the cluster's provider, handed down as Pulumi hands providers.
    on_cluster = pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(providers=[cluster.provider]))
    flux = FluxBootstrap(
        f"{name}-flux",
        FluxBootstrapArgs(
            source=SourceSecretOptions(
                private_key=deploy_key.private_key,
                public_key=deploy_key.public_key,
                known_hosts=deploy_key.known_hosts,
            ),
            sync=_sync_options(config),
            install=_install_options(config.flux),
            notifications=_notifications(config),
            sops_age_key=config.secrets.sops_age_key if config.flux.sops else None,
        ),
        opts=on_cluster,
    )
    environment = EnvironmentConfig(
        f"{name}-environment", EnvironmentConfigArgs(environment=config.environment), opts=on_cluster
    )
    return Platform(
        config=config,
        github_provider=github_provider,
        cluster=cluster,
        deploy_key=deploy_key,
        flux=flux,
        environment=environment,
    )
