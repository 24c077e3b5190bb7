"""The stack config: frozen pydantic models, and how they are loaded.

The config lives in ``Pulumi.<stack>.yaml`` under the project namespace, in camelCase keys::

    gitops-infra:environment   Environment      (the contract written into the ``environment`` ConfigMap)
    gitops-infra:cluster       ClusterSpec    (EKS: version, network, endpoint access, node groups)
    gitops-infra:git           GitSpec        (the fleet repository, and Flux's deploy key or GitHub App)
    gitops-infra:github        GitHubSpec, optional (how the GitHub provider authenticates: appAuth)
    gitops-infra:flux          FluxSpec       (controllers, sync settings, SOPS, notifications)
    gitops-infra:tags          Mapping[str, str] (AWS tags on everything that takes them)
    gitops-infra:fleet         FleetSpec, optional (wave, labels, role: read by ``gitops-infra fleet``)
    gitops-infra:githubToken   secret, optional (else github.appAuth, else GITHUB_TOKEN)
    gitops-infra:sopsAgeKey    secret, required when ``flux.sops`` is true
    gitops-infra:notificationWebhook  secret, the address ``flux.notifications`` posts to
    aws:profile                the AWS profile, kept in the kubeconfig the platform deploys through
    aws:assumeRoles            the role the provider assumes (the last one), which that kubeconfig assumes
    github:baseUrl             not read: the platform's GitHub provider is its own (a problem unless it
                               names that provider's GitHub anyway)

``load_config`` validates a plain mapping (what ``Pulumi.<stack>.yaml`` holds under ``config:``);
``load_stack_config`` reads the same keys from ``pulumi.Config`` inside a running program. Both gather
*every* problem into one ``ConfigError`` whose lines name the full key path, for example
``gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize``. Secret values never reach a model, a
``repr`` or an error message: they are carried as ``pulumi.Output`` secrets in ``StackSecrets``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pulumi
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

from gitops_infra import checks
from gitops_infra._validation import validation_problems
from gitops_infra.components.deploy_key import KeyAlgorithm
from gitops_infra.components.eks_cluster import (
    ALL_LOG_TYPES,
    DEFAULT_AMI_TYPE,
    DEFAULT_DISK_SIZE_GIB,
    CapacityType,
    EndpointAccess,
    LogType,
    NatGateways,
    TaintEffect,
)
from gitops_infra.components.fleet_repository import RepositoryVisibility
from gitops_infra.components.flux import (
    DEFAULT_COMPONENTS,
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TIMEOUT,
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FluxComponent,
    FluxInstall,
    image_automation_enabled,
    kubernetes_floor_problem,
)
from gitops_infra.contract import DOMAIN_PATTERN as ENVIRONMENT_DOMAIN_PATTERN
from gitops_infra.contract import Environment
from gitops_infra.errors import ConfigError
from gitops_infra.redaction import SECRET

__all__ = [
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
]

PROJECT = "gitops-infra"
"""The config namespace: keys are ``gitops-infra:<key>``."""

SECTIONS = ("environment", "cluster", "git", "flux", "tags", "github")
OPTIONAL_SECTIONS = ("flux", "github")
_UNREADABLE = object()
GITHUB_TOKEN_KEY = "githubToken"
SOPS_AGE_KEY_KEY = "sopsAgeKey"
NOTIFICATION_WEBHOOK_KEY = "notificationWebhook"
SECRET_KEYS = (GITHUB_TOKEN_KEY, SOPS_AGE_KEY_KEY, NOTIFICATION_WEBHOOK_KEY)
AWS_PROFILE_KEY = "aws:profile"
AWS_ASSUME_ROLES_KEY = "aws:assumeRoles"
OWNER_TAG = "owner"
_OWNER_REQUIRED = "required: every AWS resource is tagged with the team that owns it"

_IAM_PRINCIPAL = checks.IAM_PRINCIPAL_PATTERN

_VPC_ID = r"^vpc-[0-9a-f]{8,17}$"
_SUBNET_ID = r"^subnet-[0-9a-f]{8,17}$"
_GITHUB_OWNER = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,38})$"
_CLUSTER_NAME = r"^[a-zA-Z][a-zA-Z0-9-]*$"
_SECRET_KEY_NAME = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
_SSH_PUBLIC_KEY = r"^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+=*( .*)?$"
GITHUB_HOST = checks.GITHUB_HOST
GITHUB_BASE_URL_KEY = "github:baseUrl"
GITHUB_API_URL = "https://api.github.com/"
"""github.com's API, as pulumi-github's provider writes its default ``base_url``."""
_INSTALL_ONLY = ("version", "network_policy", "tolerations", "node_selector")
"""FluxSpec fields that configure the chart this stack installs: meaningless with ``install: external``."""
# What each pattern means, so an error says "must be ..." rather than quoting a regex. A rule the component
# Args check too is a check in gitops_infra.checks instead, and says what it means itself.
_PATTERN_HINTS = {
    _IAM_PRINCIPAL: checks.IAM_PRINCIPAL_HINT,
    _VPC_ID: "must be a VPC ID (vpc-...)",
    _SUBNET_ID: "must be a subnet ID (subnet-...)",
    _GITHUB_OWNER: "must be a GitHub user or organization name",
    _CLUSTER_NAME: "must start with a letter and hold only letters, digits and '-'",
    _SECRET_KEY_NAME: "must name a secret config key (letters, digits, '_'), such as localKubeconfig",
    _SSH_PUBLIC_KEY: "must be an OpenSSH public key (ssh-ed25519, ecdsa-sha2-nistp384 or ssh-rsa ...)",
    ENVIRONMENT_DOMAIN_PATTERN: "must be a lowercase DNS domain such as dev.example.com",
}


def _gate(check: Any) -> AfterValidator:
    """A pydantic validator that runs one of :mod:`gitops_infra.checks`, so models and Args agree."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(validate)


DnsLabel = Annotated[str, _gate(checks.dns_label_problem)]
Duration = Annotated[str, _gate(checks.go_duration_problem)]
Cidr = Annotated[str, _gate(checks.ipv4_cidr_problem)]
AvailabilityZone = Annotated[str, _gate(checks.availability_zone_problem)]
GitUrl = Annotated[str, _gate(checks.git_url_problem)]


