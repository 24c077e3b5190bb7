"""The policy pack's rules over the committed dev and prod stacks, as the offline plan records them.

The offline plan runs the real stack program under mocks and records every resource with its type and
inputs, which is what the engine shows a policy. Each rule of :mod:`gitops_infra.policy.rules` runs over
those resources with the pack's default settings (no policy config), as ``pulumi up --policy-pack``
would; neither committed stack may violate a MANDATORY policy. Broken variants of the same graphs show
that the check can fail.

Coverage: the EKS control plane and node groups are made inside the remote ``eks:index:Cluster`` and
``eks:index:ManagedNodeGroup`` components (pulumi-eks's provider plugin), so under mocks there is no
``aws:eks/cluster:Cluster`` or ``aws:eks/nodeGroup:NodeGroup`` to check: ``eks-prod-endpoint-not-public``,
``eks-secrets-encryption`` and ``eks-node-group-size-bounds`` (and the required tags on those two
resources) are only enforced by the engine, on a real preview or update. ``no-latest-image-tag`` sees
no workload either: Flux comes from a Helm release, whose values the rule does not inspect. The test
pins which policies had something to check, so a change in that coverage is noticed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import EnforcementLevel

from gitops_infra.automation import Plan, StackOptions, offline_plan
from gitops_infra.config import plan_config
from gitops_infra.policy import pack, rules

from ..support import REPO_ROOT, stack_project

Resource = tuple[str, str, Mapping[str, Any]]
"""``(type, urn, inputs)`` of one planned resource."""

RESOURCE_RULES: dict[str, tuple[Callable[[str], bool], Callable[[str, Mapping[str, Any]], list[str]]]] = {
    pack.EKS_PROD_ENDPOINT_NOT_PUBLIC: (
        lambda t: t == rules.EKS_CLUSTER_TYPE,
        lambda _t, props: rules.endpoint_violations(props),
    ),
    pack.EKS_SECRETS_ENCRYPTION: (
        lambda t: t == rules.EKS_CLUSTER_TYPE,
        lambda _t, props: rules.secrets_encryption_violations(props),
    ),
    pack.FLUX_GIT_REPOSITORY_INTERVAL: (
        lambda t: t in rules.GIT_REPOSITORY_TYPES,
        lambda _t, props: rules.git_repository_interval_violations(props),
    ),
    pack.NO_LATEST_IMAGE_TAG: (
        lambda t: t in rules.POD_SPEC_PATHS,
        rules.image_tag_violations,
    ),
    pack.AWS_REQUIRED_TAGS: (
        lambda t: t.startswith("aws:"),
        # The program configures no explicit AWS provider, so there are no provider default tags.
        rules.required_tag_violations,
    ),
    pack.EKS_NODE_GROUP_SIZE_BOUNDS: (
        lambda t: t == rules.EKS_NODE_GROUP_TYPE,
        lambda _t, props: rules.node_group_size_violations(props),
    ),
    pack.FLUX_KUSTOMIZATION_PRUNE: (
        lambda t: t in rules.KUSTOMIZATION_TYPES,
        lambda _t, props: rules.kustomization_prune_violations(props),
    ),
    pack.FLUX_KUSTOMIZATION_HEALTH: (
        lambda t: t in rules.KUSTOMIZATION_TYPES,
        lambda _t, props: rules.kustomization_health_violations(props),
    ),
    pack.ENVIRONMENT_CONTRACT_VALID: (
        lambda t: t in (rules.CONFIG_MAP_TYPE, rules.CONFIG_MAP_PATCH_TYPE),
        lambda _t, props: rules.environment_contract_violations(props),
    ),
    pack.IAM_SECRETS_READ_SCOPED: (
        lambda t: t in rules.IAM_POLICY_TYPES,
        lambda _t, props: rules.secrets_read_violations(props),
    ),
    pack.ARGOCD_AUTOMATED_SYNC: (
        lambda t: t in rules.APPLICATION_TYPES,
        lambda _t, props: rules.application_automated_violations(props),
    ),
    pack.ARGOCD_PROJECT_NAMED_DESTINATIONS: (
        lambda t: t in rules.APP_PROJECT_TYPES,
        lambda _t, props: rules.project_destination_violations(props),
    ),
}
STACK_RULES: dict[str, Callable[[list[Resource]], list[tuple[str, str]]]] = {
    pack.DEPLOY_KEY_READ_ONLY: rules.stack_deploy_key_violations,
    pack.FLUX_SYNC_ALERTING: rules.stack_alerting_violations,
    pack.TENANT_NO_CLUSTER_WIDE_WRITE: rules.stack_tenant_binding_violations,
    pack.TENANT_KUSTOMIZATION_IDENTITY: rules.stack_tenant_identity_violations,
    pack.ARGOCD_PROD_PRUNE_SELF_HEAL: rules.stack_prod_sync_violations,
}


def _resources(plan: Plan) -> list[Resource]:
    return [(r.type, r.urn, copy.deepcopy(dict(r.inputs))) for r in plan.resources]


def _violations(resources: list[Resource]) -> dict[str, list[tuple[str, str]]]:
    """Every policy's violations over a stack, as ``(urn, message)``, by policy name."""
    found: dict[str, list[tuple[str, str]]] = {name: [] for name in pack.ENFORCEMENT}
    for name, (applies, check) in RESOURCE_RULES.items():
        for resource_type, urn, props in resources:
            if applies(resource_type):
                found[name] += [(urn, message) for message in check(resource_type, props)]
    for name, stack_check in STACK_RULES.items():
        found[name] = stack_check(resources)
    return found


