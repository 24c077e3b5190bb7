"""The gitops-infra policy pack: each rule on passing and failing inputs, and the pack's wiring.

The rules are plain functions of a resource's inputs (camelCase, as the engine shows them to a policy).
The wiring tests go through pulumi-policy's own ``ResourceValidationArgs`` and the policies' ``validate``,
as the policy runtime does, with a recording ``report_violation``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from gitops_infra.contract import Environment, environment_data
from gitops_infra.policy import pack, rules
from gitops_infra.policy.rules import (
    DeployKeySettings,
    EndpointSettings,
    IntervalSettings,
    NodeGroupSettings,
    TagSettings,
)

PROD_TAGS = {"environment": "prod", "owner": "platform"}


def _cluster(
    *, public: bool | None = True, cidrs: list[str] | None = None, tags: dict[str, str] | None = None
) -> dict[str, Any]:
    vpc: dict[str, Any] = {"subnetIds": ["subnet-1", "subnet-2"], "endpointPrivateAccess": True}
    if public is not None:
        vpc["endpointPublicAccess"] = public
    if cidrs is not None:
        vpc["publicAccessCidrs"] = cidrs
    props: dict[str, Any] = {"vpcConfig": vpc}
    if tags is not None:
        props["tags"] = tags
    return props


# --- Go durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1m30s", 90),
        ("5m", 300),
        ("60s", 60),
        ("1.5h", 5400),
        ("1h2m3s", 3723),
        ("300ms", 0.3),
        ("0s", 0),
    ],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    assert rules.parse_duration(text) == timedelta(seconds=seconds)


# The last four are Go durations that Flux's CRDs refuse: the policy agrees with the API server.
@pytest.mark.parametrize(
    "text", ["", "5", "5 m", "1d", "-1m", "m", "1m30", "1.5.2s", "PT5M", "0", ".5m", "1.m", "5µs"]
)
def test_non_durations_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="is not a Go duration"):
        rules.parse_duration(text)


# --- eks-prod-endpoint-not-public -------------------------------------------------------------------


@pytest.mark.parametrize(
    "props",
    [
        pytest.param(_cluster(cidrs=["0.0.0.0/0"], tags=PROD_TAGS), id="open-cidr"),
        pytest.param(_cluster(cidrs=["10.0.0.0/8", "::/0"], tags=PROD_TAGS), id="open-ipv6-cidr"),
        pytest.param(_cluster(tags=PROD_TAGS), id="public-with-no-cidrs-means-aws-default-open"),
        pytest.param(_cluster(public=None, tags=PROD_TAGS), id="public-access-unset-defaults-to-on"),
        pytest.param(_cluster(cidrs=["0.0.0.0/0"], tags={"owner": "x"}), id="untagged-counts-as-prod"),
        pytest.param(
            _cluster(cidrs=["0.0.0.0/0"], tags={"gitops-infra/environment": "prod"}),
            id="platform-environment-tag",
        ),
    ],
)
def test_an_open_prod_endpoint_is_a_violation(props: dict[str, Any]) -> None:
    (message,) = rules.endpoint_violations(props)
    assert "open to" in message and "endpointPublicAccess" in message


@pytest.mark.parametrize(
    "props",
    [
        pytest.param(_cluster(public=False, cidrs=["0.0.0.0/0"], tags=PROD_TAGS), id="private-endpoint"),
        pytest.param(_cluster(cidrs=["10.100.0.0/16"], tags=PROD_TAGS), id="allow-listed-cidrs"),
        pytest.param(_cluster(cidrs=["0.0.0.0/0"], tags={"environment": "dev"}), id="dev-may-be-open"),
    ],
)
def test_a_closed_or_non_prod_endpoint_passes(props: dict[str, Any]) -> None:
    assert rules.endpoint_violations(props) == []


def test_prod_is_read_from_the_provider_default_tags_and_the_configured_names() -> None:
    untagged_open = _cluster(cidrs=["0.0.0.0/0"], tags={})
    assert rules.endpoint_violations(untagged_open, default_tags={"environment": "dev"}) == []
    assert rules.endpoint_violations(untagged_open, default_tags={"environment": "prod"}) != []

    live = _cluster(cidrs=["0.0.0.0/0"], tags={"environment": "live"})
    assert rules.endpoint_violations(live) == []
    settings = EndpointSettings.from_config({"prodEnvironments": ["live"]})
    (message,) = rules.endpoint_violations(live, settings)
    assert "environment 'live'" in message


# --- eks-secrets-encryption -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encryption",
    [
        {"resources": ["secrets"], "provider": {"keyArn": "arn:aws:kms:eu-west-1:1:key/k"}},
        [{"resources": ["secrets"], "provider": {"keyArn": "arn:aws:kms:eu-west-1:1:key/k"}}],
    ],
    ids=["object", "list"],
)
def test_secrets_encryption_on_passes(encryption: Any) -> None:
    assert rules.secrets_encryption_violations({"encryptionConfig": encryption}) == []


def test_secrets_encryption_off_is_a_violation() -> None:
    (missing,) = rules.secrets_encryption_violations(_cluster(tags=PROD_TAGS))
    assert "no encryptionConfig" in missing
    (wrong,) = rules.secrets_encryption_violations({"encryptionConfig": {"resources": ["configmaps"]}})
    assert "does not include 'secrets'" in wrong


# --- deploy-key-read-only ---------------------------------------------------------------------------


def test_a_writable_deploy_key_needs_image_automation() -> None:
    writable = {"repository": "fleet", "title": "flux", "key": "ecdsa-sha2-nistp384 AAAA", "readOnly": False}

    (message,) = rules.deploy_key_violations(writable)
    assert "can write" in message
    assert rules.deploy_key_violations(writable, DeployKeySettings(image_automation=True)) == []


@pytest.mark.parametrize("props", [{"readOnly": True}, {}], ids=["read-only", "unset-defaults-to-read-only"])
def test_a_read_only_deploy_key_passes(props: dict[str, Any]) -> None:
    assert rules.deploy_key_violations(props) == []


# --- flux-git-repository-interval -------------------------------------------------------------------


def _git_repository(interval: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"url": "ssh://git@github.com/example-org/fleet", "ref": {"branch": "main"}}
    if interval is not None:
        spec["interval"] = interval
    return {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "spec": spec}


@pytest.mark.parametrize("interval", ["1m", "1m30s", "5m", "60s", "10m", "600s"])
def test_intervals_from_one_to_ten_minutes_pass(interval: str) -> None:
    assert rules.git_repository_interval_violations(_git_repository(interval)) == []


@pytest.mark.parametrize("interval", ["30s", "59s", "10m1s", "1h"])
def test_intervals_outside_one_to_ten_minutes_are_violations(interval: str) -> None:
    (message,) = rules.git_repository_interval_violations(_git_repository(interval))
    assert f"spec.interval {interval!r} is outside 1m..10m" in message


def test_a_missing_or_malformed_interval_is_a_violation() -> None:
    assert rules.git_repository_interval_violations(_git_repository(None)) == [
        "this GitRepository has no spec.interval"
    ]
    (message,) = rules.git_repository_interval_violations(_git_repository("five minutes"))
    assert "not a Go duration" in message


def test_the_interval_bounds_come_from_config() -> None:
    settings = IntervalSettings.from_config({"minInterval": "30s", "maxInterval": "2m"})
    assert rules.git_repository_interval_violations(_git_repository("30s"), settings) == []
    assert rules.git_repository_interval_violations(_git_repository("5m"), settings) != []


# --- no-latest-image-tag ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        ("nginx", "has no tag"),
        ("nginx:latest", "uses the tag 'latest'"),
        ("ghcr.io/acme/app:latest", "uses the tag 'latest'"),
        ("registry.local:5000/acme/app", "has no tag"),
        ("nginx:", "has no tag"),
    ],
)
def test_unpinned_images_have_a_problem(image: str, problem: str) -> None:
    found = rules.image_problem(image)
    assert found is not None and found.startswith(problem)


@pytest.mark.parametrize(
    "image",
    [
        "nginx:1.27.3",
        "registry.local:5000/acme/app:2024-05-01",
        "ghcr.io/fluxcd/source-controller:v1.6.0",
        "ghcr.io/acme/app@sha256:" + "a" * 64,
        "ghcr.io/acme/app:latest@sha256:" + "b" * 64,
    ],
)
def test_pinned_images_pass(image: str) -> None:
    assert rules.image_problem(image) is None


def _pod_spec(*images: str, init: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": img} for i, img in enumerate(images)]}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": init}]
    return spec


@pytest.mark.parametrize(
    ("resource_type", "props"),
    [
        ("kubernetes:core/v1:Pod", {"spec": _pod_spec("nginx:1.27", "busybox")}),
        (
            "kubernetes:apps/v1:Deployment",
            {"spec": {"template": {"spec": _pod_spec("nginx:1.27", "busybox")}}},
        ),
        ("kubernetes:apps/v1:StatefulSet", {"spec": {"template": {"spec": _pod_spec("busybox", "nginx:1")}}}),
        ("kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": _pod_spec("busybox")}}}),
        ("kubernetes:batch/v1:Job", {"spec": {"template": {"spec": _pod_spec("busybox")}}}),
        (
            "kubernetes:batch/v1:CronJob",
            {"spec": {"jobTemplate": {"spec": {"template": {"spec": _pod_spec("busybox")}}}}},
        ),
    ],
)
def test_each_workload_kind_is_checked(resource_type: str, props: dict[str, Any]) -> None:
    (message,) = rules.image_tag_violations(resource_type, props)
    assert "image 'busybox' has no tag" in message


def test_every_container_list_is_checked_and_named() -> None:
    props = {"spec": {"template": {"spec": _pod_spec("nginx:1.27", init="alpine:latest")}}}

    (message,) = rules.image_tag_violations("kubernetes:apps/v1:Deployment", props)

    assert message.startswith("initContainers 'init': image 'alpine:latest' uses the tag 'latest'")


def test_pinned_workloads_and_other_kinds_pass() -> None:
    pinned = {"spec": {"template": {"spec": _pod_spec("nginx:1.27", init="alpine@sha256:" + "c" * 64)}}}
    assert rules.image_tag_violations("kubernetes:apps/v1:Deployment", pinned) == []
    assert rules.image_tag_violations("kubernetes:core/v1:ConfigMap", {"data": {"image": "nginx"}}) == []


# --- aws-required-tags ------------------------------------------------------------------------------


def test_a_taggable_aws_resource_without_the_required_tags_is_a_violation() -> None:
    vpc = {"cidrBlock": "10.0.0.0/16", "tags": {"environment": "dev", "Name": "vpc"}}
    assert rules.required_tag_violations("aws:ec2/vpc:Vpc", vpc) == ["missing required tag: owner"]
    assert rules.required_tag_violations("aws:kms/key:Key", {"description": "k"}) == [
        "missing required tags: environment, owner"
    ]


def test_required_tags_are_met_by_own_or_provider_default_tags() -> None:
    assert rules.required_tag_violations("aws:ec2/vpc:Vpc", {"tags": PROD_TAGS}) == []
    assert (
        rules.required_tag_violations(
            "aws:ec2/vpc:Vpc", {"tags": {"owner": "a"}}, default_tags={"environment": "x"}
        )
        == []
    )


def test_only_taggable_aws_resources_need_tags() -> None:
    # An aws: type with no tags input that is not known to be taggable, and non-AWS types.
    assert rules.required_tag_violations("aws:ec2/route:Route", {"routeTableId": "rtb-1"}) == []
    assert rules.required_tag_violations("kubernetes:core/v1:Namespace", {"tags": {}}) == []
    # Any aws: type that has a tags input is taggable.
    assert rules.required_tag_violations("aws:s3/bucketV2:BucketV2", {"tags": {}}) != []


# What pulumi-eks's Cluster makes under the platform's EksCluster (API authentication, no default node
# group, an OIDC provider, KMS encryption): `createCore` and `Cluster` in nodejs/eks/cluster/cluster.ts,
# `createAccessEntries` in authenticationMode.ts. Each AWS child gets the cluster's `tags`, except the
# OIDC provider (and those AWS cannot tag: rules, attachments, policy associations).
EKS_CLUSTER = "gitops-infra:index:EksCluster$eks:index:Cluster"
PULUMI_EKS_CHILDREN: list[tuple[str, str, dict[str, Any]]] = [
    ("eks:index:ServiceRole$aws:iam/role:Role", "prod-cluster-eksRole-role", {"tags": PROD_TAGS}),
    ("eks:index:ServiceRole$aws:iam/rolePolicyAttachment:RolePolicyAttachment", "prod-eksRole-0", {}),
    (
        "aws:ec2/securityGroup:SecurityGroup",
        "prod-cluster-eksClusterSecurityGroup",
        {"tags": {"Name": "prod-cluster-eksClusterSecurityGroup", **PROD_TAGS}},
    ),
    ("aws:ec2/securityGroupRule:SecurityGroupRule", "prod-cluster-eksClusterInternetEgressRule", {}),
    ("aws:eks/cluster:Cluster", "prod-cluster-eksCluster", {"tags": PROD_TAGS}),
    ("aws:eks/addon:Addon", "prod-cluster-kube-proxy", {"tags": PROD_TAGS}),
    ("aws:eks/addon:Addon", "prod-cluster-coredns", {"tags": PROD_TAGS}),
    ("eks:index:VpcCniAddon$aws:eks/addon:Addon", "prod-cluster-vpc-cni", {"tags": PROD_TAGS}),
    ("aws:ec2/securityGroup:SecurityGroup", "prod-cluster-nodeSecurityGroup", {"tags": PROD_TAGS}),
    (
        "aws:eks/accessEntry:AccessEntry",
        "prod-cluster-admin-222222222222-role-platform-admin",
        {"tags": PROD_TAGS},
    ),
    (
        "aws:eks/accessEntry:AccessEntry$aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
        "prod-cluster-admin-222222222222-role-platform-admin-cluster-admin",
        {},
    ),
    (
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "prod-cluster-oidcProvider",
        {"clientIdLists": ["sts.amazonaws.com"], "thumbprintLists": ["9e99a48a"]},
    ),
]


@pytest.mark.parametrize(("chain", "name", "props"), PULUMI_EKS_CHILDREN, ids=lambda v: str(v)[:40])
def test_what_pulumi_eks_makes_passes_the_tag_policy(chain: str, name: str, props: dict[str, Any]) -> None:
    # Its OIDC provider has no tags and no way to set them: the pack blocked every prod `up`.
    urn = f"urn:pulumi:prod::gitops-infra::{EKS_CLUSTER}${chain}::{name}"
    assert rules.required_tag_violations(chain.rsplit("$", 1)[-1], props, urn=urn) == []


def test_an_oidc_provider_the_program_makes_itself_still_needs_its_tags() -> None:
    oidc = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
    urn = f"urn:pulumi:prod::gitops-infra::{oidc}::ours"
    assert rules.required_tag_violations(oidc, {"url": "https://x"}, urn=urn) == [
        "missing required tags: environment, owner"
    ]


def test_the_autoscaling_list_form_of_tags_and_configured_tag_names() -> None:
    asg_tags = {"tags": [{"key": "environment", "value": "dev", "propagateAtLaunch": True}]}
    assert rules.required_tag_violations("aws:autoscaling/group:Group", asg_tags) == [
        "missing required tag: owner"
    ]
    settings = TagSettings.from_config({"requiredTags": ["environment"]})
    assert rules.required_tag_violations("aws:autoscaling/group:Group", asg_tags, settings) == []


def test_provider_default_tags_are_read_in_both_forms() -> None:
    tags = {"environment": "prod", "owner": "platform"}
    assert rules.default_tags_of({"region": "eu-west-1", "defaultTags": {"tags": tags}}) == tags
    assert rules.default_tags_of({"defaultTags": '{"tags": {"owner": "platform"}}'}) == {"owner": "platform"}
    assert rules.default_tags_of({"defaultTags": "not json"}) == {}
    assert rules.default_tags_of(None) == {}


# --- eks-node-group-size-bounds ---------------------------------------------------------------------


def _node_group(low: float, high: float, desired: float) -> dict[str, Any]:
    return {"clusterName": "c", "scalingConfig": {"minSize": low, "maxSize": high, "desiredSize": desired}}


@pytest.mark.parametrize(("low", "high", "desired"), [(1, 3, 2), (3, 12, 3), (1, 20, 20), (3.0, 6.0, 3.0)])
def test_node_groups_within_bounds_pass(low: float, high: float, desired: float) -> None:
    assert rules.node_group_size_violations(_node_group(low, high, desired)) == []


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ((0, 3, 1), "scalingConfig.minSize 0 is below the allowed minimum 1"),
        ((1, 21, 2), "scalingConfig.maxSize 21 is above the allowed maximum 20"),
        ((5, 3, 4), "scalingConfig.minSize 5 is greater than maxSize 3"),
        ((2, 4, 5), "scalingConfig.desiredSize 5 is outside minSize..maxSize (2..4)"),
        ((2, 4, 1), "scalingConfig.desiredSize 1 is outside minSize..maxSize (2..4)"),
    ],
)
def test_node_groups_out_of_bounds_are_violations(sizes: tuple[int, int, int], expected: str) -> None:
    assert rules.node_group_size_violations(_node_group(*sizes)) == [expected]


def test_node_group_bounds_come_from_config_and_scaling_config_is_required() -> None:
    settings = NodeGroupSettings.from_config({"minNodes": 3.0, "maxNodes": 6.0})  # numbers arrive as floats
    assert settings == NodeGroupSettings(min_nodes=3, max_nodes=6)
    assert rules.node_group_size_violations(_node_group(3, 6, 3), settings) == []
    assert len(rules.node_group_size_violations(_node_group(1, 12, 3), settings)) == 2
    assert rules.node_group_size_violations({"clusterName": "c"}) == ["this node group has no scalingConfig"]


# --- flux-kustomization-prune and flux-kustomization-health -----------------------------------------

KUSTOMIZATION = rules.KUSTOMIZATION_TYPES[0]


def _kustomization(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "interval": "10m",
        "path": "./clusters/dev",
        "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
    }
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {**base, **spec},
    }


def test_a_pruning_kustomization_passes() -> None:
    assert rules.kustomization_prune_violations(_kustomization(prune=True)) == []


@pytest.mark.parametrize(
    "props",
    [_kustomization(prune=False), _kustomization(), {"kind": "Kustomization"}],
    ids=["prune-false", "prune-unset", "no-spec"],
)
def test_a_kustomization_without_prune_is_a_violation(props: dict[str, Any]) -> None:
    (message,) = rules.kustomization_prune_violations(props)
    assert "objects removed from git stay on the cluster" in message and "spec.prune: true" in message


@pytest.mark.parametrize(
    "props",
    [
        _kustomization(healthChecks=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"}]),
        _kustomization(wait=True),
        _kustomization(wait=True, healthChecks=[]),
    ],
    ids=["health-checks", "wait", "wait-with-empty-health-checks"],
)
def test_a_kustomization_that_waits_for_its_workloads_passes(props: dict[str, Any]) -> None:
    assert rules.kustomization_health_violations(props) == []


@pytest.mark.parametrize(
    "props",
    [_kustomization(), _kustomization(healthChecks=[]), _kustomization(wait=False)],
    ids=["neither", "empty-health-checks", "wait-false"],
)
def test_a_kustomization_ready_before_its_workloads_is_a_violation(props: dict[str, Any]) -> None:
    (message,) = rules.kustomization_health_violations(props)
    assert "Ready as soon as its objects are applied" in message
    assert "if its path deploys workloads" in message


# --- flux-sync-alerting -----------------------------------------------------------------------------

ALERT = rules.ALERT_TYPES[0]
HELM_RELEASE = rules.HELM_RELEASE_TYPES[0]


def _triples(resources: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(t, _urn(t, i), props) for i, (t, props) in enumerate(resources)]


@pytest.mark.parametrize(
    "stack",
    [
        pytest.param([], id="no-flux"),
        pytest.param([("kubernetes:core/v1:ConfigMap", {"data": {}})], id="no-flux-objects"),
        pytest.param([(HELM_RELEASE, {"chart": "other"})], id="other-chart"),
        pytest.param(
            [(HELM_RELEASE, {"chart": "flux2"}), (KUSTOMIZATION, _kustomization(prune=True)), (ALERT, {})],
            id="flux-with-alert",
        ),
        pytest.param(
            [
                (KUSTOMIZATION, _kustomization(prune=True)),
                ("kubernetes:notification.toolkit.fluxcd.io/v1beta2:Alert", {}),
            ],
            id="v1beta2-alert",
        ),
    ],
)
def test_a_stack_without_flux_or_with_an_alert_passes(stack: list[tuple[str, dict[str, Any]]]) -> None:
    assert rules.stack_alerting_violations(_triples(stack)) == []


@pytest.mark.parametrize(
    ("stack", "reported_on"),
    [
        pytest.param(
            [
                (HELM_RELEASE, {"chart": "flux2"}),
                (rules.GIT_REPOSITORY_TYPES[0], _git_repository("1m")),
                (KUSTOMIZATION, _kustomization(prune=True)),
            ],
            2,
            id="full-bootstrap-reported-on-the-kustomization",
        ),
        pytest.param(
            [
                (rules.GIT_REPOSITORY_TYPES[0], _git_repository("1m")),
                (HELM_RELEASE, {"chart": "flux2"}),
            ],
            1,
            id="controllers-only-reported-on-the-release",
        ),
        pytest.param([(rules.GIT_REPOSITORY_TYPES[0], _git_repository("1m"))], 0, id="external-flux-sync"),
    ],
)
def test_a_stack_that_installs_flux_without_an_alert_is_a_violation(
    stack: list[tuple[str, dict[str, Any]]], reported_on: int
) -> None:
    ((urn, message),) = rules.stack_alerting_violations(_triples(stack))
    assert urn == _urn(stack[reported_on][0], reported_on)
    assert "sync failures" in message and "go unnoticed" in message and "flux.notifications" in message


# --- environment-contract-valid ---------------------------------------------------------------------


def _environment_config_map(data: Any = None, *, name: str = "environment") -> dict[str, Any]:
    props: dict[str, Any] = {"metadata": {"name": name, "namespace": "apps"}}
    if data is not None:
        props["data"] = data
    return props


def _environment_data() -> dict[str, str]:
    # Built by the platform's own writer, so it follows the contract as it is now.
    return environment_data(Environment(name="dev", base_domain="dev.example.com", service_namespace="apps"))


def test_the_environment_config_map_the_platform_writes_passes() -> None:
    assert rules.environment_contract_violations(_environment_config_map(_environment_data())) == []


def test_an_environment_config_map_the_contract_rejects_is_a_violation() -> None:
    bad = {**_environment_data(), "baseDomain": "not a domain"}

    (message,) = rules.environment_contract_violations(_environment_config_map(bad))

    assert "baseDomain" in message
    (missing,) = rules.environment_contract_violations(_environment_config_map())
    assert "has no data" in missing


def test_only_the_config_map_named_environment_is_checked() -> None:
    other = _environment_config_map({"baseDomain": "not a domain"}, name="settings")
    assert rules.environment_contract_violations(other) == []
    assert rules.environment_contract_violations({"data": {"baseDomain": "not a domain"}}) == []


def test_an_unknown_environment_value_is_left_to_the_policy_runtime() -> None:
    data = {**_environment_data(), "baseDomain": UNKNOWN_STRING_VALUE}
    with pytest.raises(UnknownValueError):
        rules.environment_contract_violations(unknown_checking_proxy(_environment_config_map(data)))
    # A ConfigMap of another name is passed over without reading its data.
    other = unknown_checking_proxy(_environment_config_map(data, name="settings"))
    assert rules.environment_contract_violations(other) == []


# --- settings ---------------------------------------------------------------------------------------


def test_every_setting_has_a_default_so_the_pack_works_unconfigured() -> None:
    assert EndpointSettings.from_config({}) == EndpointSettings(prod_environments=("prod", "production"))
    assert DeployKeySettings.from_config({}) == DeployKeySettings(image_automation=False)
    assert IntervalSettings.from_config({}) == IntervalSettings(min_interval="1m", max_interval="10m")
    assert TagSettings.from_config({}) == TagSettings(required=("environment", "owner"))
    assert NodeGroupSettings.from_config({}) == NodeGroupSettings(min_nodes=1, max_nodes=20)


# --- the pack's wiring ------------------------------------------------------------------------------

ALL_POLICIES = {
    pack.EKS_PROD_ENDPOINT_NOT_PUBLIC,
    pack.EKS_SECRETS_ENCRYPTION,
    pack.DEPLOY_KEY_READ_ONLY,
    pack.FLUX_GIT_REPOSITORY_INTERVAL,
    pack.NO_LATEST_IMAGE_TAG,
    pack.AWS_REQUIRED_TAGS,
    pack.EKS_NODE_GROUP_SIZE_BOUNDS,
    pack.FLUX_KUSTOMIZATION_PRUNE,
    pack.FLUX_KUSTOMIZATION_HEALTH,
    pack.FLUX_SYNC_ALERTING,
    pack.ENVIRONMENT_CONTRACT_VALID,
    pack.TENANT_NO_CLUSTER_WIDE_WRITE,
    pack.TENANT_KUSTOMIZATION_IDENTITY,
    pack.IAM_SECRETS_READ_SCOPED,
    pack.ARGOCD_AUTOMATED_SYNC,
    pack.ARGOCD_PROJECT_NAMED_DESTINATIONS,
    pack.ARGOCD_PROD_PRUNE_SELF_HEAL,
}
ADVISORY_POLICIES = {
    pack.FLUX_GIT_REPOSITORY_INTERVAL,
    pack.FLUX_KUSTOMIZATION_HEALTH,
    pack.FLUX_SYNC_ALERTING,
}


STACK_POLICIES = {
    pack.DEPLOY_KEY_READ_ONLY,
    pack.FLUX_SYNC_ALERTING,
    pack.TENANT_NO_CLUSTER_WIDE_WRITE,
    pack.TENANT_KUSTOMIZATION_IDENTITY,
    pack.ARGOCD_PROD_PRUNE_SELF_HEAL,
}
"""Policies that need the whole stack: a deploy key's rule depends on the stack's Flux install, and
whether Flux has an Alert is a question about the stack."""


def _policies() -> dict[str, ResourceValidationPolicy | StackValidationPolicy]:
    found: dict[str, ResourceValidationPolicy | StackValidationPolicy] = {}
    for policy in pack.policies():
        assert isinstance(
            policy, StackValidationPolicy if policy.name in STACK_POLICIES else ResourceValidationPolicy
        )
        found[policy.name] = policy
    return found


def _resource_policies() -> dict[str, ResourceValidationPolicy]:
    return {name: p for name, p in _policies().items() if isinstance(p, ResourceValidationPolicy)}


# The resource options of every resource these tests hand to a policy: none set.
OPTIONS = PolicyResourceOptions(
    protect=False,
    ignore_changes=[],
    delete_before_replace=None,
    aliases=[],
    custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
    additional_secret_outputs=[],
)


def _args(
    resource_type: str,
    props: Any,
    *,
    config: dict[str, Any] | None = None,
    provider_props: dict[str, Any] | None = None,
) -> ResourceValidationArgs:
    provider = (
        PolicyProviderResource(
            "pulumi:providers:aws",
            provider_props,
            "urn:pulumi:prod::gitops-infra::pulumi:providers:aws::default",
            "default",
        )
        if provider_props is not None
        else None
    )
    return ResourceValidationArgs(
        resource_type,
        props,
        f"urn:pulumi:prod::gitops-infra::{resource_type}::r",
        "r",
        OPTIONS,
        provider,
        config,
    )


def _reported(args: ResourceValidationArgs) -> dict[str, list[str]]:
    """The violations every resource policy of the pack reports for one resource, by policy name."""
    reported: dict[str, list[str]] = {}
    for name, policy in _resource_policies().items():
        messages: list[str] = []

        def report_violation(message: str, urn: str | None = None, into: list[str] = messages) -> None:
            assert urn is None, "a resource policy reports on the resource it validates"
            into.append(message)

        assert policy.validate(args, report_violation) is None
        if messages:
            reported[name] = messages
    return reported


def test_the_pack_has_every_policy_with_its_explicit_enforcement_level() -> None:
    policies = _policies()

    assert set(policies) == ALL_POLICIES == set(pack.ENFORCEMENT)
    for name, policy in policies.items():
        assert policy.enforcement_level is pack.ENFORCEMENT[name]
    mandatory = {name for name, p in policies.items() if p.enforcement_level is EnforcementLevel.MANDATORY}
    assert mandatory == ALL_POLICIES - ADVISORY_POLICIES


def test_the_flux_and_environment_policies_have_their_enforcement_levels() -> None:
    levels = {name: policy.enforcement_level for name, policy in _policies().items()}

    assert levels[pack.FLUX_KUSTOMIZATION_PRUNE] is EnforcementLevel.MANDATORY
    assert levels[pack.FLUX_KUSTOMIZATION_HEALTH] is EnforcementLevel.ADVISORY
    assert levels[pack.FLUX_SYNC_ALERTING] is EnforcementLevel.ADVISORY
    assert levels[pack.ENVIRONMENT_CONTRACT_VALID] is EnforcementLevel.MANDATORY
    assert isinstance(_policies()[pack.FLUX_SYNC_ALERTING], StackValidationPolicy)


def test_config_schemas_declare_the_same_defaults_as_the_rules() -> None:
    schemas = {name: p.config_schema.properties for name, p in _policies().items() if p.config_schema}

    defaults = {
        name: {key: spec["default"] for key, spec in props.items()} for name, props in schemas.items()
    }
    assert defaults == {
        pack.EKS_PROD_ENDPOINT_NOT_PUBLIC: {"prodEnvironments": ["prod", "production"]},
        pack.DEPLOY_KEY_READ_ONLY: {"imageAutomation": False},
        pack.FLUX_GIT_REPOSITORY_INTERVAL: {"minInterval": "1m", "maxInterval": "10m"},
        pack.AWS_REQUIRED_TAGS: {"requiredTags": ["environment", "owner"]},
        pack.EKS_NODE_GROUP_SIZE_BOUNDS: {"minNodes": 1, "maxNodes": 20},
        pack.TENANT_NO_CLUSTER_WIDE_WRITE: {"fluxNamespaces": ["flux-system"]},
        pack.TENANT_KUSTOMIZATION_IDENTITY: {"fluxNamespaces": ["flux-system"]},
        pack.ARGOCD_PROD_PRUNE_SELF_HEAL: {"prodEnvironments": ["prod", "production"]},
    }
    # The engine fills in these defaults; the rules fall back to the same ones when it does not.
    assert EndpointSettings.from_config(defaults[pack.EKS_PROD_ENDPOINT_NOT_PUBLIC]) == EndpointSettings()
    assert DeployKeySettings.from_config(defaults[pack.DEPLOY_KEY_READ_ONLY]) == DeployKeySettings()
    assert IntervalSettings.from_config(defaults[pack.FLUX_GIT_REPOSITORY_INTERVAL]) == IntervalSettings()
    assert TagSettings.from_config(defaults[pack.AWS_REQUIRED_TAGS]) == TagSettings()
    assert NodeGroupSettings.from_config(defaults[pack.EKS_NODE_GROUP_SIZE_BOUNDS]) == NodeGroupSettings()
    for tenants in (pack.TENANT_NO_CLUSTER_WIDE_WRITE, pack.TENANT_KUSTOMIZATION_IDENTITY):
        assert rules.TenantSettings.from_config(defaults[tenants]) == rules.TenantSettings()
    prod_sync = defaults[pack.ARGOCD_PROD_PRUNE_SELF_HEAL]
    assert rules.ProdSyncSettings.from_config(prod_sync) == rules.ProdSyncSettings()


def test_an_open_unencrypted_prod_cluster_trips_exactly_its_two_policies() -> None:
    reported = _reported(_args(rules.EKS_CLUSTER_TYPE, _cluster(cidrs=["0.0.0.0/0"], tags=PROD_TAGS)))

    assert set(reported) == {pack.EKS_PROD_ENDPOINT_NOT_PUBLIC, pack.EKS_SECRETS_ENCRYPTION}
    assert "open to 0.0.0.0/0" in reported[pack.EKS_PROD_ENDPOINT_NOT_PUBLIC][0]


def test_a_compliant_prod_cluster_passes_every_policy() -> None:
    props = {
        **_cluster(public=False, tags=PROD_TAGS),
        "encryptionConfig": {
            "resources": ["secrets"],
            "provider": {"keyArn": "arn:aws:kms:eu-west-1:1:key/k"},
        },
    }
    assert _reported(_args(rules.EKS_CLUSTER_TYPE, props)) == {}


def test_policy_config_and_the_provider_reach_the_rules() -> None:
    key = {"repository": "fleet", "readOnly": False}
    assert _stack_reported([(rules.DEPLOY_KEY_TYPE, key)]) == [(_urn(rules.DEPLOY_KEY_TYPE, 0), ANY_MESSAGE)]
    assert _stack_reported([(rules.DEPLOY_KEY_TYPE, key)], config={"imageAutomation": True}) == []

    vpc = {"cidrBlock": "10.0.0.0/16", "tags": {"Name": "vpc"}}
    assert set(_reported(_args("aws:ec2/vpc:Vpc", vpc))) == {pack.AWS_REQUIRED_TAGS}
    default_tags = {"defaultTags": {"tags": {"environment": "prod", "owner": "platform"}}}
    assert _reported(_args("aws:ec2/vpc:Vpc", vpc, provider_props=default_tags)) == {}


class _AnyMessage(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and "can write" in other

    __hash__ = str.__hash__


ANY_MESSAGE = _AnyMessage("a deploy-key-read-only message")


def _urn(resource_type: str, index: int) -> str:
    return f"urn:pulumi:prod::gitops-infra::{resource_type}::r{index}"


def _stack_reported(
    resources: list[tuple[str, dict[str, Any]]],
    *,
    config: dict[str, Any] | None = None,
    only: str | None = None,
) -> list[tuple[str | None, str]]:
    """What the stack policies (or just ``only``) report for a stack of ``(type, props)``, as
    ``(urn, message)``."""
    stack = [
        PolicyResource(t, props, _urn(t, i), f"r{i}", OPTIONS, None, None, [], {})
        for i, (t, props) in enumerate(resources)
    ]
    reported: list[tuple[str | None, str]] = []
    for name, policy in _policies().items():
        if isinstance(policy, StackValidationPolicy) and only in (None, name):
            args = StackValidationArgs(stack, config)
            assert policy.validate(args, lambda message, urn: reported.append((urn, message))) is None
    return reported


def _flux_release(
    *, image_automation: bool | None, chart: str = "flux2", encode: bool = False
) -> dict[str, Any]:
    values: dict[str, Any] = {"sourceController": {"create": True}}
    if image_automation is not None:
        values["imageAutomationController"] = {"create": image_automation}
        values["imageReflectionController"] = {"create": image_automation}
    return {"chart": chart, "values": json.dumps(values) if encode else values}


WRITABLE_KEY = {"repository": "fleet", "title": "flux", "readOnly": False}
RELEASE = "kubernetes:helm.sh/v3:Release"


def test_image_automation_is_inferred_from_the_flux_release_in_the_stack() -> None:
    on, off = _flux_release(image_automation=True), _flux_release(image_automation=False)
    assert rules.flux_image_automation([(RELEASE, on)])
    assert rules.flux_image_automation([(RELEASE, _flux_release(image_automation=True, encode=True))])
    assert not rules.flux_image_automation([(RELEASE, off)])
    # The chart's own default is `imageAutomationController.create: true`: left out, it runs.
    assert rules.flux_image_automation([(RELEASE, _flux_release(image_automation=None))])
    assert rules.flux_image_automation([(RELEASE, {"chart": "flux2"})])
    assert not rules.flux_image_automation([(RELEASE, _flux_release(image_automation=True, chart="other"))])
    assert not rules.flux_image_automation([("kubernetes:core/v1:ConfigMap", on)])
    assert not rules.flux_image_automation([])


FLUX_INSTANCE = "kubernetes:fluxcd.controlplane.io/v1:FluxInstance"


def test_image_automation_is_inferred_from_a_flux_instance_in_the_stack() -> None:
    # `flux.install: operator`: the controllers are the instance's `spec.components`.
    base = ["source-controller", "kustomize-controller"]
    on = {"spec": {"components": [*base, "image-reflector-controller", "image-automation-controller"]}}
    assert rules.flux_image_automation([(FLUX_INSTANCE, on)])
    assert rules.flux_image_automation([(FLUX_INSTANCE, {"spec": json.dumps(on["spec"])})])
    assert not rules.flux_image_automation([(FLUX_INSTANCE, {"spec": {"components": base}})])
    # No components: the operator's defaults, which leave image automation out.
    assert not rules.flux_image_automation([(FLUX_INSTANCE, {"spec": {}})])


@pytest.mark.parametrize(
    ("stack", "config", "violations"),
    [
        pytest.param(
            [(RELEASE, _flux_release(image_automation=True))], None, 0, id="flux-image-automation-on"
        ),
        pytest.param(
            [(RELEASE, _flux_release(image_automation=False))], None, 1, id="flux-image-automation-off"
        ),
        pytest.param([], None, 1, id="no-flux-in-the-stack"),
        pytest.param([], {"imageAutomation": True}, 0, id="config-override-without-flux"),
        pytest.param(
            [(RELEASE, _flux_release(image_automation=False))],
            {"imageAutomation": True},
            0,
            id="override-wins",
        ),
    ],
)
def test_a_writable_deploy_key_passes_only_with_image_automation(
    stack: list[tuple[str, dict[str, Any]]], config: dict[str, Any] | None, violations: int
) -> None:
    resources = [*stack, (rules.DEPLOY_KEY_TYPE, WRITABLE_KEY)]
    pure = rules.stack_deploy_key_violations(
        [(t, _urn(t, i), p) for i, (t, p) in enumerate(resources)],
        DeployKeySettings.from_config(config or {}),
    )
    assert len(pure) == violations
    reported = _stack_reported(resources, config=config, only=pack.DEPLOY_KEY_READ_ONLY)
    assert reported == [(_urn(rules.DEPLOY_KEY_TYPE, len(stack)), ANY_MESSAGE)] * violations


def test_a_read_only_deploy_key_passes_whatever_the_stack() -> None:
    read_only = [(rules.DEPLOY_KEY_TYPE, {"readOnly": True}), (rules.DEPLOY_KEY_TYPE, {})]
    assert _stack_reported(read_only) == []
    flux = (RELEASE, _flux_release(image_automation=True))
    assert _stack_reported([flux, *read_only], only=pack.DEPLOY_KEY_READ_ONLY) == []


def test_the_alerting_policy_reports_on_the_stack_flux_install() -> None:
    flux = (RELEASE, _flux_release(image_automation=False))
    kustomization = (KUSTOMIZATION, _kustomization(prune=True, wait=True))

    ((urn, message),) = _stack_reported([flux, kustomization])
    assert urn == _urn(KUSTOMIZATION, 1) and "flux.notifications" in message
    assert _stack_reported([flux, kustomization, (ALERT, {"spec": {"eventSeverity": "error"}})]) == []


def test_the_wiring_selects_each_policy_by_resource_type() -> None:
    cases = {
        pack.FLUX_GIT_REPOSITORY_INTERVAL: (rules.GIT_REPOSITORY_TYPES[0], _git_repository("30s")),
        pack.NO_LATEST_IMAGE_TAG: ("kubernetes:core/v1:Pod", {"spec": _pod_spec("nginx")}),
        pack.EKS_NODE_GROUP_SIZE_BOUNDS: (
            rules.EKS_NODE_GROUP_TYPE,
            {**_node_group(0, 3, 1), "tags": PROD_TAGS},
        ),
        pack.FLUX_KUSTOMIZATION_PRUNE: (KUSTOMIZATION, _kustomization(prune=False, wait=True)),
        pack.FLUX_KUSTOMIZATION_HEALTH: (KUSTOMIZATION, _kustomization(prune=True)),
        pack.ENVIRONMENT_CONTRACT_VALID: (
            rules.CONFIG_MAP_TYPE,
            _environment_config_map({**_environment_data(), "baseDomain": "not a domain"}),
        ),
    }
    for name, (resource_type, props) in cases.items():
        assert set(_reported(_args(resource_type, props))) == {name}
    # The same bad content under a type no policy is about reports nothing.
    assert _reported(_args("kubernetes:core/v1:ConfigMap", {"spec": _pod_spec("nginx")})) == {}
    assert _reported(_args(KUSTOMIZATION, _kustomization(prune=True, wait=True))) == {}
    assert _reported(_args(rules.CONFIG_MAP_TYPE, _environment_config_map(_environment_data()))) == {}


def test_a_value_unknown_during_preview_is_left_to_the_policy_runtime() -> None:
    # The runtime turns UnknownValueError into an advisory "can't run during preview" note; a rule that
    # swallowed it would pass (or fail) on a value it never saw.
    props = unknown_checking_proxy(
        {
            "vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]},
            "tags": {"environment": UNKNOWN_STRING_VALUE},
        }
    )
    policy = _resource_policies()[pack.EKS_PROD_ENDPOINT_NOT_PUBLIC]

    reported: list[str] = []
    with pytest.raises(UnknownValueError):
        policy.validate(_args(rules.EKS_CLUSTER_TYPE, props), lambda message, _urn: reported.append(message))
    assert reported == []
    # An unknown tag value does not hide which tag keys are present.
    tags = unknown_checking_proxy({"tags": {"environment": UNKNOWN_STRING_VALUE, "Name": "vpc"}})
    assert rules.required_tag_violations("aws:ec2/vpc:Vpc", tags) == ["missing required tag: owner"]


# --- the pack as the engine starts it ---------------------------------------------------------------

PACK_DIR = Path(__file__).resolve().parents[2] / "gitops_infra" / "policy"


@pytest.fixture(scope="module")
def analyzer() -> Iterator[Any]:
    """``python gitops_infra/policy``, as the language host runs it, and a client of the port it prints."""
    process = subprocess.Popen([sys.executable, str(PACK_DIR)], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        process.kill()
        process.wait()


def _analyze(analyzer: Any, resource_type: str, props: dict[str, Any]) -> list[tuple[str, str]]:
    properties = struct_pb2.Struct()
    properties.update(props)
    request = analyzer_pb2.AnalyzeRequest(
        type=resource_type, properties=properties, urn=f"urn:pulumi:prod::p::{resource_type}::r", name="r"
    )
    response = analyzer.Analyze(request)
    return [
        (d.policyName, analyzer_pb2.EnforcementLevel.Name(d.enforcementLevel)) for d in response.diagnostics
    ]


def test_the_pack_serves_its_policies_over_the_analyzer_protocol(analyzer: Any) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == pack.PACK_NAME
    assert {p.name: analyzer_pb2.EnforcementLevel.Name(p.enforcementLevel) for p in info.policies} == {
        name: level.name for name, level in pack.ENFORCEMENT.items()
    }

    # Numbers cross the protocol as floats and one-item blocks as objects; the rules still apply.
    open_cluster = _cluster(cidrs=["0.0.0.0/0"], tags={"environment": "prod"})
    assert _analyze(analyzer, rules.EKS_CLUSTER_TYPE, open_cluster) == [
        (pack.EKS_PROD_ENDPOINT_NOT_PUBLIC, "MANDATORY"),
        (pack.EKS_SECRETS_ENCRYPTION, "MANDATORY"),
        (pack.AWS_REQUIRED_TAGS, "MANDATORY"),
    ]
    big = {**_node_group(3, 30, 3), "tags": PROD_TAGS}
    assert _analyze(analyzer, rules.EKS_NODE_GROUP_TYPE, big) == [
        (pack.EKS_NODE_GROUP_SIZE_BOUNDS, "MANDATORY")
    ]
    assert _analyze(analyzer, rules.EKS_NODE_GROUP_TYPE, {**_node_group(3, 6, 3), "tags": PROD_TAGS}) == []


def test_a_value_unknown_in_preview_becomes_an_advisory_note(analyzer: Any) -> None:
    cluster = _cluster(cidrs=["0.0.0.0/0"], tags={"environment": UNKNOWN_STRING_VALUE, "owner": "platform"})
    cluster["encryptionConfig"] = {"resources": ["secrets"]}

    assert _analyze(analyzer, rules.EKS_CLUSTER_TYPE, cluster) == [
        (pack.EKS_PROD_ENDPOINT_NOT_PUBLIC, "ADVISORY")
    ]