def _as_github_id(value: Any) -> Any:
    """A GitHub App's or installation's ID as a number, from a number or its digits (``"123456"``,
    as ``github:appAuth`` writes it): pydantic's own lax int would also take ``true`` and ``1.0``."""
    number = checks.github_id(value)
    if number is None:
        raise ValueError(checks.github_id_problem(value))
    return number


GitHubId = Annotated[StrictInt, BeforeValidator(_as_github_id)]
RepositoryName = Annotated[str, _gate(checks.repository_name_problem)]
KnownHosts = Annotated[str, _gate(checks.known_hosts_problem)]


class _Model(BaseModel):
    """Frozen, camelCase, and strict about unknown keys (a typo is a problem, not a silent default).

    Numbers and flags are strict too (``StrictInt``, ``StrictBool``): ``minSize: true`` is not 1, and
    ``sops: "yes"`` is not a flag. Pydantic's lax mode would accept both where the engine's program
    would fail later, or do what nobody meant.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, defer_build=True
    )


# -- cluster -------------------------------------------------------------------------------------------


class TaintSpec(_Model):
    """A Kubernetes taint on the nodes of a group."""

    key: Annotated[str, Field(min_length=1, max_length=63)]
    value: Annotated[str, Field(max_length=63)] = ""
    effect: TaintEffect


_SIZES = ("min_size", "max_size", "desired_size")
"""A node group's sizes, in the order pydantic validates them."""


class NodeGroupSpec(_Model):
    """One EKS managed node group."""

    name: DnsLabel
    instance_types: Annotated[tuple[str, ...], _gate(checks.instance_types_problem)]
    min_size: StrictInt
    max_size: StrictInt
    desired_size: StrictInt | None = None
    disk_size: Annotated[StrictInt, Field(ge=20, le=16384)] = DEFAULT_DISK_SIZE_GIB
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    ami_type: Annotated[str, _gate(checks.ami_type_problem)] = DEFAULT_AMI_TYPE
    labels: Mapping[str, str] = Field(default_factory=dict)
    taints: tuple[TaintSpec, ...] = ()
    scaling_managed_externally: StrictBool = False
    """True when an autoscaler (Cluster Autoscaler, Karpenter) owns the desired size: updates then
    leave ``desiredSize`` as the autoscaler set it. Off by default, because EKS refuses a ``minSize``
    raised above the current desired size, which only an update that sets ``desiredSize`` avoids."""

    @field_validator("min_size", "max_size", "desired_size")
    @classmethod
    def _sizes_eks_accepts(cls, value: int | None, info: ValidationInfo) -> int | None:
        # Fields validate in order: `info.data` holds the sizes before this one that passed their checks.
        sizes = {size: info.data.get(size) for size in _SIZES} | {str(info.field_name): value}
        for size, problem in checks.node_group_size_problems(**sizes, spell=to_camel):
            if size == info.field_name:
                raise ValueError(problem)
        return value

    @property
    def desired(self) -> int:
        """The desired size: ``desiredSize`` if set, else ``minSize`` (but at least one node)."""
        return self.desired_size if self.desired_size is not None else max(self.min_size, 1)


class NewVpcSpec(_Model):
    """A dedicated VPC the cluster builds: a public and a private subnet per availability zone."""

    cidr: Annotated[str, _gate(checks.vpc_cidr_problem)]
    # The count is checked after the items, not in Field(): pydantic would report it again after an item
    # fails.
    availability_zones: Annotated[tuple[AvailabilityZone, ...], _gate(checks.availability_zones_problem)]
    nat_gateways: NatGateways = NatGateways.SINGLE


SubnetId = Annotated[str, Field(pattern=_SUBNET_ID)]


class ExistingVpcSpec(_Model):
    """An existing VPC and its subnets."""

    vpc_id: Annotated[str, Field(pattern=_VPC_ID)]
    public_subnet_ids: tuple[SubnetId, ...] = ()
    private_subnet_ids: Annotated[tuple[SubnetId, ...], _gate(checks.private_subnets_problem)]


class NetworkSpec(_Model):
    """Exactly one of ``vpc`` (build one) or ``existingVpc`` (use one)."""

    vpc: NewVpcSpec | None = None
    existing_vpc: ExistingVpcSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> NetworkSpec:
        if (self.vpc is None) == (self.existing_vpc is None):
            raise ValueError("set exactly one of vpc or existingVpc")
        return self


class EndpointSpec(_Model):
    """Who reaches the Kubernetes API.

    ``public-and-private``: ``allowedCidrs`` restrict the public endpoint. ``private``: the public endpoint
    is off and ``allowedCidrs`` (a VPN, a peered network) may reach the private one on port 443; that needs
    ``network.existingVpc`` (see ``ClusterSpec``).
    """

    access: EndpointAccess = EndpointAccess.PUBLIC_AND_PRIVATE
    allowed_cidrs: tuple[Cidr, ...] = ()


PRIVATE_ENDPOINT_NEEDS_EXISTING_VPC = (
    "access 'private' needs network.existingVpc: pulumi up installs Flux through the Kubernetes API "
    "from wherever it runs, and a VPC this stack creates has no route from there (no peering, VPN or "
    "transit gateway exists yet). Use access: public-and-private with allowedCidrs set to the runner's "
    "egress range, or deploy into an existing VPC the runner reaches"
)


ClusterName = Annotated[str, Field(pattern=_CLUSTER_NAME), _gate(checks.cluster_component_name_problem)]
SecretKeyName = Annotated[str, Field(pattern=_SECRET_KEY_NAME)]
"""The name of a secret config key in the project's namespace (set with ``pulumi config set --secret``)."""


class ExistingKubeconfigSpec(_Model):
    """How to reach a cluster you already run: ``kubeconfig`` names the secret key that holds it."""

    kubeconfig: SecretKeyName


class ExistingClusterSpec(_Model):
    """A cluster you already run: the platform makes no AWS resource and deploys through its kubeconfig.

    Written ``cluster: {existing: {kubeconfig: <secret config key>}}`` instead of the EKS settings.
    """

    name: ClusterName | None = None
    existing: ExistingKubeconfigSpec


def _node_group_names_problem(groups: tuple[NodeGroupSpec, ...]) -> str | None:
    return checks.node_group_names_problem([group.name for group in groups])