def _mandatory(found: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    return {
        name: violations
        for name, violations in found.items()
        if violations and pack.ENFORCEMENT[name] is EnforcementLevel.MANDATORY
    }


@pytest.fixture(scope="module")
def stacks() -> dict[str, list[Resource]]:
    return {
        stack: _resources(
            offline_plan(stack, options=StackOptions(work_dir=REPO_ROOT), config_step=plan_config)
        )
        for stack in ("dev", "prod", "local", "dev-argocd")
    }


def test_every_policy_is_checked_here() -> None:
    assert set(RESOURCE_RULES) | set(STACK_RULES) == set(pack.ENFORCEMENT)


ADVISORY_FINDINGS = {
    "dev": {pack.FLUX_KUSTOMIZATION_HEALTH, pack.FLUX_SYNC_ALERTING},
    "prod": set(),
    "local": {pack.FLUX_KUSTOMIZATION_HEALTH, pack.FLUX_SYNC_ALERTING},
    "dev-argocd": set(),
}
"""The advisory policies each committed stack trips: dev and local set neither ``flux.healthChecks`` nor
``flux.notifications``, so their Kustomization is Ready before its workloads and nobody hears of a failed
sync. Prod sets both."""


@pytest.mark.parametrize("stack", ["dev", "prod", "local", "dev-argocd"])
def test_the_committed_stacks_violate_no_mandatory_policy(
    stacks: dict[str, list[Resource]], stack: str
) -> None:
    found = _violations(stacks[stack])

    assert _mandatory(found) == {}
    advisory = {name for name, violations in found.items() if violations}
    assert advisory == ADVISORY_FINDINGS[stack], "and only the known advisory ones"
    kustomizations = [urn for t, urn, _ in stacks[stack] if t in rules.KUSTOMIZATION_TYPES]
    for name in advisory:
        assert [urn for urn, _ in found[name]] == kustomizations


def test_the_argo_cd_stack_is_checked_by_the_argo_cd_policies_and_can_fail_them(
    stacks: dict[str, list[Resource]],
) -> None:
    resources = stacks["dev-argocd"]
    types = {t for t, _, _ in resources}
    assert set(rules.APPLICATION_TYPES) <= types and set(rules.APP_PROJECT_TYPES) <= types
    assert not types & {*rules.KUSTOMIZATION_TYPES, *rules.GIT_REPOSITORY_TYPES}

    def broken(type_: str, change: Callable[[dict[str, Any]], None]) -> dict[str, list[tuple[str, str]]]:
        variant = copy.deepcopy(resources)
        for resource_type, _, props in variant:
            if resource_type == type_:
                change(props)  # type: ignore[arg-type]
        return _mandatory(_violations(variant))

    application, project = rules.APPLICATION_TYPES[0], rules.APP_PROJECT_TYPES[0]
    manual = broken(application, lambda props: props["spec"]["syncPolicy"].pop("automated"))
    assert set(manual) == {pack.ARGOCD_AUTOMATED_SYNC}
    wildcard = broken(
        project, lambda props: props["spec"]["destinations"].append({"server": "*", "namespace": "*"})
    )
    assert set(wildcard) == {pack.ARGOCD_PROJECT_NAMED_DESTINATIONS}
    assert len(wildcard[pack.ARGOCD_PROJECT_NAMED_DESTINATIONS]) == 2
    # dev may turn self-heal off; prod may not.
    no_heal = broken(
        application, lambda props: props["spec"]["syncPolicy"]["automated"].update(selfHeal=False)
    )
    assert no_heal == {}

    def as_prod(props: dict[str, Any]) -> None:
        props["spec"]["syncPolicy"]["automated"]["selfHeal"] = False

    variant = copy.deepcopy(resources)
    for resource_type, _, props in variant:
        if resource_type == application:
            as_prod(props)  # type: ignore[arg-type]
        elif props.get("metadata", {}).get("name") == "environment":
            props["data"]["name"] = "prod"  # type: ignore[index]
    found = _mandatory(_violations(variant))
    assert set(found) == {pack.ARGOCD_PROD_PRUNE_SELF_HEAL}
    assert "selfHeal" in found[pack.ARGOCD_PROD_PRUNE_SELF_HEAL][0][1]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_which_policies_the_mocked_graph_can_exercise(stacks: dict[str, list[Resource]], stack: str) -> None:
    resources = stacks[stack]
    checked = {
        name
        for name, (applies, _) in RESOURCE_RULES.items()
        if any(applies(resource_type) for resource_type, _, _ in resources)
    }
    if any(resource_type == rules.DEPLOY_KEY_TYPE for resource_type, _, _ in resources):
        checked.add(pack.DEPLOY_KEY_READ_ONLY)
    if any(t in (*rules.KUSTOMIZATION_TYPES, *rules.ALERT_TYPES) for t, _, _ in resources):
        checked.add(pack.FLUX_SYNC_ALERTING)

    # The EKS cluster and node groups live inside pulumi-eks's remote components (see the docstring).
    assert checked == {
        pack.AWS_REQUIRED_TAGS,
        pack.DEPLOY_KEY_READ_ONLY,
        pack.FLUX_GIT_REPOSITORY_INTERVAL,
        pack.FLUX_KUSTOMIZATION_PRUNE,
        pack.FLUX_KUSTOMIZATION_HEALTH,
        pack.FLUX_SYNC_ALERTING,
        pack.ENVIRONMENT_CONTRACT_VALID,
        pack.IAM_SECRETS_READ_SCOPED,  # the IAM roles the cluster makes
    }
    assert not any(t in (rules.EKS_CLUSTER_TYPE, rules.EKS_NODE_GROUP_TYPE) for t, _, _ in resources)
    taggable = [r for r in resources if rules.required_tag_violations(r[0], {}) != []]
    assert len(taggable) >= 10, "the VPC, subnets, gateways, route tables, KMS key and IAM roles"


def test_prod_writes_to_git_because_its_flux_runs_image_automation(stacks: dict[str, list[Resource]]) -> None:
    # No policy config: the stack policy infers image automation from prod's flux2 release.
    prod = stacks["prod"]
    (key,) = [props for t, _, props in prod if t == rules.DEPLOY_KEY_TYPE]
    assert key["readOnly"] is False
    assert rules.flux_image_automation((t, props) for t, _, props in prod)
    (dev_key,) = [props for t, _, props in stacks["dev"] if t == rules.DEPLOY_KEY_TYPE]
    assert dev_key["readOnly"] is True
    assert not rules.flux_image_automation((t, props) for t, _, props in stacks["dev"])


def _flux_release(resources: list[Resource]) -> Mapping[str, Any]:
    # Flux's: prod installs External Secrets' chart too.
    (release,) = [
        props for t, _, props in resources if t in rules.HELM_RELEASE_TYPES and props["chart"] == "flux2"
    ]
    return release


def test_broken_variants_violate_mandatory_policies(stacks: dict[str, list[Resource]]) -> None:
    # Prod without image automation in its Flux, but its deploy key still writable.
    no_automation = copy.deepcopy(stacks["prod"])
    _flux_release(no_automation)["values"]["imageAutomationController"]["create"] = False
    (key_urn,) = [urn for t, urn, _ in no_automation if t == rules.DEPLOY_KEY_TYPE]
    found = _mandatory(_violations(no_automation))
    assert list(found) == [pack.DEPLOY_KEY_READ_ONLY]
    assert [urn for urn, _ in found[pack.DEPLOY_KEY_READ_ONLY]] == [key_urn]

    # Dev with an AWS resource that lost its owner tag.
    untagged = copy.deepcopy(stacks["dev"])
    (vpc_urn, vpc) = next((urn, props) for t, urn, props in untagged if t == "aws:ec2/vpc:Vpc")
    del vpc["tags"]["owner"]
    found = _mandatory(_violations(untagged))
    assert found == {pack.AWS_REQUIRED_TAGS: [(vpc_urn, "missing required tag: owner")]}

    # Dev with a git sync interval out of range: advisory, so not mandatory.
    polling = copy.deepcopy(stacks["dev"])
    (repository,) = [props for t, _, props in polling if t in rules.GIT_REPOSITORY_TYPES]
    repository["spec"]["interval"] = "5s"
    assert _mandatory(_violations(polling)) == {}
    assert _violations(polling)[pack.FLUX_GIT_REPOSITORY_INTERVAL] != []

    # Prod with a Kustomization that no longer prunes.
    no_prune = copy.deepcopy(stacks["prod"])
    (kustomization_urn, kustomization) = next(
        (urn, props) for t, urn, props in no_prune if t in rules.KUSTOMIZATION_TYPES
    )
    kustomization["spec"]["prune"] = False
    found = _mandatory(_violations(no_prune))
    assert list(found) == [pack.FLUX_KUSTOMIZATION_PRUNE]
    assert [urn for urn, _ in found[pack.FLUX_KUSTOMIZATION_PRUNE]] == [kustomization_urn]

    # Dev with an environment ConfigMap the contract rejects.
    bad_contract = copy.deepcopy(stacks["dev"])
    (config_map_urn, config_map) = next(
        (urn, props)
        for t, urn, props in bad_contract
        if t == rules.CONFIG_MAP_PATCH_TYPE and props["metadata"]["name"] == "environment"
    )
    config_map["data"]["baseDomain"] = "not a domain"
    found = _mandatory(_violations(bad_contract))
    assert list(found) == [pack.ENVIRONMENT_CONTRACT_VALID]
    assert [urn for urn, _ in found[pack.ENVIRONMENT_CONTRACT_VALID]] == [config_map_urn]


def test_the_local_stack_has_only_kubernetes_objects_for_the_policies(
    stacks: dict[str, list[Resource]],
) -> None:
    # An existing cluster and an existing key: nothing on AWS or GitHub to tag or to make read-only, and
    # the GitRepository interval is still checked.
    local = stacks["local"]
    assert not [t for t, _, _ in local if t.startswith(("aws:", "eks:", "github:", "tls:"))]
    assert any(t in rules.GIT_REPOSITORY_TYPES for t, _, _ in local)
    assert rules.stack_deploy_key_violations(local) == []


def _with_tenants(tmp_path: Path, role: str = "admin") -> list[Resource]:
    """dev's plan with two tenants, one on two namespaces, bound to ``role``."""
    config = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())["config"]
    config["gitops-infra:tenants"] = [
        {"name": "shop", "namespaces": ["shop", "shop-jobs"], "role": role},
        {"name": "ads"},
    ]
    stack_project(tmp_path)
    (tmp_path / "Pulumi.tenants.yaml").write_text(yaml.safe_dump({"config": config}))
    return _resources(
        offline_plan("tenants", options=StackOptions(work_dir=tmp_path), config_step=plan_config)
    )


