"""The modes, enums and defaults of the platform's settings. No Pulumi import.

The stack config (:mod:`gitops_infra.config`), the shared rules (:mod:`gitops_infra.checks`) and the
components all take them from here, so the config loads no component (and no Pulumi SDK) to know what a
field accepts, and each value is written once. The components re-export the ones they take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

__all__ = [
    "ALL_LOG_TYPES",
    "ARGO_CD_CHART_VERSION",
    "ARGO_CD_NAMESPACE",
    "ARGO_CD_RETRY_BACKOFF",
    "ARGO_CD_RETRY_LIMIT",
    "ARGO_CD_RETRY_MAX_BACKOFF",
    "ARGO_CD_ROOT",
    "ARGO_CD_VERSION",
    "CLUSTER_SECRET_STORE",
    "DEFAULT_AMI_TYPE",
    "DEFAULT_BRANCH",
    "DEFAULT_COMPONENTS",
    "DEFAULT_DISK_SIZE_GIB",
    "DEFAULT_GIT_INTERVAL",
    "DEFAULT_INTERVAL",
    "DEFAULT_RETRY_INTERVAL",
    "DEFAULT_SERVICE_ACCOUNT",
    "DEFAULT_TENANT_ROLE",
    "DEFAULT_TIMEOUT",
    "EXTERNAL_SECRETS_NAMESPACE",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_OPERATOR_BUNDLED",
    "FLUX_OPERATOR_CHART_VERSION",
    "FLUX_OPERATOR_FLUX_VERSION",
    "FLUX_OPERATOR_VERSION",
    "FLUX_TENANT_LABEL",
    "FLUX_VERSION",
    "KUBERNETES_FLOOR",
    "MIN_KUBERNETES_VERSION",
    "ROOT_SERVICE_ACCOUNT",
    "SEALED_SECRETS_CHART_VERSION",
    "SEALED_SECRETS_KEYS_KEY",
    "SEALED_SECRETS_KEY_LABEL",
    "SEALED_SECRETS_NAMESPACE",
    "SEALED_SECRETS_VERSION",
    "TENANT_LABEL",
    "TENANT_PATH_TEMPLATE",
    "CapacityType",
    "EndpointAccess",
    "FluxComponent",
    "FluxInstall",
    "GitOpsEngine",
    "KeyAlgorithm",
    "LogType",
    "NatGateways",
    "RepositoryVisibility",
    "SealingKeySource",
    "TaintEffect",
    "image_automation_enabled",
    "tenant_path",
]

# -- the cluster (EksCluster) ----------------------------------------------------------------------------

DEFAULT_AMI_TYPE = "AL2023_x86_64_STANDARD"
DEFAULT_DISK_SIZE_GIB = 50


class EndpointAccess(StrEnum):
    """Who reaches the Kubernetes API endpoint.

    With ``PRIVATE``, whatever deploys through the component's ``provider`` (Flux, for one) must run
    where it reaches the VPC: the stack config accepts it only with an existing VPC for that reason.
    """

    PUBLIC_AND_PRIVATE = "public-and-private"
    PRIVATE = "private"


class NatGateways(StrEnum):
    """How many NAT gateways a dedicated VPC gets."""

    SINGLE = "single"
    ONE_PER_AZ = "one-per-az"


class CapacityType(StrEnum):
    """EC2 capacity for a managed node group."""

    ON_DEMAND = "ON_DEMAND"
    SPOT = "SPOT"


class TaintEffect(StrEnum):
    """The effect of a node taint, as the EKS API spells it."""

    NO_SCHEDULE = "NO_SCHEDULE"
    NO_EXECUTE = "NO_EXECUTE"
    PREFER_NO_SCHEDULE = "PREFER_NO_SCHEDULE"


class LogType(StrEnum):
    """Control-plane log types sent to CloudWatch."""

    API = "api"
    AUDIT = "audit"
    AUTHENTICATOR = "authenticator"
    CONTROLLER_MANAGER = "controllerManager"
    SCHEDULER = "scheduler"


ALL_LOG_TYPES: tuple[LogType, ...] = tuple(LogType)


# -- the deploy key (DeployKey) ---------------------------------------------------------------------------


class KeyAlgorithm(StrEnum):
    """The deploy key's algorithm."""

    ECDSA_P384 = "ecdsa-p384"
    ED25519 = "ed25519"


# -- the fleet repository (FleetRepository) ---------------------------------------------------------------

DEFAULT_BRANCH = "main"
"""The branch Flux syncs and the scaffold commits to, unless ``git.branch`` says otherwise."""