class ClusterSpec(_Model):
    """The EKS cluster."""

    name: ClusterName | None = None
    kubernetes_version: Annotated[str, _gate(checks.kubernetes_minor_problem)]
    admins: Annotated[
        tuple[Annotated[str, Field(pattern=_IAM_PRINCIPAL)], ...], _gate(checks.admins_problem)
    ] = ()
    creator: Annotated[str, Field(pattern=_IAM_PRINCIPAL)] | None = None
    log_types: tuple[LogType, ...] = ALL_LOG_TYPES
    # network comes before endpoint: the endpoint's check reads it.
    network: NetworkSpec
    endpoint: EndpointSpec = EndpointSpec()
    node_groups: Annotated[tuple[NodeGroupSpec, ...], _gate(_node_group_names_problem)]

    @field_validator("node_groups")
    @classmethod
    def _ami_types_for_the_version(
        cls, groups: tuple[NodeGroupSpec, ...], info: ValidationInfo
    ) -> tuple[NodeGroupSpec, ...]:
        version = info.data.get("kubernetes_version")
        if version is None:  # it failed its own check
            return groups
        problems = [
            (index, problem)
            for index, group in enumerate(groups)
            if (problem := checks.ami_type_version_problem(group.ami_type, version)) is not None
        ]
        if problems:
            # Raised as the groups' own errors, so each is reported at nodeGroups[<index>].amiType.
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError("ami_type", "{problem}", {"problem": problem}),
                        loc=(index, "ami_type"),
                        input=groups[index].ami_type,
                    )
                    for index, problem in problems
                ],
            )
        return groups

    @field_validator("endpoint")
    @classmethod
    def _private_needs_reachable_vpc(cls, value: EndpointSpec, info: ValidationInfo) -> EndpointSpec:
        network: NetworkSpec | None = info.data.get("network")
        if value.access is EndpointAccess.PRIVATE and network is not None and network.existing_vpc is None:
            raise ValueError(PRIVATE_ENDPOINT_NEEDS_EXISTING_VPC)
        return value


# -- git -----------------------------------------------------------------------------------------------


class ExistingDeployKeySpec(_Model):
    """A key pair registered with the git host outside this stack (any SSH git server, not only GitHub).

    ``privateKey`` names the secret config key holding the OpenSSH private key; ``publicKey``, optional,
    is its public half, in ``authorized_keys`` form.
    """

    private_key: SecretKeyName
    public_key: Annotated[str, Field(pattern=_SSH_PUBLIC_KEY)] | None = None
    """Written into the git-auth Secret as ``identity.pub`` when given; Flux authenticates without it."""


class DeployKeySpec(_Model):
    """The fleet repository's deploy key. Change ``rotation`` (any new string) to rotate it.

    By default the platform makes the key pair and registers it on GitHub. With ``existing``, it uses a
    key you registered yourself, and makes neither.
    """

    algorithm: KeyAlgorithm = KeyAlgorithm.ECDSA_P384
    rotation: Annotated[str, Field(max_length=64)] = ""
    existing: ExistingDeployKeySpec | None = None

    @model_validator(mode="after")
    def _generated_or_existing(self) -> DeployKeySpec:
        if self.existing is not None and self.model_fields_set & {"algorithm", "rotation"}:
            raise ValueError("algorithm and rotation are for a generated key; an existing key has neither")
        return self


class GitHubAppSpec(_Model):
    """Flux fetches as a GitHub App instead of with a deploy key: ``appId``, ``installationId``, and
    ``privateKey`` naming the secret config key that holds the App's PEM. ``baseUrl`` is the API of a
    GitHub Enterprise Server (``https://<host>/api/v3``); github.com's is the default. The App's token is
    good on that GitHub alone: Flux clones from its host, and so must ``url``, when given.
    """

    app_id: GitHubId
    installation_id: GitHubId
    private_key: SecretKeyName
    base_url: Annotated[str, _gate(checks.github_api_url_problem)] | None = None


class CreateRepositorySpec(_Model):
    """Create the fleet repository on GitHub (kept on ``destroy``), with this visibility."""

    visibility: RepositoryVisibility = RepositoryVisibility.PRIVATE


