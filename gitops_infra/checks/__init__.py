"""The small rules that more than one edge enforces, each written once. No Pulumi import.

The stack config models (:mod:`gitops_infra.config`), the component Args and the policy pack all call
these, so a value one of them accepts is never refused by another, in the manner of awsx's single
``validateVpcArgs`` gate. Each check returns ``None`` when the value passes, or what was expected, as a
short phrase (``"must be a Go duration such as 30s, 5m or 1h"``); the caller puts its own key path in front
(``gitops-infra:flux.interval`` in the config, ``FluxBootstrapArgs.interval`` in the Args). A check never
echoes the value it refused: config values may be secret-adjacent, and the key path says where to look.

One module per thing checked; every name is also this package's, so callers write ``checks.<name>``::

    durations     Go durations, and the waits derived from Flux's timeout
    network       CIDR blocks, VPC size, availability zones, subnets
    node_groups   node group sizes, names, instance and AMI types
    aws_names     the names AWS derives from ours, within its limits
    iam           IAM role and principal ARNs, the cluster's admins
    kubernetes    DNS labels, labels, tolerations, Kubernetes versions
    git           the URLs Flux clones, branches, paths, SSH host keys
    github        GitHub hosts and API URLs, App IDs, repository names
    flux          Flux's controllers, chart version, Kubernetes floor, reconcile requests
    receiver      the webhook Receiver's public URL and the path it serves
    flux_operator the Flux releases the pinned Flux Operator installs
    argocd        Argo CD's chart version, the root's retry limit, an AppProject's destinations
    stacks        prod stacks, plaintext private keys, the fleet section
    tenants       tenants' namespaces and roles, quota quantities, nested sync paths
    secrets_manager  AWS regions, KMS key ARNs, secret name prefixes, IAM grants that read every secret
    sealing_keys  the Sealed Secrets key pairs a stack's config holds

Example::

    from gitops_infra import checks

    problem = checks.go_duration_problem(value)
    if problem is not None:
        raise ValueError(f"flux.interval: {problem}")
"""

