"""``gitops-infra:tenants``, optional: the app teams the platform onboards, a list of ``TenantSpec``.

Each tenant gets its namespaces, a reconciler service account bound to its ``role`` in each of them, the
environment contract there, and a GitRepository and Kustomization of its own, synced as that service
account from a path of the fleet repository (``tenants/<name>`` by default) or from a repository of its
own. ``tenant_problems`` checks what spans tenants, and what a tenant shares with the other sections.

Example::

    tenant = TenantSpec.model_validate({"name": "shop", "quota": {"requests.cpu": "4", "pods": 50}})
    assert tenant.tenant_namespaces == ("shop",) and tenant.role == "admin"
    assert tenant.fleet_path == "tenants/shop" and tenant.quota == {"requests.cpu": "4", "pods": "50"}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from gitops_infra import checks, defaults
from gitops_infra.config._fields import ConfigModel, DnsLabel, GitUrl, KnownHosts, gate
from gitops_infra.config.git import DeployKeySpec, GitHubAppSpec

__all__ = [
    "LimitSpec",
    "Quantity",
    "ResourceList",
    "TenantRepositorySpec",
    "TenantSourceSpec",
    "TenantSpec",
    "tenant_problems",
]


def _quantity_text(value: Any) -> Any:
    # YAML reads `pods: 10` as a number; the API takes a quantity as either. A flag is neither.
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(checks.quantity_problem(None))
    return str(value)


Quantity = Annotated[str, BeforeValidator(_quantity_text), gate(checks.quantity_problem)]
"""A Kubernetes quantity (``500m``, ``2Gi``, ``10``), kept as the text the API server parses."""
ResourceList = Mapping[Annotated[str, gate(checks.resource_name_problem)], Quantity]
"""Quantities by resource name (``requests.cpu: 500m``), as a ResourceQuota's ``spec.hard`` holds them."""


class LimitSpec(ConfigModel):
    """One item of the tenant's LimitRange, in its own keys: ``type``, and quantities by resource."""

    type: Literal["Container", "Pod", "PersistentVolumeClaim"]
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max: ResourceList | None = None
    min: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None


class TenantRepositorySpec(ConfigModel):
    """A repository of the tenant's own, and how Flux authenticates to it, as the ``git`` section's
    fleet repository: a deploy key (generated and registered on GitHub, or ``existing``) over SSH, or a
    GitHub App over HTTPS. A generated key is registered through the platform's GitHub provider, so its
    repository is on github.com under ``git.owner``."""

    url: GitUrl
    known_hosts: Annotated[KnownHosts | None, Field(validate_default=True)] = None
    deploy_key: DeployKeySpec = DeployKeySpec()
    github_app: GitHubAppSpec | None = None
    branch: Annotated[str, gate(checks.branch_problem)] = checks.DEFAULT_BRANCH
    path: Annotated[str, gate(checks.relative_path_problem)] = "."

    @field_validator("known_hosts")
    @classmethod
    def _host_keys_to_trust(cls, value: str | None, info: ValidationInfo) -> str | None:
        url = info.data.get("url")
        if url is None or checks.ssh_url_problem(url) is not None:
            return value
        if value is None and checks.ssh_url_host(url)[0] != checks.GITHUB_HOST:
            raise ValueError("required for a git host other than github.com (its SSH host keys)")
        problem = None if value is None else checks.known_hosts_for_url_problem(value, url)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_auth_and_its_url(self) -> TenantRepositorySpec:
        if self.github_app is not None:
            if "deploy_key" in self.model_fields_set:
                raise ValueError("githubApp and deployKey: Flux authenticates with one of them")
            if self.known_hosts is not None:
                raise ValueError("knownHosts: not used with githubApp, which fetches over HTTPS; remove it")
        app = self.github_app is not None
        problem = checks.git_auth_url_problem(self.url, github_app=app)
        if problem is None and self.github_app is not None:
            problem = checks.github_app_url_problem(self.url, self.github_app.base_url)
        if problem is None and self.registers_deploy_key and self.github_repository is None:
            problem = (
                "a generated deploy key is registered on github.com: use ssh://git@github.com/<owner>/"
                "<repository>, or register a key yourself and set deployKey.existing"
            )
        if problem is not None:
            raise ValueError(f"url: {problem}")
        return self

    @property
    def registers_deploy_key(self) -> bool:
        """True when the platform makes the key pair and registers it on the repository."""
        return self.github_app is None and self.deploy_key.existing is None

    @property
    def github_repository(self) -> tuple[str, str] | None:
        """``(owner, name)`` of the repository when ``url`` is github.com's over SSH."""
        return checks.github_ssh_repository(self.url)