class GitSpec(_Model):
    """The fleet repository Flux syncs from: ``owner``/``repository`` on GitHub, or any ``url``.

    Flux authenticates with a deploy key over SSH (the default), or as a GitHub App over HTTPS
    (``githubApp``, which excludes ``deployKey``). An SSH ``url`` needs ``knownHosts`` unless its host
    is github.com, and a key GitHub does not hold needs ``deployKey.existing``: a deploy key is generated
    and registered on GitHub only. ``scaffold`` and ``createRepository`` act on the GitHub repository, so
    they need ``owner`` and ``repository``.
    """

    # url, knownHosts, deployKey and githubApp come first: whether owner and repository are needed
    # depends on them.
    url: GitUrl | None = None
    known_hosts: Annotated[KnownHosts | None, Field(validate_default=True)] = None
    deploy_key: DeployKeySpec = DeployKeySpec()
    github_app: GitHubAppSpec | None = None
    owner: Annotated[str | None, Field(pattern=_GITHUB_OWNER, validate_default=True)] = None
    repository: Annotated[RepositoryName | None, Field(validate_default=True)] = None
    branch: Annotated[str, _gate(checks.branch_problem)] = checks.DEFAULT_BRANCH
    path: str | None = None
    scaffold: StrictBool = False
    create_repository: CreateRepositorySpec | None = None

    @field_validator("known_hosts")
    @classmethod
    def _host_keys_to_trust(cls, value: str | None, info: ValidationInfo) -> str | None:
        url = info.data.get("url")
        if url is not None and checks.ssh_url_problem(url) is not None:
            return value  # not SSH: the model's check says what goes with an https:// URL
        if value is None and url is not None and checks.ssh_url_host(url)[0] != GITHUB_HOST:
            raise ValueError("required for a git host other than github.com (its SSH host keys)")
        problem = None if value is None or url is None else checks.known_hosts_for_url_problem(value, url)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("owner", "repository")
    @classmethod
    def _needed_on_github(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None or "deploy_key" not in info.data:
            return value
        if info.data.get("url") is None:
            raise ValueError("required (or url, for a repository on another SSH git host)")
        if info.data["deploy_key"].existing is None and info.data.get("github_app") is None:
            raise ValueError(
                "required to register the generated deploy key on GitHub; for another git host, "
                "register a key yourself and set deployKey.existing"
            )
        return value

    @field_validator("path")
    @classmethod
    def _relative_path(cls, value: str | None) -> str | None:
        problem = None if value is None else checks.relative_path_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_auth_and_its_url(self) -> GitSpec:
        if self.github_app is None:
            problem = None if self.url is None else checks.git_auth_url_problem(self.url, github_app=False)
            if problem is not None:
                raise ValueError(f"url: {problem}; or set githubApp")
            return self
        if "deploy_key" in self.model_fields_set:
            raise ValueError(
                "githubApp and deployKey: Flux authenticates with one of them; remove deployKey to "
                "fetch as the App (the old deploy key and its Secret are deleted once the App works)"
            )
        if self.known_hosts is not None:
            raise ValueError("knownHosts: not used with githubApp, which fetches over HTTPS; remove it")
        problem = None if self.url is None else checks.git_auth_url_problem(self.url, github_app=True)
        if problem is None and self.url is not None:
            problem = checks.github_app_url_problem(self.url, self.github_app.base_url)
        if problem is not None:
            raise ValueError(f"url: {problem}")
        return self

    @model_validator(mode="after")
    def _github_for_repository_changes(self) -> GitSpec:
        wants = {"scaffold": self.scaffold, "createRepository": self.create_repository is not None}
        github_changes = [key for key, wanted in wants.items() if wanted]
        if github_changes and (self.owner is None or self.repository is None):
            raise ValueError(
                f"{' and '.join(github_changes)} commit to or create a GitHub repository: "
                "set owner and repository"
            )
        return self

    @property
    def manages_repository(self) -> bool:
        """True when the stack writes to the GitHub repository (creates it or scaffolds its path)."""
        return self.scaffold or self.create_repository is not None

    @property
    def registers_deploy_key(self) -> bool:
        """True when the stack makes a deploy key and registers it on GitHub."""
        return self.github_app is None and self.deploy_key.existing is None

    @property
    def github_host(self) -> str:
        """The GitHub the repository is on, for Flux and the GitHub provider alike: the host of
        ``githubApp.baseUrl`` (a GitHub Enterprise Server), else github.com."""
        return checks.github_host(self.github_app.base_url if self.github_app is not None else None)

    @property
    def github_base_url(self) -> str | None:
        """The GitHub provider's ``base_url`` with an App: the App's GitHub. ``None`` without one, for
        the provider's default (``GITHUB_BASE_URL``, else github.com's API).

        A GitHub Enterprise Server is named by its root, not by the ``/api/v3`` an App names:
        terraform-provider-github before v6.11 appends ``api/v3/`` to whatever it is given, and later
        ones trim it and add it back.
        """
        if self.github_app is None:
            return None
        host = self.github_host
        return GITHUB_API_URL if host == GITHUB_HOST else f"https://{host}/"

    @property
    def sync_url(self) -> str:
        """The URL Flux clones: ``url``, else GitHub's: ``https://`` for an App (on the host of its
        ``baseUrl``, where its token is valid), else the ``ssh://`` form Flux's bootstrap writes."""
        if self.url is not None:
            return self.url
        if self.github_app is not None:
            return f"https://{self.github_host}/{self.owner}/{self.repository}"
        return f"ssh://git@{GITHUB_HOST}/{self.owner}/{self.repository}"

    def sync_path(self, environment: str) -> str:
        """The path Flux syncs: ``path`` if set, else ``clusters/<environment>``."""
        return self.path if self.path is not None else f"clusters/{environment}"


# -- github --------------------------------------------------------------------------------------------


class GitHubAppAuthSpec(_Model):
    """The GitHub provider authenticates as a GitHub App installation: ``id``, ``installationId``, and
    ``pemFile`` naming the secret config key that holds the App's PEM (the provider's ``appAuth``)."""

    id: GitHubId
    installation_id: GitHubId
    pem_file: SecretKeyName


class GitHubSpec(_Model):
    """How the GitHub provider authenticates, when the stack makes anything on GitHub: ``appAuth``, or
    a personal token (``githubToken``, else ``GITHUB_TOKEN``) when unset."""

    app_auth: GitHubAppAuthSpec | None = None


# -- flux ----------------------------------------------------------------------------------------------


class TolerationSpec(_Model):
    """A toleration added to every Flux controller and the chart's pre-install check."""

    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None

    @model_validator(mode="after")
    def _as_kubernetes_validates_it(self) -> TolerationSpec:
        problems = checks.toleration_problems(self.key, self.operator, self.value, self.effect)
        if problems:
            raise ValueError("; ".join(f"{field} {message}" for field, message in problems))
        return self


class HealthCheckSpec(_Model):
    """An object the Kustomization waits for before it reports ready."""

    api_version: Annotated[str, Field(min_length=1)]
    kind: Annotated[str, Field(min_length=1)]
    name: DnsLabel
    namespace: DnsLabel


class NotificationsSpec(_Model):
    """An Alert on sync failure, sent through a notification Provider.

    Every supported provider type posts to an address. A webhook URL is a credential, so it comes from
    the secret ``gitops-infra:notificationWebhook``, which the platform writes into the Secret
    ``secretName`` (key ``address``). A non-secret ``address`` (a GitHub repository URL) may be set here
    instead. ``github`` and ``generic-hmac`` also need a ``token``, which this stack does not manage:
    name your own Secret (``address`` here, ``token`` there) with ``secretName``.
    """

    provider_type: Literal["slack", "msteams", "discord", "googlechat", "github", "generic", "generic-hmac"]
    channel: str | None = None
    address: str | None = None
    secret_name: DnsLabel | None = None
    event_severity: Literal["info", "error"] = "error"

    @property
    def needs_token(self) -> bool:
        """True for the types that authenticate with a ``token`` from the Secret."""
        return self.provider_type in TOKEN_PROVIDER_TYPES


TOKEN_PROVIDER_TYPES = ("github", "generic-hmac")


class FluxSpec(_Model):
    """Flux: the controllers to install and how the fleet repository is synced.

    ``install: external`` means the controllers and CRDs are already on the cluster (the Flux Operator,
    an EKS add-on): the platform then only labels the namespace (a patch), and makes the secrets, the sync
    objects and the notifications. ``components`` still says which controllers run there. The sync
    objects are named ``flux-system``, as a Flux Operator ``FluxInstance`` with ``.spec.sync`` names its
    own: leave that unset, or the two fight over one GitRepository and one Kustomization.
    """

    install: FluxInstall = FluxInstall.HELM
    version: Annotated[str, _gate(checks.chart_version_problem)] = FLUX_CHART_VERSION
    namespace: DnsLabel = FLUX_NAMESPACE
    components: Annotated[tuple[FluxComponent, ...], _gate(checks.flux_components_problem)] = (
        DEFAULT_COMPONENTS
    )
    components_extra: tuple[FluxComponent, ...] = ()
    network_policy: StrictBool = True
    tolerations: tuple[TolerationSpec, ...] = ()
    node_selector: Mapping[str, str] = Field(default_factory=dict)
    git_interval: Duration = DEFAULT_GIT_INTERVAL
    interval: Duration = DEFAULT_INTERVAL
    retry_interval: Duration = DEFAULT_RETRY_INTERVAL
    timeout: Duration = DEFAULT_TIMEOUT
    ready_timeout: Annotated[str, _gate(checks.ready_timeout_problem)] | None = None
    """How long ``up`` waits for the GitRepository and Kustomization to be Ready; ``0s`` does not wait.

    Longer than ``timeout``, which Flux may spend on health checks; unset, ``timeout`` plus a margin."""
    sops: StrictBool = False
    substitute: StrictBool = True
    """Hand the environment contract to the root Kustomization's post-build substitution (``${baseDomain}``
    in fleet manifests). Flux then substitutes every ``${VAR}`` under the sync path: with ``false``,
    nothing there is (for a fleet whose manifests hold ``${...}`` of their own throughout)."""
    health_checks: tuple[HealthCheckSpec, ...] = ()
    notifications: NotificationsSpec | None = None

    @field_validator("ready_timeout")
    @classmethod
    def _outlasts_flux(cls, value: str | None, info: ValidationInfo) -> str | None:
        timeout = info.data.get("timeout")  # absent when it failed its own check
        if value is not None and timeout is not None:
            problem = checks.ready_timeout_after_timeout_problem(value, timeout)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("components_extra")
    @classmethod
    def _no_repeats(cls, value: tuple[FluxComponent, ...], info: ValidationInfo) -> tuple[FluxComponent, ...]:
        problem = checks.flux_components_extra_problem(value, info.data.get("components", ()))
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("notifications")
    @classmethod
    def _needs_notification_controller(
        cls, value: NotificationsSpec | None, info: ValidationInfo
    ) -> NotificationsSpec | None:
        installed = (*info.data.get("components", ()), *info.data.get("components_extra", ()))
        problem = None if value is None else checks.notifications_problem(installed)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _nothing_to_install_externally(self) -> FluxSpec:
        unused = sorted(to_camel(key) for key in self.model_fields_set & set(_INSTALL_ONLY))
        if self.install is FluxInstall.EXTERNAL and unused:
            raise ValueError(
                f"{', '.join(unused)}: not used with install: external (the controllers are installed "
                "outside this stack)"
            )
        return self

    @property
    def image_automation(self) -> bool:
        """True when Flux writes to git (image automation), so its deploy key must be read-write."""
        return image_automation_enabled((*self.components, *self.components_extra))


# -- the whole stack -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackSecrets:
    """The secret config values, always as ``pulumi.Output`` secrets (and never shown by ``repr``)."""

    github_token: pulumi.Output[str] | None = field(default=None, repr=False)
    sops_age_key: pulumi.Output[str] | None = field(default=None, repr=False)
    notification_webhook: pulumi.Output[str] | None = field(default=None, repr=False)
    kubeconfig: pulumi.Output[str] | None = field(default=None, repr=False)
    """An existing cluster's kubeconfig (the key ``cluster.existing.kubeconfig`` names)."""
    deploy_private_key: pulumi.Output[str] | None = field(default=None, repr=False)
    """An existing deploy key's private half (the key ``git.deployKey.existing.privateKey`` names)."""
    github_app_private_key: pulumi.Output[str] | None = field(default=None, repr=False)
    """Flux's GitHub App's PEM (the key ``git.githubApp.privateKey`` names)."""
    github_app_pem: pulumi.Output[str] | None = field(default=None, repr=False)
    """The GitHub provider's App's PEM (the key ``github.appAuth.pemFile`` names)."""


@dataclass(frozen=True)
class StackConfig:
    """A validated stack config."""

    stack: str
    environment: Environment
    cluster: ClusterSpec | ExistingClusterSpec
    git: GitSpec
    flux: FluxSpec
    tags: Mapping[str, str]
    github: GitHubSpec = field(default_factory=GitHubSpec)
    secrets: StackSecrets = StackSecrets()
    aws_profile: str | None = None
    """``aws:profile``: the deploying runner's AWS profile, which the platform's kubeconfig must keep."""
    aws_role_arn: str | None = None
    """The role the AWS provider assumes (the last of ``aws:assumeRoles``): the principal that creates the
    cluster and holds EKS's creator entry, so the platform's kubeconfig must assume it too."""
    warnings: tuple[str, ...] = ()
    """What holds but should not, by key path: a private key in plaintext in a stack that is not prod (a
    prod stack's config is refused for it). The program prints each as a Pulumi warning."""

    @property
    def cluster_creator(self) -> str | None:
        """The principal that holds EKS's creator entry: ``cluster.creator``, else the assumed role."""
        creator = self.cluster.creator if isinstance(self.cluster, ClusterSpec) else None
        return creator or self.aws_role_arn


def platform_name(environment: Environment, cluster: ClusterSpec | ExistingClusterSpec) -> str:
    """The prefix of every component name: ``cluster.name``, else ``gitops-<environment name>``.

    It takes the two sections, not a ``StackConfig``: the config checks the names AWS derives from it
    before a ``StackConfig`` exists. Example::

        name = platform_name(config.environment, config.cluster)
    """
    return cluster.name or f"gitops-{environment.name}"


_SECTION_MODELS: dict[str, type[BaseModel]] = {
    "environment": Environment,
    "cluster": ClusterSpec,
    "git": GitSpec,
    "flux": FluxSpec,
    "github": GitHubSpec,
}


def _validate_section(section: str, value: Any, problems: list[str]) -> Any:
    if section == "tags":
        if value is _UNREADABLE:
            return {}
        return _validate_tags(value, problems)
    model = _SECTION_MODELS[section]
    if section == "cluster" and isinstance(value, Mapping) and "existing" in value:
        model = ExistingClusterSpec
    if value is _UNREADABLE:
        return None  # already reported
    if value is None and section in OPTIONAL_SECTIONS:
        value = {}
    if value is None:
        problems.append(f"{PROJECT}:{section}: required")
        return None
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems.extend(
            validation_problems(exc, f"{PROJECT}:{section}", spell=to_camel, hints=_PATTERN_HINTS)
        )
        return None


def _validate_tags(value: Any, problems: list[str]) -> dict[str, str]:
    if value is None:
        problems.append(f"{PROJECT}:tags.{OWNER_TAG}: {_OWNER_REQUIRED}")
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"{PROJECT}:tags: must be a mapping of tag names to strings")
        return {}
    tags: dict[str, str] = {}
    for key, tag in value.items():
        where = f"{PROJECT}:tags.{key}"
        if not isinstance(key, str) or not 1 <= len(key) <= 128 or key.startswith("aws:"):
            problems.append(f"{where}: tag names are 1-128 characters and may not start with 'aws:'")
        elif not isinstance(tag, str) or len(tag) > 256:
            problems.append(f"{where}: must be a string of at most 256 characters")
        else:
            tags[key] = tag
    if OWNER_TAG not in value:
        problems.append(f"{PROJECT}:tags.{OWNER_TAG}: {_OWNER_REQUIRED}")
    return tags


