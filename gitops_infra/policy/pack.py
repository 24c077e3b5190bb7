"""The gitops-infra CrossGuard policies: names, enforcement levels, config schemas and wiring.

Each policy is a ``ResourceValidationPolicy`` whose validate function picks the resource types it is
about and reports each message its rule in :mod:`gitops_infra.policy.rules` returns, except two that
depend on other resources and so are ``StackValidationPolicy``s that see the whole stack and report by
URN: ``deploy-key-read-only`` (whether a deploy key may write depends on the Flux install and its image
automation) and ``flux-sync-alerting`` (whether a Flux install has an Alert). ``__main__.py`` serves
:func:`policies` as the ``gitops-infra`` pack.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import rules

__all__ = [
    "AWS_REQUIRED_TAGS",
    "DEPLOY_KEY_READ_ONLY",
    "EKS_NODE_GROUP_SIZE_BOUNDS",
    "EKS_PROD_ENDPOINT_NOT_PUBLIC",
    "EKS_SECRETS_ENCRYPTION",
    "ENFORCEMENT",
    "ENVIRONMENT_CONTRACT_VALID",
    "FLUX_GIT_REPOSITORY_INTERVAL",
    "FLUX_KUSTOMIZATION_HEALTH",
    "FLUX_KUSTOMIZATION_PRUNE",
    "FLUX_SYNC_ALERTING",
    "NO_LATEST_IMAGE_TAG",
    "PACK_NAME",
    "policies",
]

PACK_NAME = "gitops-infra"

EKS_PROD_ENDPOINT_NOT_PUBLIC = "eks-prod-endpoint-not-public"
EKS_SECRETS_ENCRYPTION = "eks-secrets-encryption"
DEPLOY_KEY_READ_ONLY = "deploy-key-read-only"
FLUX_GIT_REPOSITORY_INTERVAL = "flux-git-repository-interval"
NO_LATEST_IMAGE_TAG = "no-latest-image-tag"
AWS_REQUIRED_TAGS = "aws-required-tags"
EKS_NODE_GROUP_SIZE_BOUNDS = "eks-node-group-size-bounds"
FLUX_KUSTOMIZATION_PRUNE = "flux-kustomization-prune"
FLUX_KUSTOMIZATION_HEALTH = "flux-kustomization-health"
FLUX_SYNC_ALERTING = "flux-sync-alerting"
ENVIRONMENT_CONTRACT_VALID = "environment-contract-valid"

ENFORCEMENT: dict[str, EnforcementLevel] = {
    # Security and cost gates block an update.
    EKS_PROD_ENDPOINT_NOT_PUBLIC: EnforcementLevel.MANDATORY,
    EKS_SECRETS_ENCRYPTION: EnforcementLevel.MANDATORY,
    DEPLOY_KEY_READ_ONLY: EnforcementLevel.MANDATORY,
    NO_LATEST_IMAGE_TAG: EnforcementLevel.MANDATORY,
    EKS_NODE_GROUP_SIZE_BOUNDS: EnforcementLevel.MANDATORY,
    # Correctness gates: without prune the cluster drifts from git, and an environment ConfigMap the
    # contract rejects breaks every app that reads it.
    FLUX_KUSTOMIZATION_PRUNE: EnforcementLevel.MANDATORY,
    ENVIRONMENT_CONTRACT_VALID: EnforcementLevel.MANDATORY,
    # Hygiene warns: a sync interval out of range, a Ready that does not wait for workloads, or sync
    # failures nobody hears of are worth fixing, not an outage. Tags gate: the platform always sets
    # them, so a resource without them was made outside it.
    FLUX_GIT_REPOSITORY_INTERVAL: EnforcementLevel.ADVISORY,
    FLUX_KUSTOMIZATION_HEALTH: EnforcementLevel.ADVISORY,
    FLUX_SYNC_ALERTING: EnforcementLevel.ADVISORY,
    AWS_REQUIRED_TAGS: EnforcementLevel.MANDATORY,
}
"""Each policy's default enforcement level; a policy pack config file may override it per stack."""

Check = Callable[[ResourceValidationArgs], Iterable[str]]


