"""From a namespace's values to a ``StackConfig``: each section validated, then what spans them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from gitops_infra import checks
from gitops_infra._validation import validation_problems
from gitops_infra.config._across import engine_problems, problems_across_sections
from gitops_infra.config._fields import PATTERN_HINTS
from gitops_infra.config._raw import NAMED_SECRETS, named_secrets
from gitops_infra.config._sealing_keys import sealing_keys
from gitops_infra.config.argocd import ArgoCdSpec
from gitops_infra.config.cluster import ClusterSpec, ExistingClusterSpec
from gitops_infra.config.flux import FluxSpec
from gitops_infra.config.git import GitSpec
from gitops_infra.config.github import GitHubSpec
from gitops_infra.config.gitops import GitOpsSpec
from gitops_infra.config.secrets import SecretsSpec, with_stack_defaults
from gitops_infra.config.stack import (
    GITHUB_TOKEN_KEY,
    NOTIFICATION_WEBHOOK_KEY,
    OPTIONAL_SECTIONS,
    PROJECT,
    SECRET_KEYS,
    SECTION_FIELDS,
    SECTIONS,
    SOPS_AGE_KEY_KEY,
    StackConfig,
    StackSecrets,
)
from gitops_infra.config.tenants import TenantSpec
from gitops_infra.contract import Environment
from gitops_infra.errors import ConfigError

if TYPE_CHECKING:
    import pulumi

__all__ = ["UNREADABLE", "build"]


UNREADABLE = object()
"""Stands for a section's value that could not be read (already reported as a problem)."""
OWNER_TAG = "owner"
_OWNER_REQUIRED = "required: every AWS resource is tagged with the team that owns it"


_SECTION_MODELS: dict[str, type[BaseModel]] = {
    "environment": Environment,
    "cluster": ClusterSpec,
    "git": GitSpec,
    "gitops": GitOpsSpec,
    "flux": FluxSpec,
    "argocd": ArgoCdSpec,
    "github": GitHubSpec,
    "secrets": SecretsSpec,
}


def _validate_section(section: str, value: Any, problems: list[str]) -> Any:
    """The section's model, or ``None`` (or ``{}`` for tags) with its problems added to ``problems``."""
    if section == "tags":
        if value is UNREADABLE:
            return {}
        return _validate_tags(value, problems)
    if section == "tenants":
        return None if value is UNREADABLE else _validate_tenants(value, problems)
    model = _SECTION_MODELS[section]
    if section == "cluster" and isinstance(value, Mapping) and "existing" in value:
        model = ExistingClusterSpec
    if value is UNREADABLE:
        return None  # already reported
    if value is None and section in OPTIONAL_SECTIONS:
        value = {}
    if value is None:
        problems.append(f"{PROJECT}:{section}: required")
        return None
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, f"{PROJECT}:{section}", spell=to_camel, hints=PATTERN_HINTS))
        return None


def _validate_tags(value: Any, problems: list[str]) -> dict[str, str]:
    """The tags AWS takes; ``owner`` is required."""
    if value is None:
        problems.append(f"{PROJECT}:tags.{OWNER_TAG}: {_OWNER_REQUIRED}")
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"{PROJECT}:tags: must be a mapping of tag names to strings")
        return {}
    tags: dict[str, str] = {}
    for key, tag in value.items():
        where = f"{PROJECT}:tags.{key}"
        if not isinstance(key, str) or not 1 <= len(key) <= 128 or key.startswith("aws:"):
            problems.append(f"{where}: tag names are 1-128 characters and may not start with 'aws:'")
        elif not isinstance(tag, str) or len(tag) > 256:
            problems.append(f"{where}: must be a string of at most 256 characters")
        else:
            tags[key] = tag
    if OWNER_TAG not in value:
        problems.append(f"{PROJECT}:tags.{OWNER_TAG}: {_OWNER_REQUIRED}")
    return tags


def _key(part: str) -> str:
    """A key as the file spells it: a field camelCase, a resource a quota names (``requests.cpu``) as is."""
    return to_camel(part) if part.isidentifier() else part


