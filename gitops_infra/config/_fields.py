"""The config's field types: the models' base, and the annotated types its sections share.

A field that a component's Args check too runs the same rule of :mod:`gitops_infra.checks` (``gate``), so
the config and the Args never disagree. The other patterns carry a hint (``PATTERN_HINTS``), so an error
says "must be ..." rather than quoting a regex.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictInt
from pydantic.alias_generators import to_camel

from gitops_infra import checks
from gitops_infra.contract import DOMAIN_PATTERN as ENVIRONMENT_DOMAIN_PATTERN

__all__ = [
    "CLUSTER_NAME_PATTERN",
    "GITHUB_OWNER_PATTERN",
    "IAM_PRINCIPAL_PATTERN",
    "PATTERN_HINTS",
    "SECRET_KEY_NAME_PATTERN",
    "SSH_PUBLIC_KEY_PATTERN",
    "SUBNET_ID_PATTERN",
    "VPC_ID_PATTERN",
    "AvailabilityZone",
    "Cidr",
    "ClusterName",
    "ConfigModel",
    "DnsLabel",
    "Duration",
    "GitHubId",
    "GitUrl",
    "KnownHosts",
    "RepositoryName",
    "SecretKeyName",
    "SubnetId",
    "gate",
]

IAM_PRINCIPAL_PATTERN = checks.IAM_PRINCIPAL_PATTERN
VPC_ID_PATTERN = r"^vpc-[0-9a-f]{8,17}$"
SUBNET_ID_PATTERN = r"^subnet-[0-9a-f]{8,17}$"
GITHUB_OWNER_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,38})$"
CLUSTER_NAME_PATTERN = r"^[a-zA-Z][a-zA-Z0-9-]*$"
SECRET_KEY_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
SSH_PUBLIC_KEY_PATTERN = r"^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+=*( .*)?$"


# What each pattern means, so an error says "must be ..." rather than quoting a regex. A rule the component
# Args check too is a check in gitops_infra.checks instead, and says what it means itself.
PATTERN_HINTS = {
    IAM_PRINCIPAL_PATTERN: checks.IAM_PRINCIPAL_HINT,
    VPC_ID_PATTERN: "must be a VPC ID (vpc-...)",
    SUBNET_ID_PATTERN: "must be a subnet ID (subnet-...)",
    GITHUB_OWNER_PATTERN: "must be a GitHub user or organization name",
    CLUSTER_NAME_PATTERN: "must start with a letter and hold only letters, digits and '-'",
    SECRET_KEY_NAME_PATTERN: "must name a secret config key (letters, digits, '_'), such as localKubeconfig",
    SSH_PUBLIC_KEY_PATTERN: "must be an OpenSSH public key (ssh-ed25519, ecdsa-sha2-nistp384 or ssh-rsa ...)",
    ENVIRONMENT_DOMAIN_PATTERN: "must be a lowercase DNS domain such as dev.example.com",
}


def gate(check: Any) -> AfterValidator:
    """A pydantic validator that runs one of :mod:`gitops_infra.checks`, so models and Args agree."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(validate)


DnsLabel = Annotated[str, gate(checks.dns_label_problem)]
Duration = Annotated[str, gate(checks.go_duration_problem)]
Cidr = Annotated[str, gate(checks.ipv4_cidr_problem)]
AvailabilityZone = Annotated[str, gate(checks.availability_zone_problem)]
GitUrl = Annotated[str, gate(checks.git_url_problem)]


def _as_github_id(value: Any) -> Any:
    """A GitHub App's or installation's ID as a number, from a number or its digits (``"123456"``,
    as ``github:appAuth`` writes it): pydantic's own lax int would also take ``true`` and ``1.0``."""
    number = checks.github_id(value)
    if number is None:
        raise ValueError(checks.github_id_problem(value))
    return number


GitHubId = Annotated[StrictInt, BeforeValidator(_as_github_id)]
RepositoryName = Annotated[str, gate(checks.repository_name_problem)]
KnownHosts = Annotated[str, gate(checks.known_hosts_problem)]
SubnetId = Annotated[str, Field(pattern=SUBNET_ID_PATTERN)]
ClusterName = Annotated[str, Field(pattern=CLUSTER_NAME_PATTERN), gate(checks.cluster_component_name_problem)]
SecretKeyName = Annotated[str, Field(pattern=SECRET_KEY_NAME_PATTERN)]
"""The name of a secret config key in the project's namespace (set with ``pulumi config set --secret``)."""


class ConfigModel(BaseModel):
    """Frozen, camelCase, and strict about unknown keys (a typo is a problem, not a silent default).

    Numbers and flags are strict too (``StrictInt``, ``StrictBool``): ``minSize: true`` is not 1, and
    ``sops: "yes"`` is not a flag. Pydantic's lax mode would accept both where the engine's program
    would fail later, or do what nobody meant.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, defer_build=True
    )
