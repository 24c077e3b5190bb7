"""Compose the components from a validated config: cluster → deploy key → engine → environment → tenants.

The engine is Flux, or Argo CD with ``gitops.engine: argocd`` (:class:`ArgoCdBootstrap`): the same source
(a deploy key or an App), contract and proof of sync; tenants, notifications and the webhook Receiver are
Flux's.

dev and prod differ only in their config; this module has no per-environment branches. Three modes stand
beside the defaults, each a config choice: ``cluster.existing`` (a kubeconfig, no AWS resource),
``git.deployKey.existing`` (a key registered outside this stack, no TLS or GitHub resource) and
``git.githubApp`` (Flux fetches as a GitHub App: no key at all). ``github.appAuth`` makes the GitHub
provider authenticate as an App instead of with a personal token. ``tenants`` onboard app teams, each
after Flux (its CRDs) and with Flux locked down while there are any.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra._lazy import sdk
from gitops_infra._platform.credentials import held_auth
from gitops_infra._platform.secrets import external_secrets, sealed_secrets
from gitops_infra._platform.tenants import tenant_keys, tenant_outputs, tenants_of
from gitops_infra.components._argocd_scaffold import ArgoCdScaffold
from gitops_infra.components._kubernetes import kubernetes_provider
from gitops_infra.components.argocd import (
    ArgoCdBootstrap,
    ArgoCdBootstrapArgs,
    ArgoCdInstallOptions,
    RetryOptions,
    RootOptions,
)
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS, DeployKey, DeployKeyArgs
from gitops_infra.components.eks_cluster import (
    EksCluster,
    EksClusterArgs,
    ExistingVpcArgs,
    NewVpcArgs,
    NodeGroupArgs,
)
from gitops_infra.components.environment import EnvironmentConfig, EnvironmentConfigArgs
from gitops_infra.components.external_secrets import ExternalSecrets
from gitops_infra.components.fleet_repository import FleetRepository, FleetRepositoryArgs
from gitops_infra.components.flux import (
    FluxBootstrap,
    FluxBootstrapArgs,
    FluxInstall,
    GitAuth,
    InstallOptions,
    NotificationArgs,
    OperatorOptions,
    SourceSecretOptions,
    SyncOptions,
    build_repository_webhook,
)
from gitops_infra.components.sealed_secrets import SealedSecrets
from gitops_infra.components.tenant import Tenant
from gitops_infra.config import (
    ClusterSpec,
    StackConfig,
    platform_name,
)
from gitops_infra.defaults import ROOT_SERVICE_ACCOUNT

if TYPE_CHECKING:
    import pulumi_github as github
else:
    github = sdk("pulumi_github")

__all__ = ["Platform", "build_platform"]


@dataclass(frozen=True)
class Platform:
    """What ``build_platform`` made: the components, and the providers they use.

    ``cluster`` is ``None`` on an existing cluster, ``deploy_key`` with an existing key or an App,
    ``fleet_repository`` unless the stack creates or scaffolds it, and ``github_provider`` when nothing
    is made on GitHub.
    """

    config: StackConfig
    kubernetes_provider: k8s.Provider
    source: GitAuth
    flux: FluxBootstrap | None
    """Flux, unless the stack's engine is Argo CD (``argocd``)."""
    environment: EnvironmentConfig
    cluster: EksCluster | None = None
    github_provider: github.Provider | None = None
    deploy_key: DeployKey | None = None
    fleet_repository: FleetRepository | None = None
    tenants: tuple[Tenant, ...] = ()
    """One per tenant of the config, in its order."""
    sealed_secrets: SealedSecrets | None = None
    """The Sealed Secrets controller and its keys, when ``secrets.sealedSecrets`` is enabled."""
    external_secrets: ExternalSecrets | None = None
    """The External Secrets controller's role and its store, when ``secrets.externalSecrets`` is enabled."""
    receiver_webhook: github.RepositoryWebhook | None = None
    """The GitHub webhook of the fleet repository to Flux's Receiver, when ``flux.receiver.webhook``."""
    argocd: ArgoCdBootstrap | None = None
    """Argo CD, when ``gitops.engine`` is ``argocd`` (then ``flux`` is ``None``)."""

    def outputs(self) -> dict[str, pulumi.Input[object]]:
        """The stack outputs, by their exported names (the kubeconfig stays secret).

        An existing cluster exports neither a kubeconfig (you hold it) nor an OIDC provider. ``tenants``
        (only when there are any) is each tenant's name, home namespace, namespaces and Kustomization,
        sorted by name: what the automation layer knows the tenants by.
        """
        outputs: dict[str, pulumi.Input[object]] = {
            "clusterName": platform_name(self.config.environment, self.config.cluster)
        }
        if isinstance(self.source, SourceSecretOptions) and self.source.public_key is not None:
            outputs["deployKeyPublicKey"] = self.source.public_key
        if self.cluster is not None:
            outputs |= {
                "clusterName": self.cluster.cluster_name,
                "kubeconfig": self.cluster.kubeconfig,
                "oidcProviderArn": self.cluster.oidc_provider_arn,
            }
        if self.config.tenants:
            outputs["tenants"] = tenant_outputs(self.config.tenants)
        if self.sealed_secrets is not None:  # public: CI seals with it (kubeseal --cert)
            outputs["sealedSecretsCert"] = self.sealed_secrets.cert
        if self.argocd is not None:
            outputs |= {
                "argoCdNamespace": self.argocd.namespace,
                "gitRepositoryUrl": self.argocd.repository_url,
            }
        if self.flux is not None:
            outputs |= {"fluxNamespace": self.flux.namespace, "gitRepositoryUrl": self.flux.repository_url}
        return outputs | {
            "gitopsEngine": self.config.gitops.engine.value,
            "environment": self.environment.environment,
        }