def _secret(raw: Any) -> pulumi.Output[str] | None:
    if raw is None:
        return None
    if isinstance(raw, pulumi.Output):
        return pulumi.Output.secret(raw)
    if isinstance(raw, Mapping) and "secure" in raw:
        # Ciphertext straight from Pulumi.<stack>.yaml: only the engine can decrypt it. Offline callers
        # (the plan) still see that the value is set, and that it is secret.
        return pulumi.Output.secret(SECRET)
    return pulumi.Output.secret(str(raw))


def _unencodable_text(value: Any, where: str, problems: list[str], enclosing: tuple[int, ...] = ()) -> None:
    """Report text that is not valid Unicode, such as a lone surrogate from a YAML escape (``"\\uD800"``).

    The models accept it, and it would only fail later, when the program hands it to the engine.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"{where}: is not valid Unicode text (it holds a lone surrogate)")
        return
    if id(value) in enclosing:  # a YAML alias cycle; the models report it
        return
    inside = (*enclosing, id(value))
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not key.isascii():
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    problems.append(f"{where}: has a key that is not valid Unicode text")
                    continue
            _unencodable_text(item, f"{where}.{key}", problems, inside)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _unencodable_text(item, f"{where}[{index}]", problems, inside)


def load_config(
    raw: Mapping[str, Any],
    *,
    stack: str,
    secrets: StackSecrets | None = None,
) -> StackConfig:
    """Validate a stack config given as a mapping, and return it typed.

    ``raw`` is what ``Pulumi.<stack>.yaml`` holds under ``config:``: keys may carry the ``gitops-infra:``
    prefix or not; keys of other namespaces (``aws:region``) are ignored. Secret keys (``githubToken``,
    ``sopsAgeKey``) may be plain strings, ``pulumi.Output``s or ``{"secure": ...}`` ciphertext; they become
    ``pulumi.Output`` secrets. ``secrets``, when given, takes precedence over them.

    Raises ``ConfigError`` listing every problem by its key path; ``raw`` that is not a mapping (a YAML
    file whose ``config:`` is a list or a string) is one such problem.
    """
    if not isinstance(raw, Mapping):
        problem = f"{PROJECT}: the stack config must be a mapping of keys to values, not {type(raw).__name__}"
        raise ConfigError([problem], stack=stack)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, sep, bare = str(key).rpartition(":")
        if sep and namespace != PROJECT:
            continue
        _unencodable_text(value, f"{PROJECT}:{bare}", problems)
        values[bare] = value

    profile = raw.get(AWS_PROFILE_KEY)
    if profile is not None and not (isinstance(profile, str) and profile.strip()):
        problems.append(f"{AWS_PROFILE_KEY}: must be the name of an AWS profile")
        profile = None

    role_arn = _assumed_role(raw.get(AWS_ASSUME_ROLES_KEY), problems)

    def read_secret(name: str) -> pulumi.Output[str] | None:
        return _secret(values.get(name))

    return _build(
        values,
        stack=stack,
        read_secret=read_secret,
        given=secrets,
        problems=problems,
        aws_profile=profile,
        aws_role_arn=role_arn,
        github_base_url=raw.get(GITHUB_BASE_URL_KEY),
        # Every key of the file, of any namespace: a private key is no less exposed under tls:key.
        plaintext_keys=[
            path for key, value in raw.items() for path in checks.private_key_paths(value, str(key))
        ],
    )


def _assumed_role(value: Any, problems: list[str]) -> str | None:
    """The role the AWS provider ends up as: the last of ``aws:assumeRoles`` (a chain assumes each)."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        problems.append(f"{AWS_ASSUME_ROLES_KEY}: must be a list of roles to assume, each with roleArn")
        return None
    last = len(value) - 1
    role = value[last].get("roleArn") if isinstance(value[last], Mapping) else None
    problem = checks.iam_role_problem(role)
    if problem is not None:
        problems.append(f"{AWS_ASSUME_ROLES_KEY}[{last}].roleArn: {problem}")
        return None
    return role


