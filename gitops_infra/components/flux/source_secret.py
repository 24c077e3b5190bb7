"""Source secret: the git-auth Secret Flux fetches the fleet repository with, and the SOPS age key.

The second piece of the bootstrap, as Flux's ``pkg/manifestgen/sourcesecret``: ``source_secret_data``
turns the options into the Secret's data, and ``build_source_secret`` registers it. With a deploy key
(``SourceSecretOptions``) it is ``flux-system`` with ``identity``, ``identity.pub`` and ``known_hosts``; as
a GitHub App (``GitHubAppSecretOptions``) it is ``flux-system-github-app`` with the fields
source-controller reads for ``provider: github``. The two names differ so that a move from one to the
other makes the new Secret before the old one goes.

Each source also names its credential by a digest, its ``reconcile_request``, which the sync hands to
Flux as a fetch request: a new key is proven before the old one goes (see :mod:`.sync`).
``build_sops_secret`` writes the age key kustomize-controller decrypts SOPS files with.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource, fixed_secret
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux._names import FLUX_SECRET_NAME

__all__ = [
    "GITHUB_APP_BASE_URL_KEY",
    "GITHUB_APP_ID_KEY",
    "GITHUB_APP_INSTALLATION_ID_KEY",
    "GITHUB_APP_PRIVATE_KEY_KEY",
    "GITHUB_APP_SECRET_NAME",
    "GITHUB_PROVIDER",
    "IDENTITY_KEY",
    "IDENTITY_PUB_KEY",
    "KNOWN_HOSTS_KEY",
    "SOPS_AGE_KEY",
    "SOPS_SECRET_NAME",
    "GitAuth",
    "GitHubAppSecretOptions",
    "SourceSecretOptions",
    "build_sops_secret",
    "build_source_secret",
    "credential_digest",
    "source_secret_data",
]

IDENTITY_KEY = "identity"
IDENTITY_PUB_KEY = "identity.pub"
KNOWN_HOSTS_KEY = "known_hosts"
SOPS_SECRET_NAME = "sops-age"
SOPS_AGE_KEY = "age.agekey"  # kustomize-controller reads keys ending in .agekey
GITHUB_PROVIDER = checks.GIT_PROVIDERS[0]  # spec.provider for a GitHub App (source-controller >= 1.5)
GITHUB_APP_SECRET_NAME = "flux-system-github-app"
# The Secret keys source-controller v1.8.2 reads for provider github: fluxcd/pkg/auth v0.38.4,
# githubapp/client.go (KeyAppID, KeyAppInstallationID, KeyAppPrivateKey, KeyAppBaseURL; the same in the
# v0.54.2 of the local cluster's v1.9.4).
GITHUB_APP_ID_KEY = "githubAppID"
GITHUB_APP_INSTALLATION_ID_KEY = "githubAppInstallationID"
GITHUB_APP_PRIVATE_KEY_KEY = "githubAppPrivateKey"
GITHUB_APP_BASE_URL_KEY = "githubAppBaseURL"


def credential_digest(*parts: str) -> str:
    """A short digest naming a credential (``sha256-`` and 20 hex digits): the reconcile request.

    One-way and truncated: it tells one key from the next, and nothing of the key. Only letters, digits
    and ``-``, so it sits in a ``jsonpath=...=value`` wait unquoted.
    """
    digest = hashlib.sha256("\0".join(part.strip() for part in parts).encode()).hexdigest()
    return f"sha256-{digest[:20]}"


def _public_key_blob(public_key: str) -> str:
    """``<type> <base64>`` of an ``authorized_keys`` line: the key itself, without its comment."""
    return " ".join(public_key.split()[:2])


def _request(*parts: pulumi.Input[str]) -> pulumi.Output[str]:
    """The digest of ``parts``, not secret: a digest of a secret gives nothing of it away, and a secret
    annotation would make the GitRepository's whole metadata secret in the state."""
    return pulumi.Output.unsecret(pulumi.Output.all(*parts).apply(lambda values: credential_digest(*values)))


