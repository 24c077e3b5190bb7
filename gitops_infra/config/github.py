"""``gitops-infra:github``, optional: how the platform's GitHub provider authenticates (``appAuth``), when
the stack makes anything on GitHub.

Example::

    github = GitHubSpec.model_validate({"appAuth": {"id": 1, "installationId": 2, "pemFile": "githubAppPem"}})
"""

from __future__ import annotations

from gitops_infra.config._fields import ConfigModel, GitHubId, SecretKeyName

__all__ = ["GitHubAppAuthSpec", "GitHubSpec"]


class GitHubAppAuthSpec(ConfigModel):
    """The GitHub provider authenticates as a GitHub App installation: ``id``, ``installationId``, and
    ``pemFile`` naming the secret config key that holds the App's PEM (the provider's ``appAuth``)."""

    id: GitHubId
    installation_id: GitHubId
    pem_file: SecretKeyName


class GitHubSpec(ConfigModel):
    """How the GitHub provider authenticates, when the stack makes anything on GitHub: ``appAuth``, or
    a personal token (``githubToken``, else ``GITHUB_TOKEN``) when unset."""

    app_auth: GitHubAppAuthSpec | None = None