def _build(
    values: Mapping[str, Any],
    *,
    stack: str,
    read_secret: Callable[[str], pulumi.Output[str] | None],
    problems: list[str],
    given: StackSecrets | None = None,
    aws_profile: str | None = None,
    aws_role_arn: str | None = None,
    github_base_url: object = None,
    plaintext_keys: Sequence[str] = (),
) -> StackConfig:
    """Validate the sections, then what spans them; ``values`` holds every key of the namespace read.

    ``plaintext_keys`` are the key paths that hold a private key in plaintext (``checks.private_key_paths``):
    a problem each in a prod stack (``checks.is_prod``), a warning each in another.
    """
    sections = {section: _validate_section(section, values.get(section), problems) for section in SECTIONS}
    environment: Environment | None = sections["environment"]
    cluster: ClusterSpec | ExistingClusterSpec | None = sections["cluster"]
    git: GitSpec | None = sections["git"]
    flux: FluxSpec | None = sections["flux"]
    github: GitHubSpec | None = sections["github"]
    named = _named_secret_keys(sections)
    # Read loosely too, so that a key an invalid section names is not also reported as unknown.
    known = {*SECTIONS, checks.FLEET_SECTION, *SECRET_KEYS, *named.values(), *named_secret_keys(values)}
    if values.get(checks.FLEET_SECTION) is not None:
        # The fleet's own model, only for a stack that has the section: a plan of one that has not
        # imports none of the fleet's code.
        from gitops_infra.automation.fleet.inventory import fleet_spec

        problems.extend(fleet_spec(values[checks.FLEET_SECTION])[1])
    problems.extend(f"{PROJECT}:{key}: unknown key" for key in values if key not in known)
    secrets = given or _read_secrets(read_secret, named, problems)
    if flux is not None:
        problems.extend(_flux_secret_problems(flux, secrets))
    if github is not None and github.app_auth is not None and secrets.github_token is not None:
        problems.append(
            f"{PROJECT}:github.appAuth: the GitHub provider authenticates as the App or with "
            f"{PROJECT}:{GITHUB_TOKEN_KEY}, not both: unset that secret "
            f"(pulumi config rm {GITHUB_TOKEN_KEY}) or remove appAuth"
        )
    if isinstance(cluster, ClusterSpec) and flux is not None:
        problems.extend(_kubernetes_floor_problems(cluster, flux))
    if git is not None and github_base_url is not None:
        problems.extend(_github_base_url_problems(git, github_base_url))
    if isinstance(cluster, ClusterSpec) and cluster.admins and (cluster.creator or aws_role_arn) is None:
        problems.append(
            f"{PROJECT}:cluster.creator: {checks.ADMINS_NEED_CREATOR}; set it to the IAM role or user "
            f"that creates the cluster, or deploy through a role ({AWS_ASSUME_ROLES_KEY})"
        )
    if environment is not None and isinstance(cluster, ClusterSpec):
        problems.extend(_derived_name_problems(environment, cluster))
    if environment is not None and flux is not None and environment.service_namespace == flux.namespace:
        # Two owners of one namespace, and two `environment` ConfigMaps with one name: a destroy of either
        # would take the other's away.
        problems.append(
            f"{PROJECT}:environment.serviceNamespace: {environment.service_namespace!r} is also "
            "flux.namespace; app workloads and Flux need namespaces of their own"
        )
    # An environment that cannot be read is already a problem: fail closed, as for prod.
    prod = environment is None or checks.is_prod(environment.name, stack)
    plaintext = [f"{key}: {checks.PLAINTEXT_PRIVATE_KEY}" for key in plaintext_keys]
    if prod:
        problems.extend(f"{problem} (a prod stack refuses it)" for problem in plaintext)
    if problems:
        raise ConfigError(problems, stack=stack)
    return StackConfig(
        stack=stack,
        secrets=secrets,
        aws_profile=aws_profile,
        aws_role_arn=aws_role_arn,
        warnings=() if prod else tuple(plaintext),
        **sections,
    )