@dataclass(frozen=True)
class SourceSecretOptions:
    """The git-auth Secret: an SSH identity and the host keys to trust. The private key is kept secret."""

    private_key: pulumi.Input[str]
    public_key: pulumi.Input[str] | None = None
    known_hosts: pulumi.Input[str] = GITHUB_KNOWN_HOSTS
    name: str = FLUX_SECRET_NAME
    provider: ClassVar[str | None] = None
    """The GitRepository's ``spec.provider``: none, for an SSH key."""
    resource_kind: ClassVar[str] = "git-auth"
    """The Secret resource's name, after the component's: one per kind of auth, so a move between them
    creates the new Secret and deletes the old at the end of the update."""

    def __post_init__(self) -> None:
        problems = Problems("SourceSecretOptions")
        problems.gate("known_hosts", checks.known_hosts_problem, self.known_hosts)
        problems.gate("name", checks.dns_label_problem, self.name)
        problems.raise_if_any()

    @property
    def reconcile_request(self) -> pulumi.Output[str]:
        """The GitRepository's reconcile request for this key: a digest of its public half when known
        (the fingerprint's input), else of the private key. A new key is a new request."""
        if self.public_key is not None:
            return _request(pulumi.Output.from_input(self.public_key).apply(_public_key_blob))
        return _request(self.private_key)


@dataclass(frozen=True)
class GitHubAppSecretOptions:
    """The git-auth Secret for a GitHub App: Flux fetches over HTTPS with the App's installation token.

    ``app_id`` and ``installation_id`` are the numbers GitHub shows; ``private_key`` is the App's PEM
    (kept secret). ``base_url`` is the GitHub API for GitHub Enterprise Server (``https://<host>/api/v3``),
    else github.com's. Source-controller trades the key for a token of at most an hour, each fetch.
    """

    app_id: int
    installation_id: int
    private_key: pulumi.Input[str]
    base_url: str | None = None
    name: str = GITHUB_APP_SECRET_NAME
    provider: ClassVar[str | None] = GITHUB_PROVIDER
    """The GitRepository's ``spec.provider``: ``github``, which makes source-controller read the App."""
    resource_kind: ClassVar[str] = "github-app-auth"

    def __post_init__(self) -> None:
        problems = Problems("GitHubAppSecretOptions")
        problems.gate("app_id", checks.github_id_problem, self.app_id)
        problems.gate("installation_id", checks.github_id_problem, self.installation_id)
        if self.base_url is not None:
            problems.gate("base_url", checks.github_api_url_problem, self.base_url)
        problems.gate("name", checks.dns_label_problem, self.name)
        problems.raise_if_any()

    @property
    def reconcile_request(self) -> pulumi.Output[str]:
        """The GitRepository's reconcile request for this App: a digest of its IDs and key."""
        return _request(str(self.app_id), str(self.installation_id), self.private_key)


GitAuth = SourceSecretOptions | GitHubAppSecretOptions
"""How Flux authenticates to git: an SSH deploy key, or a GitHub App."""


def source_secret_data(options: GitAuth) -> dict[str, pulumi.Input[str]]:
    """The Secret's ``stringData``. A key: ``identity``, ``identity.pub`` (when known) and
    ``known_hosts``. An App: its IDs, its private key and its API's base URL (when not github.com's)."""
    if isinstance(options, GitHubAppSecretOptions):
        app: dict[str, pulumi.Input[str]] = {
            GITHUB_APP_ID_KEY: str(options.app_id),
            GITHUB_APP_INSTALLATION_ID_KEY: str(options.installation_id),
            GITHUB_APP_PRIVATE_KEY_KEY: pulumi.Output.secret(options.private_key),
        }
        if options.base_url is not None:
            app[GITHUB_APP_BASE_URL_KEY] = options.base_url
        return app
    data: dict[str, pulumi.Input[str]] = {
        IDENTITY_KEY: pulumi.Output.secret(options.private_key),
        KNOWN_HOSTS_KEY: options.known_hosts,
    }
    if options.public_key is not None:
        data[IDENTITY_PUB_KEY] = options.public_key
    return data


def build_source_secret(
    name: str, options: GitAuth, namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.SecretPatch:
    """The git-auth Secret in the Flux namespace, a resource of its own for each kind of auth."""
    resource_name = f"{name}-{options.resource_kind}"
    return fixed_secret(resource_name, options.name, source_secret_data(options), namespace, parent)


def build_sops_secret(
    name: str, age_key: pulumi.Input[str], namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.SecretPatch:
    """The age key kustomize-controller decrypts SOPS files with (``sops-age``, key ``age.agekey``)."""
    data = {SOPS_AGE_KEY: pulumi.Output.secret(age_key)}
    return fixed_secret(f"{name}-sops-age", SOPS_SECRET_NAME, data, namespace, parent)
