"""The checks behind the gitops-infra policy pack, as plain functions of a resource's inputs.

Each ``*_violations`` function takes the resource's input properties (the camelCase wire names the engine
shows a policy) and its settings, and returns one message per violation; an empty list means the
resource passes. Nothing here imports ``pulumi_policy``, so every rule is unit-testable with plain dicts;
:mod:`gitops_infra.policy.pack` wires them into CrossGuard policies.

Values the engine cannot know yet (during a preview) arrive wrapped in pulumi-policy's proxies, which
raise ``UnknownValueError`` when read. The rules let that propagate on purpose: the policy runtime turns
it into an advisory "can't run during preview" note, and the rule runs for real on ``up``. So a rule
only reads the values it needs, and reads the cheap, always-known ones first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitops_infra.checks import GO_DURATION_PATTERN, PROD_ENVIRONMENTS, parse_duration
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, parse_environment

__all__ = [
    "ALERT_TYPES",
    "ALWAYS_TAGGABLE_TYPES",
    "CONFIG_MAP_PATCH_TYPE",
    "CONFIG_MAP_TYPE",
    "DEFAULT_MAX_INTERVAL",
    "DEFAULT_MAX_NODES",
    "DEFAULT_MIN_INTERVAL",
    "DEFAULT_MIN_NODES",
    "DEFAULT_PROD_ENVIRONMENTS",
    "DEFAULT_REQUIRED_TAGS",
    "DEPLOY_KEY_TYPE",
    "EKS_CLUSTER_TYPE",
    "EKS_NODE_GROUP_TYPE",
    "ENVIRONMENT_TAG_KEYS",
    "FLUX_CHART",
    "FLUX_IMAGE_AUTOMATION_VALUES",
    "GIT_REPOSITORY_TYPES",
    "GO_DURATION_PATTERN",
    "HELM_RELEASE_TYPES",
    "KUSTOMIZATION_TYPES",
    "OPEN_CIDRS",
    "POD_SPEC_PATHS",
    "UNTAGGABLE_IN_COMPONENT",
    "DeployKeySettings",
    "EndpointSettings",
    "IntervalSettings",
    "NodeGroupSettings",
    "TagSettings",
    "default_tags_of",
    "deploy_key_violations",
    "effective_tag_keys",
    "endpoint_violations",
    "environment_contract_violations",
    "flux_image_automation",
    "git_repository_interval_violations",
    "image_problem",
    "image_tag_violations",
    "kustomization_health_violations",
    "kustomization_prune_violations",
    "node_group_size_violations",
    "parse_duration",
    "required_tag_violations",
    "secrets_encryption_violations",
    "stack_alerting_violations",
    "stack_deploy_key_violations",
]

# --- resource types ---------------------------------------------------------------------------------

EKS_CLUSTER_TYPE = "aws:eks/cluster:Cluster"
"""The AWS resource under ``pulumi_eks.Cluster`` (a component, whose own inputs policies never see)."""
EKS_NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
"""The AWS resource under ``pulumi_eks.ManagedNodeGroup``."""
DEPLOY_KEY_TYPE = "github:index/repositoryDeployKey:RepositoryDeployKey"
HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release",)
FLUX_CHART = "flux2"
"""The fluxcd-community chart that installs the Flux controllers (``gitops_infra.components.flux``)."""
FLUX_IMAGE_AUTOMATION_VALUES = ("imageAutomationController", "create")
"""Where the chart's values turn on image-automation-controller, the only controller that pushes to git."""
GIT_REPOSITORY_TYPES = ("kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",)
KUSTOMIZATION_TYPES = ("kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",)
ALERT_TYPES = (
    "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Alert",
    "kubernetes:notification.toolkit.fluxcd.io/v1beta2:Alert",
)
"""Flux notification Alerts: v1beta3 is what the platform writes (``flux.notifications``)."""
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
CONFIG_MAP_PATCH_TYPE = "kubernetes:core/v1:ConfigMapPatch"
"""How the components declare their fixed-name ConfigMaps (``environment``): judged as a ConfigMap."""