from gitops_infra.checks.argocd import (
    MAX_RETRY_LIMIT,
    REFRESH_ANNOTATION,
    WILDCARD_DESTINATION,
    argo_cd_chart_version_problem,
    project_destination_problem,
    retry_factor_problem,
    retry_limit_problem,
)
from gitops_infra.checks.aws_names import (
    AUTONAME_SUFFIX_LENGTH,
    EKS_CLUSTER_NAME_MAX,
    EKS_NODE_GROUP_NAME_MAX,
    IAM_ROLE_NAME_MAX,
    cluster_component_name_problem,
    max_cluster_component_name,
    max_node_group_name,
    node_group_name_problem,
)
from gitops_infra.checks.durations import (
    DELETE_MARGIN,
    GO_DURATION_HINT,
    GO_DURATION_PATTERN,
    GO_MAX_DURATION_SECONDS,
    MAX_READY_TIMEOUT,
    MIN_DELETE_TIMEOUT,
    READY_MARGIN,
    default_ready_timeout,
    delete_timeout,
    format_duration,
    go_duration_problem,
    parse_duration,
    ready_timeout_after_timeout_problem,
    ready_timeout_problem,
)
from gitops_infra.checks.flux import (
    CHART_VERSION_PATTERN,
    NOTIFICATION_CONTROLLER,
    RECONCILE_REQUEST_ANNOTATION,
    RECONCILE_REQUEST_PATTERN,
    REQUIRED_FLUX_COMPONENTS,
    chart_version_problem,
    flux_components_extra_problem,
    flux_components_problem,
    kubernetes_floor_problem,
    notifications_problem,
    reconcile_request_problem,
)
from gitops_infra.checks.flux_operator import flux_operator_version_problem
from gitops_infra.checks.git import (
    BRANCH_PATTERN,
    DEFAULT_BRANCH,
    DEFAULT_SSH_PORT,
    GIT_PROVIDERS,
    HTTPS_URL_PATTERN,
    SSH_URL_PATTERN,
    branch_problem,
    git_auth_url_problem,
    git_provider_problem,
    git_url_problem,
    https_url_problem,
    known_hosts_for_url_problem,
    known_hosts_problem,
    relative_path_problem,
    ssh_url_host,
    ssh_url_problem,
)
from gitops_infra.checks.github import (
    GITHUB_API_URL_PATTERN,
    GITHUB_HOST,
    GITHUB_ID_MAX,
    REPOSITORY_PATTERN,
    github_api_url_problem,
    github_app_url_problem,
    github_host,
    github_id,
    github_id_problem,
    github_ssh_repository,
    repository_name_problem,
)
from gitops_infra.checks.iam import (
    ADMINS_NEED_CREATOR,
    IAM_PRINCIPAL_HINT,
    IAM_PRINCIPAL_PATTERN,
    IAM_ROLE_HINT,
    IAM_ROLE_PATTERN,
    admins_problem,
    iam_principal_problem,
    iam_role_problem,
    principal_key,
)
from gitops_infra.checks.kubernetes import (
    DNS_LABEL_HINT,
    DNS_LABEL_PATTERN,
    KUBERNETES_MINOR_PATTERN,
    LABEL_KEY_PATTERN,
    LABEL_VALUE_PATTERN,
    TOLERATION_EFFECTS,
    dns_label_problem,
    kubernetes_minor_problem,
    kubernetes_version_problem,
    label_problem,
    toleration_problems,
)
from gitops_infra.checks.network import (
    AVAILABILITY_ZONE_PATTERN,
    MAX_ZONES,
    MIN_VPC_PREFIX,
    MIN_ZONES,
    availability_zone_problem,
    availability_zones_problem,
    ipv4_cidr_problem,
    private_subnets_problem,
    vpc_cidr_problem,
)
from gitops_infra.checks.node_groups import (
    AL2_GONE_FROM_KUBERNETES,
    AL2_SUCCESSORS,
    CUSTOM_AMI_TYPE,
    EKS_AMI_TYPES,
    MAX_NODE_GROUP_SIZE,
    ami_type_problem,
    ami_type_version_problem,
    instance_types_problem,
    node_group_names_problem,
    node_group_size_problems,
)
from gitops_infra.checks.receiver import (
    RECEIVER_URL_PATTERN,
    RECEIVER_WEBHOOK_PATH_PREFIX,
    receiver_url_problem,
    receiver_webhook_path,
)
from gitops_infra.checks.sealing_keys import (
    MIN_SEALING_KEY_BITS,
    SEALING_KEY_FIELDS,
    parse_sealing_keys,
    sealing_key_pair_problem,
    sealing_keys_problems,
)
from gitops_infra.checks.secrets_manager import (
    AWS_REGION_PATTERN,
    KMS_KEY_ARN_PATTERN,
    READ_SECRET_ACTION,
    SECRET_PREFIX_PATTERN,
    aws_region_problem,
    grants_action,
    kms_key_arn_problem,
    kms_key_region,
    reads_every_secret,
    secret_prefix_problem,
    secrets_arn,
)
from gitops_infra.checks.stacks import (
    FLEET_SECTION,
    PLAINTEXT_PRIVATE_KEY,
    PRIVATE_KEY_PATTERN,
    PROD_ENVIRONMENTS,
    is_prod,
    private_key_paths,
)
from gitops_infra.checks.tenants import (
    LIMIT_TYPES,
    QUANTITY_PATTERN,
    RESERVED_NAMESPACES,
    paths_overlap,
    quantity_problem,
    rbac_name_problem,
    reserved_namespace_problem,
    resource_name_problem,
    tenant_namespaces_problems,
)

