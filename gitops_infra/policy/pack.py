"""The gitops-infra CrossGuard policies, one :class:`PolicySpec` record each, in :data:`POLICY_SPECS`.

A record holds all there is to a policy: its name, description, default enforcement level, what it looks
at and its rule from :mod:`gitops_infra.policy.rules`, and its config schema. So adding a policy is adding
a name constant and a record, and :func:`policies` builds the ``pulumi_policy`` objects from the records.

Most policies check one resource at a time (:class:`OnResources`). Four depend on other resources and
so see the whole stack and report by URN (:class:`OnStack`): ``deploy-key-read-only`` (whether a deploy
key may write depends on the Flux install and its image automation), ``flux-sync-alerting`` (whether a
Flux install has an Alert), and the two tenant policies (who is a tenant, and what a role grants, other
resources tell). ``__main__.py`` serves :func:`policies` as the ``gitops-infra`` pack.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import rules

__all__ = [
    "ARGOCD_AUTOMATED_SYNC",
    "ARGOCD_PROD_PRUNE_SELF_HEAL",
    "ARGOCD_PROJECT_NAMED_DESTINATIONS",
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
    "IAM_SECRETS_READ_SCOPED",
    "NO_LATEST_IMAGE_TAG",
    "PACK_NAME",
    "POLICY_SPECS",
    "TENANT_KUSTOMIZATION_IDENTITY",
    "TENANT_NO_CLUSTER_WIDE_WRITE",
    "OnResources",
    "OnStack",
    "PolicySpec",
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
TENANT_NO_CLUSTER_WIDE_WRITE = "tenant-no-cluster-wide-write"
TENANT_KUSTOMIZATION_IDENTITY = "tenant-kustomization-identity"
IAM_SECRETS_READ_SCOPED = "iam-secrets-read-scoped"
ARGOCD_AUTOMATED_SYNC = "argocd-automated-sync"
ARGOCD_PROJECT_NAMED_DESTINATIONS = "argocd-project-named-destinations"
ARGOCD_PROD_PRUNE_SELF_HEAL = "argocd-prod-prune-self-heal"


@dataclass(frozen=True)
class OnResources:
    """A policy that checks one resource at a time: each of ``types``, or every resource if ``None``.

    ``rule`` gives the message of each violation; they are reported on the resource itself.
    """

    types: frozenset[str] | None
    rule: Callable[[ResourceValidationArgs], Iterable[str]]

    def validate(self, args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        """The ``ResourceValidation`` of the policy: ``rule`` on a resource of ``types``."""
        if self.types is not None and args.resource_type not in self.types:
            return
        for message in self.rule(args):
            report_violation(message, None)


@dataclass(frozen=True)
class OnStack:
    """A policy that sees the whole stack, because its verdict on a resource depends on others.

    ``rule`` gives ``(urn, message)`` for each violation, reported on the resource that URN names.
    """

    rule: Callable[[StackValidationArgs], Iterable[tuple[str, str]]]

    def validate(self, args: StackValidationArgs, report_violation: ReportViolation) -> None:
        """The ``StackValidation`` of the policy: ``rule`` on the stack."""
        for urn, message in self.rule(args):
            report_violation(message, urn)


@dataclass(frozen=True)
class PolicySpec:
    """One policy of the pack, all in one place; :func:`policies` builds it into a ``pulumi_policy`` one.

    ``level`` is the default enforcement level (a policy pack config file may override it per stack).
    ``config`` is the JSON schema of each config property, with the default the rule falls back to when
    the engine passes none; a policy without settings has none.

    Example::

        PolicySpec(
            "no-public-buckets",
            "No S3 bucket is public.",
            EnforcementLevel.MANDATORY,
            OnResources(frozenset({"aws:s3/bucket:Bucket"}), lambda args: bucket_violations(args.props)),
        )
    """

    name: str
    description: str
    level: EnforcementLevel
    check: OnResources | OnStack
    config: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def _setting(schema_type: str, default: Any, description: str, **constraints: Any) -> dict[str, Any]:
    """The JSON schema of one config property: its type, ``constraints`` (``items``, ``pattern``,
    ``minimum``), the default its rule falls back to, and its description."""
    return {"type": schema_type, **constraints, "default": default, "description": description}


def _string_list(default: Iterable[str], description: str) -> dict[str, Any]:
    """The JSON schema of a config property that holds a list of strings."""
    return _setting("array", list(default), description, items={"type": "string"})


def _default_tags(args: ResourceValidationArgs) -> dict[str, str]:
    provider = args.provider
    if provider is None or not provider.resource_type.startswith("pulumi:providers:aws"):
        return {}
    return rules.default_tags_of(provider.props)


def _stack_resources(args: StackValidationArgs) -> list[tuple[str, str, Mapping[str, Any]]]:
    """The stack's resources as the stack rules take them: ``(type, urn, props)``."""
    return [(r.resource_type, r.urn, r.props) for r in args.resources]


