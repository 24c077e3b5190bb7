"""ExternalSecrets: the controller's role reads the stack's secrets and no others, and the store names the
region; what is made with and without the cluster's name, the agent add-on and the chart."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gitops_infra import checks
from gitops_infra.components.external_secrets import (
    CHART_VERSION,
    ESO_VERSION,
    ExternalSecrets,
    ExternalSecretsArgs,
)
from gitops_infra.errors import ConfigError

from .harness import DEPLOYER_ARN, MOCK_KUBECONFIG, Graph, run

ACCOUNT = DEPLOYER_ARN.split(":")[4]
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ADDON = "aws:eks/addon:Addon"
RELEASE = "kubernetes:helm.sh/v3:Release"
STORE = "kubernetes:external-secrets.io/v1:ClusterSecretStore"


def args(**overrides: Any) -> ExternalSecretsArgs:
    values: dict[str, Any] = {"region": "eu-west-1", "secret_prefix": "prod/", "cluster_name": "gitops-prod"}
    return ExternalSecretsArgs(**(values | overrides))


def graph_of(component_args: ExternalSecretsArgs) -> Graph:
    def program() -> ExternalSecrets:
        providers = [
            aws.Provider("aws", region="eu-west-1"),
            k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG),
        ]
        return ExternalSecrets("eso", component_args, opts=pulumi.ResourceOptions(providers=providers))

    return run(program).graph


def policy_of(graph: Graph) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(graph.one(ROLE_POLICY).input("policy"))
    return document


def made(graph: Graph) -> Counter[str]:
    return Counter(r.type for r in graph if r.custom and not r.type.startswith("pulumi:providers:"))


@pytest.fixture(scope="module")
def platform_made() -> Graph:
    return graph_of(args(pod_identity_agent=True, kms_key_arn="arn:aws:kms:eu-west-1:111111111111:key/k1"))


def test_the_role_reads_exactly_the_secrets_under_the_prefix(platform_made: Graph) -> None:
    read, decrypt = policy_of(platform_made)["Statement"]
    assert read["Effect"] == "Allow"
    assert read["Resource"] == [f"arn:aws:secretsmanager:eu-west-1:{ACCOUNT}:secret:prod/*"]
    assert not checks.grants_action(read["Action"], "secretsmanager:ListSecrets")  # not scopable to a prefix
    assert checks.grants_action(read["Action"])
    assert decrypt["Action"] == ["kms:Decrypt"]
    assert decrypt["Resource"] == ["arn:aws:kms:eu-west-1:111111111111:key/k1"]
    assert decrypt["Condition"] == {
        "StringEquals": {"kms:ViaService": "secretsmanager.eu-west-1.amazonaws.com"}
    }
    for statement in policy_of(platform_made)["Statement"]:
        assert not any(checks.reads_every_secret(resource) for resource in statement["Resource"])


def test_without_a_kms_key_the_role_decrypts_nothing() -> None:
    statements = policy_of(graph_of(args()))["Statement"]
    assert [s["Sid"] for s in statements] == ["ReadStackSecrets"]


def test_an_account_given_is_the_one_in_the_grant() -> None:
    (read,) = policy_of(graph_of(args(account_id="222222222222", secret_prefix="team-a/")))["Statement"]
    assert read["Resource"] == ["arn:aws:secretsmanager:eu-west-1:222222222222:secret:team-a/*"]


def test_pod_identity_binds_the_role_to_the_controllers_service_account(platform_made: Graph) -> None:
    role = platform_made.one(ROLE)
    trust = json.loads(role.input("assumeRolePolicy"))["Statement"]
    assert trust == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    ]
    association = platform_made.one(ASSOCIATION)
    assert (association.input("clusterName"), association.input("namespace")) == (
        "gitops-prod",
        "external-secrets",
    )
    assert association.input("serviceAccount") == "external-secrets"
    assert role.urn in association.dependencies
    assert platform_made.one(ADDON).input("addonName") == "eks-pod-identity-agent"
    # The controller's pods start after the association and the agent, so they start with the role.
    release = platform_made.one(RELEASE)
    assert {association.urn, platform_made.one(ADDON).urn} <= set(release.dependencies)


def test_the_chart_is_pinned_to_the_built_controller(platform_made: Graph) -> None:
    release = platform_made.one(RELEASE)
    assert (release.input("chart"), release.input("version")) == ("external-secrets", CHART_VERSION)
    values = release.input("values")
    assert values["image"]["tag"] == values["webhook"]["image"]["tag"] == ESO_VERSION
    assert values["certController"]["image"]["tag"] == ESO_VERSION
    assert values["serviceAccount"] == {"create": True, "name": "external-secrets"}
    assert values["installCRDs"] is True


def test_the_store_reads_secrets_manager_in_the_region_with_the_controllers_credentials(
    platform_made: Graph,
) -> None:
    store = platform_made.one(STORE)
    assert store.input("metadata.name") == "aws-secrets-manager"
    # Every key it reads is under the role's prefix: no ExternalSecret can name a secret outside it.
    aws = {"service": "SecretsManager", "region": "eu-west-1", "prefix": "prod/"}
    assert store.input("spec") == {"provider": {"aws": aws}}
    assert platform_made.one(RELEASE).urn in store.dependencies  # the chart brings its CRDs


def test_what_is_made_on_each_kind_of_cluster(platform_made: Graph) -> None:
    assert made(platform_made) == Counter(
        {
            ROLE: 1,
            ROLE_POLICY: 1,
            ADDON: 1,
            ASSOCIATION: 1,
            "kubernetes:core/v1:Namespace": 1,
            RELEASE: 1,
            STORE: 1,
        }
    )
    # A cluster you run has its own agent.
    assert ADDON not in made(graph_of(args()))
    # The local cluster: no EKS, and the controller runs outside the stack.
    assert made(graph_of(args(cluster_name=None, install=False))) == Counter(
        {ROLE: 1, ROLE_POLICY: 1, STORE: 1}
    )


def test_the_outputs_name_the_store_and_the_policy() -> None:
    def program() -> ExternalSecrets:
        providers = [
            aws.Provider("aws", region="eu-west-1"),
            k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG),
        ]
        return ExternalSecrets(
            "eso", args(store_name="secrets"), opts=pulumi.ResourceOptions(providers=providers)
        )

    outputs = run(program, outputs=lambda c: {"store": c.store_name, "policy": c.policy}).values
    assert outputs["store"].value == "secrets"
    assert json.loads(outputs["policy"].value)["Statement"][0]["Resource"] == [
        f"arn:aws:secretsmanager:eu-west-1:{ACCOUNT}:secret:prod/*"
    ]


@pytest.mark.parametrize("prefix", ["*", "", "prod/*", "?rod/", "prod /", 7])
def test_a_prefix_that_would_reach_other_secrets_is_refused(prefix: Any) -> None:
    with pytest.raises(ConfigError) as refused:
        args(secret_prefix=prefix)
    (problem,) = refused.value.problems
    assert problem.startswith("ExternalSecretsArgs.secret_prefix: must ")
    assert "such as prod/" in problem


def test_bad_args_are_each_named() -> None:
    with pytest.raises(ConfigError) as refused:
        args(region="Europe", cluster_name=None, pod_identity_agent=True, store_name="Not_A_Name")
    fields = sorted(problem.split(":")[0] for problem in refused.value.problems)
    assert fields == [
        "ExternalSecretsArgs.pod_identity_agent",
        "ExternalSecretsArgs.region",
        "ExternalSecretsArgs.store_name",
    ]


def test_a_region_not_known_yet_is_left_to_the_provider() -> None:
    assert args(region=pulumi.Output.from_input("eu-west-1")).secret_prefix == "prod/"


@pytest.mark.parametrize(
    ("resource", "every"),
    [
        ("*", True),
        ("arn:aws:secretsmanager:*", True),
        ("arn:aws:secretsmanager:*:*:*", True),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:secret:*", True),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:secret:", True),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:secret:?*", True),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:*", True),
        ("arn:aws:secrets*", True),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/*", False),
        ("arn:aws:secretsmanager:*:*:secret:prod/*", False),
        ("arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/db-AbCdEf", False),
        ("arn:aws:s3:::bucket/*", False),
        ("arn:aws:kms:eu-west-1:111111111111:key/*", False),
    ],
)
def test_a_grant_over_every_secret_is_told_from_a_prefix(resource: str, every: bool) -> None:
    assert checks.reads_every_secret(resource) is every


def test_a_new_prefix_or_key_changes_only_the_policy_and_removing_the_key_drops_its_grant() -> None:
    before = graph_of(args(kms_key_arn="arn:aws:kms:eu-west-1:111111111111:key/k1"))
    after = graph_of(args(secret_prefix="prod/v2/"))  # the key named no more
    changed = {r.type for r in after if r.custom and r.inputs != before.one(r.type, r.name).inputs}
    assert changed == {ROLE_POLICY, STORE}  # the role and its association stay as they are
    assert after.one(STORE).input("spec")["provider"]["aws"]["prefix"] == "prod/v2/"
    assert [s["Sid"] for s in policy_of(after)["Statement"]] == ["ReadStackSecrets"]
    assert policy_of(after)["Statement"][0]["Resource"] == [
        f"arn:aws:secretsmanager:eu-west-1:{ACCOUNT}:secret:prod/v2/*"
    ]
