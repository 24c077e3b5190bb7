"""Loading a stack config: from a mapping (``load_config``), from a running program (``load_stack_config``),
and as the offline plan's config step (``plan_config``).

The only part of the config that uses Pulumi: secret values become ``pulumi.Output`` secrets, and a program
reads its config through ``pulumi.Config``. Pulumi is imported when first used, so the models load without
it.

Example::

    config = load_config(yaml.safe_load(Path("Pulumi.dev.yaml").read_text())["config"], stack="dev")
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.config._build import UNREADABLE, build
from gitops_infra.config._raw import loosely, named_secrets
from gitops_infra.config.stack import (
    AWS_ASSUME_ROLES_KEY,
    AWS_PROFILE_KEY,
    AWS_REGION_KEY,
    GITHUB_BASE_URL_KEY,
    GITHUB_TOKEN_KEY,
    PROJECT,
    SEALED_SECRETS_KEYS_KEY,
    SECRET_KEYS,
    SECTIONS,
    StackConfig,
    StackSecrets,
)
from gitops_infra.defaults import SealingKeySource
from gitops_infra.errors import ConfigError
from gitops_infra.redaction import SECRET

if TYPE_CHECKING:
    import pulumi
else:
    # The models and the checks need no Pulumi; a secret value and a running program's config do.
    pulumi = sdk("pulumi")

__all__ = ["load_config", "load_stack_config", "named_secret_keys", "plan_config"]


def load_config(
    raw: Mapping[str, Any],
    *,
    stack: str,
    secrets: StackSecrets | None = None,
) -> StackConfig:
    """Validate a stack config given as a mapping, and return it typed.

    ``raw`` is what ``Pulumi.<stack>.yaml`` holds under ``config:``: keys may carry the ``gitops-infra:``
    prefix or not; keys of other namespaces (``aws:region``) are ignored. Secret keys (``githubToken``,
    ``sopsAgeKey``) may be plain strings, ``pulumi.Output``s or ``{"secure": ...}`` ciphertext; they become
    ``pulumi.Output`` secrets. ``secrets``, when given, takes precedence over them.

    Raises ``ConfigError`` listing every problem by its key path; ``raw`` that is not a mapping (a YAML
    file whose ``config:`` is a list or a string) is one such problem.
    """
    if not isinstance(raw, Mapping):
        problem = f"{PROJECT}: the stack config must be a mapping of keys to values, not {type(raw).__name__}"
        raise ConfigError([problem], stack=stack)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, sep, bare = str(key).rpartition(":")
        if sep and namespace != PROJECT:
            continue
        _unencodable_text(value, f"{PROJECT}:{bare}", problems)
        values[bare] = value

    profile = raw.get(AWS_PROFILE_KEY)
    if profile is not None and not (isinstance(profile, str) and profile.strip()):
        problems.append(f"{AWS_PROFILE_KEY}: must be the name of an AWS profile")
        profile = None

    role_arn = _assumed_role(raw.get(AWS_ASSUME_ROLES_KEY), problems)

    def read_secret(name: str) -> pulumi.Output[str] | None:
        return _secret(values.get(name))

    return build(
        values,
        stack=stack,
        read_secret=read_secret,
        given=secrets,
        problems=problems,
        aws_profile=profile,
        aws_role_arn=role_arn,
        aws_region=raw.get(AWS_REGION_KEY),
        github_base_url=raw.get(GITHUB_BASE_URL_KEY),
        # Every key of the file, of any namespace: a private key is no less exposed under tls:key.
        plaintext_keys=[
            path for key, value in raw.items() for path in checks.private_key_paths(value, str(key))
        ],
        sealing_keys_text=values.get(SEALED_SECRETS_KEYS_KEY),
    )


def load_stack_config(config: pulumi.Config | None = None) -> StackConfig:
    """Read and validate the running stack's config (``pulumi.Config("gitops-infra")``).

    Raises ``ConfigError`` listing every problem by its key path.
    """
    config = config if config is not None else pulumi.Config(PROJECT)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for section in (*SECTIONS, checks.FLEET_SECTION):
        raw = config.get(section)
        if raw is None:
            continue
        try:
            values[section] = json.loads(raw)
        except json.JSONDecodeError:
            problems.append(f"{PROJECT}:{section}: must be a structured value (a YAML mapping)")
            values[section] = UNREADABLE
    aws = pulumi.Config("aws")
    profile = aws.get("profile") or None
    role_arn = _assumed_role(aws.get_object("assumeRoles"), problems)
    # The keys this program reads that the engine does not hold as secrets: plaintext in the files.
    plain = {
        key: values.get(key, config.get(key))
        for key in (*values, *SECRET_KEYS, *named_secret_keys(values))
        if not pulumi.runtime.is_config_secret(config.full_key(key))
    }
    stack_config = build(
        values,
        stack=pulumi.get_stack(),
        read_secret=config.get_secret,
        problems=problems,
        aws_profile=profile,
        aws_role_arn=role_arn,
        aws_region=aws.get("region"),
        github_base_url=pulumi.Config("github").get("baseUrl"),
        plaintext_keys=[
            path
            for key, value in plain.items()
            for path in checks.private_key_paths(value, config.full_key(key))
        ],
        # Read as plaintext here, inside the program, only to check each pair before anything is made.
        sealing_keys_text=config.get(SEALED_SECRETS_KEYS_KEY),
    )
    for warning in stack_config.warnings:
        pulumi.log.warn(warning)
    return stack_config


def plan_config(raw: Mapping[str, Any], project: str, stack: str) -> Mapping[str, Any]:
    """This program's step of the offline plan (``offline_plan(..., config_step=plan_config)``).

    The secrets are set with ``pulumi config set --secret`` and are rarely in the stack file a pull
    request sees: they are planned with placeholders rather than failing for want of a credential. Then
    the whole config is checked, so a bad one fails with every problem listed before any resource is
    registered. Another project's config passes through untouched.
    """
    if project != PROJECT:
        return raw
    # The stack file's own form of a secret, holding the plan's placeholder (the marker itself).
    # A GitHub App stands in for the token: planning both would be the config error it is for real.
    app_auth = loosely(raw, "github.appAuth") is not None
    unplanned = {GITHUB_TOKEN_KEY} if app_auth else set()
    # The sealing keys only where the config takes them from there: elsewhere they would be refused.
    if loosely(raw, "secrets.sealedSecrets.keySource") != SealingKeySource.CONFIG.value:
        unplanned.add(SEALED_SECRETS_KEYS_KEY)
    secret_keys = [key for key in (*SECRET_KEYS, *named_secret_keys(raw)) if key not in unplanned]
    planned = {**{f"{PROJECT}:{key}": {"secure": SECRET} for key in secret_keys}, **raw}
    load_config(planned, stack=stack)
    return planned


def named_secret_keys(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The secret keys a raw stack config names (an existing cluster's kubeconfig, an existing key).

    Read loosely, from a config not validated yet: the offline plan plans each with a placeholder.
    """
    return tuple(named_secrets(raw).values())