class RepositoryVisibility(StrEnum):
    """Who may see a created fleet repository. Never public: it describes your clusters."""

    PRIVATE = "private"
    INTERNAL = "internal"


# -- Flux (FluxBootstrap) ---------------------------------------------------------------------------------

FLUX_VERSION = "2.8.5"
"""The Flux release the pinned chart installs (the chart's appVersion). What users run of it, by the
chart's image tags: source-controller v1.8.2 and kustomize-controller v1.8.3. Upstream behaviour below is
cited for those; the local cluster runs Flux 2.9.4's (source- and kustomize-controller v1.9.4: no 2.8
release has its controllers served by the module proxy, see the upstream notes' skew table), and where the
two differ the platform sets the behaviour explicitly."""
KUBERNETES_FLOOR: Mapping[str, str] = {"2.6": "1.31", "2.7": "1.32", "2.8": "1.33", "2.9": "1.33"}
"""The oldest Kubernetes minor each Flux minor supports: ``kubernetesConstraints`` of ``flux check``
(``cmd/flux/check.go``), which the chart's pre-install hook runs as ``flux check --pre``."""
MIN_KUBERNETES_VERSION = KUBERNETES_FLOOR[FLUX_VERSION.rsplit(".", 1)[0]]
"""The oldest Kubernetes the pinned Flux installs on."""
FLUX_CHART_VERSION = "2.18.3"
FLUX_NAMESPACE = "flux-system"
DEFAULT_GIT_INTERVAL = "1m"
DEFAULT_INTERVAL = "10m"
DEFAULT_RETRY_INTERVAL = "2m"
DEFAULT_TIMEOUT = "5m"


class FluxInstall(StrEnum):
    """Who installs Flux's controllers and CRDs: this component (the pinned chart), someone else, or the
    Flux Operator, from a ``FluxInstance`` this component owns."""

    HELM = "helm"
    EXTERNAL = "external"
    OPERATOR = "operator"


FLUX_OPERATOR_VERSION = "0.59.0"
"""The Flux Operator ``flux.install: operator`` installs (and the local cluster runs)."""
FLUX_OPERATOR_CHART_VERSION = "0.59.0"
"""The ``flux-operator`` chart that ships operator ``FLUX_OPERATOR_VERSION``: the chart's version is the
operator's, release by release."""
FLUX_OPERATOR_FLUX_VERSION = "2.9.4"
"""The Flux release a ``FluxInstance`` installs unless ``flux.version`` says otherwise: the one the local
cluster runs the controllers of, so users of ``install: operator`` run what is tested."""
FLUX_OPERATOR_BUNDLED: tuple[str, ...] = (
    *("2.2.3", "2.3.0", "2.4.0", "2.5.0", "2.5.1"),
    *(f"2.6.{patch}" for patch in range(5)),
    *(f"2.7.{patch}" for patch in range(6)),
    *("2.8.0", "2.8.1", "2.8.2", "2.8.3", "2.8.5", "2.8.6", "2.8.7", "2.8.8"),
    *(f"2.9.{patch}" for patch in range(6)),
)
"""The Flux releases whose manifests operator ``FLUX_OPERATOR_VERSION`` bundles (its ``config/data/flux``):
the operator has no manifests for another (a ``FluxInstance`` that names no distribution artifact to pull
fails to build). 2.8.4 is not among them."""


class FluxComponent(StrEnum):
    """A Flux controller, named as ``flux install --components`` names it."""

    SOURCE_CONTROLLER = "source-controller"
    KUSTOMIZE_CONTROLLER = "kustomize-controller"
    HELM_CONTROLLER = "helm-controller"
    NOTIFICATION_CONTROLLER = "notification-controller"
    IMAGE_REFLECTOR_CONTROLLER = "image-reflector-controller"
    IMAGE_AUTOMATION_CONTROLLER = "image-automation-controller"
    SOURCE_WATCHER = "source-watcher"


DEFAULT_COMPONENTS: tuple[FluxComponent, ...] = (
    FluxComponent.SOURCE_CONTROLLER,
    FluxComponent.KUSTOMIZE_CONTROLLER,
    FluxComponent.HELM_CONTROLLER,
    FluxComponent.NOTIFICATION_CONTROLLER,
)


def image_automation_enabled(components: Sequence[FluxComponent]) -> bool:
    """True when image automation runs, which is the only time Flux writes to git."""
    return FluxComponent.IMAGE_AUTOMATION_CONTROLLER in components


# -- the GitOps engine, and Argo CD (ArgoCdBootstrap) ---------------------------------------------------