_FLUX_NAMESPACES = _string_list(
    rules.DEFAULT_FLUX_NAMESPACES,
    "Namespaces of Flux's own Kustomizations, besides those the stack labels part of Flux; a Kustomization "
    "elsewhere is a tenant's.",
)

# Levels: security, cost and correctness gates are MANDATORY and block an update; hygiene is ADVISORY,
# worth fixing but not an outage.
POLICY_SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        EKS_PROD_ENDPOINT_NOT_PUBLIC,
        "A prod EKS cluster's API endpoint is not open to 0.0.0.0/0.",
        EnforcementLevel.MANDATORY,  # security
        OnResources(
            frozenset({rules.EKS_CLUSTER_TYPE}),
            lambda args: rules.endpoint_violations(
                args.props, rules.EndpointSettings.from_config(args.get_config()), _default_tags(args)
            ),
        ),
        config={
            "prodEnvironments": _string_list(
                rules.DEFAULT_PROD_ENVIRONMENTS,
                "Values of the environment tag that mean prod; untagged counts as prod.",
            )
        },
    ),
    PolicySpec(
        EKS_SECRETS_ENCRYPTION,
        "EKS encrypts Kubernetes secrets with a KMS key.",
        EnforcementLevel.MANDATORY,  # security
        OnResources(
            frozenset({rules.EKS_CLUSTER_TYPE}), lambda args: rules.secrets_encryption_violations(args.props)
        ),
    ),
    PolicySpec(
        DEPLOY_KEY_READ_ONLY,
        (
            "The fleet repository's deploy key is read-only unless Flux image automation is on: "
            "inferred from the stack's flux2 Helm release (imageAutomationController.create) or its "
            "FluxInstance (spec.components), or forced by config."
        ),
        EnforcementLevel.MANDATORY,  # security: a writable key lets the cluster push to the fleet repo
        OnStack(
            lambda args: rules.stack_deploy_key_violations(
                _stack_resources(args), rules.DeployKeySettings.from_config(args.get_config())
            )
        ),
        config={
            "imageAutomation": _setting(
                "boolean",
                False,
                "Force image automation on, for a stack whose Flux is installed elsewhere; "
                "a flux2 release in the stack with imageAutomationController.create turns "
                "it on by itself.",
            )
        },
    ),
    PolicySpec(
        FLUX_GIT_REPOSITORY_INTERVAL,
        "A Flux GitRepository polls git no more often than minInterval and no less than maxInterval.",
        EnforcementLevel.ADVISORY,  # hygiene: a sync interval out of range
        OnResources(
            frozenset(rules.GIT_REPOSITORY_TYPES),
            lambda args: rules.git_repository_interval_violations(
                args.props, rules.IntervalSettings.from_config(args.get_config())
            ),
        ),
        config={
            "minInterval": _setting(
                "string",
                rules.DEFAULT_MIN_INTERVAL,
                "The shortest allowed spec.interval, as a Go duration.",
                pattern=rules.GO_DURATION_PATTERN,
            ),
            "maxInterval": _setting(
                "string",
                rules.DEFAULT_MAX_INTERVAL,
                "The longest allowed spec.interval, as a Go duration.",
                pattern=rules.GO_DURATION_PATTERN,
            ),
        },
    ),
    PolicySpec(
        NO_LATEST_IMAGE_TAG,
        "No workload runs an image tagged 'latest' or without a tag.",
        EnforcementLevel.MANDATORY,  # security
        OnResources(
            frozenset(rules.POD_SPEC_PATHS),
            lambda args: rules.image_tag_violations(args.resource_type, args.props),
        ),
    ),
    PolicySpec(
        AWS_REQUIRED_TAGS,
        "Every taggable AWS resource carries the required tags (environment and owner by default).",
        # A gate, not hygiene: the platform always sets them, so a resource without them was made
        # outside it.
        EnforcementLevel.MANDATORY,
        OnResources(
            None,
            lambda args: rules.required_tag_violations(
                args.resource_type,
                args.props,
                rules.TagSettings.from_config(args.get_config()),
                _default_tags(args),
                args.urn,
            ),
        ),
        config={
            "requiredTags": _string_list(
                rules.DEFAULT_REQUIRED_TAGS, "Tag keys every taggable AWS resource must carry."
            )
        },
    ),
    PolicySpec(
        EKS_NODE_GROUP_SIZE_BOUNDS,
        "EKS node group sizes stay within the configured bounds, with minSize <= desiredSize <= maxSize.",
        EnforcementLevel.MANDATORY,  # cost
        OnResources(
            frozenset({rules.EKS_NODE_GROUP_TYPE}),
            lambda args: rules.node_group_size_violations(
                args.props, rules.NodeGroupSettings.from_config(args.get_config())
            ),
        ),
        config={
            "minNodes": _setting(
                "integer", rules.DEFAULT_MIN_NODES, "The smallest minSize a node group may have.", minimum=0
            ),
            "maxNodes": _setting(
                "integer", rules.DEFAULT_MAX_NODES, "The largest maxSize a node group may have.", minimum=1
            ),
        },
    ),
    PolicySpec(
        FLUX_KUSTOMIZATION_PRUNE,
        "A Flux Kustomization sets spec.prune, so objects removed from git are removed from the cluster.",
        EnforcementLevel.MANDATORY,  # correctness: without prune the cluster drifts from git
        OnResources(
            frozenset(rules.KUSTOMIZATION_TYPES),
            lambda args: rules.kustomization_prune_violations(args.props),
        ),
    ),
    PolicySpec(
        FLUX_KUSTOMIZATION_HEALTH,
        "A Flux Kustomization has spec.healthChecks or spec.wait, so Ready means its workloads run.",
        EnforcementLevel.ADVISORY,  # hygiene: a Ready that does not wait for workloads
        OnResources(
            frozenset(rules.KUSTOMIZATION_TYPES),
            lambda args: rules.kustomization_health_violations(args.props),
        ),
    ),
    PolicySpec(
        FLUX_SYNC_ALERTING,
        (
            "A stack that installs Flux (a flux2 Helm release, GitRepository or Kustomization) has a "
            "notification Alert, so sync failures are reported (flux.notifications)."
        ),
        EnforcementLevel.ADVISORY,  # hygiene: sync failures nobody hears of
        OnStack(lambda args: rules.stack_alerting_violations(_stack_resources(args))),
    ),
    PolicySpec(
        ENVIRONMENT_CONTRACT_VALID,
        "The 'environment' ConfigMap's data parses as the current environment contract.",
        # Correctness: an environment ConfigMap the contract rejects breaks every app that reads it.
        EnforcementLevel.MANDATORY,
        OnResources(
            frozenset({rules.CONFIG_MAP_TYPE, rules.CONFIG_MAP_PATCH_TYPE}),
            lambda args: rules.environment_contract_violations(args.props),
        ),
    ),
    PolicySpec(
        TENANT_NO_CLUSTER_WIDE_WRITE,
        (
            "No tenant's reconciler may write cluster-wide: no ClusterRoleBinding of a ClusterRole that "
            "writes, no RoleBinding of cluster-admin (or every verb on every resource), no role in another "
            "tenant's namespace."
        ),
        EnforcementLevel.MANDATORY,  # security: a tenant that writes cluster-wide is not a tenant
        OnStack(
            lambda args: rules.stack_tenant_binding_violations(
                _stack_resources(args), rules.TenantSettings.from_config(args.get_config())
            )
        ),
        config={"fluxNamespaces": _FLUX_NAMESPACES},
    ),
    PolicySpec(
        TENANT_KUSTOMIZATION_IDENTITY,
        (
            "Every tenant Kustomization (labelled gitops-infra.io/tenant, or outside Flux's namespaces) "
            "names the ServiceAccount it runs as (spec.serviceAccountName)."
        ),
        EnforcementLevel.MANDATORY,  # security: without it a tenant's git applies as Flux itself
        OnStack(
            lambda args: rules.stack_tenant_identity_violations(
                _stack_resources(args), rules.TenantSettings.from_config(args.get_config())
            )
        ),
        config={"fluxNamespaces": _FLUX_NAMESPACES},
    ),
    PolicySpec(
        IAM_SECRETS_READ_SCOPED,
        (
            "No IAM policy allows reading every secret in Secrets Manager: a grant of GetSecretValue names "
            "a secret name prefix (arn:aws:secretsmanager:<region>:<account>:secret:<prefix>*)."
        ),
        EnforcementLevel.MANDATORY,  # security: one cluster would read every environment's secrets
        OnResources(
            frozenset(rules.IAM_POLICY_TYPES), lambda args: rules.secrets_read_violations(args.props)
        ),
    ),
    PolicySpec(
        ARGOCD_AUTOMATED_SYNC,
        "An Argo CD Application syncs automatically (spec.syncPolicy.automated): commits reach the cluster.",
        EnforcementLevel.MANDATORY,  # correctness: without it git and the cluster part ways silently
        OnResources(
            frozenset(rules.APPLICATION_TYPES),
            lambda args: rules.application_automated_violations(args.props),
        ),
    ),
    PolicySpec(
        ARGOCD_PROJECT_NAMED_DESTINATIONS,
        "An Argo CD AppProject names each destination: no '*' namespace or server.",
        EnforcementLevel.MANDATORY,  # security: a wildcard lets the fleet's root deploy into kube-system
        OnResources(
            frozenset(rules.APP_PROJECT_TYPES),
            lambda args: rules.project_destination_violations(args.props),
        ),
    ),
    PolicySpec(
        ARGOCD_PROD_PRUNE_SELF_HEAL,
        (
            "In prod, every Argo CD Application prunes and self-heals (spec.syncPolicy.automated.prune and "
            "selfHeal), so prod is what git says."
        ),
        EnforcementLevel.MANDATORY,  # correctness: prod drifting from git is what GitOps is there to stop
        OnStack(
            lambda args: rules.stack_prod_sync_violations(
                _stack_resources(args), rules.ProdSyncSettings.from_config(args.get_config())
            )
        ),
        config={
            "prodEnvironments": _string_list(
                rules.DEFAULT_PROD_ENVIRONMENTS, "Environment names that mean prod."
            )
        },
    ),
)
"""Every policy of the pack, in the pack's order: :func:`policies` and :data:`ENFORCEMENT` keep it."""

ENFORCEMENT: dict[str, EnforcementLevel] = {spec.name: spec.level for spec in POLICY_SPECS}
"""Each policy's default enforcement level; a policy pack config file may override it per stack."""


def _build(spec: PolicySpec) -> Policy:
    """The ``pulumi_policy`` policy that ``spec`` describes."""
    # A copy per build: the schema's defaults are lists, and no built policy should share them with the
    # record or with another build.
    schema = PolicyConfigSchema(properties=copy.deepcopy(dict(spec.config))) if spec.config else None
    # Both constructors take (name, description, validate, enforcement_level, config_schema) first.
    if isinstance(spec.check, OnStack):
        return StackValidationPolicy(spec.name, spec.description, spec.check.validate, spec.level, schema)
    return ResourceValidationPolicy(spec.name, spec.description, spec.check.validate, spec.level, schema)


def policies() -> list[Policy]:
    """The pack's policies, built from :data:`POLICY_SPECS`, each with its level and config schema."""
    return [_build(spec) for spec in POLICY_SPECS]