ENVIRONMENT_TAG = "environment"
"""The AWS tag naming the environment a resource belongs to."""


def _cluster_args(config: StackConfig, cluster: ClusterSpec, tags: dict[str, str]) -> EksClusterArgs:
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
        creator_principal_arn=config.cluster_creator,
        log_types=cluster.log_types,
        tags=tags,
        # The contract says policies are enforced: the CNI's policy agent is what enforces them.
        network_policy=config.environment.network_policies_enforced,
        kubeconfig_profile=config.aws_profile,
        kubeconfig_role_arn=config.aws_role_arn,
    )


def _install_options(config: StackConfig) -> InstallOptions | OperatorOptions | None:
    flux = config.flux
    if flux.install is FluxInstall.EXTERNAL:
        return None
    cluster = config.cluster
    if flux.install is FluxInstall.OPERATOR:
        return OperatorOptions(
            version=flux.version,
            components=flux.components,
            components_extra=flux.components_extra,
            network_policy=flux.network_policy,
            cluster_type="aws" if isinstance(cluster, ClusterSpec) else "kubernetes",
            multi_tenancy=bool(config.tenants),
            tolerations=[t.model_dump(by_alias=True, exclude_none=True) for t in flux.tolerations],
            node_selector=flux.node_selector,
            install_operator=flux.operator_install == "helm",
        )
    return InstallOptions(
        version=flux.version,
        components=flux.components,
        components_extra=flux.components_extra,
        network_policy=flux.network_policy,
        tolerations=[t.model_dump(by_alias=True, exclude_none=True) for t in flux.tolerations],
        node_selector=flux.node_selector,
        kubernetes_version=cluster.kubernetes_version if isinstance(cluster, ClusterSpec) else None,
        multi_tenancy=bool(config.tenants),
    )


