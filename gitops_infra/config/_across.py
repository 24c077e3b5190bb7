"""The rules that span sections (or a section and the secrets, or the AWS and GitHub keys).

Each problem is named by the key to change, as the sections' own are.
"""

from __future__ import annotations

from gitops_infra import checks
from gitops_infra.config.argocd import ArgoCdSpec
from gitops_infra.config.cluster import ClusterSpec, ExistingClusterSpec
from gitops_infra.config.flux import FluxSpec
from gitops_infra.config.git import GitSpec
from gitops_infra.config.github import GitHubSpec
from gitops_infra.config.gitops import GitOpsSpec
from gitops_infra.config.secrets import SecretsSpec, secrets_problems
from gitops_infra.config.stack import (
    AWS_ASSUME_ROLES_KEY,
    GITHUB_BASE_URL_KEY,
    GITHUB_TOKEN_KEY,
    NOTIFICATION_WEBHOOK_KEY,
    PROJECT,
    SOPS_AGE_KEY_KEY,
    StackSecrets,
    platform_name,
)
from gitops_infra.config.tenants import TenantSpec, tenant_problems
from gitops_infra.contract import Environment
from gitops_infra.defaults import GitOpsEngine

__all__ = ["engine_problems", "problems_across_sections"]


def engine_problems(
    gitops: GitOpsSpec | None,
    *,
    given: set[str],
    environment: Environment | None,
    argocd: ArgoCdSpec | None,
    tenants: tuple[TenantSpec, ...] | None,
) -> list[str]:
    """Each engine's settings only with that engine (``given`` holds the sections the stack sets), and what
    the platform does only through Flux refused with Argo CD, each named by ``gitops.engine``."""
    if gitops is None:
        return []
    engine = gitops.engine
    if engine is GitOpsEngine.FLUX:
        if "argocd" in given:
            return [
                f"{PROJECT}:argocd: Argo CD's settings, used only with gitops.engine: argocd (this stack's "
                "engine is flux, the default): remove the section, or set gitops.engine: argocd"
            ]
        return []
    problems = []
    if "flux" in given:
        problems.append(
            f"{PROJECT}:flux: Flux's settings, and this stack's gitops.engine is argocd: remove the section "
            f"(Argo CD's are {PROJECT}:argocd), or set gitops.engine: flux"
        )
    if tenants:
        problems.append(
            f"{PROJECT}:tenants: with gitops.engine: argocd, not yet: a tenant syncs through a Flux "
            "Kustomization that impersonates it; use gitops.engine: flux for a stack with tenants"
        )
    if environment is not None and argocd is not None and environment.service_namespace == argocd.namespace:
        problems.append(
            f"{PROJECT}:environment.serviceNamespace: {environment.service_namespace!r} is also "
            "argocd.namespace; app workloads and Argo CD need namespaces of their own"
        )
    return problems