def _assumed_role(value: Any, problems: list[str]) -> str | None:
    """The role the AWS provider ends up as: the last of ``aws:assumeRoles`` (a chain assumes each)."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        problems.append(f"{AWS_ASSUME_ROLES_KEY}: must be a list of roles to assume, each with roleArn")
        return None
    last = len(value) - 1
    role = value[last].get("roleArn") if isinstance(value[last], Mapping) else None
    problem = checks.iam_role_problem(role)
    if problem is not None:
        problems.append(f"{AWS_ASSUME_ROLES_KEY}[{last}].roleArn: {problem}")
        return None
    return role


def _secret(raw: Any) -> pulumi.Output[str] | None:
    """A secret config value as a ``pulumi.Output`` secret, whatever form the stack file holds it in."""
    if raw is None:
        return None
    if isinstance(raw, pulumi.Output):
        return pulumi.Output.secret(raw)
    if isinstance(raw, Mapping) and "secure" in raw:
        # Ciphertext straight from Pulumi.<stack>.yaml: only the engine can decrypt it. Offline callers
        # (the plan) still see that the value is set, and that it is secret.
        return pulumi.Output.secret(SECRET)
    return pulumi.Output.secret(str(raw))


def _unencodable_text(value: Any, where: str, problems: list[str], enclosing: tuple[int, ...] = ()) -> None:
    """Report text that is not valid Unicode, such as a lone surrogate from a YAML escape (``"\\uD800"``).

    The models accept it, and it would only fail later, when the program hands it to the engine.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"{where}: is not valid Unicode text (it holds a lone surrogate)")
        return
    if id(value) in enclosing:  # a YAML alias cycle; the models report it
        return
    inside = (*enclosing, id(value))
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not key.isascii():
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    problems.append(f"{where}: has a key that is not valid Unicode text")
                    continue
            _unencodable_text(item, f"{where}.{key}", problems, inside)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _unencodable_text(item, f"{where}[{index}]", problems, inside)