def test_the_tenant_policies_pass_what_the_tenant_component_makes_and_catch_what_it_must_not(
    tmp_path: Path,
) -> None:
    resources = _with_tenants(tmp_path)
    found = _violations(resources)
    assert _mandatory(found) == {}
    kustomizations = [(urn, props) for t, urn, props in resources if t in rules.KUSTOMIZATION_TYPES]
    assert len(kustomizations) == 3, "the platform's root and one per tenant"

    # A tenant Kustomization that lost its identity would apply as the default account: refused.
    anonymous = copy.deepcopy(resources)
    (urn, props) = next(
        (urn, p) for t, urn, p in anonymous if "tenant-ads" in urn and t in rules.KUSTOMIZATION_TYPES
    )
    del props["spec"]["serviceAccountName"]
    found = _mandatory(_violations(anonymous))
    assert list(found) == [pack.TENANT_KUSTOMIZATION_IDENTITY]
    assert [u for u, _ in found[pack.TENANT_KUSTOMIZATION_IDENTITY]] == [urn]

    # A tenant bound to cluster-admin, even namespaced, writes its namespace, quota and limits: refused.
    admin = _with_tenants(tmp_path / "admin", role="cluster-admin")
    found = _mandatory(_violations(admin))
    assert list(found) == [pack.TENANT_NO_CLUSTER_WIDE_WRITE]
    assert sorted(u.rsplit("::", 1)[1] for u, _ in found[pack.TENANT_NO_CLUSTER_WIDE_WRITE]) == [
        "gitops-dev-tenant-shop-shop-jobs-reconciler",
        "gitops-dev-tenant-shop-shop-reconciler",
    ]


def test_prod_reads_only_its_own_secrets_and_a_widened_grant_is_refused(
    stacks: dict[str, list[Resource]],
) -> None:
    # Prod enables externalSecrets: its controller's role reads the names under prod/, in its region.
    prod = copy.deepcopy(stacks["prod"])
    (policy_urn, policy) = next(
        (urn, props) for t, urn, props in prod if t == "aws:iam/rolePolicy:RolePolicy" and "external" in urn
    )
    (statement,) = json.loads(policy["policy"])["Statement"]
    # No account offline: the plan says so rather than "None" (the deploying identity fills it in).
    assert statement["Resource"] == ["arn:aws:secretsmanager:eu-west-1:<account>:secret:prod/*"]
    assert _violations(prod)[pack.IAM_SECRETS_READ_SCOPED] == []

    # The same role, its grant widened by hand to every secret: the only mandatory finding, on it.
    statement["Resource"] = ["arn:aws:secretsmanager:eu-west-1:<account>:secret:*"]
    policy["policy"] = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
    found = _mandatory(_violations(prod))
    assert list(found) == [pack.IAM_SECRETS_READ_SCOPED]
    assert [urn for urn, _ in found[pack.IAM_SECRETS_READ_SCOPED]] == [policy_urn]
