"""The rule on IAM policies that read Secrets Manager: a grant reaches the secrets under a name prefix,
never every secret.

The External Secrets controller's role reads only its stack's secrets (``…:secret:<prefix>*``). A policy
that allows ``secretsmanager:GetSecretValue`` (``secretsmanager:*``, ``*``) on ``*``, on ``…:secret:*``,
or through ``NotResource``, would hand every environment's secrets to one cluster: refused, whoever made
it. What counts as every secret is :func:`gitops_infra.checks.reads_every_secret`, the rule the
component's own grant is tested against.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gitops_infra.checks import READ_SECRET_ACTION, grants_action, reads_every_secret

from ._inputs import decoded

__all__ = ["IAM_POLICY_TYPES", "secrets_read_violations"]

IAM_POLICY_TYPES = (
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/policy:Policy",
    "aws:iam/role:Role",
)
"""Where a role's grants are written: an inline policy, a managed policy, a role's ``inlinePolicies``."""


def _documents(props: Mapping[str, Any]) -> Iterator[Any]:
    if "policy" in props:
        yield props["policy"]
    for inline in props.get("inlinePolicies") or ():
        yield inline.get("policy")


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(item) for item in value]


def secrets_read_violations(props: Mapping[str, Any]) -> list[str]:
    """One message per statement that allows reading every secret's value.

    A document that is not JSON is left to IAM, which refuses it.
    """
    messages = []
    for document in _documents(props):
        parsed = decoded(document)
        if not isinstance(parsed, Mapping):
            continue
        statements = parsed.get("Statement") or []
        for index, statement in enumerate([statements] if isinstance(statements, Mapping) else statements):
            if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
                continue
            if "NotAction" in statement:
                reads = not grants_action(_listed(statement["NotAction"]))
            else:
                reads = grants_action(_listed(statement.get("Action")))
            if not reads:
                continue
            # Everything but some resources is, for secrets, every secret but a few.
            unbounded = "NotResource" in statement or any(
                reads_every_secret(resource) for resource in _listed(statement.get("Resource"))
            )
            if unbounded:
                where = statement.get("Sid") or f"Statement[{index}]"
                messages.append(
                    f"{where} allows {READ_SECRET_ACTION} on every secret; grant it on the stack's own "
                    "secrets only: arn:aws:secretsmanager:<region>:<account>:secret:<prefix>*"
                )
    return messages