class GitOpsEngine(StrEnum):
    """What syncs the fleet repository to the cluster (``gitops.engine``)."""

    FLUX = "flux"
    ARGOCD = "argocd"


ARGO_CD_VERSION = "3.4.4"
"""The Argo CD release the pinned chart installs (its appVersion): what users run. The local cluster runs
v3.6.2 (v3.4.4's gitops-engine is not served by the module proxy: the upstream notes' skew table)."""
ARGO_CD_CHART_VERSION = "10.1.1"
"""The ``argo-cd`` chart (argoproj/argo-helm) that ships ``ARGO_CD_VERSION``: the newest one found."""
ARGO_CD_NAMESPACE = "argocd"
ARGO_CD_ROOT = "platform"
"""The name of the root ``Application`` (app of apps), of the ``AppProject`` that bounds it, and of the
repository Secret it fetches with."""
ARGO_CD_RETRY_LIMIT = 5
ARGO_CD_RETRY_BACKOFF = "5s"
"""The first wait before a failed sync is retried; each next one is twice as long, up to
``ARGO_CD_RETRY_MAX_BACKOFF`` (Argo CD's own backoff when a retry names none)."""
ARGO_CD_RETRY_MAX_BACKOFF = "3m"


# -- tenants (Tenant) -------------------------------------------------------------------------------------

DEFAULT_TENANT_ROLE = "admin"
"""The ClusterRole a tenant's RoleBindings grant in each of its namespaces: Kubernetes' own ``admin``,
which reaches nothing cluster-wide and cannot change the namespace's ResourceQuota or LimitRange."""
TENANT_PATH_TEMPLATE = "tenants/{name}"
"""Where a tenant syncing from the fleet repository keeps its manifests, unless ``source.path`` says."""
TENANT_LABEL = "gitops-infra.io/tenant"
"""The label naming the tenant on its namespaces, GitRepository and Kustomization: what the automation
layer finds a tenant's sync by."""
FLUX_TENANT_LABEL = "toolkit.fluxcd.io/tenant"
"""Flux's own label for a tenant's namespace (what ``flux create tenant`` writes)."""
DEFAULT_SERVICE_ACCOUNT = "default"
"""What Flux impersonates, with tenants, for an object that names no service account
(``--default-service-account``): each namespace's ``default``, which is bound to nothing."""
ROOT_SERVICE_ACCOUNT = "kustomize-controller"
"""The identity the platform's root Kustomization states when tenants lock Flux down: the controller's own
service account, which the Flux install binds to cluster-admin."""


def tenant_path(name: str) -> str:
    """The fleet path of tenant ``name`` by default (``TENANT_PATH_TEMPLATE``)."""
    return TENANT_PATH_TEMPLATE.format(name=name)


# -- secrets (SealedSecrets, and External Secrets' store) ---------------------------------------------------

SEALED_SECRETS_VERSION = "0.40.0"
"""The Sealed Secrets controller and ``kubeseal`` the platform runs (the module the local cluster builds)."""
SEALED_SECRETS_CHART_VERSION = "2.19.3"
"""The controller's Helm chart (``helm/sealed-secrets`` in the v0.40.0 module): its appVersion is still
0.39.1, so the platform sets the image tag to ``SEALED_SECRETS_VERSION``."""
SEALED_SECRETS_NAMESPACE = "sealed-secrets"
"""The controller's namespace: one of its own, not ``kube-system``, as the platform owns the key there."""
SEALED_SECRETS_KEY_LABEL = "sealedsecrets.bitnami.com/sealed-secrets-key"
"""The label (value ``active``) by which the controller finds the key pairs it decrypts with."""
SEALED_SECRETS_KEYS_KEY = "sealedSecretsKeys"
"""The secret config key (``gitops-infra:sealedSecretsKeys``) holding the sealing key pairs when
``secrets.sealedSecrets.keySource`` is ``config``: a JSON object, each rotation to its ``cert`` and
``privateKey`` (PEM). ``gitops-infra sealed-secrets keygen`` writes it."""


class SealingKeySource(StrEnum):
    """Where the Sealed Secrets keys come from: made by pulumi-tls in the stack (``generate``), or held in
    the secret config value ``sealedSecretsKeys`` (``config``)."""

    GENERATE = "generate"
    CONFIG = "config"


EXTERNAL_SECRETS_NAMESPACE = "external-secrets"
CLUSTER_SECRET_STORE = "aws-secrets-manager"
"""The name of the ClusterSecretStore for AWS Secrets Manager: what app teams' ExternalSecrets name."""
