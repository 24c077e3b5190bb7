"""The git credential a config holds, the fleet's or a tenant's: a GitHub App or an existing deploy key."""

from __future__ import annotations

import pulumi

from gitops_infra.components.flux import GitAuth, GitHubAppSecretOptions, SourceSecretOptions
from gitops_infra.config import ExistingDeployKeySpec, GitHubAppSpec

__all__ = ["held_auth"]


def held_auth(
    app: GitHubAppSpec | None,
    app_key: pulumi.Output[str] | None,
    existing: ExistingDeployKeySpec | None,
    existing_key: pulumi.Output[str] | None,
    known_hosts: str,
) -> GitAuth | None:
    """A credential the config holds, the fleet's or a tenant's: a GitHub App or an existing deploy key
    (``None``: a key is to be made and registered)."""
    if app is not None:
        assert app_key is not None  # config validation requires the key the App names
        return GitHubAppSecretOptions(
            app_id=app.app_id, installation_id=app.installation_id, private_key=app_key, base_url=app.base_url
        )
    if existing is not None:
        assert existing_key is not None  # ...and the existing key's private half
        return SourceSecretOptions(
            private_key=existing_key, public_key=existing.public_key, known_hosts=known_hosts
        )
    return None