class TenantSourceSpec(ConfigModel):
    """Where the tenant's manifests are: ``path`` in the fleet repository (``tenants/<name>`` by
    default), or a ``repository`` of its own (which names its own path)."""

    path: Annotated[str, gate(checks.relative_path_problem)] | None = None
    repository: TenantRepositorySpec | None = None

    @model_validator(mode="after")
    def _one_source(self) -> TenantSourceSpec:
        if self.path is not None and self.repository is not None:
            raise ValueError(
                "path is in the fleet repository: with a repository of its own, set repository.path"
            )
        return self


class TenantSpec(ConfigModel):
    """An app team: its namespaces (the first is its home, where its sync objects live), its source, the
    ClusterRole its reconciler is bound to in each namespace, and an optional quota and limits."""

    name: DnsLabel
    namespaces: tuple[DnsLabel, ...] | None = None
    source: TenantSourceSpec = TenantSourceSpec()
    role: Annotated[str, gate(checks.rbac_name_problem)] = defaults.DEFAULT_TENANT_ROLE
    quota: ResourceList | None = None
    limits: tuple[LimitSpec, ...] = ()

    @property
    def tenant_namespaces(self) -> tuple[str, ...]:
        """``namespaces``, else one named after the tenant."""
        return self.namespaces if self.namespaces is not None else (self.name,)

    @property
    def home_namespace(self) -> str:
        """The first namespace: the GitRepository, Kustomization and reconciler live there."""
        return self.tenant_namespaces[0]

    @property
    def fleet_path(self) -> str | None:
        """The path in the fleet repository it syncs, or ``None`` with a repository of its own."""
        if self.source.repository is not None:
            return None
        return self.source.path if self.source.path is not None else defaults.tenant_path(self.name)


def tenant_problems(
    tenants: Sequence[TenantSpec],
    *,
    platform_namespaces: Mapping[str, str],
    sync_path: str | None,
    github_owner: str | None,
) -> list[str]:
    """What spans tenants and the other sections, by key path under ``tenants``: names and namespaces
    each once, none of the platform's (``platform_namespaces``: namespace to the key that sets it), no
    fleet path inside another or the platform's ``sync_path``, and a generated key on ``github_owner``'s
    repository."""
    problems: list[str] = []
    names: dict[str, int] = {}
    owners: dict[str, int] = {}
    paths: dict[str, int] = {}
    for index, tenant in enumerate(tenants):
        where = f"tenants[{index}]"
        if tenant.name in names:
            problems.append(f"{where}.name: repeats tenants[{names[tenant.name]}].name")
        names.setdefault(tenant.name, index)
        problems.extend(_namespace_problems(tenant, where, platform_namespaces, owners, index))
        path = tenant.fleet_path
        if path is not None:
            problems.extend(_path_problems(path, f"{where}.source.path", sync_path, paths))
            paths.setdefault(path, index)
        repository = tenant.source.repository
        if repository is not None and repository.registers_deploy_key:
            owner = repository.github_repository[0] if repository.github_repository else None
            if github_owner is None or owner is None or owner.lower() != github_owner.lower():
                problems.append(
                    f"{where}.source.repository.url: a generated deploy key is registered through the "
                    "platform's GitHub provider, which acts for git.owner: use a repository of git.owner's, "
                    "or register a key yourself and set deployKey.existing"
                )
    return problems


def _namespace_problems(
    tenant: TenantSpec,
    where: str,
    platform_namespaces: Mapping[str, str],
    owners: dict[str, int],
    index: int,
) -> list[str]:
    """A tenant's namespaces: each its own, once, and no one else's (``owners``: namespace to tenant)."""
    namespaces = tenant.tenant_namespaces

    def at(k: int, problem: str) -> str:
        if k < 0:
            return f"{where}.namespaces: {problem}"
        if tenant.namespaces is None:  # the namespace is the tenant's name: say so where it is changed
            return f"{where}.name: as its namespace (namespaces is unset), {problem}"
        return f"{where}.namespaces[{k}]: {problem}"

    refused = checks.tenant_namespaces_problems(namespaces)
    problems = [at(k, problem) for k, problem in refused]
    for k, namespace in enumerate(namespaces):
        if k in {r for r, _ in refused}:
            continue
        if namespace in platform_namespaces:
            problems.append(at(k, f"is {platform_namespaces[namespace]}, the platform's own namespace"))
        elif namespace in owners:
            problems.append(at(k, f"is also a namespace of tenants[{owners[namespace]}]"))
        else:
            owners[namespace] = index
    return problems


def _path_problems(path: str, where: str, sync_path: str | None, paths: Mapping[str, int]) -> list[str]:
    """A fleet path that holds, or lies inside, the platform's sync path or another tenant's: the outer
    Kustomization would apply the inner one's manifests as its own identity."""
    if sync_path is not None and checks.paths_overlap(path, sync_path):
        return [
            f"{where}: holds or lies inside the platform's sync path (git.path): Flux would apply it twice"
        ]
    for other, index in paths.items():
        if checks.paths_overlap(path, other):
            return [f"{where}: holds or lies inside the path of tenants[{index}]"]
    return []
