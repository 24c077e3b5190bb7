"""``gitops-infra:git``: the fleet repository Flux syncs from, and how Flux authenticates to it (a deploy
key, generated or existing, or a GitHub App).

Example::

    git = GitSpec.model_validate({"owner": "acme", "repository": "fleet", "branch": "main"})
    assert git.sync_url == "ssh://git@github.com/acme/fleet"
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator

from gitops_infra import checks, defaults
from gitops_infra.config._fields import (
    GITHUB_OWNER_PATTERN,
    SSH_PUBLIC_KEY_PATTERN,
    ConfigModel,
    GitHubId,
    GitUrl,
    KnownHosts,
    RepositoryName,
    SecretKeyName,
    gate,
)

__all__ = [
    "GITHUB_API_URL",
    "GITHUB_HOST",
    "CreateRepositorySpec",
    "DeployKeySpec",
    "ExistingDeployKeySpec",
    "GitHubAppSpec",
    "GitSpec",
]


GITHUB_HOST = checks.GITHUB_HOST
GITHUB_API_URL = "https://api.github.com/"
"""github.com's API, as pulumi-github's provider writes its default ``base_url``."""


class ExistingDeployKeySpec(ConfigModel):
    """A key pair registered with the git host outside this stack (any SSH git server, not only GitHub).

    ``privateKey`` names the secret config key holding the OpenSSH private key; ``publicKey``, optional,
    is its public half, in ``authorized_keys`` form.
    """

    private_key: SecretKeyName
    public_key: Annotated[str, Field(pattern=SSH_PUBLIC_KEY_PATTERN)] | None = None
    """Written into the git-auth Secret as ``identity.pub`` when given; Flux authenticates without it."""


class DeployKeySpec(ConfigModel):
    """The fleet repository's deploy key. Change ``rotation`` (any new string) to rotate it.

    By default the platform makes the key pair and registers it on GitHub. With ``existing``, it uses a
    key you registered yourself, and makes neither.
    """

    algorithm: defaults.KeyAlgorithm = defaults.KeyAlgorithm.ECDSA_P384
    rotation: Annotated[str, Field(max_length=64)] = ""
    existing: ExistingDeployKeySpec | None = None

    @model_validator(mode="after")
    def _generated_or_existing(self) -> DeployKeySpec:
        if self.existing is not None and self.model_fields_set & {"algorithm", "rotation"}:
            raise ValueError("algorithm and rotation are for a generated key; an existing key has neither")
        return self


class GitHubAppSpec(ConfigModel):
    """Flux fetches as a GitHub App instead of with a deploy key: ``appId``, ``installationId``, and
    ``privateKey`` naming the secret config key that holds the App's PEM. ``baseUrl`` is the API of a
    GitHub Enterprise Server (``https://<host>/api/v3``); github.com's is the default. The App's token is
    good on that GitHub alone: Flux clones from its host, and so must ``url``, when given.
    """

    app_id: GitHubId
    installation_id: GitHubId
    private_key: SecretKeyName
    base_url: Annotated[str, gate(checks.github_api_url_problem)] | None = None


class CreateRepositorySpec(ConfigModel):
    """Create the fleet repository on GitHub (kept on ``destroy``), with this visibility."""

    visibility: defaults.RepositoryVisibility = defaults.RepositoryVisibility.PRIVATE


class GitSpec(ConfigModel):
    """The fleet repository Flux syncs from: ``owner``/``repository`` on GitHub, or any ``url``.

    Flux authenticates with a deploy key over SSH (the default), or as a GitHub App over HTTPS
    (``githubApp``, which excludes ``deployKey``). An SSH ``url`` needs ``knownHosts`` unless its host
    is github.com, and a key GitHub does not hold needs ``deployKey.existing``: a deploy key is generated
    and registered on GitHub only. ``scaffold`` and ``createRepository`` act on the GitHub repository, so
    they need ``owner`` and ``repository``.
    """

    # url, knownHosts, deployKey and githubApp come first: whether owner and repository are needed
    # depends on them.
    url: GitUrl | None = None
    known_hosts: Annotated[KnownHosts | None, Field(validate_default=True)] = None
    deploy_key: DeployKeySpec = DeployKeySpec()
    github_app: GitHubAppSpec | None = None
    owner: Annotated[str | None, Field(pattern=GITHUB_OWNER_PATTERN, validate_default=True)] = None
    repository: Annotated[RepositoryName | None, Field(validate_default=True)] = None
    branch: Annotated[str, gate(checks.branch_problem)] = checks.DEFAULT_BRANCH
    path: str | None = None
    scaffold: StrictBool = False
    create_repository: CreateRepositorySpec | None = None

    @field_validator("known_hosts")
    @classmethod
    def _host_keys_to_trust(cls, value: str | None, info: ValidationInfo) -> str | None:
        url = info.data.get("url")
        if url is not None and checks.ssh_url_problem(url) is not None:
            return value  # not SSH: the model's check says what goes with an https:// URL
        if value is None and url is not None and checks.ssh_url_host(url)[0] != GITHUB_HOST:
            raise ValueError("required for a git host other than github.com (its SSH host keys)")
        problem = None if value is None or url is None else checks.known_hosts_for_url_problem(value, url)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("owner", "repository")
    @classmethod
    def _needed_on_github(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None or "deploy_key" not in info.data:
            return value
        if info.data.get("url") is None:
            raise ValueError("required (or url, for a repository on another SSH git host)")
        if info.data["deploy_key"].existing is None and info.data.get("github_app") is None:
            raise ValueError(
                "required to register the generated deploy key on GitHub; for another git host, "
                "register a key yourself and set deployKey.existing"
            )
        return value

    @field_validator("path")
    @classmethod
    def _relative_path(cls, value: str | None) -> str | None:
        problem = None if value is None else checks.relative_path_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_auth_and_its_url(self) -> GitSpec:
        if self.github_app is None:
            problem = None if self.url is None else checks.git_auth_url_problem(self.url, github_app=False)
            if problem is not None:
                raise ValueError(f"url: {problem}; or set githubApp")
            return self
        if "deploy_key" in self.model_fields_set:
            raise ValueError(
                "githubApp and deployKey: Flux authenticates with one of them; remove deployKey to "
                "fetch as the App (the old deploy key and its Secret are deleted once the App works)"
            )
        if self.known_hosts is not None:
            raise ValueError("knownHosts: not used with githubApp, which fetches over HTTPS; remove it")
        problem = None if self.url is None else checks.git_auth_url_problem(self.url, github_app=True)
        if problem is None and self.url is not None:
            problem = checks.github_app_url_problem(self.url, self.github_app.base_url)
        if problem is not None:
            raise ValueError(f"url: {problem}")
        return self

    @model_validator(mode="after")
    def _github_for_repository_changes(self) -> GitSpec:
        wants = {"scaffold": self.scaffold, "createRepository": self.create_repository is not None}
        github_changes = [key for key, wanted in wants.items() if wanted]
        if github_changes and (self.owner is None or self.repository is None):
            raise ValueError(
                f"{' and '.join(github_changes)} commit to or create a GitHub repository: "
                "set owner and repository"
            )
        return self

    @property
    def manages_repository(self) -> bool:
        """True when the stack writes to the GitHub repository (creates it or scaffolds its path)."""
        return self.scaffold or self.create_repository is not None

    @property
    def registers_deploy_key(self) -> bool:
        """True when the stack makes a deploy key and registers it on GitHub."""
        return self.github_app is None and self.deploy_key.existing is None

    @property
    def github_host(self) -> str:
        """The GitHub the repository is on, for Flux and the GitHub provider alike: the host of
        ``githubApp.baseUrl`` (a GitHub Enterprise Server), else github.com."""
        return checks.github_host(self.github_app.base_url if self.github_app is not None else None)

    @property
    def github_base_url(self) -> str | None:
        """The GitHub provider's ``base_url`` with an App: the App's GitHub. ``None`` without one, for
        the provider's default (``GITHUB_BASE_URL``, else github.com's API).

        A GitHub Enterprise Server is named by its root, not by the ``/api/v3`` an App names:
        terraform-provider-github before v6.11 appends ``api/v3/`` to whatever it is given, and later
        ones trim it and add it back.
        """
        if self.github_app is None:
            return None
        host = self.github_host
        return GITHUB_API_URL if host == GITHUB_HOST else f"https://{host}/"

    @property
    def sync_url(self) -> str:
        """The URL Flux clones: ``url``, else GitHub's: ``https://`` for an App (on the host of its
        ``baseUrl``, where its token is valid), else the ``ssh://`` form Flux's bootstrap writes."""
        if self.url is not None:
            return self.url
        if self.github_app is not None:
            return f"https://{self.github_host}/{self.owner}/{self.repository}"
        return f"ssh://git@{GITHUB_HOST}/{self.owner}/{self.repository}"

    def sync_path(self, environment: str) -> str:
        """The path Flux syncs: ``path`` if set, else ``clusters/<environment>``."""
        return self.path if self.path is not None else f"clusters/{environment}"