def _validation(types: Collection[str] | None, check: Check) -> ResourceValidation:
    """A validate function: ``check`` on resources of ``types`` (all if ``None``), each message reported."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if types is not None and args.resource_type not in types:
            return
        for message in check(args):
            report_violation(message, None)

    return validate


def _default_tags(args: ResourceValidationArgs) -> dict[str, str]:
    provider = args.provider
    if provider is None or not provider.resource_type.startswith("pulumi:providers:aws"):
        return {}
    return rules.default_tags_of(provider.props)


def _policy(
    name: str,
    description: str,
    validate: ResourceValidation,
    config: dict[str, dict[str, Any]] | None = None,
) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=ENFORCEMENT[name],
        config_schema=PolicyConfigSchema(properties=config) if config else None,
    )


def _validate_deploy_keys(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """``deploy-key-read-only``: each writable deploy key, unless the stack's Flux (or config) has image
    automation on."""
    settings = rules.DeployKeySettings.from_config(args.get_config())
    resources = [(r.resource_type, r.urn, r.props) for r in args.resources]
    for urn, message in rules.stack_deploy_key_violations(resources, settings):
        report_violation(message, urn)


def _validate_alerting(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """``flux-sync-alerting``: a stack that installs Flux has a notification Alert."""
    resources = [(r.resource_type, r.urn, r.props) for r in args.resources]
    for urn, message in rules.stack_alerting_violations(resources):
        report_violation(message, urn)


def policies() -> list[Policy]:
    """The pack's policies, each with its enforcement level and (where configurable) config schema."""
    return [
        _policy(
            EKS_PROD_ENDPOINT_NOT_PUBLIC,
            "A prod EKS cluster's API endpoint is not open to 0.0.0.0/0.",
            _validation(
                {rules.EKS_CLUSTER_TYPE},
                lambda args: rules.endpoint_violations(
                    args.props, rules.EndpointSettings.from_config(args.get_config()), _default_tags(args)
                ),
            ),
            {
                "prodEnvironments": {
                    "type": "array",
                    "items": {"type": "string"},
                    "default": list(rules.DEFAULT_PROD_ENVIRONMENTS),
                    "description": "Values of the environment tag that mean prod; untagged counts as prod.",
                }
            },
        ),
        _policy(
            EKS_SECRETS_ENCRYPTION,
            "EKS encrypts Kubernetes secrets with a KMS key.",
            _validation(
                {rules.EKS_CLUSTER_TYPE}, lambda args: rules.secrets_encryption_violations(args.props)
            ),
        ),
        StackValidationPolicy(
            name=DEPLOY_KEY_READ_ONLY,
            description=(
                "The fleet repository's deploy key is read-only unless Flux image automation is on: "
                "inferred from the stack's flux2 Helm release (imageAutomationController.create), or "
                "forced by config."
            ),
            validate=_validate_deploy_keys,
            enforcement_level=ENFORCEMENT[DEPLOY_KEY_READ_ONLY],
            config_schema=PolicyConfigSchema(
                properties={
                    "imageAutomation": {
                        "type": "boolean",
                        "default": False,
                        "description": (
                            "Force image automation on, for a stack whose Flux is installed elsewhere; "
                            "a flux2 release in the stack with imageAutomationController.create turns "
                            "it on by itself."
                        ),
                    }
                }
            ),
        ),
        _policy(
            FLUX_GIT_REPOSITORY_INTERVAL,
            "A Flux GitRepository polls git no more often than minInterval and no less than maxInterval.",
            _validation(
                set(rules.GIT_REPOSITORY_TYPES),
                lambda args: rules.git_repository_interval_violations(
                    args.props, rules.IntervalSettings.from_config(args.get_config())
                ),
            ),
            {
                "minInterval": {
                    "type": "string",
                    "pattern": rules.GO_DURATION_PATTERN,
                    "default": rules.DEFAULT_MIN_INTERVAL,
                    "description": "The shortest allowed spec.interval, as a Go duration.",
                },
                "maxInterval": {
                    "type": "string",
                    "pattern": rules.GO_DURATION_PATTERN,
                    "default": rules.DEFAULT_MAX_INTERVAL,
                    "description": "The longest allowed spec.interval, as a Go duration.",
                },
            },
        ),
        _policy(
            NO_LATEST_IMAGE_TAG,
            "No workload runs an image tagged 'latest' or without a tag.",
            _validation(
                set(rules.POD_SPEC_PATHS),
                lambda args: rules.image_tag_violations(args.resource_type, args.props),
            ),
        ),
        _policy(
            AWS_REQUIRED_TAGS,
            "Every taggable AWS resource carries the required tags (environment and owner by default).",
            _validation(
                None,
                lambda args: rules.required_tag_violations(
                    args.resource_type,
                    args.props,
                    rules.TagSettings.from_config(args.get_config()),
                    _default_tags(args),
                ),
            ),
            {
                "requiredTags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "default": list(rules.DEFAULT_REQUIRED_TAGS),
                    "description": "Tag keys every taggable AWS resource must carry.",
                }
            },
        ),
        _policy(
            EKS_NODE_GROUP_SIZE_BOUNDS,
            "EKS node group sizes stay within the configured bounds, with minSize <= desiredSize <= maxSize.",
            _validation(
                {rules.EKS_NODE_GROUP_TYPE},
                lambda args: rules.node_group_size_violations(
                    args.props, rules.NodeGroupSettings.from_config(args.get_config())
                ),
            ),
            {
                "minNodes": {
                    "type": "integer",
                    "minimum": 0,
                    "default": rules.DEFAULT_MIN_NODES,
                    "description": "The smallest minSize a node group may have.",
                },
                "maxNodes": {
                    "type": "integer",
                    "minimum": 1,
                    "default": rules.DEFAULT_MAX_NODES,
                    "description": "The largest maxSize a node group may have.",
                },
            },
        ),
        _policy(
            FLUX_KUSTOMIZATION_PRUNE,
            "A Flux Kustomization sets spec.prune, so objects removed from git are removed from the cluster.",
            _validation(
                set(rules.KUSTOMIZATION_TYPES), lambda args: rules.kustomization_prune_violations(args.props)
            ),
        ),
        _policy(
            FLUX_KUSTOMIZATION_HEALTH,
            "A Flux Kustomization has spec.healthChecks or spec.wait, so Ready means its workloads run.",
            _validation(
                set(rules.KUSTOMIZATION_TYPES), lambda args: rules.kustomization_health_violations(args.props)
            ),
        ),
        StackValidationPolicy(
            name=FLUX_SYNC_ALERTING,
            description=(
                "A stack that installs Flux (a flux2 Helm release, GitRepository or Kustomization) has a "
                "notification Alert, so sync failures are reported (flux.notifications)."
            ),
            validate=_validate_alerting,
            enforcement_level=ENFORCEMENT[FLUX_SYNC_ALERTING],
        ),
        _policy(
            ENVIRONMENT_CONTRACT_VALID,
            "The 'environment' ConfigMap's data parses as the current environment contract.",
            _validation(
                {rules.CONFIG_MAP_TYPE}, lambda args: rules.environment_contract_violations(args.props)
            ),
        ),
    ]
