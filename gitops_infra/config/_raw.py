"""A stack config read before it is validated: where it names secret keys, and a value by its path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitops_infra.config.stack import PROJECT

__all__ = ["NAMED_SECRETS", "TENANT_SECRETS", "loosely", "named_secrets", "value_at"]


NAMED_SECRETS = {
    "cluster.existing.kubeconfig": "kubeconfig",
    "git.deployKey.existing.privateKey": "deploy_private_key",
    "git.githubApp.privateKey": "github_app_private_key",
    "github.appAuth.pemFile": "github_app_pem",
}
"""Where the config names a secret config key (a camelCase path), and the ``StackSecrets`` field that
holds its value."""
TENANT_SECRETS = ("source.repository.deployKey.existing.privateKey", "source.repository.githubApp.privateKey")
"""Where a tenant names a secret config key; its value is in ``StackSecrets.tenant_keys``, by that key."""


def value_at(value: Any, path: str) -> Any:
    """The value at the dotted ``path`` inside nested mappings, or ``None``."""
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def loosely(raw: Mapping[str, Any], where: str) -> Any:
    """The value at ``where`` (``section.path``) of a config not validated yet, or ``None``."""
    section, _, path = where.partition(".")
    return value_at(raw.get(f"{PROJECT}:{section}", raw.get(section)), path)


def named_secrets(raw: Mapping[str, Any]) -> dict[str, str]:
    """The secret keys a config names, by where it names them (the paths of ``NAMED_SECRETS``, and of
    ``TENANT_SECRETS`` in each tenant, ``tenants[0].source...``).

    ``raw`` may be a stack config not validated yet, keys prefixed or not, or the validated sections
    dumped by alias: what is not a key's name there is no secret key.
    """
    found = {where: loosely(raw, where) for where in NAMED_SECRETS}
    tenants = raw.get(f"{PROJECT}:tenants", raw.get("tenants"))
    for index, tenant in enumerate(tenants if isinstance(tenants, list | tuple) else ()):
        found |= {f"tenants[{index}].{path}": value_at(tenant, path) for path in TENANT_SECRETS}
    return {where: key for where, key in found.items() if isinstance(key, str)}
