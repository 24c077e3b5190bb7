"""The Secrets Manager policy: no IAM policy reads every secret (``gitops_infra.policy.rules._secrets``),
and the ExternalSecrets component's own grant passes it."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from gitops_infra.components.external_secrets import ExternalSecrets, ExternalSecretsArgs, read_policy
from gitops_infra.policy import rules

from .harness import run

ROLE_POLICY, POLICY, ROLE = rules.IAM_POLICY_TYPES
PREFIXED = "arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/*"


def _document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _allow(action: Any, resource: Any = PREFIXED, **more: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


@pytest.mark.parametrize(
    "statement",
    [
        _allow("secretsmanager:GetSecretValue", "*"),
        _allow(["secretsmanager:GetSecretValue"], ["arn:aws:secretsmanager:eu-west-1:111111111111:secret:*"]),
        _allow("secretsmanager:*", "arn:aws:secretsmanager:*:*:*"),
        _allow("secretsmanager:Get*", [PREFIXED, "arn:aws:secretsmanager:eu-west-1:111111111111:secret:*"]),
        _allow("*", "*"),
        _allow("SecretsManager:GetSecretValue", "*"),  # IAM's actions ignore case
        {"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},
        {"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "NotResource": PREFIXED},
    ],
)
def test_a_grant_over_every_secret_is_refused(statement: dict[str, Any]) -> None:
    (message,) = rules.secrets_read_violations({"policy": _document(statement)})
    assert "allows secretsmanager:GetSecretValue on every secret" in message


@pytest.mark.parametrize(
    "statement",
    [
        _allow("secretsmanager:GetSecretValue"),
        _allow(["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], [PREFIXED]),
        _allow("secretsmanager:ListSecrets", "*"),  # names, not values
        {"Effect": "Deny", "Action": "secretsmanager:*", "Resource": "*"},
        {"Effect": "Allow", "NotAction": "secretsmanager:*", "Resource": "*"},
        _allow("s3:GetObject", "*"),
    ],
)
def test_a_grant_scoped_to_a_prefix_or_of_no_secret_passes(statement: dict[str, Any]) -> None:
    assert rules.secrets_read_violations({"policy": _document(statement)}) == []


def test_each_kind_of_policy_is_read_and_each_statement_named() -> None:
    every = _allow("secretsmanager:GetSecretValue", "*", Sid="ReadAll")
    assert rules.secrets_read_violations({"policy": json.loads(_document(every))})[0].startswith("ReadAll ")
    inline = {
        "inlinePolicies": [{"name": "ok", "policy": _document(_allow("s3:*"))}, {"policy": _document(every)}]
    }
    assert len(rules.secrets_read_violations(inline)) == 1
    single = {"policy": json.dumps({"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}})}
    assert rules.secrets_read_violations(single)[0].startswith("Statement[0] ")
    assert rules.secrets_read_violations({"policy": "not json"}) == []  # IAM refuses it


def test_the_components_grant_passes_and_a_grant_over_every_secret_from_its_shape_does_not() -> None:
    theirs = read_policy("eu-west-1", "111111111111", "prod/", "arn:aws:kms:eu-west-1:111111111111:key/k")
    assert rules.secrets_read_violations({"policy": json.dumps(theirs)}) == []
    theirs["Statement"][0]["Resource"] = ["arn:aws:secretsmanager:eu-west-1:111111111111:secret:*"]
    assert len(rules.secrets_read_violations({"policy": json.dumps(theirs)})) == 1


def test_the_component_as_registered_passes() -> None:
    def program() -> ExternalSecrets:
        provider = aws.Provider("aws", region="eu-west-1")
        return ExternalSecrets(
            "eso",
            ExternalSecretsArgs(region="eu-west-1", secret_prefix="dev/", install=False),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )

    graph = run(program).graph
    policies = [r for r in graph if r.type in rules.IAM_POLICY_TYPES]
    assert [r.type for r in policies] == [ROLE, ROLE_POLICY]
    for resource in policies:
        assert rules.secrets_read_violations(resource.inputs) == []
