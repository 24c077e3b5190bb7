"""IAM: role and principal ARNs, and the cluster's admins (one EKS access entry per principal).

Example::

    assert checks.iam_role_problem("arn:aws:iam::111111111111:role/deploy") is None
    assert checks.principal_key("arn:aws:iam::111111111111:role/ops/Admin") == (
        "aws", "111111111111", "role", "admin"
    )
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "ADMINS_NEED_CREATOR",
    "IAM_PRINCIPAL_HINT",
    "IAM_PRINCIPAL_PATTERN",
    "IAM_ROLE_HINT",
    "IAM_ROLE_PATTERN",
    "admins_problem",
    "iam_principal_problem",
    "iam_role_problem",
    "principal_key",
]


IAM_ROLE_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+$"
"""An IAM role ARN: what ``aws:assumeRoles`` and a fleet stack's ``role`` name."""
_IAM_ROLE = re.compile(IAM_ROLE_PATTERN)
IAM_ROLE_HINT = "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"


def iam_role_problem(value: object) -> str | None:
    """``None`` for an IAM role ARN."""
    return pattern_problem(_IAM_ROLE, value, IAM_ROLE_HINT)


IAM_PRINCIPAL_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[\w+=,.@/-]+$"
"""An IAM role or user ARN: what an EKS access entry names (not an STS assumed-role session)."""
_IAM_PRINCIPAL = re.compile(IAM_PRINCIPAL_PATTERN)
IAM_PRINCIPAL_HINT = "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)"


def iam_principal_problem(value: object) -> str | None:
    """``None`` for an IAM role or user ARN."""
    return pattern_problem(_IAM_PRINCIPAL, value, IAM_PRINCIPAL_HINT)


def principal_key(arn: str) -> tuple[str, str, str, str] | None:
    """An IAM role or user ARN as (partition, account, kind, name): IAM names ignore case and path."""
    if _IAM_PRINCIPAL.match(arn) is None:
        return None
    parts = arn.split(":", 5)
    kind, _, path = parts[5].partition("/")
    return (parts[1], parts[4], kind, path.rsplit("/", 1)[-1].lower())


ADMINS_NEED_CREATOR = (
    "required when admins are listed: EKS gives the principal that creates the cluster an access entry "
    "of its own and refuses a second one for it, so the creator is named once, not taken from whoever "
    "runs the update"
)


def admins_problem(admins: Sequence[str]) -> str | None:
    """``None`` unless two admins name one principal (EKS holds one access entry per principal)."""
    seen: dict[tuple[str, str, str, str], str] = {}
    for arn in admins:
        key = principal_key(arn)
        if key is None:
            continue
        if key in seen:
            return f"{seen[key]} and {arn} are one principal (IAM names ignore case and path)"
        seen[key] = arn
    return None
