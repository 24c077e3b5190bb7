"""Every name a package exported at commit d3775ac (issue 45, before the layout changed) is still there.

A user's ``from gitops_infra.config import GitSpec`` must not break when a module moves or splits. The
lists are written out, not read from ``__all__``: a name dropped from ``__all__`` must fail here too. Each
name must import from its package and be the very object its defining module holds, not a copy that
could drift from it.

The first four are the packages whose names are the public API; the shared rules (``checks``) and the
EKS component (``components.eks_cluster``) are held to the same, as they became packages at the same time.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import sys
import types
from typing import Any

import pytest

EXPORTED_AT_D3775AC: dict[str, tuple[str, ...]] = {
    "gitops_infra": (
        "CONTRACT_VERSION",
        "FLUX_CHART_VERSION",
        "FLUX_NAMESPACE",
        "FLUX_VERSION",
        "GITHUB_KNOWN_HOSTS",
        "CapacityType",
        "ConfigError",
        "DeployKey",
        "DeployKeyArgs",
        "EksCluster",
        "EksClusterArgs",
        "EndpointAccess",
        "Environment",
        "EnvironmentConfig",
        "EnvironmentConfigArgs",
        "EnvironmentContractError",
        "ExistingVpcArgs",
        "FleetRepository",
        "FleetRepositoryArgs",
        "FluxBootstrap",
        "FluxBootstrapArgs",
        "FluxComponent",
        "GitHubAppSecretOptions",
        "GitOpsInfraError",
        "InstallOptions",
        "KeyAlgorithm",
        "LogType",
        "NatGateways",
        "NewVpcArgs",
        "NodeGroupArgs",
        "NotificationArgs",
        "Platform",
        "RepositoryVisibility",
        "SourceSecretOptions",
        "StackConfig",
        "StackSecrets",
        "SyncOptions",
        "TaintEffect",
        "build_platform",
        "contract_schema",
        "environment_data",
        "load_config",
        "load_stack_config",
        "parse_environment",
        "read_environment",
    ),
    "gitops_infra.automation": (
        "ALL_LAYERS",
        "COMPUTED",
        "DEFAULT_DRAIN_TIMEOUT",
        "DEFAULT_PARALLEL",
        "PREVIOUS",
        "SECRET",
        "ConfigStep",
        "Deployment",
        "DeploymentKind",
        "DeploymentResult",
        "DestroyPreview",
        "DestroyResult",
        "DrainResult",
        "DriftCause",
        "DriftKind",
        "DriftReport",
        "DriftedResource",
        "EventCallback",
        "FleetDrift",
        "FleetPreview",
        "FleetSpec",
        "FleetStack",
        "FluxStatus",
        "GitOpsReport",
        "GitOpsSource",
        "GitOpsSync",
        "Interruption",
        "KubeObject",
        "Layer",
        "Matrix",
        "MatrixEntry",
        "Operation",
        "Orphan",
        "Plan",
        "PlannedResource",
        "PreviewResult",
        "PromotionEvidence",
        "PromotionResult",
        "PropertyDiff",
        "RecoverResult",
        "RefreshResult",
        "Shard",
        "StackDrift",
        "StackError",
        "StackLock",
        "StackName",
        "StackOptions",
        "StackPreview",
        "StackStatus",
        "Step",
        "SweepResult",
        "TenantSync",
        "UpResult",
        "cancel_on_signals",
        "changed_since",
        "destroy",
        "detect_drift",
        "detect_drift_all",
        "fleet_matrix",
        "fleet_stacks",
        "history",
        "indexed_job",
        "merge_drift_reports",
        "offline_plan",
        "parse_selector",
        "parse_stack_name",
        "preview",
        "preview_all",
        "project_stacks",
        "promote",
        "recover",
        "refresh",
        "require_promoted",
        "rollback_to_commit",
        "status",
        "status_all",
        "up",
    ),
    "gitops_infra.components": (
        "FLUX_CHART_VERSION",
        "FLUX_NAMESPACE",
        "FLUX_VERSION",
        "GITHUB_KNOWN_HOSTS",
        "CapacityType",
        "DeployKey",
        "DeployKeyArgs",
        "EksCluster",
        "EksClusterArgs",
        "EndpointAccess",
        "EnvironmentConfig",
        "EnvironmentConfigArgs",
        "ExistingVpcArgs",
        "FleetRepository",
        "FleetRepositoryArgs",
        "FluxBootstrap",
        "FluxBootstrapArgs",
        "FluxComponent",
        "GitHubAppSecretOptions",
        "InstallOptions",
        "KeyAlgorithm",
        "LogType",
        "NatGateways",
        "NewVpcArgs",
        "NodeGroupArgs",
        "NotificationArgs",
        "RepositoryVisibility",
        "SourceSecretOptions",
        "SyncOptions",
        "TaintEffect",
        "read_environment",
    ),
    "gitops_infra.config": (
        "PROJECT",
        "ClusterSpec",
        "CreateRepositorySpec",
        "DeployKeySpec",
        "EndpointSpec",
        "ExistingVpcSpec",
        "FluxSpec",
        "GitHubAppAuthSpec",
        "GitHubAppSpec",
        "GitHubSpec",
        "GitSpec",
        "HealthCheckSpec",
        "NetworkSpec",
        "NewVpcSpec",
        "NodeGroupSpec",
        "NotificationsSpec",
        "StackConfig",
        "StackSecrets",
        "TaintSpec",
        "TolerationSpec",
        "load_config",
        "load_stack_config",
        "named_secret_keys",
        "plan_config",
        "platform_name",
    ),
}
# The shared rules and the EKS component: moved into packages at the same time, so held to the same.
ALSO_KEPT: dict[str, tuple[str, ...]] = {
    "gitops_infra.checks": (
        "AL2_GONE_FROM_KUBERNETES",
        "AL2_SUCCESSORS",
        "AUTONAME_SUFFIX_LENGTH",
        "AVAILABILITY_ZONE_PATTERN",
        "BRANCH_PATTERN",
        "CHART_VERSION_PATTERN",
        "CUSTOM_AMI_TYPE",
        "DEFAULT_BRANCH",
        "DEFAULT_SSH_PORT",
        "DELETE_MARGIN",
        "DNS_LABEL_PATTERN",
        "EKS_AMI_TYPES",
        "EKS_CLUSTER_NAME_MAX",
        "EKS_NODE_GROUP_NAME_MAX",
        "FLEET_SECTION",
        "GITHUB_API_URL_PATTERN",
        "GITHUB_HOST",
        "GITHUB_ID_MAX",
        "GO_DURATION_PATTERN",
        "IAM_ROLE_NAME_MAX",
        "IAM_ROLE_PATTERN",
        "KUBERNETES_MINOR_PATTERN",
        "LABEL_KEY_PATTERN",
        "LABEL_VALUE_PATTERN",
        "MAX_NODE_GROUP_SIZE",
        "MAX_READY_TIMEOUT",
        "MAX_ZONES",
        "MIN_DELETE_TIMEOUT",
        "MIN_VPC_PREFIX",
        "MIN_ZONES",
        "NOTIFICATION_CONTROLLER",
        "PLAINTEXT_PRIVATE_KEY",
        "PRIVATE_KEY_PATTERN",
        "PROD_ENVIRONMENTS",
        "READY_MARGIN",
        "REPOSITORY_PATTERN",
        "REQUIRED_FLUX_COMPONENTS",
        "SSH_URL_PATTERN",
        "TOLERATION_EFFECTS",
        "ami_type_problem",
        "ami_type_version_problem",
        "availability_zone_problem",
        "availability_zones_problem",
        "branch_problem",
        "chart_version_problem",
        "cluster_component_name_problem",
        "default_ready_timeout",
        "delete_timeout",
        "dns_label_problem",
        "flux_components_extra_problem",
        "flux_components_problem",
        "format_duration",
        "github_api_url_problem",
        "github_app_url_problem",
        "github_host",
        "github_id",
        "github_id_problem",
        "go_duration_problem",
        "iam_role_problem",
        "instance_types_problem",
        "ipv4_cidr_problem",
        "is_prod",
        "known_hosts_for_url_problem",
        "known_hosts_problem",
        "kubernetes_floor_problem",
        "kubernetes_minor_problem",
        "kubernetes_version_problem",
        "label_problem",
        "max_cluster_component_name",
        "max_node_group_name",
        "node_group_name_problem",
        "node_group_names_problem",
        "node_group_size_problems",
        "notifications_problem",
        "parse_duration",
        "private_key_paths",
        "private_subnets_problem",
        "ready_timeout_after_timeout_problem",
        "ready_timeout_problem",
        "relative_path_problem",
        "repository_name_problem",
        "ssh_url_host",
        "ssh_url_problem",
        "toleration_problems",
        "vpc_cidr_problem",
    ),
    "gitops_infra.components.eks_cluster": (
        "ACCESS_ENTRY_TYPE",
        "ALL_LOG_TYPES",
        "CLUSTER_ADMIN_POLICY_ARN",
        "DEFAULT_AMI_TYPE",
        "DEFAULT_DISK_SIZE_GIB",
        "NODE_ROLE_POLICY_ARNS",
        "POLICY_ASSOCIATION_TYPE",
        "CapacityType",
        "EksCluster",
        "EksClusterArgs",
        "EndpointAccess",
        "ExistingVpcArgs",
        "LogType",
        "NatGateways",
        "NewVpcArgs",
        "NodeGroupArgs",
        "TaintEffect",
        "access_entry_key",
        "positional_key_aliases",
        "subnet_cidrs",
    ),
}
# Tenants (issue 47): added since, and held to the same from then on.
ADDED_FOR_TENANTS: dict[str, tuple[str, ...]] = {
    "gitops_infra": ("Tenant", "TenantArgs"),
    "gitops_infra.components": ("Tenant", "TenantArgs"),
    "gitops_infra.config": ("LimitSpec", "TenantRepositorySpec", "TenantSourceSpec", "TenantSpec"),
    "gitops_infra.checks": (
        "LIMIT_TYPES",
        "QUANTITY_PATTERN",
        "RESERVED_NAMESPACES",
        "github_ssh_repository",
        "paths_overlap",
        "quantity_problem",
        "rbac_name_problem",
        "reserved_namespace_problem",
        "resource_name_problem",
        "tenant_namespaces_problems",
    ),
    "gitops_infra.components.flux": ("CLUSTER_ADMIN", "NO_REMOTE_BASES", "multi_tenancy_values"),
    "gitops_infra.defaults": (
        "DEFAULT_SERVICE_ACCOUNT",
        "DEFAULT_TENANT_ROLE",
        "FLUX_TENANT_LABEL",
        "ROOT_SERVICE_ACCOUNT",
        "TENANT_LABEL",
        "TENANT_PATH_TEMPLATE",
        "tenant_path",
    ),
}
# Secrets (issue 48): the `secrets` section, Sealed Secrets, External Secrets and their shared rules, held
# to the same from then on.
ADDED_FOR_SECRETS: dict[str, tuple[str, ...]] = {
    "gitops_infra": ("ExternalSecrets", "ExternalSecretsArgs", "SealedSecrets", "SealedSecretsArgs"),
    "gitops_infra.components": (
        "ExternalSecrets",
        "ExternalSecretsArgs",
        "SealedSecrets",
        "SealedSecretsArgs",
    ),
    "gitops_infra.config": ("ExternalSecretsSpec", "SealedSecretsSpec", "SecretsSpec"),
    "gitops_infra.local": ("ExternalSecretsController",),
    "gitops_infra.checks": (
        "AWS_REGION_PATTERN",
        "KMS_KEY_ARN_PATTERN",
        "READ_SECRET_ACTION",
        "SECRET_PREFIX_PATTERN",
        "aws_region_problem",
        "grants_action",
        "kms_key_arn_problem",
        "kms_key_region",
        "reads_every_secret",
        "secret_prefix_problem",
        "secrets_arn",
    ),
    "gitops_infra.defaults": (
        "CLUSTER_SECRET_STORE",
        "EXTERNAL_SECRETS_NAMESPACE",
        "SEALED_SECRETS_CHART_VERSION",
        "SEALED_SECRETS_KEY_LABEL",
        "SEALED_SECRETS_NAMESPACE",
        "SEALED_SECRETS_VERSION",
    ),
}

# The Sealed Secrets keys a stack's config holds (issue 48): the key source, keygen and the cert.
ADDED_FOR_SEALING_KEYS: dict[str, tuple[str, ...]] = {
    "gitops_infra": ("HeldKey",),
    "gitops_infra.components": ("HeldKey",),
    "gitops_infra.config": ("SealingKeyPair",),
    "gitops_infra.automation": (
        "SEALING_CERT_OUTPUT",
        "SealingCert",
        "SealingKey",
        "generate_sealing_key",
        "new_sealing_key_pair",
        "sealing_cert",
    ),
    "gitops_infra.automation.results": ("SealingCert", "SealingKey"),
    "gitops_infra.checks": (
        "MIN_SEALING_KEY_BITS",
        "SEALING_KEY_FIELDS",
        "parse_sealing_keys",
        "sealing_key_pair_problem",
        "sealing_keys_problems",
    ),
    "gitops_infra.defaults": ("SEALED_SECRETS_KEYS_KEY", "SealingKeySource"),
}

# Image automation for real (issue 49): the registry on loopback its tests push images to.
ADDED_FOR_IMAGE_AUTOMATION: dict[str, tuple[str, ...]] = {"gitops_infra.local": ("ImageRegistry",)}
# Instant sync (issue 49): flux.receiver, the Receiver and its GitHub webhook.
ADDED_FOR_RECEIVER: dict[str, tuple[str, ...]] = {
    "gitops_infra.config": ("ReceiverSpec",),
    "gitops_infra.checks": (
        "RECEIVER_URL_PATTERN",
        "RECEIVER_WEBHOOK_PATH_PREFIX",
        "receiver_url_problem",
        "receiver_webhook_path",
    ),
    "gitops_infra.components.flux": (
        "RECEIVER_API_VERSION",
        "RECEIVER_EVENTS",
        "RECEIVER_SECRET_NAME",
        "RECEIVER_SERVICE",
        "RECEIVER_TOKEN_KEY",
        "WEBHOOK_EVENTS",
        "Receiver",
        "build_receiver",
        "build_repository_webhook",
        "receiver_manifest",
    ),
}
# The Flux Operator as an install mode (issue 49).
ADDED_FOR_FLUX_OPERATOR: dict[str, tuple[str, ...]] = {
    "gitops_infra": ("OperatorOptions",),
    "gitops_infra.components": ("OperatorOptions",),
    "gitops_infra.components.flux": (
        "FLUX_INSTANCE_API_VERSION",
        "FLUX_INSTANCE_NAME",
        "FLUX_OPERATOR_CHART",
        "FLUX_OPERATOR_CHART_VERSION",
        "FLUX_OPERATOR_FLUX_VERSION",
        "FLUX_OPERATOR_VERSION",
        "FLUX_REGISTRY",
        "RUNTIME_INFO_CONFIGMAP",
        "OperatorInstall",
        "OperatorOptions",
        "build_operator",
        "flux_instance_manifest",
        "runtime_info_data",
    ),
    "gitops_infra.local": ("FluxOperator",),
    "gitops_infra.checks": ("flux_operator_version_problem",),
    "gitops_infra.defaults": (
        "FLUX_OPERATOR_BUNDLED",
        "FLUX_OPERATOR_CHART_VERSION",
        "FLUX_OPERATOR_FLUX_VERSION",
        "FLUX_OPERATOR_VERSION",
    ),
}

NAMES = [
    (package, name)
    for table in (
        EXPORTED_AT_D3775AC,
        ALSO_KEPT,
        ADDED_FOR_TENANTS,
        ADDED_FOR_SECRETS,
        ADDED_FOR_SEALING_KEYS,
        ADDED_FOR_IMAGE_AUTOMATION,
        ADDED_FOR_RECEIVER,
        ADDED_FOR_FLUX_OPERATOR,
    )
    for package, names in table.items()
    for name in names
]


@functools.cache
def _import_every_module() -> None:
    import gitops_infra

    for info in pkgutil.walk_packages(gitops_infra.__path__, "gitops_infra."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def _defining_modules(value: Any, name: str) -> list[str]:
    """The modules of ``gitops_infra`` (not packages: a package only re-exports) that hold ``value`` as
    ``name``: where a constant lives."""
    _import_every_module()
    return sorted(
        module.__name__
        for module in list(sys.modules.values())
        if isinstance(module, types.ModuleType)
        and module.__name__.startswith("gitops_infra.")
        and not hasattr(module, "__path__")
        and getattr(module, name, None) is value
    )


@pytest.mark.parametrize(("package", "name"), NAMES, ids=lambda x: x)
def test_each_exported_name_still_imports_from_its_package_as_the_object_it_is(
    package: str, name: str
) -> None:
    module = importlib.import_module(package)
    value = getattr(module, name)  # what `from <package> import <name>` does
    if inspect.isclass(value) or inspect.isfunction(value):
        # A class or function knows where it is defined: the package hands out that very object, under
        # its own name (not a stand-in or a wrapper put in its place).
        assert (value.__module__.split(".")[0], value.__qualname__) == ("gitops_infra", name)
        assert getattr(importlib.import_module(value.__module__), value.__qualname__) is value
    else:
        # A constant (a version, a tuple of enum members): the same object as in the module it lives in.
        assert _defining_modules(value, name) != [], f"{package}.{name} is held by no module of gitops_infra"


@pytest.mark.parametrize(
    "package", sorted({**EXPORTED_AT_D3775AC, **ALSO_KEPT, **ADDED_FOR_TENANTS, **ADDED_FOR_SECRETS})
)
def test_the_lists_are_the_package_s_names_at_least(package: str) -> None:
    # A name may be added to __all__; none of these may leave it.
    names = {
        name
        for table in (EXPORTED_AT_D3775AC, ALSO_KEPT, ADDED_FOR_TENANTS, ADDED_FOR_SECRETS)
        for name in table.get(package, ())
    }
    assert set(names) <= set(importlib.import_module(package).__all__)