def problems_across_sections(
    environment: Environment | None,
    cluster: ClusterSpec | ExistingClusterSpec | None,
    git: GitSpec | None,
    flux: FluxSpec | None,
    github: GitHubSpec | None,
    tenants: tuple[TenantSpec, ...] | None = (),
    secret_providers: SecretsSpec | None = None,
    *,
    secrets: StackSecrets,
    aws_role_arn: str | None,
    github_base_url: object,
    aws_region: object = None,
) -> list[str]:
    """The problems between the sections that are valid (``None`` for one that is not, or is absent)."""
    problems: list[str] = []
    if flux is not None:
        problems.extend(_flux_secret_problems(flux, secrets))
    if github is not None and github.app_auth is not None and secrets.github_token is not None:
        problems.append(
            f"{PROJECT}:github.appAuth: the GitHub provider authenticates as the App or with "
            f"{PROJECT}:{GITHUB_TOKEN_KEY}, not both: unset that secret "
            f"(pulumi config rm {GITHUB_TOKEN_KEY}) or remove appAuth"
        )
    if isinstance(cluster, ClusterSpec) and flux is not None:
        problems.extend(_kubernetes_floor_problems(cluster, flux))
    if flux is not None and flux.receiver_webhook and git is not None and None in (git.owner, git.repository):
        problems.append(
            f"{PROJECT}:flux.receiver.webhook: the webhook is registered on the GitHub repository: set "
            "git.owner and git.repository, or webhook: false (a Receiver with no GitHub webhook)"
        )
    if git is not None and github_base_url is not None:
        problems.extend(_github_base_url_problems(git, github_base_url))
    if isinstance(cluster, ClusterSpec) and cluster.admins and (cluster.creator or aws_role_arn) is None:
        problems.append(
            f"{PROJECT}:cluster.creator: {checks.ADMINS_NEED_CREATOR}; set it to the IAM role or user "
            f"that creates the cluster, or deploy through a role ({AWS_ASSUME_ROLES_KEY})"
        )
    if environment is not None and isinstance(cluster, ClusterSpec):
        problems.extend(_derived_name_problems(environment, cluster))
    if environment is not None and flux is not None and environment.service_namespace == flux.namespace:
        # Two owners of one namespace, and two `environment` ConfigMaps with one name: a destroy of either
        # would take the other's away.
        problems.append(
            f"{PROJECT}:environment.serviceNamespace: {environment.service_namespace!r} is also "
            "flux.namespace; app workloads and Flux need namespaces of their own"
        )
    if secret_providers is not None:
        problems.extend(
            secrets_problems(
                secret_providers,
                project=PROJECT,
                platform_namespaces=_platform_namespaces(environment, flux),
                aws_region=aws_region,
            )
        )
    if tenants and environment is not None and flux is not None and git is not None:
        problems.extend(_tenant_problems(tenants, environment, flux, git, secret_providers))
    problems.extend(_secret_store_problems(environment, cluster, secret_providers))
    return problems


def _secret_store_problems(
    environment: Environment | None,
    cluster: ClusterSpec | ExistingClusterSpec | None,
    secret_providers: SecretsSpec | None,
) -> list[str]:
    """The store's name is the platform's to write into the contract, and a cluster the platform makes
    reads Secrets Manager through the role it makes."""
    problems = []
    if environment is not None and environment.cluster_secret_store is not None:
        problems.append(
            f"{PROJECT}:environment.clusterSecretStore: written by the platform, from "
            "secrets.externalSecrets.clusterSecretStore when externalSecrets is enabled: remove it here"
        )
    external = secret_providers.external_secrets if secret_providers is not None else None
    if (
        external is not None
        and external.enabled
        and not external.iam_role
        and isinstance(cluster, ClusterSpec)
    ):
        problems.append(
            f"{PROJECT}:secrets.externalSecrets.iamRole: false only with cluster.existing; the cluster the "
            "platform makes reads Secrets Manager through the role it makes"
        )
    return problems


def _platform_namespaces(
    environment: Environment | None, flux: FluxSpec | None, secret_providers: SecretsSpec | None = None
) -> dict[str, str]:
    """The platform's own namespaces, each to the key that sets it (the secret providers' when enabled);
    of the sections that are valid."""
    namespaces: dict[str, str] = {}
    if environment is not None:
        namespaces[environment.service_namespace] = "environment.serviceNamespace"
    if flux is not None:
        namespaces.setdefault(flux.namespace, "flux.namespace")
    if secret_providers is not None:
        for key, provider in (
            ("secrets.sealedSecrets.namespace", secret_providers.sealed_secrets),
            ("secrets.externalSecrets.namespace", secret_providers.external_secrets),
        ):
            if provider.enabled:
                namespaces.setdefault(provider.namespace, key)
    return namespaces


def _tenant_problems(
    tenants: tuple[TenantSpec, ...],
    environment: Environment,
    flux: FluxSpec,
    git: GitSpec,
    secret_providers: SecretsSpec | None,
) -> list[str]:
    """The tenants against each other and against the platform's namespaces, sync path and GitHub owner."""
    problems = tenant_problems(
        tenants,
        platform_namespaces=_platform_namespaces(environment, flux, secret_providers),
        sync_path=git.sync_path(environment.name),
        github_owner=git.owner,
    )
    return [f"{PROJECT}:{problem}" for problem in problems]


