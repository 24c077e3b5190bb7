"""AWS Secrets Manager: regions, KMS key ARNs, the name prefix a stack's secrets share, and IAM grants that
read every secret.

The External Secrets controller's role may read only the secrets under one name prefix: the prefix becomes
the resource of its IAM policy (``arn:aws:secretsmanager:<region>:<account>:secret:<prefix>*``), so a
prefix that is empty or holds an IAM wildcard would let the role read every secret of the account. The
config, the component's Args (:func:`secret_prefix_problem`) and the policy pack
(:func:`reads_every_secret`, whoever made the policy) all refuse that.

Example::

    assert checks.secret_prefix_problem("prod/") is None
    assert checks.secret_prefix_problem("*") is not None
    assert checks.aws_region_problem("eu-west-1") is None
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
    "KMS_KEY_ARN_PATTERN",
    "READ_SECRET_ACTION",
    "SECRET_PREFIX_PATTERN",
    "aws_region_problem",
    "grants_action",
    "kms_key_arn_problem",
    "kms_key_region",
    "reads_every_secret",
    "secret_prefix_problem",
    "secrets_arn",
]


AWS_REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-[0-9]$"
"""An AWS region's code (``eu-west-1``, ``us-gov-west-1``)."""
_AWS_REGION = re.compile(AWS_REGION_PATTERN)


def aws_region_problem(value: object) -> str | None:
    """``None`` for an AWS region's code."""
    return pattern_problem(_AWS_REGION, value, "must be an AWS region such as eu-west-1")


KMS_KEY_ARN_PATTERN = r"^arn:aws[a-z-]*:kms:([a-z0-9-]+):[0-9]{12}:key/[A-Za-z0-9-]+$"
"""A KMS key's ARN (a multi-Region key's ``mrk-`` ID too); not an alias, which a policy cannot scope."""
_KMS_KEY_ARN = re.compile(KMS_KEY_ARN_PATTERN)


def kms_key_arn_problem(value: object) -> str | None:
    """``None`` for a KMS key ARN."""
    hint = "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>), not an alias"
    return pattern_problem(_KMS_KEY_ARN, value, hint)


def kms_key_region(arn: str) -> str | None:
    """The region of a KMS key ARN, or ``None`` for a value that is not one."""
    match = _KMS_KEY_ARN.fullmatch(arn)
    return match.group(1) if match else None


_SECRET_PREFIX_MAX = 256  # well inside Secrets Manager's 512 characters: room for the names under it
SECRET_PREFIX_PATTERN = rf"^[A-Za-z0-9/_+=.@-]{{1,{_SECRET_PREFIX_MAX}}}$"
"""A literal start of Secrets Manager names (letters, digits, ``/_+=.@-``): so no IAM wildcard (``*``,
``?``), and the grant made from it cannot reach past it."""
_SECRET_PREFIX = re.compile(SECRET_PREFIX_PATTERN)


def secret_prefix_problem(value: object) -> str | None:
    """``None`` for a prefix of Secrets Manager names that scopes a policy to some secrets, not all."""
    if isinstance(value, str) and (value == "" or "*" in value or "?" in value):
        return (
            "must name a prefix such as prod/, not be empty or hold '*' or '?': the policy grants "
            "<prefix>*, so the role could read every secret of the account"
        )
    return pattern_problem(
        _SECRET_PREFIX,
        value,
        f"must be the start of a Secrets Manager name (letters, digits and /_+=.@-, at most "
        f"{_SECRET_PREFIX_MAX} characters), such as prod/",
    )


def secrets_arn(region: str, account: str, prefix: str) -> str:
    """The ARN pattern of every secret whose name starts with ``prefix``, in ``region`` of ``account``.

    Secrets Manager appends a random suffix (``-AbCdEf``) to each secret's name in its ARN, so the grant
    ends in ``*``.
    """
    return f"arn:aws:secretsmanager:{region}:{account}:secret:{prefix}*"


READ_SECRET_ACTION = "secretsmanager:GetSecretValue"
"""The action that reads a secret's value: what a grant over every secret must not allow."""
_SECRET_ARN = re.compile(r"^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:(?P<name>.*)$")
# Secret names no prefix-scoped grant matches both of: their first characters differ.
_PROBES = ("a-gitops-infra-probe", "Z-gitops-infra-probe")


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