_NAMED_SECRETS = {
    "cluster.existing.kubeconfig": "kubeconfig",
    "git.deployKey.existing.privateKey": "deploy_private_key",
    "git.githubApp.privateKey": "github_app_private_key",
    "github.appAuth.pemFile": "github_app_pem",
}
"""Where the config names a secret config key (a camelCase path), and the ``StackSecrets`` field that
holds its value."""


def _at(value: Any, path: str) -> Any:
    """The value at the dotted ``path`` inside nested mappings, or ``None``."""
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _named_secret_keys(sections: Mapping[str, Any]) -> dict[str, str]:
    """The secret keys the validated sections name, by where they name them."""
    named: dict[str, str] = {}
    for where in _NAMED_SECRETS:
        section, _, path = where.partition(".")
        model = sections.get(section)
        key = _at(model.model_dump(by_alias=True), path) if isinstance(model, BaseModel) else None
        if isinstance(key, str):
            named[where] = key
    return named


def _read_secrets(
    read_secret: Callable[[str], pulumi.Output[str] | None], named: Mapping[str, str], problems: list[str]
) -> StackSecrets:
    for where, key in named.items():
        if read_secret(key) is None:
            problems.append(
                f"{PROJECT}:{where}: names the secret {PROJECT}:{key}, which is not set "
                f"(pulumi config set --secret {key} ...)"
            )
    return StackSecrets(
        github_token=read_secret(GITHUB_TOKEN_KEY),
        sops_age_key=read_secret(SOPS_AGE_KEY_KEY),
        notification_webhook=read_secret(NOTIFICATION_WEBHOOK_KEY),
        **{_NAMED_SECRETS[where]: read_secret(key) for where, key in named.items()},
    )


def _loosely(raw: Mapping[str, Any], where: str) -> Any:
    """The value at ``where`` (``section.path``) of a config not validated yet, or ``None``."""
    section, _, path = where.partition(".")
    return _at(raw.get(f"{PROJECT}:{section}", raw.get(section)), path)


