"""The tenants of a config: each a :class:`~gitops_infra.components.Tenant` after Flux, on the fleet with
the platform's credential or on a repository of its own; and the stack output that lists them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pulumi

from gitops_infra._lazy import sdk
from gitops_infra._platform.credentials import held_auth
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS, DeployKeyArgs
from gitops_infra.components.flux import FluxBootstrap, GitAuth
from gitops_infra.components.tenant import Tenant, TenantArgs
from gitops_infra.config import StackConfig, TenantSpec

if TYPE_CHECKING:
    import pulumi_github as github
else:
    github = sdk("pulumi_github")

__all__ = ["tenant_keys", "tenant_outputs", "tenants_of"]


def tenant_outputs(tenants: tuple[TenantSpec, ...]) -> list[dict[str, object]]:
    """The stack output ``tenants``: plain values from the config, sorted by name, known at preview."""
    return [
        {
            "name": tenant.name,
            "namespace": tenant.home_namespace,
            "namespaces": list(tenant.tenant_namespaces),
            "kustomization": tenant.name,
        }
        for tenant in sorted(tenants, key=lambda tenant: tenant.name)
    ]


def tenant_keys(config: StackConfig) -> list[TenantSpec]:
    """The tenants whose own repository gets a deploy key made and registered on GitHub."""
    return [
        tenant
        for tenant in config.tenants
        if tenant.source.repository is not None and tenant.source.repository.registers_deploy_key
    ]


def tenant_args(config: StackConfig, name: str, tenant: TenantSpec, fleet_auth: GitAuth) -> TenantArgs:
    """A tenant's Args: the fleet repository with the platform's credential, or its own repository."""
    flux, repository = config.flux, tenant.source.repository
    fleet = TenantArgs(
        name=tenant.name,
        url=config.git.sync_url,
        branch=config.git.branch,
        path=tenant.fleet_path or ".",
        auth=fleet_auth,
        namespaces=tenant.tenant_namespaces,
        role=tenant.role,
        quota=tenant.quota,
        limits=[limit.model_dump(by_alias=True, exclude_none=True) for limit in tenant.limits],
        environment=config.environment,
        substitute=flux.substitute,
        git_interval=flux.git_interval,
        interval=flux.interval,
        retry_interval=flux.retry_interval,
        timeout=flux.timeout,
        ready_timeout=flux.ready_timeout,
    )
    if repository is None:
        return fleet

    def own(**auth: Any) -> TenantArgs:
        return replace(fleet, url=repository.url, branch=repository.branch, path=repository.path, **auth)

    keys = config.secrets.tenant_keys
    known_hosts = repository.known_hosts or GITHUB_KNOWN_HOSTS
    app, existing = repository.github_app, repository.deploy_key.existing
    held = held_auth(
        app,
        keys[app.private_key] if app is not None else None,
        existing,
        keys[existing.private_key] if existing is not None else None,
        known_hosts,
    )
    if held is not None:
        return own(auth=held)
    github_repository = repository.github_repository
    assert github_repository is not None  # config validation requires github.com for a generated key
    deploy_key = DeployKeyArgs(
        repository=github_repository[1],
        algorithm=repository.deploy_key.algorithm,
        title=f"flux-{name}-tenant-{tenant.name}",
        rotation=repository.deploy_key.rotation,
        known_hosts=known_hosts,
    )
    return own(auth=None, deploy_key=deploy_key)


def tenants_of(
    config: StackConfig,
    name: str,
    on_cluster: pulumi.ResourceOptions,
    flux: FluxBootstrap,
    source: GitAuth,
    github_provider: github.Provider | None,
) -> tuple[Tenant, ...]:
    """Each tenant, after Flux (its CRDs, and its lockdown) on the cluster's provider, and GitHub's."""
    # The GitHub provider registers a tenant's generated deploy key; Flux's objects need its CRDs.
    extra: list[pulumi.ProviderResource] = [github_provider] if github_provider is not None else []
    opts = pulumi.ResourceOptions.merge(
        on_cluster, pulumi.ResourceOptions(depends_on=[flux], providers=extra)
    )
    tenants = [
        Tenant(f"{name}-tenant-{tenant.name}", tenant_args(config, name, tenant, source), opts=opts)
        for tenant in config.tenants
    ]
    return tuple(tenants)