def _sync_options(config: StackConfig) -> SyncOptions:
    flux = config.flux
    return SyncOptions(
        url=config.git.sync_url,
        path=config.git.sync_path(config.environment.name),
        branch=config.git.branch,
        namespace=flux.namespace,
        git_interval=flux.git_interval,
        interval=flux.interval,
        retry_interval=flux.retry_interval,
        timeout=flux.timeout,
        ready_timeout=flux.ready_timeout,
        health_checks=[check.model_dump(by_alias=True) for check in flux.health_checks],
        # Locked down, an object that names no service account gets the namespace's `default`, which
        # can do nothing: the root states the controller's own, cluster-admin identity. It does so
        # whenever the chart is ours too (which binds that account), so that the first tenant's `up`,
        # which restarts the controllers locked down before the root's own update, finds it stated.
        service_account_name=(
            ROOT_SERVICE_ACCOUNT if config.tenants or flux.install is not FluxInstall.EXTERNAL else None
        ),
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


def _argocd_args(
    config: StackConfig, source: GitAuth, sync_after: Sequence[pulumi.Resource]
) -> ArgoCdBootstrapArgs:
    argocd = config.argocd
    retry = argocd.retry
    return ArgoCdBootstrapArgs(
        source=source,
        root=RootOptions(
            url=config.git.sync_url,
            path=config.git.sync_path(config.environment.name),
            branch=config.git.branch,
            namespace=argocd.namespace,
            destination_namespace=argocd.namespace,
            prune=argocd.prune,
            self_heal=argocd.self_heal,
            retry=RetryOptions(
                limit=retry.limit, backoff=retry.backoff, factor=retry.factor, max_backoff=retry.max_backoff
            ),
            ready_timeout=argocd.ready_timeout,
        ),
        install=ArgoCdInstallOptions(version=argocd.version) if argocd.install == "helm" else None,
        destinations=[config.environment.service_namespace, *argocd.destinations],
        environment=config.environment,
        # A first `up` on an empty repository goes green: the path exists before Argo CD looks for it.
        sync_after=sync_after,
    )


def _aws_tags(config: StackConfig) -> dict[str, str]:
    # `environment` and `owner` are on every AWS resource (the policy pack requires them); config
    # validation guarantees `owner`, and the environment's own name wins over a stray tag.
    return {**config.tags, ENVIRONMENT_TAG: config.environment.name}


def _cluster(
    config: StackConfig, name: str, opts: pulumi.ResourceOptions
) -> tuple[EksCluster | None, k8s.Provider]:
    """The EKS cluster and its provider, or only a provider for the cluster the kubeconfig names."""
    if isinstance(config.cluster, ClusterSpec):
        cluster = EksCluster(name, _cluster_args(config, config.cluster, _aws_tags(config)), opts=opts)
        return cluster, cluster.provider
    assert config.secrets.kubeconfig is not None  # config validation requires it for an existing cluster
    return None, kubernetes_provider(f"{name}-k8s", config.secrets.kubeconfig, opts)


def _github(
    config: StackConfig, name: str, opts: pulumi.ResourceOptions
) -> tuple[github.Provider | None, FleetRepository | None]:
    """The GitHub provider, if anything is made on GitHub, and the fleet repository, if it is managed."""
    git = config.git
    needed = git.registers_deploy_key or git.manages_repository or config.flux.receiver_webhook
    if not needed and not tenant_keys(config):
        return None, None
    assert git.owner is not None  # config validation requires it here
    app = config.github.app_auth
    app_auth = None
    if app is not None:
        assert config.secrets.github_app_pem is not None  # config validation requires it
        app_auth = github.ProviderAppAuthArgs(
            id=str(app.id), installation_id=str(app.installation_id), pem_file=config.secrets.github_app_pem
        )
    provider = github.Provider(
        f"{name}-github",
        owner=git.owner,
        # An App or a token, never both (config validation): unset, the provider reads GITHUB_TOKEN.
        token=config.secrets.github_token if app is None else None,
        app_auth=app_auth,
        # The GitHub Flux fetches from as an App (a GitHub Enterprise Server's): the repository it
        # scaffolds or creates is that one. None: GITHUB_BASE_URL, else github.com's API.
        base_url=git.github_base_url,
        opts=opts,
    )
    if not git.manages_repository:
        return provider, None
    assert git.repository is not None  # ...and this for a repository it manages
    fleet = FleetRepository(
        f"{name}-fleet-repository",
        FleetRepositoryArgs(
            repository=git.repository,
            path=git.sync_path(config.environment.name),
            branch=git.branch,
            environment=config.environment.name,
            scaffold=git.scaffold,
            create=git.create_repository.visibility if git.create_repository is not None else None,
            # Only the tenants that sync from the fleet: a repository of a tenant's own is its own.
            tenants={t.name: t.fleet_path for t in config.tenants if t.fleet_path is not None},
            secret_store=config.environment.cluster_secret_store,
            secret_prefix=config.secret_providers.external_secrets.secret_prefix,
            sealed_secrets=config.secret_providers.sealed_secrets.enabled,
            receiver_url=(
                config.flux.receiver.public_url(config.environment.base_domain)
                if config.flux.receiver is not None and config.flux.receiver_enabled
                else None
            ),
            flux_namespace=config.flux.namespace,
            argocd=ArgoCdScaffold(url=config.git.sync_url, branch=config.git.branch)
            if config.argo_cd
            else None,
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(providers=[provider])),
    )
    return provider, fleet


def _deploy_key(
    config: StackConfig,
    name: str,
    opts: pulumi.ResourceOptions,
    github_provider: github.Provider | None,
    fleet: FleetRepository | None,
) -> tuple[GitAuth, DeployKey | None]:
    """Flux's git auth: a key made and registered on GitHub, the key the config names, or an App."""
    git = config.git
    known_hosts = git.known_hosts or GITHUB_KNOWN_HOSTS
    held = held_auth(
        git.github_app,
        config.secrets.github_app_private_key,
        git.deploy_key.existing,
        config.secrets.deploy_private_key,
        known_hosts,
    )
    if held is not None:
        return held, None
    assert git.repository is not None and github_provider is not None  # ...and these for a generated key
    deploy_key = DeployKey(
        f"{name}-fleet",
        DeployKeyArgs(
            # Through a created repository's name, so the key is registered after the repository exists.
            repository=fleet.repository_name if fleet is not None else git.repository,
            read_only=not config.flux.image_automation,
            algorithm=git.deploy_key.algorithm,
            title=f"{config.gitops.engine.value}-{name}",
            rotation=git.deploy_key.rotation,
            known_hosts=known_hosts,
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(providers=[github_provider])),
    )
    source = SourceSecretOptions(
        private_key=deploy_key.private_key,
        public_key=deploy_key.public_key,
        known_hosts=deploy_key.known_hosts,
    )
    return source, deploy_key


def build_platform(config: StackConfig, opts: pulumi.ResourceOptions | None = None) -> Platform:
    """Build the whole platform for ``config``; ``opts`` apply to every top-level component."""
    name = platform_name(config.environment, config.cluster)
    base = opts or pulumi.ResourceOptions()
    cluster, provider = _cluster(config, name, base)
    github_provider, fleet = _github(config, name, base)
    source, deploy_key = _deploy_key(config, name, base, github_provider, fleet)
    # Everything Kubernetes goes through the cluster's provider, handed down as Pulumi hands providers.
    on_cluster = pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(providers=[provider]))
    sync_after = list(fleet.files) if fleet is not None else []
    flux = argocd = None
    if config.argo_cd:
        argocd = ArgoCdBootstrap(f"{name}-argocd", _argocd_args(config, source, sync_after), opts=on_cluster)
    else:
        flux = FluxBootstrap(
            f"{name}-flux",
            FluxBootstrapArgs(
                source=source,
                sync=_sync_options(config),
                install=_install_options(config),
                notifications=_notifications(config),
                receiver=config.flux.receiver_enabled,
                sops_age_key=config.secrets.sops_age_key if config.flux.sops else None,
                environment=config.environment if config.flux.substitute else None,
                # A first `up` on an empty repository goes green: the path exists before Flux looks for it.
                sync_after=sync_after,
            ),
            opts=on_cluster,
        )
    environment = EnvironmentConfig(
        f"{name}-environment",
        # On a cluster this stack did not make, the namespace may hold workloads of its own: keep it.
        EnvironmentConfigArgs(
            environment=config.environment, keep_namespace=not isinstance(config.cluster, ClusterSpec)
        ),
        opts=on_cluster,
    )
    # Config validation refuses tenants with Argo CD: a tenant syncs through Flux.
    tenants = tenants_of(config, name, on_cluster, flux, source, github_provider) if flux is not None else ()
    receiver_webhook = None
    receiver = config.flux.receiver
    if (
        receiver is not None
        and config.flux.receiver_webhook
        and flux is not None
        and flux.receiver is not None
    ):
        assert config.git.repository is not None and github_provider is not None  # config validation
        receiver_webhook = build_repository_webhook(
            name,
            fleet.repository_name if fleet is not None else config.git.repository,
            receiver.public_url(config.environment.base_domain),
            flux.receiver,
            pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(providers=[github_provider])),
        )
    return Platform(
        config=config,
        kubernetes_provider=provider,
        source=source,
        flux=flux,
        environment=environment,
        cluster=cluster,
        github_provider=github_provider,
        deploy_key=deploy_key,
        fleet_repository=fleet,
        tenants=tenants,
        sealed_secrets=sealed_secrets(config, name, on_cluster),
        external_secrets=external_secrets(config, name, on_cluster, cluster, _aws_tags(config)),
        receiver_webhook=receiver_webhook,
        argocd=argocd,
    )
