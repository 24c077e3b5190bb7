"""The whole stack: the keys of its namespace, and what a loaded, validated config is.

Example::

    config = load_config(raw, stack="dev")
    name = platform_name(config.environment, config.cluster)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitops_infra.config.argocd import ArgoCdSpec
from gitops_infra.config.cluster import ClusterSpec, ExistingClusterSpec
from gitops_infra.config.flux import FluxSpec
from gitops_infra.config.git import GitSpec
from gitops_infra.config.github import GitHubSpec
from gitops_infra.config.gitops import GitOpsSpec
from gitops_infra.config.secrets import AWS_REGION_KEY, SecretsSpec
from gitops_infra.config.tenants import TenantSpec
from gitops_infra.contract import Environment
from gitops_infra.defaults import SEALED_SECRETS_KEYS_KEY, FluxInstall, GitOpsEngine

if TYPE_CHECKING:
    import pulumi

__all__ = [
    "AWS_ASSUME_ROLES_KEY",
    "AWS_PROFILE_KEY",
    "AWS_REGION_KEY",
    "GITHUB_BASE_URL_KEY",
    "GITHUB_TOKEN_KEY",
    "NOTIFICATION_WEBHOOK_KEY",
    "OPTIONAL_SECTIONS",
    "PROJECT",
    "SEALED_SECRETS_KEYS_KEY",
    "SECRET_KEYS",
    "SECTIONS",
    "SECTION_FIELDS",
    "SOPS_AGE_KEY_KEY",
    "SealingKeyPair",
    "StackConfig",
    "StackSecrets",
    "platform_name",
]


PROJECT = "gitops-infra"
"""The config namespace: keys are ``gitops-infra:<key>``."""

SECTIONS = (
    "environment",
    "cluster",
    "git",
    "gitops",
    "flux",
    "argocd",
    "tags",
    "github",
    "tenants",
    "secrets",
)
"""The sections a ``StackConfig`` holds (the fleet's own, ``checks.FLEET_SECTION``, is read by the fleet).
``secrets`` is held as ``StackConfig.secret_providers``: ``StackConfig.secrets`` holds the secret values."""
OPTIONAL_SECTIONS = ("gitops", "flux", "argocd", "github", "tenants", "secrets")
SECTION_FIELDS = {"secrets": "secret_providers"}
"""The ``StackConfig`` field of a section whose key is not its field's name."""
GITHUB_TOKEN_KEY = "githubToken"
SOPS_AGE_KEY_KEY = "sopsAgeKey"
NOTIFICATION_WEBHOOK_KEY = "notificationWebhook"
SECRET_KEYS = (GITHUB_TOKEN_KEY, SOPS_AGE_KEY_KEY, NOTIFICATION_WEBHOOK_KEY, SEALED_SECRETS_KEYS_KEY)
"""The secret keys of the namespace, each set with ``pulumi config set --secret``."""
AWS_PROFILE_KEY = "aws:profile"
AWS_ASSUME_ROLES_KEY = "aws:assumeRoles"
GITHUB_BASE_URL_KEY = "github:baseUrl"
"""Pulumi's default GitHub provider's setting, which the platform does not read (see ``load_config``)."""


@dataclass(frozen=True)
class SealingKeyPair:
    """One rotation's Sealed Secrets key pair from ``sealedSecretsKeys``: its cert (public) and its private
    key (a secret), PEM."""

    cert: pulumi.Output[str] = field(repr=False)
    private_key: pulumi.Output[str] = field(repr=False)


@dataclass(frozen=True)
class StackSecrets:
    """The secret config values, always as ``pulumi.Output`` secrets (and never shown by ``repr``)."""

    github_token: pulumi.Output[str] | None = field(default=None, repr=False)
    sops_age_key: pulumi.Output[str] | None = field(default=None, repr=False)
    notification_webhook: pulumi.Output[str] | None = field(default=None, repr=False)
    kubeconfig: pulumi.Output[str] | None = field(default=None, repr=False)
    """An existing cluster's kubeconfig (the key ``cluster.existing.kubeconfig`` names)."""
    deploy_private_key: pulumi.Output[str] | None = field(default=None, repr=False)
    """An existing deploy key's private half (the key ``git.deployKey.existing.privateKey`` names)."""
    github_app_private_key: pulumi.Output[str] | None = field(default=None, repr=False)
    """Flux's GitHub App's PEM (the key ``git.githubApp.privateKey`` names)."""
    github_app_pem: pulumi.Output[str] | None = field(default=None, repr=False)
    """The GitHub provider's App's PEM (the key ``github.appAuth.pemFile`` names)."""
    tenant_keys: Mapping[str, pulumi.Output[str]] = field(default_factory=dict, repr=False)
    """The private keys tenants' own repositories name (an existing deploy key's, a GitHub App's), by
    the secret config key that holds each."""
    sealed_secrets_keys: Mapping[str, SealingKeyPair] = field(default_factory=dict, repr=False)
    """The Sealed Secrets key pairs of ``sealedSecretsKeys``, by rotation, when
    ``secrets.sealedSecrets.keySource`` is ``config``."""


@dataclass(frozen=True)
class StackConfig:
    """A validated stack config."""

    stack: str
    environment: Environment
    cluster: ClusterSpec | ExistingClusterSpec
    git: GitSpec
    flux: FluxSpec
    tags: Mapping[str, str]
    gitops: GitOpsSpec = field(default_factory=GitOpsSpec)
    """``gitops-infra:gitops``: the engine (Flux unless it says ``argocd``)."""
    argocd: ArgoCdSpec = field(default_factory=ArgoCdSpec)
    """``gitops-infra:argocd``: Argo CD's settings, used when ``gitops.engine`` is ``argocd``."""
    github: GitHubSpec = field(default_factory=GitHubSpec)
    tenants: tuple[TenantSpec, ...] = ()
    """The app teams the platform onboards (``gitops-infra:tenants``); none by default."""
    secret_providers: SecretsSpec = field(default_factory=SecretsSpec, metadata={"key": "secrets"})
    """``gitops-infra:secrets``: Sealed Secrets and External Secrets, each off unless enabled (named
    apart from ``secrets``, the secret values)."""
    secrets: StackSecrets = StackSecrets()
    aws_profile: str | None = None
    """``aws:profile``: the deploying runner's AWS profile, which the platform's kubeconfig must keep."""
    aws_role_arn: str | None = None
    """The role the AWS provider assumes (the last of ``aws:assumeRoles``): the principal that creates the
    cluster and holds EKS's creator entry, so the platform's kubeconfig must assume it too."""
    warnings: tuple[str, ...] = ()
    """What holds but should not, by key path: a private key in plaintext in a stack that is not prod (a
    prod stack's config is refused for it). The program prints each as a Pulumi warning."""

    @property
    def argo_cd(self) -> bool:
        """True when Argo CD syncs the fleet repository (``gitops.engine: argocd``), not Flux."""
        return self.gitops.engine is GitOpsEngine.ARGOCD

    @property
    def installs_addons(self) -> bool:
        """True when the platform installs its add-ons' charts (Sealed Secrets', External Secrets'): unless
        the engine is installed outside it (``flux.install`` or ``argocd.install`` ``external``), as on a
        cluster whose add-ons come from elsewhere (the local cluster's harness runs them)."""
        if self.argo_cd:
            return self.argocd.install != "external"
        return self.flux.install is not FluxInstall.EXTERNAL

    @property
    def cluster_creator(self) -> str | None:
        """The principal that holds EKS's creator entry: ``cluster.creator``, else the assumed role."""
        creator = self.cluster.creator if isinstance(self.cluster, ClusterSpec) else None
        return creator or self.aws_role_arn


def platform_name(environment: Environment, cluster: ClusterSpec | ExistingClusterSpec) -> str:
    """The prefix of every component name: ``cluster.name``, else ``gitops-<environment name>``.

    It takes the two sections, not a ``StackConfig``: the config checks the names AWS derives from it
    before a ``StackConfig`` exists. Example::

        name = platform_name(config.environment, config.cluster)
    """
    return cluster.name or f"gitops-{environment.name}"