def named_secret_keys(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The secret keys a raw stack config names (an existing cluster's kubeconfig, an existing key).

    Read loosely, from a config not validated yet: the offline plan plans each with a placeholder.
    """
    found = (_loosely(raw, where) for where in _NAMED_SECRETS)
    return tuple(key for key in found if isinstance(key, str))


def _flux_secret_problems(flux: FluxSpec, secrets: StackSecrets) -> list[str]:
    """What ``flux`` needs from the secret keys: the age key for SOPS, an address for notifications."""
    problems: list[str] = []
    if flux.sops and secrets.sops_age_key is None:
        problems.append(
            f"{PROJECT}:flux.sops: needs the secret {PROJECT}:{SOPS_AGE_KEY_KEY} "
            f"(pulumi config set --secret {SOPS_AGE_KEY_KEY} ...)"
        )
    notifications = flux.notifications
    if notifications is None:
        return problems
    where = f"{PROJECT}:flux.notifications"
    webhook = secrets.notification_webhook is not None
    if notifications.needs_token:
        if webhook:
            problems.append(
                f"{where}.providerType: {notifications.provider_type} also needs a token, which the Secret "
                f"made from {PROJECT}:{NOTIFICATION_WEBHOOK_KEY} would not hold: unset that secret, and "
                "name your own Secret (with token) in secretName and the address in address"
            )
        elif notifications.secret_name is None:
            problems.append(
                f"{where}.secretName: {notifications.provider_type} needs a Secret holding its token "
                "(created outside this stack, for example SOPS-encrypted in the fleet repository)"
            )
    if notifications.address is None and not webhook:
        problems.append(
            f"{where}: {notifications.provider_type} needs an address to post to: set the secret "
            f"{PROJECT}:{NOTIFICATION_WEBHOOK_KEY} (pulumi config set --secret {NOTIFICATION_WEBHOOK_KEY} "
            "<webhook URL>), or address for one that is not secret"
        )
    elif notifications.address is not None and webhook:
        problems.append(
            f"{where}.address: set either address or the secret {PROJECT}:{NOTIFICATION_WEBHOOK_KEY}, "
            "not both (Flux ignores address when the Secret has one)"
        )
    return problems


def _github_base_url_problems(git: GitSpec, value: object) -> list[str]:
    """``github:baseUrl`` is for Pulumi's default GitHub provider, which the platform never uses: it makes
    its own. Naming another GitHub than that one talks to, it would be a setting that does nothing."""
    if not (git.registers_deploy_key or git.manages_repository):
        return []  # no GitHub provider at all
    url = value if isinstance(value, str) and value.startswith("https://") else None
    if url is not None and checks.github_host(url) == git.github_host:
        return []
    talks_to = (
        f"{git.github_host}, the GitHub of {PROJECT}:git.githubApp"
        if git.github_app is not None
        else "the API in the GITHUB_BASE_URL environment variable, else github.com's"
    )
    return [
        f"{GITHUB_BASE_URL_KEY}: is not read: the platform makes its own GitHub provider, which talks to "
        f"{talks_to}; remove it (a GitHub Enterprise Server is named by {PROJECT}:git.githubApp.baseUrl, "
        "https://<host>/api/v3)"
    ]


def _kubernetes_floor_problems(cluster: ClusterSpec, flux: FluxSpec) -> list[str]:
    """The pinned Flux refuses older clusters (the one rule InstallOptions checks too)."""
    problem = kubernetes_floor_problem(cluster.kubernetes_version, flux.version)
    return [] if problem is None else [f"{PROJECT}:cluster.kubernetesVersion: {problem}"]


def _derived_name_problems(environment: Environment, cluster: ClusterSpec) -> list[str]:
    """Names AWS derives from the platform's name must fit AWS's limits; say which key to shorten."""
    name = platform_name(environment, cluster)
    problems: list[str] = []
    problem = checks.cluster_component_name_problem(name)
    if problem is not None:  # only a derived name gets here: ClusterSpec checks its own `name`
        return [
            f"{PROJECT}:environment.name: with cluster.name unset the platform is named "
            f"gitops-<environment>, which {problem}; set a shorter cluster.name"
        ]
    for index, group in enumerate(cluster.node_groups):
        problem = checks.node_group_name_problem(name, group.name)
        if problem is not None:
            problems.append(f"{PROJECT}:cluster.nodeGroups[{index}].name: {problem}")
    return problems


def load_stack_config(config: pulumi.Config | None = None) -> StackConfig:
    """Read and validate the running stack's config (``pulumi.Config("gitops-infra")``).

    Raises ``ConfigError`` listing every problem by its key path.
    """
    config = config if config is not None else pulumi.Config(PROJECT)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for section in (*SECTIONS, checks.FLEET_SECTION):
        raw = config.get(section)
        if raw is None:
            continue
        try:
            values[section] = json.loads(raw)
        except json.JSONDecodeError:
            problems.append(f"{PROJECT}:{section}: must be a structured value (a YAML mapping)")
            values[section] = _UNREADABLE
    aws = pulumi.Config("aws")
    profile = aws.get("profile") or None
    role_arn = _assumed_role(aws.get_object("assumeRoles"), problems)
    # The keys this program reads that the engine does not hold as secrets: plaintext in the files.
    plain = {
        key: values.get(key, config.get(key))
        for key in (*values, *SECRET_KEYS, *named_secret_keys(values))
        if not pulumi.runtime.is_config_secret(config.full_key(key))
    }
    stack_config = _build(
        values,
        stack=pulumi.get_stack(),
        read_secret=config.get_secret,
        problems=problems,
        aws_profile=profile,
        aws_role_arn=role_arn,
        github_base_url=pulumi.Config("github").get("baseUrl"),
        plaintext_keys=[
            path
            for key, value in plain.items()
            for path in checks.private_key_paths(value, config.full_key(key))
        ],
    )
    for warning in stack_config.warnings:
        pulumi.log.warn(warning)
    return stack_config


def plan_config(raw: Mapping[str, Any], project: str, stack: str) -> Mapping[str, Any]:
    """This program's step of the offline plan (``offline_plan(..., config_step=plan_config)``).

    The secrets are set with ``pulumi config set --secret`` and are rarely in the stack file a pull
    request sees: they are planned with placeholders rather than failing for want of a credential. Then
    the whole config is checked, so a bad one fails with every problem listed before any resource is
    registered. Another project's config passes through untouched.
    """
    if project != PROJECT:
        return raw
    # The stack file's own form of a secret, holding the plan's placeholder (the marker itself).
    # A GitHub App stands in for the token: planning both would be the config error it is for real.
    app_auth = _loosely(raw, "github.appAuth") is not None
    unplanned = {GITHUB_TOKEN_KEY} if app_auth else set()
    secret_keys = [key for key in (*SECRET_KEYS, *named_secret_keys(raw)) if key not in unplanned]
    planned = {**{f"{PROJECT}:{key}": {"secure": SECRET} for key in secret_keys}, **raw}
    load_config(planned, stack=stack)
    return planned