POD_SPEC_PATHS: Mapping[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    "kubernetes:batch/v1:Job": ("spec", "template", "spec"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
"""Where each workload kind keeps its pod spec. Helm releases' values are not inspected."""
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

ALWAYS_TAGGABLE_TYPES = frozenset(
    {
        EKS_CLUSTER_TYPE,
        EKS_NODE_GROUP_TYPE,
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:ec2/internetGateway:InternetGateway",
        "aws:ec2/natGateway:NatGateway",
        "aws:ec2/eip:Eip",
        "aws:ec2/routeTable:RouteTable",
        "aws:ec2/securityGroup:SecurityGroup",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:iam/role:Role",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "aws:kms/key:Key",
    }
)
"""AWS types that take tags even when a program sets none.

A policy sees only the inputs a program set, so an ``aws:`` resource counts as taggable when it has a
``tags`` input or is one of these (the types the platform creates). Listing every taggable AWS type
would need the provider's schema, which is not available to a policy pack at run time.
"""

UNTAGGABLE_IN_COMPONENT: Mapping[str, frozenset[str]] = {
    # pulumi-eks's Cluster makes its IAM OIDC provider with no tags and no argument to set them
    # (`createCore` in nodejs/eks/cluster/cluster.ts); every other AWS child it makes takes `tags`.
    "eks:index:Cluster": frozenset({"aws:iam/openIdConnectProvider:OpenIdConnectProvider"}),
}
"""By component type, the always-taggable types it makes without a way for a program to tag them.

``aws-required-tags`` judges what a program can tag; one of these, made by that component, it cannot.
"""

# --- defaults and fixed names -----------------------------------------------------------------------

OPEN_CIDRS = frozenset({"0.0.0.0/0", "::/0"})
DEFAULT_PROD_ENVIRONMENTS = PROD_ENVIRONMENTS
ENVIRONMENT_TAG_KEYS = ("environment", "gitops-infra/environment")
"""Tags that name a resource's environment, first match wins; the platform writes the first."""
DEFAULT_REQUIRED_TAGS = ("environment", "owner")
DEFAULT_MIN_INTERVAL = "1m"
DEFAULT_MAX_INTERVAL = "10m"
DEFAULT_MIN_NODES = 1
DEFAULT_MAX_NODES = 20
SECRETS_RESOURCE = "secrets"
LATEST_TAG = "latest"


# --- helpers ----------------------------------------------------------------------------------------


def _at(props: Mapping[str, Any], *path: str) -> Any:
    """The value at ``path``, or ``None`` where a step is missing or not an object."""
    value: Any = props
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """``value`` as a list of objects; pulumi-aws renders one-item blocks as an object or a list."""
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item for item in value if isinstance(item, Mapping)]
    return []


def _names(config: Mapping[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A list-of-strings setting, or ``default`` when it is unset or empty."""
    return tuple(_strings(config.get(key))) or default


def _strings(value: Any) -> list[str]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item for item in value if isinstance(item, str)]
    return []


def _tag_keys(tags: Any) -> set[str]:
    """The keys of a ``tags`` input, also in the ``[{key, value}]`` form of autoscaling groups."""
    if isinstance(tags, Mapping):
        # Iterating a mapping reads no values, so an unknown tag value does not stop the tag check.
        return {str(key) for key in tags}
    return {item["key"] for item in _objects(tags) if isinstance(item.get("key"), str)}


def default_tags_of(provider_props: Mapping[str, Any] | None) -> dict[str, str]:
    """The AWS provider's ``defaultTags.tags``, which apply to every resource the provider manages.

    Provider inputs may carry object-valued config JSON-encoded, so both forms are accepted.
    """
    default_tags: Any = _at(provider_props or {}, "defaultTags")
    if isinstance(default_tags, str):
        try:
            default_tags = json.loads(default_tags)
        except ValueError:
            return {}
    tags = _at(default_tags, "tags") if isinstance(default_tags, Mapping) else None
    if not isinstance(tags, Mapping):
        return {}
    return {str(key): str(value) for key, value in tags.items()}


def effective_tag_keys(props: Mapping[str, Any], default_tags: Mapping[str, str] | None = None) -> set[str]:
    """The tag keys a resource ends up with: its own and its provider's default tags."""
    return set(default_tags or {}) | _tag_keys(props.get("tags"))


def _environment(props: Mapping[str, Any], default_tags: Mapping[str, str] | None) -> str | None:
    own = props.get("tags")
    for key in ENVIRONMENT_TAG_KEYS:
        if isinstance(own, Mapping) and key in own:
            return str(own[key])
        if default_tags and key in default_tags:
            return str(default_tags[key])
    return None


def _int(value: Any) -> int | None:
    # Numbers reach a policy through protobuf Structs, so whole numbers arrive as floats (3.0).
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


# --- settings (policy config) -----------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointSettings:
    """Config of ``eks-prod-endpoint-not-public``."""

    prod_environments: tuple[str, ...] = DEFAULT_PROD_ENVIRONMENTS
    """Environment tag values that mean prod (config ``prodEnvironments``)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> EndpointSettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(prod_environments=_names(config, "prodEnvironments", DEFAULT_PROD_ENVIRONMENTS))


@dataclass(frozen=True)
class DeployKeySettings:
    """Config of ``deploy-key-read-only``."""

    image_automation: bool = False
    """Flux image automation runs, so Flux must push to git (config ``imageAutomation``).

    The stack policy also infers it from the Flux install in the same stack; this setting forces it on
    for a stack whose Flux is installed elsewhere (another stack, or ``flux bootstrap``).
    """

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> DeployKeySettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(image_automation=config.get("imageAutomation") is True)


@dataclass(frozen=True)
class IntervalSettings:
    """Config of ``flux-git-repository-interval``: the inclusive range a GitRepository interval must be in."""

    min_interval: str = DEFAULT_MIN_INTERVAL
    max_interval: str = DEFAULT_MAX_INTERVAL

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> IntervalSettings:
        """Settings from a policy's config (``minInterval``, ``maxInterval``), with defaults."""
        return cls(
            min_interval=str(config.get("minInterval") or DEFAULT_MIN_INTERVAL),
            max_interval=str(config.get("maxInterval") or DEFAULT_MAX_INTERVAL),
        )


@dataclass(frozen=True)
class TagSettings:
    """Config of ``aws-required-tags``."""

    required: tuple[str, ...] = DEFAULT_REQUIRED_TAGS
    """Tag keys every taggable AWS resource must carry (config ``requiredTags``)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TagSettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(required=_names(config, "requiredTags", DEFAULT_REQUIRED_TAGS))


@dataclass(frozen=True)
class NodeGroupSettings:
    """Config of ``eks-node-group-size-bounds``: the smallest ``minSize`` and largest ``maxSize`` allowed."""

    min_nodes: int = DEFAULT_MIN_NODES
    max_nodes: int = DEFAULT_MAX_NODES

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> NodeGroupSettings:
        """Settings from a policy's config (``minNodes``, ``maxNodes``), with defaults."""
        low, high = _int(config.get("minNodes")), _int(config.get("maxNodes"))
        return cls(
            min_nodes=DEFAULT_MIN_NODES if low is None else low,
            max_nodes=DEFAULT_MAX_NODES if high is None else high,
        )


# --- rules ------------------------------------------------------------------------------------------


def endpoint_violations(
    props: Mapping[str, Any],
    settings: EndpointSettings = EndpointSettings(),
    default_tags: Mapping[str, str] | None = None,
) -> list[str]:
    """A prod EKS cluster's public API endpoint must not be open to the whole internet.

    The endpoint is open when ``vpcConfig.endpointPublicAccess`` is not ``false`` (AWS defaults it to
    true) and ``vpcConfig.publicAccessCidrs`` is empty (AWS then allows ``0.0.0.0/0``) or contains
    ``0.0.0.0/0`` or ``::/0``.

    A cluster is prod when its ``environment`` tag (or ``gitops-infra/environment``, from its own tags or
    the provider's default tags) is one of ``settings.prod_environments``. A cluster with no environment
    tag counts as prod: the rule fails closed rather than letting an untagged cluster through.
    """
    vpc = _at(props, "vpcConfig")
    vpc = vpc if isinstance(vpc, Mapping) else {}
    if vpc.get("endpointPublicAccess", True) is False:
        return []
    cidrs = _strings(vpc.get("publicAccessCidrs"))
    open_cidrs = sorted(OPEN_CIDRS.intersection(cidrs)) if cidrs else ["0.0.0.0/0 (the AWS default)"]
    if not open_cidrs:
        return []
    environment = _environment(props, default_tags)
    if environment is not None and environment not in settings.prod_environments:
        return []
    which = f"environment {environment!r}" if environment else "no environment tag, so treated as prod"
    return [
        f"the public API endpoint of this EKS cluster ({which}) is open to {', '.join(open_cidrs)}; "
        "set vpcConfig.endpointPublicAccess to false or allow-list CIDRs in vpcConfig.publicAccessCidrs"
    ]


def secrets_encryption_violations(props: Mapping[str, Any]) -> list[str]:
    """An EKS cluster encrypts Kubernetes secrets with KMS: ``encryptionConfig.resources`` has ``secrets``."""
    blocks = _objects(props.get("encryptionConfig"))
    if not blocks:
        return ["this EKS cluster has no encryptionConfig; encrypt Kubernetes secrets with a KMS key"]
    if any(SECRETS_RESOURCE in _strings(block.get("resources")) for block in blocks):
        return []
    return [f"this EKS cluster's encryptionConfig.resources does not include {SECRETS_RESOURCE!r}"]


def deploy_key_violations(
    props: Mapping[str, Any],
    settings: DeployKeySettings = DeployKeySettings(),
) -> list[str]:
    """A deploy key must be read-only unless Flux image automation is on (only then does Flux push).

    ``readOnly`` left unset is read-only: the GitHub provider defaults it to true.
    """
    if props.get("readOnly", True) is not False or settings.image_automation:
        return []
    return [
        "this deploy key can write to the repository, but image automation is off (no Flux install in this "
        "stack enables imageAutomationController); set readOnly to true, or set the policy's "
        "imageAutomation config to true if Flux image automation pushes to git"
    ]


def flux_image_automation(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> bool:
    """True when a Flux install among ``resources`` (``(type, props)`` pairs) runs image automation.

    A Flux install is a Helm release of the ``flux2`` chart; image automation is on unless its values set
    ``imageAutomationController.create`` to false: the chart's own default is true (the platform always
    sets it, but a release written elsewhere may not). Values may arrive JSON-encoded, as object-valued
    inputs sometimes do; values that cannot be read count as the chart's defaults.
    """
    for resource_type, props in resources:
        if resource_type not in HELM_RELEASE_TYPES or props.get("chart") != FLUX_CHART:
            continue
        values: Any = props.get("values")
        if isinstance(values, str):
            try:
                values = json.loads(values)
            except ValueError:
                values = None
        create = _at(values, *FLUX_IMAGE_AUTOMATION_VALUES) if isinstance(values, Mapping) else None
        if create is not False:
            return True
    return False


def stack_deploy_key_violations(
    resources: Iterable[tuple[str, str, Mapping[str, Any]]],
    settings: DeployKeySettings = DeployKeySettings(),
) -> list[tuple[str, str]]:
    """``deploy-key-read-only`` over a whole stack: ``(urn, message)`` for each writable deploy key.

    ``resources`` are ``(type, urn, props)`` triples. Image automation is on when ``settings`` says so
    (the explicit override) or when the stack's own Flux install enables it (:func:`flux_image_automation`).
    """
    resources = list(resources)
    inferred = flux_image_automation((resource_type, props) for resource_type, _, props in resources)
    effective = DeployKeySettings(image_automation=settings.image_automation or inferred)
    return [
        (urn, message)
        for resource_type, urn, props in resources
        if resource_type == DEPLOY_KEY_TYPE
        for message in deploy_key_violations(props, effective)
    ]


def git_repository_interval_violations(
    props: Mapping[str, Any],
    settings: IntervalSettings = IntervalSettings(),
) -> list[str]:
    """A Flux GitRepository's ``spec.interval`` must be within ``[min_interval, max_interval]``.

    Shorter intervals hammer the git host; longer ones make drift from git go unnoticed for too long.
    """
    low, high = parse_duration(settings.min_interval), parse_duration(settings.max_interval)
    interval = _at(props, "spec", "interval")
    if interval is None:
        return ["this GitRepository has no spec.interval"]
    try:
        value = parse_duration(interval)
    except ValueError as exc:
        return [f"spec.interval: {exc}"]
    if low <= value <= high:
        return []
    return [
        f"spec.interval {interval!r} is outside {settings.min_interval}..{settings.max_interval}; "
        "Flux would poll the git host too often or notice changes too late"
    ]


def image_problem(image: str) -> str | None:
    """What is wrong with a container image reference, or ``None`` when it is pinned.

    A digest (``@sha256:...``) pins an image whatever its tag. Otherwise the tag is what follows the last
    ``:`` of the last path segment, so a registry port (``registry:5000/app``) is not mistaken for one.
    """
    if "@" in image:
        return None
    last_segment = image.rsplit("/", 1)[-1]
    _, colon, tag = last_segment.rpartition(":")
    if not colon or not tag:
        return "has no tag (so it runs whatever 'latest' is)"
    if tag == LATEST_TAG:
        return f"uses the tag {LATEST_TAG!r}"
    return None


def image_tag_violations(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """No container of a workload may run an image tagged ``latest`` or without a tag.

    Covers the kinds in :data:`POD_SPEC_PATHS`; other types pass.
    """
    path = POD_SPEC_PATHS.get(resource_type)
    if path is None:
        return []
    pod_spec = _at(props, *path)
    if not isinstance(pod_spec, Mapping):
        return []
    messages: list[str] = []
    for list_name in CONTAINER_LISTS:
        for container in _objects(pod_spec.get(list_name)):
            image = container.get("image")
            if not isinstance(image, str):
                continue
            if (problem := image_problem(image)) is not None:
                name = container.get("name", "?")
                messages.append(f"{list_name} {name!r}: image {image!r} {problem}; pin a version or a digest")
    return messages


def _ancestor_types(urn: str) -> tuple[str, ...]:
    """The types of a resource's ancestors, from its URN (``...::<parent type>$<type>::<name>``)."""
    parts = urn.split("::")
    return tuple(parts[2].split("$")[:-1]) if len(parts) >= 4 else ()


def required_tag_violations(
    resource_type: str,
    props: Mapping[str, Any],
    settings: TagSettings = TagSettings(),
    default_tags: Mapping[str, str] | None = None,
    urn: str = "",
) -> list[str]:
    """Every taggable AWS resource carries the required tags, counting the provider's default tags.

    Taggable means an ``aws:`` type with a ``tags`` input or one of :data:`ALWAYS_TAGGABLE_TYPES`, and
    taggable by the program: one a component makes with no way to tag it
    (:data:`UNTAGGABLE_IN_COMPONENT`, read from the ``urn``) is not judged, unless it carries tags.
    """
    if not resource_type.startswith("aws:"):
        return []
    if "tags" not in props and resource_type not in ALWAYS_TAGGABLE_TYPES:
        return []
    if "tags" not in props and any(
        resource_type in UNTAGGABLE_IN_COMPONENT.get(ancestor, ()) for ancestor in _ancestor_types(urn)
    ):
        return []
    present = effective_tag_keys(props, default_tags)
    missing = [key for key in settings.required if key not in present]
    if not missing:
        return []
    return [f"missing required tag{'s' if len(missing) > 1 else ''}: {', '.join(missing)}"]


def node_group_size_violations(
    props: Mapping[str, Any],
    settings: NodeGroupSettings = NodeGroupSettings(),
) -> list[str]:
    """A node group's ``scalingConfig`` stays within the configured bounds and is self-consistent."""
    scaling = _at(props, "scalingConfig")
    if not isinstance(scaling, Mapping):
        return ["this node group has no scalingConfig"]
    low, high, desired = (_int(scaling.get(key)) for key in ("minSize", "maxSize", "desiredSize"))
    messages: list[str] = []
    if low is not None and low < settings.min_nodes:
        messages.append(f"scalingConfig.minSize {low} is below the allowed minimum {settings.min_nodes}")
    if high is not None and high > settings.max_nodes:
        messages.append(f"scalingConfig.maxSize {high} is above the allowed maximum {settings.max_nodes}")
    if low is not None and high is not None and low > high:
        messages.append(f"scalingConfig.minSize {low} is greater than maxSize {high}")
    elif desired is not None and (
        (low is not None and desired < low) or (high is not None and desired > high)
    ):
        messages.append(f"scalingConfig.desiredSize {desired} is outside minSize..maxSize ({low}..{high})")
    return messages


def kustomization_prune_violations(props: Mapping[str, Any]) -> list[str]:
    """A Flux Kustomization sets ``spec.prune: true``.

    Without prune, Flux never deletes what it applied: an object removed from git stays on the cluster.
    """
    if _at(props, "spec", "prune") is True:
        return []
    return [
        "this Kustomization does not set spec.prune to true, so objects removed from git stay on the "
        "cluster and the cluster drifts from the repository; set spec.prune: true"
    ]


def kustomization_health_violations(props: Mapping[str, Any]) -> list[str]:
    """A Flux Kustomization has ``spec.healthChecks`` (non-empty) or sets ``spec.wait: true``.

    Without either, Flux reports the Kustomization Ready as soon as its objects are applied.
    """
    if _at(props, "spec", "wait") is True:
        return []
    checks = _at(props, "spec", "healthChecks")
    if isinstance(checks, Sequence) and not isinstance(checks, str) and len(checks) > 0:
        return []
    return [
        "this Kustomization has no spec.healthChecks and does not set spec.wait, so Flux reports it "
        "Ready as soon as its objects are applied; if its path deploys workloads, list them in "
        "spec.healthChecks or set spec.wait: true so Ready means they are running"
    ]


def stack_alerting_violations(
    resources: Iterable[tuple[str, str, Mapping[str, Any]]],
) -> list[tuple[str, str]]:
    """``flux-sync-alerting`` over a whole stack: a stack that installs Flux has a notification Alert.

    ``resources`` are ``(type, urn, props)`` triples. A stack installs Flux when it has a Helm release of
    the ``flux2`` chart or a Flux GitRepository or Kustomization (it bootstraps a sync). The one
    violation is reported on the first Kustomization, else the flux2 release, else the GitRepository.
    """
    kustomizations: list[str] = []
    releases: list[str] = []
    repositories: list[str] = []
    for resource_type, urn, props in resources:
        if resource_type in ALERT_TYPES:
            return []
        if resource_type in KUSTOMIZATION_TYPES:
            kustomizations.append(urn)
        elif resource_type in GIT_REPOSITORY_TYPES:
            repositories.append(urn)
        elif resource_type in HELM_RELEASE_TYPES and props.get("chart") == FLUX_CHART:
            releases.append(urn)
    flux = [*kustomizations, *releases, *repositories]
    if not flux:
        return []
    return [
        (
            flux[0],
            "this stack installs Flux but has no notification Alert, so sync failures (a broken "
            "manifest, an unreachable repository) go unnoticed; set flux.notifications in the stack "
            "config to send them to a chat or webhook",
        )
    ]


def environment_contract_violations(props: Mapping[str, Any]) -> list[str]:
    """The ``environment`` ConfigMap's ``data`` parses as the current environment contract.

    App teams read it back with ``parse_environment``, so data it rejects breaks them at run time.
    ConfigMaps with any other ``metadata.name`` pass.
    """
    if _at(props, "metadata", "name") != ENVIRONMENT_CONFIGMAP:
        return []
    data = props.get("data")
    if not isinstance(data, Mapping):
        return [
            f"the {ENVIRONMENT_CONFIGMAP} ConfigMap has no data, so app teams cannot read the environment "
            "contract from it; write its data with environment_data"
        ]
    try:
        parse_environment(data)
    except ValueError as exc:
        return [str(exc)]
    return []
