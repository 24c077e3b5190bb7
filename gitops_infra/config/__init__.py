"""The stack config: frozen pydantic models, and how they are loaded.

The config lives in ``Pulumi.<stack>.yaml`` under the project namespace, in camelCase keys::

    gitops-infra:environment   Environment      (the contract written into the ``environment`` ConfigMap)
    gitops-infra:cluster       ClusterSpec    (EKS: version, network, endpoint access, node groups)
    gitops-infra:git           GitSpec        (the fleet repository, and Flux's deploy key or GitHub App)
    gitops-infra:github        GitHubSpec, optional (how the GitHub provider authenticates: appAuth)
    gitops-infra:flux          FluxSpec       (controllers, sync settings, SOPS, notifications)
    gitops-infra:tags          Mapping[str, str] (AWS tags on everything that takes them)
    gitops-infra:fleet         FleetSpec, optional (wave, labels, role: read by ``gitops-infra fleet``)
    gitops-infra:tenants       a list of TenantSpec, optional (app teams: namespaces, source, role, quota)
    gitops-infra:secrets       SecretsSpec, optional (Sealed Secrets, External Secrets), held as
                               ``StackConfig.secret_providers``
    gitops-infra:githubToken   secret, optional (else github.appAuth, else GITHUB_TOKEN)
    gitops-infra:sopsAgeKey    secret, required when ``flux.sops`` is true
    gitops-infra:notificationWebhook  secret, the address ``flux.notifications`` posts to
    gitops-infra:sealedSecretsKeys  secret, the Sealed Secrets key pairs by rotation, when
                               ``secrets.sealedSecrets.keySource`` is ``config``
    aws:profile                the AWS profile, kept in the kubeconfig the platform deploys through
    aws:assumeRoles            the role the provider assumes (the last one), which that kubeconfig assumes
    aws:region                 the default of secrets.externalSecrets.region
    github:baseUrl             not read: the platform's GitHub provider is its own (a problem unless it
                               names that provider's GitHub anyway)

One module per section (``cluster``, ``git``, ``github``, ``flux``, ``tenants``, ``secrets``;
``environment`` is the contract's model, :mod:`gitops_infra.contract`), on the field types they share
(``_fields``). ``stack`` holds the namespace's keys and what a loaded config is (``StackConfig``,
``StackSecrets`` and the ``SealingKeyPair`` it holds, ``platform_name``).

``load_config`` validates a plain mapping (what ``Pulumi.<stack>.yaml`` holds under ``config:``);
``load_stack_config`` reads the same keys from ``pulumi.Config`` inside a running program. Both live in
``loading``, the one module that uses Pulumi, and gather *every* problem into one ``ConfigError`` whose
lines name the full key path, for example ``gitops-infra:cluster.nodeGroups[0].maxSize: must be >=
minSize``: each section's own (``_build``), then those across sections (``_across``). Secret values never
reach a model, a ``repr`` or an error message: they are carried as ``pulumi.Output`` secrets in
``StackSecrets``.

Example::

    config = load_config(yaml.safe_load(Path("Pulumi.dev.yaml").read_text())["config"], stack="dev")
    print(platform_name(config.environment, config.cluster), config.flux.interval)
"""

from gitops_infra.config.argocd import ArgoCdSpec, RetrySpec
from gitops_infra.config.cluster import (
    ClusterSpec,
    EndpointSpec,
    ExistingClusterSpec,
    ExistingKubeconfigSpec,
    ExistingVpcSpec,
    NetworkSpec,
    NewVpcSpec,
    NodeGroupSpec,
    TaintSpec,
)
from gitops_infra.config.flux import FluxSpec, HealthCheckSpec, NotificationsSpec, TolerationSpec
from gitops_infra.config.git import (
    CreateRepositorySpec,
    DeployKeySpec,
    ExistingDeployKeySpec,
    GitHubAppSpec,
    GitSpec,
)
from gitops_infra.config.github import GitHubAppAuthSpec, GitHubSpec
from gitops_infra.config.gitops import GitOpsSpec
from gitops_infra.config.loading import load_config, load_stack_config, named_secret_keys, plan_config
from gitops_infra.config.receiver import ReceiverSpec
from gitops_infra.config.secrets import ExternalSecretsSpec, SealedSecretsSpec, SecretsSpec
from gitops_infra.config.stack import (
    PROJECT,
    SECRET_KEYS,
    SECTIONS,
    SealingKeyPair,
    StackConfig,
    StackSecrets,
    platform_name,
)
from gitops_infra.config.tenants import LimitSpec, TenantRepositorySpec, TenantSourceSpec, TenantSpec

__all__ = [
    "PROJECT",
    "SECRET_KEYS",
    "SECTIONS",
    "ArgoCdSpec",
    "ClusterSpec",
    "CreateRepositorySpec",
    "DeployKeySpec",
    "EndpointSpec",
    "ExistingClusterSpec",
    "ExistingDeployKeySpec",
    "ExistingKubeconfigSpec",
    "ExistingVpcSpec",
    "ExternalSecretsSpec",
    "FluxSpec",
    "GitHubAppAuthSpec",
    "GitHubAppSpec",
    "GitHubSpec",
    "GitOpsSpec",
    "GitSpec",
    "HealthCheckSpec",
    "LimitSpec",
    "NetworkSpec",
    "NewVpcSpec",
    "NodeGroupSpec",
    "NotificationsSpec",
    "ReceiverSpec",
    "RetrySpec",
    "SealedSecretsSpec",
    "SealingKeyPair",
    "SecretsSpec",
    "StackConfig",
    "StackSecrets",
    "TaintSpec",
    "TenantRepositorySpec",
    "TenantSourceSpec",
    "TenantSpec",
    "TolerationSpec",
    "load_config",
    "load_stack_config",
    "named_secret_keys",
    "plan_config",
    "platform_name",
]