def _validate_tenants(value: Any, problems: list[str]) -> tuple[TenantSpec, ...] | None:
    """Each tenant by its index, or ``None`` with their problems added (absent: no tenants)."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        problems.append(f"{PROJECT}:tenants: must be a list of tenants, each a mapping with a name")
        return None
    tenants: list[TenantSpec] = []
    for index, item in enumerate(value):
        try:
            tenants.append(TenantSpec.model_validate(item))
        except ValidationError as exc:
            where = f"{PROJECT}:tenants[{index}]"
            problems.extend(validation_problems(exc, where, spell=_key, hints=PATTERN_HINTS))
    return tuple(tenants) if len(tenants) == len(value) else None


def build(
    values: Mapping[str, Any],
    *,
    stack: str,
    read_secret: Callable[[str], pulumi.Output[str] | None],
    problems: list[str],
    given: StackSecrets | None = None,
    aws_profile: str | None = None,
    aws_role_arn: str | None = None,
    aws_region: object = None,
    github_base_url: object = None,
    plaintext_keys: Sequence[str] = (),
    sealing_keys_text: object = None,
) -> StackConfig:
    """Validate the sections, then what spans them; ``values`` holds every key of the namespace read.

    ``sealing_keys_text`` is the plaintext of ``sealedSecretsKeys`` when the caller can read it (checked
    pair by pair: :mod:`gitops_infra.config._sealing_keys`).

    ``plaintext_keys`` are the key paths that hold a private key in plaintext (``checks.private_key_paths``):
    a problem each in a prod stack (``checks.is_prod``), a warning each in another.
    """
    sections = {section: _validate_section(section, values.get(section), problems) for section in SECTIONS}
    environment: Environment | None = sections["environment"]
    cluster: ClusterSpec | ExistingClusterSpec | None = sections["cluster"]
    git: GitSpec | None = sections["git"]
    flux: FluxSpec | None = sections["flux"]
    github: GitHubSpec | None = sections["github"]
    tenants: tuple[TenantSpec, ...] | None = sections["tenants"]
    secret_providers: SecretsSpec | None = sections["secrets"]
    problems.extend(
        engine_problems(
            sections["gitops"],
            given={section for section in SECTIONS if values.get(section) is not None},
            environment=environment,
            argocd=sections["argocd"],
            tenants=tenants,
        )
    )
    named = named_secrets(
        {
            section: model.model_dump(by_alias=True)
            for section, model in sections.items()
            if isinstance(model, BaseModel)
        }
        | {"tenants": [tenant.model_dump(by_alias=True) for tenant in tenants or ()]}
    )
    # Read loosely too, so that a key an invalid section names is not also reported as unknown.
    known = {*SECTIONS, checks.FLEET_SECTION, *SECRET_KEYS, *named.values(), *named_secrets(values).values()}
    if values.get(checks.FLEET_SECTION) is not None:
        # The fleet's own model, only for a stack that has the section: a plan of one that has not
        # imports none of the fleet's code.
        from gitops_infra.automation.fleet.inventory import fleet_spec

        problems.extend(fleet_spec(values[checks.FLEET_SECTION])[1])
    problems.extend(f"{PROJECT}:{key}: unknown key" for key in values if key not in known)
    secrets = given or _read_secrets(read_secret, named, problems)
    pairs = sealing_keys(
        secret_providers.sealed_secrets if secret_providers is not None else None,
        read_secret=read_secret,
        plaintext=sealing_keys_text,
        given=given,
        problems=problems,
    )
    secrets = replace(secrets, sealed_secrets_keys=pairs)
    problems.extend(
        problems_across_sections(
            environment,
            cluster,
            git,
            flux,
            github,
            tenants,
            secret_providers,
            secrets=secrets,
            aws_role_arn=aws_role_arn,
            aws_region=aws_region,
            github_base_url=github_base_url,
        )
    )
    # An environment that cannot be read is already a problem: fail closed, as for prod.
    prod = environment is None or checks.is_prod(environment.name, stack)
    plaintext = [f"{key}: {checks.PLAINTEXT_PRIVATE_KEY}" for key in plaintext_keys]
    if prod:
        problems.extend(f"{problem} (a prod stack refuses it)" for problem in plaintext)
    if problems:
        raise ConfigError(problems, stack=stack)
    if secret_providers is not None and environment is not None:
        sections["secrets"] = with_stack_defaults(
            secret_providers, environment=environment.name, aws_region=aws_region
        )
        external = secret_providers.external_secrets
        if external.enabled:  # the contract names the store app teams reference
            sections["environment"] = environment.model_copy(
                update={"cluster_secret_store": external.cluster_secret_store}
            )
    return StackConfig(
        stack=stack,
        secrets=secrets,
        aws_profile=aws_profile,
        aws_role_arn=aws_role_arn,
        warnings=() if prod else tuple(plaintext),
        **{SECTION_FIELDS.get(section, section): value for section, value in sections.items()},
    )


def _read_secrets(
    read_secret: Callable[[str], pulumi.Output[str] | None], named: Mapping[str, str], problems: list[str]
) -> StackSecrets:
    """The secrets' values, through ``read_secret``; a secret key the config names must be set."""
    for where, key in named.items():
        if read_secret(key) is None:
            problems.append(
                f"{PROJECT}:{where}: names the secret {PROJECT}:{key}, which is not set "
                f"(pulumi config set --secret {key} ...)"
            )
    tenant_keys = {key: read_secret(key) for where, key in named.items() if where not in NAMED_SECRETS}
    # Each a field of its own; typed Any, as mypy reads ** against every field's type.
    fields: dict[str, Any] = {
        NAMED_SECRETS[where]: read_secret(key) for where, key in named.items() if where in NAMED_SECRETS
    }
    return StackSecrets(
        github_token=read_secret(GITHUB_TOKEN_KEY),
        sops_age_key=read_secret(SOPS_AGE_KEY_KEY),
        notification_webhook=read_secret(NOTIFICATION_WEBHOOK_KEY),
        tenant_keys={key: value for key, value in tenant_keys.items() if value is not None},
        **fields,
    )
