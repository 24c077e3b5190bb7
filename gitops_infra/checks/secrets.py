"""Secrets from AWS: regions, KMS key ARNs, and the name prefix that scopes what External Secrets reads.

The prefix becomes the resource of the controller's IAM policy
(``arn:aws:secretsmanager:<region>:<account>:secret:<prefix>*``), so a prefix that is empty or holds an
IAM wildcard would let the role read every secret of the account: both are refused here, for the config,
the component Args and the policy pack alike.

Example::

    assert checks.secret_prefix_problem("prod/") is None
    assert checks.secret_prefix_problem("*") is not None
    assert checks.aws_region_problem("eu-west-1") is None
"""

from __future__ import annotations

import re

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "AWS_REGION_PATTERN",
    "KMS_KEY_ARN_PATTERN",
    "SECRET_PREFIX_MAX",
    "SECRET_PREFIX_PATTERN",
    "aws_region_problem",
    "kms_key_arn_problem",
    "kms_key_region",
    "secret_prefix_problem",
]


AWS_REGION_PATTERN = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
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


SECRET_PREFIX_MAX = 256
"""Well inside Secrets Manager's 512 characters: the prefix leaves room for the names under it."""
SECRET_PREFIX_PATTERN = rf"^[A-Za-z0-9/_+=.@-]{{1,{SECRET_PREFIX_MAX}}}$"
"""What a Secrets Manager name holds (letters, digits, ``/_+=.@-``): so no IAM wildcard (``*``, ``?``)."""
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
        f"{SECRET_PREFIX_MAX} characters), such as prod/",
    )
