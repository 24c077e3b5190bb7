"""AWS Secrets Manager: the name prefix a stack's secrets share, and IAM grants that read every secret.

The External Secrets controller's role may read only the secrets under one name prefix. The component's
Args refuse a prefix that is not one (:func:`secret_prefix_problem`), and the policy pack refuses a role
policy whose grant reaches every secret (:func:`reads_every_secret`), however it was made.

Example::

    assert checks.secret_prefix_problem("prod/") is None
    assert checks.secret_prefix_problem("*") is not None
    assert checks.secrets_arn("eu-west-1", "111111111111", "prod/") == (
        "arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/*"
    )
    assert checks.reads_every_secret("arn:aws:secretsmanager:*:*:secret:*")
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "AWS_REGION_PATTERN",
    "READ_SECRET_ACTION",
    "SECRET_PREFIX_HINT",
    "SECRET_PREFIX_PATTERN",
    "aws_region_problem",
    "grants_action",
    "reads_every_secret",
    "secret_prefix_problem",
    "secrets_arn",
]

SECRET_PREFIX_PATTERN = r"^[A-Za-z0-9/_+=.@-]{1,256}$"
"""A literal start of Secrets Manager secret names (the characters a name may hold): no IAM wildcard, so
the grant made from it cannot reach past it."""
_SECRET_PREFIX = re.compile(SECRET_PREFIX_PATTERN)
SECRET_PREFIX_HINT = (
    "must be a literal secret name prefix such as prod/ (letters, digits and /_+=.@-; "
    "no * or ?: the controller may read only the secrets under it)"
)
AWS_REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-[0-9]$"
"""An AWS region name, such as ``eu-west-1`` or ``us-gov-west-1``."""
_AWS_REGION = re.compile(AWS_REGION_PATTERN)
READ_SECRET_ACTION = "secretsmanager:GetSecretValue"
"""The action that reads a secret's value: what a grant over every secret must not allow."""
_SECRET_ARN = re.compile(r"^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:(?P<name>.*)$")
# Secret names no prefix-scoped grant matches both of: their first characters differ.
_PROBES = ("a-gitops-infra-probe", "Z-gitops-infra-probe")


def secret_prefix_problem(value: object) -> str | None:
    """``None`` for a literal secret name prefix (``prod/``); an empty one, or ``*``, would grant every
    secret."""
    return pattern_problem(_SECRET_PREFIX, value, SECRET_PREFIX_HINT)


def aws_region_problem(value: object) -> str | None:
    """``None`` for an AWS region name (``eu-west-1``)."""
    return pattern_problem(_AWS_REGION, value, "must be an AWS region such as eu-west-1")


def secrets_arn(region: str, account: str, prefix: str) -> str:
    """The ARN pattern of every secret whose name starts with ``prefix``, in ``region`` of ``account``.

    Secrets Manager appends a random suffix (``-AbCdEf``) to each secret's name in its ARN, so the grant
    ends in ``*``.
    """
    return f"arn:aws:secretsmanager:{region}:{account}:secret:{prefix}*"


def _glob(pattern: str) -> re.Pattern[str]:
    """An IAM resource or action pattern as a regex: ``*`` any run of characters, ``?`` one."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.I)


def grants_action(patterns: list[str], action: str = READ_SECRET_ACTION) -> bool:
    """Whether one of a statement's ``Action`` patterns (``secretsmanager:Get*``, ``*``) allows ``action``."""
    return any(_glob(pattern).fullmatch(action) for pattern in patterns)


def reads_every_secret(resource: str) -> bool:
    """Whether an IAM ``Resource`` pattern reaches secrets of any name, rather than those under a prefix.

    A Secrets Manager secret ARN must name a literal start of the secret's name before any wildcard
    (``…:secret:prod/*``). Any other pattern is judged by what it matches: ``*``,
    ``arn:aws:secretsmanager:*`` and ``…:secret:*`` reach every secret; an S3 ARN reaches none.
    """
    found = _SECRET_ARN.fullmatch(resource)
    if found is not None:
        name = found["name"]
        return not name or name[0] in "*?"
    fields = resource.split(":")
    # Where the pattern states a region or an account, the probes use it: only the name is left open.
    region = fields[3] if len(fields) > 3 and fields[3] and "*" not in fields[3] else "us-east-1"
    account = fields[4] if len(fields) > 4 and fields[4] and "*" not in fields[4] else "123456789012"
    matcher = _glob(resource)
    return all(
        matcher.fullmatch(f"arn:aws:secretsmanager:{region}:{account}:secret:{name}") for name in _PROBES
    )