def _flux_secret_problems(flux: FluxSpec, secrets: StackSecrets) -> list[str]:
    """What ``flux`` needs from the secret keys: the age key for SOPS, an address for notifications."""
    problems: list[str] = []
    if flux.sops and secrets.sops_age_key is None:
        problems.append(
            f"{PROJECT}:flux.sops: needs the secret {PROJECT}:{SOPS_AGE_KEY_KEY} "
            f"(pulumi config set --secret {SOPS_AGE_KEY_KEY} ...)"
        )
    notifications = flux.notifications
    if notifications is None:
        return problems
    where = f"{PROJECT}:flux.notifications"
    webhook = secrets.notification_webhook is not None
    if notifications.needs_token:
        if webhook:
            problems.append(
                f"{where}.providerType: {notifications.provider_type} also needs a token, which the Secret "
                f"made from {PROJECT}:{NOTIFICATION_WEBHOOK_KEY} would not hold: unset that secret, and "
                "name your own Secret (with token) in secretName and the address in address"
            )
        elif notifications.secret_name is None:
            problems.append(
                f"{where}.secretName: {notifications.provider_type} needs a Secret holding its token "
                "(created outside this stack, for example SOPS-encrypted in the fleet repository)"
            )
    if notifications.address is None and not webhook:
        problems.append(
            f"{where}: {notifications.provider_type} needs an address to post to: set the secret "
            f"{PROJECT}:{NOTIFICATION_WEBHOOK_KEY} (pulumi config set --secret {NOTIFICATION_WEBHOOK_KEY} "
            "<webhook URL>), or address for one that is not secret"
        )
    elif notifications.address is not None and webhook:
        problems.append(
            f"{where}.address: set either address or the secret {PROJECT}:{NOTIFICATION_WEBHOOK_KEY}, "
            "not both (Flux ignores address when the Secret has one)"
        )
    return problems


def _github_base_url_problems(git: GitSpec, value: object) -> list[str]:
    """``github:baseUrl`` is for Pulumi's default GitHub provider, which the platform never uses: it makes
    its own. Naming another GitHub than that one talks to, it would be a setting that does nothing."""
    if not (git.registers_deploy_key or git.manages_repository):
        return []  # no GitHub provider at all
    url = value if isinstance(value, str) and value.startswith("https://") else None
    if url is not None and checks.github_host(url) == git.github_host:
        return []
    talks_to = (
        f"{git.github_host}, the GitHub of {PROJECT}:git.githubApp"
        if git.github_app is not None
        else "the API in the GITHUB_BASE_URL environment variable, else github.com's"
    )
    return [
        f"{GITHUB_BASE_URL_KEY}: is not read: the platform makes its own GitHub provider, which talks to "
        f"{talks_to}; remove it (a GitHub Enterprise Server is named by {PROJECT}:git.githubApp.baseUrl, "
        "https://<host>/api/v3)"
    ]


def _kubernetes_floor_problems(cluster: ClusterSpec, flux: FluxSpec) -> list[str]:
    """The pinned Flux refuses older clusters (the one rule InstallOptions checks too)."""
    problem = checks.kubernetes_floor_problem(cluster.kubernetes_version, flux.version)
    return [] if problem is None else [f"{PROJECT}:cluster.kubernetesVersion: {problem}"]


def _derived_name_problems(environment: Environment, cluster: ClusterSpec) -> list[str]:
    """Names AWS derives from the platform's name must fit AWS's limits; say which key to shorten."""
    name = platform_name(environment, cluster)
    problems: list[str] = []
    problem = checks.cluster_component_name_problem(name)
    if problem is not None:  # only a derived name gets here: ClusterSpec checks its own `name`
        return [
            f"{PROJECT}:environment.name: with cluster.name unset the platform is named "
            f"gitops-<environment>, which {problem}; set a shorter cluster.name"
        ]
    for index, group in enumerate(cluster.node_groups):
        problem = checks.node_group_name_problem(name, group.name)
        if problem is not None:
            problems.append(f"{PROJECT}:cluster.nodeGroups[{index}].name: {problem}")
    return problems
