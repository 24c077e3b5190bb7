"""The checks behind the gitops-infra policy pack, as plain functions of a resource's inputs.

Each ``*_violations`` function takes the resource's input properties (the camelCase wire names the engine
shows a policy) and its settings, and returns one message per violation; an empty list means the
resource passes. Nothing here imports ``pulumi_policy``, so every rule is unit-testable with plain dicts;
:mod:`gitops_infra.policy.pack` wires them into CrossGuard policies.

Values the engine cannot know yet (during a preview) arrive wrapped in pulumi-policy's proxies, which
raise ``UnknownValueError`` when read. The rules let that propagate on purpose: the policy runtime turns
it into an advisory "can't run during preview" note, and the rule runs for real on ``up``. So a rule
only reads the values it needs, and reads the cheap, always-known ones first.

One module per kind of resource a rule guards, each with its resource types, defaults and settings:

- ``_eks``: a prod cluster's API endpoint, secrets encryption, node group sizes;
- ``_tags``: the required tags on every taggable AWS resource;
- ``_deploy_key``: the fleet repository's deploy key is read-only unless image automation is on;
- ``_argocd``: an Application syncs automatically, an AppProject names its destinations, prod prunes and
  self-heals;
- ``_flux``: a GitRepository's interval, a Kustomization's prune and health checks, a stack's alerting;
- ``_images``: workloads' container images are pinned;
- ``_environment``: the ``environment`` ConfigMap holds the environment contract;
- ``_tenants``: no tenant's reconciler writes cluster-wide; every tenant Kustomization names its identity;
- ``_secrets``: no IAM policy reads every secret in Secrets Manager;
- ``_inputs``: reading inputs (a value at a path, lists, numbers, tags) for all of them.

This package is their one face: import the names from ``gitops_infra.policy.rules``.
"""

from __future__ import annotations

from gitops_infra.checks import GO_DURATION_PATTERN, parse_duration

from ._argocd import (
    APP_PROJECT_TYPES,
    APPLICATION_TYPES,
    ProdSyncSettings,
    application_automated_violations,
    project_destination_violations,
    stack_prod_sync_violations,
)
from ._deploy_key import (
    DEPLOY_KEY_TYPE,
    DeployKeySettings,
    deploy_key_violations,
    stack_deploy_key_violations,
)
from ._eks import (
    DEFAULT_MAX_NODES,
    DEFAULT_MIN_NODES,
    DEFAULT_PROD_ENVIRONMENTS,
    EKS_CLUSTER_TYPE,
    EKS_NODE_GROUP_TYPE,
    OPEN_CIDRS,
    EndpointSettings,
    NodeGroupSettings,
    endpoint_violations,
    node_group_size_violations,
    secrets_encryption_violations,
)
from ._environment import CONFIG_MAP_PATCH_TYPE, CONFIG_MAP_TYPE, environment_contract_violations
from ._flux import (
    ALERT_TYPES,
    DEFAULT_MAX_INTERVAL,
    DEFAULT_MIN_INTERVAL,
    FLUX_CHART,
    FLUX_IMAGE_AUTOMATION_VALUES,
    GIT_REPOSITORY_TYPES,
    HELM_RELEASE_TYPES,
    KUSTOMIZATION_TYPES,
    IntervalSettings,
    flux_image_automation,
    git_repository_interval_violations,
    kustomization_health_violations,
    kustomization_prune_violations,
    stack_alerting_violations,
)
from ._images import POD_SPEC_PATHS, image_problem, image_tag_violations
from ._inputs import ENVIRONMENT_TAG_KEYS, default_tags_of, effective_tag_keys
from ._secrets import IAM_POLICY_TYPES, secrets_read_violations
from ._tags import (
    ALWAYS_TAGGABLE_TYPES,
    DEFAULT_REQUIRED_TAGS,
    UNTAGGABLE_IN_COMPONENT,
    TagSettings,
    required_tag_violations,
)
from ._tenants import (
    CLUSTER_ROLE_BINDING_TYPES,
    CLUSTER_ROLE_TYPES,
    DEFAULT_FLUX_NAMESPACES,
    READ_ONLY_CLUSTER_ROLES,
    ROLE_BINDING_TYPES,
    ROLE_TYPES,
    TENANT_LABEL,
    TenantSettings,
    stack_tenant_binding_violations,
    stack_tenant_identity_violations,
)

__all__ = [
    "ALERT_TYPES",
    "ALWAYS_TAGGABLE_TYPES",
    "APPLICATION_TYPES",
    "APP_PROJECT_TYPES",
    "CLUSTER_ROLE_BINDING_TYPES",
    "CLUSTER_ROLE_TYPES",
    "CONFIG_MAP_PATCH_TYPE",
    "CONFIG_MAP_TYPE",
    "DEFAULT_FLUX_NAMESPACES",
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
    "IAM_POLICY_TYPES",
    "KUSTOMIZATION_TYPES",
    "OPEN_CIDRS",
    "POD_SPEC_PATHS",
    "READ_ONLY_CLUSTER_ROLES",
    "ROLE_BINDING_TYPES",
    "ROLE_TYPES",
    "TENANT_LABEL",
    "UNTAGGABLE_IN_COMPONENT",
    "DeployKeySettings",
    "EndpointSettings",
    "IntervalSettings",
    "NodeGroupSettings",
    "ProdSyncSettings",
    "TagSettings",
    "TenantSettings",
    "application_automated_violations",
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
    "project_destination_violations",
    "required_tag_violations",
    "secrets_encryption_violations",
    "secrets_read_violations",
    "stack_alerting_violations",
    "stack_deploy_key_violations",
    "stack_prod_sync_violations",
    "stack_tenant_binding_violations",
    "stack_tenant_identity_violations",
]