__all__ = [
    "ADMINS_NEED_CREATOR",
    "AL2_GONE_FROM_KUBERNETES",
    "AL2_SUCCESSORS",
    "AUTONAME_SUFFIX_LENGTH",
    "AVAILABILITY_ZONE_PATTERN",
    "AWS_REGION_PATTERN",
    "BRANCH_PATTERN",
    "CHART_VERSION_PATTERN",
    "CUSTOM_AMI_TYPE",
    "DEFAULT_BRANCH",
    "DEFAULT_SSH_PORT",
    "DELETE_MARGIN",
    "DNS_LABEL_HINT",
    "DNS_LABEL_PATTERN",
    "EKS_AMI_TYPES",
    "EKS_CLUSTER_NAME_MAX",
    "EKS_NODE_GROUP_NAME_MAX",
    "FLEET_SECTION",
    "GITHUB_API_URL_PATTERN",
    "GITHUB_HOST",
    "GITHUB_ID_MAX",
    "GIT_PROVIDERS",
    "GO_DURATION_HINT",
    "GO_DURATION_PATTERN",
    "GO_MAX_DURATION_SECONDS",
    "HTTPS_URL_PATTERN",
    "IAM_PRINCIPAL_HINT",
    "IAM_PRINCIPAL_PATTERN",
    "IAM_ROLE_HINT",
    "IAM_ROLE_NAME_MAX",
    "IAM_ROLE_PATTERN",
    "KMS_KEY_ARN_PATTERN",
    "KUBERNETES_MINOR_PATTERN",
    "LABEL_KEY_PATTERN",
    "LABEL_VALUE_PATTERN",
    "LIMIT_TYPES",
    "MAX_NODE_GROUP_SIZE",
    "MAX_READY_TIMEOUT",
    "MAX_RETRY_LIMIT",
    "MAX_ZONES",
    "MIN_DELETE_TIMEOUT",
    "MIN_SEALING_KEY_BITS",
    "MIN_VPC_PREFIX",
    "MIN_ZONES",
    "NOTIFICATION_CONTROLLER",
    "PLAINTEXT_PRIVATE_KEY",
    "PRIVATE_KEY_PATTERN",
    "PROD_ENVIRONMENTS",
    "QUANTITY_PATTERN",
    "READY_MARGIN",
    "READ_SECRET_ACTION",
    "RECEIVER_URL_PATTERN",
    "RECEIVER_WEBHOOK_PATH_PREFIX",
    "RECONCILE_REQUEST_ANNOTATION",
    "RECONCILE_REQUEST_PATTERN",
    "REFRESH_ANNOTATION",
    "REPOSITORY_PATTERN",
    "REQUIRED_FLUX_COMPONENTS",
    "RESERVED_NAMESPACES",
    "SEALING_KEY_FIELDS",
    "SECRET_PREFIX_PATTERN",
    "SSH_URL_PATTERN",
    "TOLERATION_EFFECTS",
    "WILDCARD_DESTINATION",
    "admins_problem",
    "ami_type_problem",
    "ami_type_version_problem",
    "argo_cd_chart_version_problem",
    "availability_zone_problem",
    "availability_zones_problem",
    "aws_region_problem",
    "branch_problem",
    "chart_version_problem",
    "cluster_component_name_problem",
    "default_ready_timeout",
    "delete_timeout",
    "dns_label_problem",
    "flux_components_extra_problem",
    "flux_components_problem",
    "flux_operator_version_problem",
    "format_duration",
    "git_auth_url_problem",
    "git_provider_problem",
    "git_url_problem",
    "github_api_url_problem",
    "github_app_url_problem",
    "github_host",
    "github_id",
    "github_id_problem",
    "github_ssh_repository",
    "go_duration_problem",
    "grants_action",
    "https_url_problem",
    "iam_principal_problem",
    "iam_role_problem",
    "instance_types_problem",
    "ipv4_cidr_problem",
    "is_prod",
    "kms_key_arn_problem",
    "kms_key_region",
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
    "parse_sealing_keys",
    "paths_overlap",
    "principal_key",
    "private_key_paths",
    "private_subnets_problem",
    "project_destination_problem",
    "quantity_problem",
    "rbac_name_problem",
    "reads_every_secret",
    "ready_timeout_after_timeout_problem",
    "ready_timeout_problem",
    "receiver_url_problem",
    "receiver_webhook_path",
    "reconcile_request_problem",
    "relative_path_problem",
    "repository_name_problem",
    "reserved_namespace_problem",
    "resource_name_problem",
    "retry_factor_problem",
    "retry_limit_problem",
    "sealing_key_pair_problem",
    "sealing_keys_problems",
    "secret_prefix_problem",
    "secrets_arn",
    "ssh_url_host",
    "ssh_url_problem",
    "tenant_namespaces_problems",
    "toleration_problems",
    "vpc_cidr_problem",
]
