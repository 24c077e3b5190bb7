"""``FluxBootstrap``: Flux CD installed onto a cluster and syncing a path of the fleet repository.

Like Flux's own ``pkg/manifestgen``, bootstrap is three separable pieces, each a pure *options → manifest*
function plus a builder that registers it:

1. **install** (``install_values`` / ``build_install``): the controllers, from the fluxcd-community
   ``flux2`` Helm chart at a pinned version (``FLUX_CHART_VERSION``, Flux ``FLUX_VERSION``), as a
   ``helm.v3.Release``. Helm renders and applies it inside the Kubernetes provider, so nothing is
   downloaded at program time. ``components`` / ``components_extra`` pick the controllers; network
   policy and tolerations are chart values.
2. **source secret** (``source_secret_data`` / ``build_source_secret``): the git-auth Secret. With a
   deploy key (``SourceSecretOptions``) it is ``flux-system`` with ``identity``, ``identity.pub`` and
   ``known_hosts``; as a GitHub App (``GitHubAppSecretOptions``) it is ``flux-system-github-app`` with
   the fields source-controller reads for ``provider: github``. The two names differ so that a move from
   one to the other makes the new Secret before the old one goes.
3. **sync** (``git_repository_manifest``, ``kustomization_manifest`` / ``build_sync``): the
   ``GitRepository`` and the ``Kustomization`` (``prune: true``), with optional SOPS decryption and
   health checks, and the ``environment`` contract handed to post-build substitution.

The bootstrap proves itself, as ``flux bootstrap`` does: both sync objects carry pulumi-kubernetes'
``pulumi.com/waitFor: condition=Ready`` (with ``pulumi.com/timeoutSeconds`` from ``ready_timeout``), so
``up`` succeeds only once Flux has cloned the repository and applied the path.

A credential change is proven the same way. The GitRepository carries ``reconcile.fluxcd.io/requestedAt``
set to a digest of its credential (:attr:`SourceSecretOptions.reconcile_request`): a new key changes it,
which asks source-controller to fetch now, and ``up`` waits until ``status.lastHandledReconcileAt``
echoes that value with the GitRepository Ready and not suspended. A Ready condition alone cannot show
it, since an annotation does not bump the generation and the old Ready still stands; and a suspended
GitRepository records a request as handled without fetching. Pulumi deletes what an update
replaced or dropped (the old deploy key, the old Secret) only after every resource of the update is
done, so the old credential outlives the proof that the new one works. The wait outlasts Flux's own
``timeout`` (by default it is that ``timeout`` plus a margin), so ``up`` fails with Flux's verdict, never
before it. A ``ready_timeout`` of ``0s`` turns the wait off, for a cluster Flux cannot reach yet.

Every custom resource ``depends_on`` the controllers' Release, so its CRDs exist first; and because
Pulumi deletes dependents first, ``destroy`` removes the sync objects while the controllers still run to
clear their finalizers, then the controllers, then the namespace. The Kustomization's
``deletionPolicy: WaitForTermination`` makes kustomize-controller prune what it applied and hold its
finalizer until that is gone, so the controllers (and their CRDs) are never uninstalled under Flux objects
that still carry ``finalizers.fluxcd.io``. A suspended Kustomization prunes nothing when it is deleted
(kustomize-controller v1.8.3's ``finalizerShouldDeleteResources``): after ``destroy``'s drain, which
suspends it, what it applied stays in the cluster, but for what the drain deleted, and goes with it.

``FluxBootstrapArgs`` takes the three option groups whole, as Flux's ``bootstrap.Run`` takes
``install.Options``, ``sourcesecret.Options`` and ``sync.Options``; each group checks its own fields
when it is made. Flux lives in the sync's namespace. The Kubernetes provider comes through ``opts``
(``providers=[k8s_provider]``), as for any Pulumi component, and every child inherits it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.checks import DEFAULT_BRANCH, kubernetes_floor_problem
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import OWNED, NamespaceResource, fixed_secret
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.environment import build_environment_configmap
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment
from gitops_infra.defaults import (
    DEFAULT_COMPONENTS,
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TIMEOUT,
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_VERSION,
    KUBERNETES_FLOOR,
    MIN_KUBERNETES_VERSION,
    FluxComponent,
    FluxInstall,
    image_automation_enabled,
)

__all__ = [
    "DEFAULT_BRANCH",
    "DEFAULT_COMPONENTS",
    "DEFAULT_GIT_INTERVAL",
    "DEFAULT_INTERVAL",
    "DEFAULT_RETRY_INTERVAL",
    "DEFAULT_TIMEOUT",
    "FLUX_CHART",
    "FLUX_CHART_REPOSITORY",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_SECRET_NAME",
    "FLUX_SYNC_NAME",
    "FLUX_VERSION",
    "GITHUB_APP_BASE_URL_KEY",
    "GITHUB_APP_ID_KEY",
    "GITHUB_APP_INSTALLATION_ID_KEY",
    "GITHUB_APP_PRIVATE_KEY_KEY",
    "GITHUB_APP_SECRET_NAME",
    "GITHUB_PROVIDER",
    "GIT_REPOSITORY_API_VERSION",
    "HANDLED_REQUEST_PATH",
    "IDENTITY_KEY",
    "IDENTITY_PUB_KEY",
    "KNOWN_HOSTS_KEY",
    "KUBERNETES_FLOOR",
    "KUSTOMIZATION_API_VERSION",
    "KUSTOMIZATION_DELETION_POLICY",
    "MIN_KUBERNETES_VERSION",
    "NOTIFICATION_ADDRESS_KEY",
    "NOTIFICATION_API_VERSION",
    "NOTIFICATION_WEBHOOK_SECRET_NAME",
    "RECONCILE_REQUEST_ANNOTATION",
    "REQUIRED_COMPONENTS",
    "SOPS_AGE_KEY",
    "SOPS_SECRET_NAME",
    "TIMEOUT_ANNOTATION",
    "WAIT_FOR_ANNOTATION",
    "WAIT_FOR_READY",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "FluxInstall",
    "GitAuth",
    "GitHubAppSecretOptions",
    "InstallOptions",
    "NotificationArgs",
    "Notifications",
    "SourceSecretOptions",
    "SyncObjects",
    "SyncOptions",
    "build_install",
    "build_notifications",
    "build_sops_secret",
    "build_source_secret",
    "build_sync",
    "credential_digest",
    "git_repository_manifest",
    "image_automation_enabled",
    "install_values",
    "kubernetes_floor_problem",
    "kustomization_manifest",
    "notification_manifests",
    "ready_annotations",
    "source_secret_data",
]

TYPE_TOKEN = "gitops-infra:index:FluxBootstrap"

FLUX_CHART = "flux2"
FLUX_CHART_REPOSITORY = "https://fluxcd-community.github.io/helm-charts"
FLUX_RELEASE_NAME = "flux2"
FLUX_SECRET_NAME = "flux-system"
FLUX_SYNC_NAME = "flux-system"
IDENTITY_KEY = "identity"
IDENTITY_PUB_KEY = "identity.pub"
KNOWN_HOSTS_KEY = "known_hosts"
SOPS_SECRET_NAME = "sops-age"
SOPS_AGE_KEY = "age.agekey"  # kustomize-controller reads keys ending in .agekey
NOTIFICATION_WEBHOOK_SECRET_NAME = "notification-webhook"
NOTIFICATION_ADDRESS_KEY = "address"  # notification-controller prefers it over spec.address
KUSTOMIZATION_DELETION_POLICY = "WaitForTermination"  # Flux >= 2.6 (kustomize-controller v1.6)
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"  # pulumi-kubernetes >= 4.18
TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds"
WAIT_FOR_READY = "condition=Ready"
RECONCILE_REQUEST_ANNOTATION = checks.RECONCILE_REQUEST_ANNOTATION
HANDLED_REQUEST_PATH = "{.status.lastHandledReconcileAt}"  # the request value a reconcile has handled
# Matches only while the GitRepository is not suspended: a suspended one records a request as handled
# without fetching (source-controller v1.8.2 records it on every return, suspend included; v1.8.5 too), so the
# request alone proves nothing then. `interval` is a spec field the status does not have.
NOT_SUSPENDED_PATH = "{$[?@.interval && (!@.suspend || @.suspend == false)]}"
GITHUB_PROVIDER = checks.GIT_PROVIDERS[0]  # spec.provider for a GitHub App (source-controller >= 1.5)
GITHUB_APP_SECRET_NAME = "flux-system-github-app"
# The Secret keys source-controller v1.8.2 reads for provider github: fluxcd/pkg/auth v0.38.4,
# githubapp/client.go (KeyAppID, KeyAppInstallationID, KeyAppPrivateKey, KeyAppBaseURL; the same in the
# v0.38.5 of the local cluster's v1.8.5).
GITHUB_APP_ID_KEY = "githubAppID"
GITHUB_APP_INSTALLATION_ID_KEY = "githubAppInstallationID"
GITHUB_APP_PRIVATE_KEY_KEY = "githubAppPrivateKey"
GITHUB_APP_BASE_URL_KEY = "githubAppBaseURL"
RELEASE_TIMEOUT_SECONDS = 600
GIT_REPOSITORY_API_VERSION = "source.toolkit.fluxcd.io/v1"
KUSTOMIZATION_API_VERSION = "kustomize.toolkit.fluxcd.io/v1"
NOTIFICATION_API_VERSION = "notification.toolkit.fluxcd.io/v1beta3"


REQUIRED_COMPONENTS: tuple[FluxComponent, ...] = tuple(map(FluxComponent, checks.REQUIRED_FLUX_COMPONENTS))
"""The controllers the sync needs (``checks.REQUIRED_FLUX_COMPONENTS``, as members of the enum)."""
# The chart's values key for each controller.
_CHART_KEYS: dict[FluxComponent, str] = {
    FluxComponent.SOURCE_CONTROLLER: "sourceController",
    FluxComponent.KUSTOMIZE_CONTROLLER: "kustomizeController",
    FluxComponent.HELM_CONTROLLER: "helmController",
    FluxComponent.NOTIFICATION_CONTROLLER: "notificationController",
    FluxComponent.IMAGE_REFLECTOR_CONTROLLER: "imageReflectionController",
    FluxComponent.IMAGE_AUTOMATION_CONTROLLER: "imageAutomationController",
    FluxComponent.SOURCE_WATCHER: "sourceWatcher",
}


# -- 1. install ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstallOptions:
    """What to install: the chart version, the controllers, network policy, and where they run.

    ``tolerations`` and ``node_selector`` apply to every controller and to the chart's pre-install
    ``flux check --pre`` Job, so Flux can be pinned to a tainted system node group. ``kubernetes_version``
    is the cluster's Kubernetes minor, when known: the pinned chart's Flux refuses an older one.
    """

    version: str = FLUX_CHART_VERSION
    components: Sequence[FluxComponent] = DEFAULT_COMPONENTS
    components_extra: Sequence[FluxComponent] = ()
    network_policy: bool = True
    tolerations: Sequence[Mapping[str, str]] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    kubernetes_version: str | None = None

    @property
    def installed(self) -> tuple[FluxComponent, ...]:
        """Every controller that runs."""
        return (*self.components, *self.components_extra)

    def __post_init__(self) -> None:
        problems = Problems("InstallOptions")
        problems.gate("version", checks.chart_version_problem, self.version)
        for component in self.installed:
            problems.check(component in _CHART_KEYS, "components", f"unknown component {component!r}")
        problems.gate("components", checks.flux_components_problem, self.components)
        problem = checks.flux_components_extra_problem(self.components_extra, self.components)
        if problem is not None:
            problems.add("components_extra", problem)
        for index, toleration in enumerate(self.tolerations):
            fields = (toleration.get(key) for key in ("key", "operator", "value", "effect"))
            for key, message in checks.toleration_problems(*fields):
                problems.add(f"tolerations[{index}].{key}", message)
        if self.kubernetes_version is not None:
            problem = kubernetes_floor_problem(self.kubernetes_version, self.version)
            if problem is not None:
                problems.add("kubernetes_version", problem)
        problems.raise_if_any()


def install_values(options: InstallOptions) -> dict[str, Any]:
    """The ``flux2`` chart values for ``options``: every controller is set on or off explicitly."""
    selected = set(options.installed)
    placement: dict[str, Any] = {}
    if options.tolerations:
        placement["tolerations"] = [dict(toleration) for toleration in options.tolerations]
    if options.node_selector:
        placement["nodeSelector"] = dict(options.node_selector)
    values: dict[str, Any] = {
        "installCRDs": True,
        "policies": {"create": options.network_policy},
    }
    for component, key in _CHART_KEYS.items():
        values[key] = {"create": component in selected, **placement}
    if placement:
        # The chart has no global placement: its pre-install Job (`cli`) is placed on its own.
        values["cli"] = dict(placement)
    return values


def build_install(
    name: str, options: InstallOptions, namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.helm.v3.Release:
    """The controllers, as a Helm release of the pinned chart."""
    return k8s.helm.v3.Release(
        f"{name}-controllers",
        name=FLUX_RELEASE_NAME,
        chart=FLUX_CHART,
        version=options.version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=FLUX_CHART_REPOSITORY),
        namespace=namespace.metadata.name,
        create_namespace=False,
        values=install_values(options),
        cleanup_on_fail=True,
        timeout=RELEASE_TIMEOUT_SECONDS,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )


# -- 2. source secret ----------------------------------------------------------------------------------


def credential_digest(*parts: str) -> str:
    """A short digest naming a credential (``sha256-`` and 20 hex digits): the reconcile request.

    One-way and truncated: it tells one key from the next, and nothing of the key. Only letters, digits
    and ``-``, so it sits in a ``jsonpath=...=value`` wait unquoted.
    """
    digest = hashlib.sha256("\0".join(part.strip() for part in parts).encode()).hexdigest()
    return f"sha256-{digest[:20]}"


def _public_key_blob(public_key: str) -> str:
    """``<type> <base64>`` of an ``authorized_keys`` line: the key itself, without its comment."""
    return " ".join(public_key.split()[:2])


def _request(*parts: pulumi.Input[str]) -> pulumi.Output[str]:
    """The digest of ``parts``, not secret: a digest of a secret gives nothing of it away, and a secret
    annotation would make the GitRepository's whole metadata secret in the state."""
    return pulumi.Output.unsecret(pulumi.Output.all(*parts).apply(lambda values: credential_digest(*values)))


@dataclass(frozen=True)
class SourceSecretOptions:
    """The git-auth Secret: an SSH identity and the host keys to trust. The private key is kept secret."""

    private_key: pulumi.Input[str]
    public_key: pulumi.Input[str] | None = None
    known_hosts: pulumi.Input[str] = GITHUB_KNOWN_HOSTS
    name: str = FLUX_SECRET_NAME
    provider: ClassVar[str | None] = None
    """The GitRepository's ``spec.provider``: none, for an SSH key."""
    resource_kind: ClassVar[str] = "git-auth"
    """The Secret resource's name, after the component's: one per kind of auth, so a move between them
    creates the new Secret and deletes the old at the end of the update."""

    def __post_init__(self) -> None:
        problems = Problems("SourceSecretOptions")
        problems.gate("known_hosts", checks.known_hosts_problem, self.known_hosts)
        problems.gate("name", checks.dns_label_problem, self.name)
        problems.raise_if_any()

    @property
    def reconcile_request(self) -> pulumi.Output[str]:
        """The GitRepository's reconcile request for this key: a digest of its public half when known
        (the fingerprint's input), else of the private key. A new key is a new request."""
        if self.public_key is not None:
            return _request(pulumi.Output.from_input(self.public_key).apply(_public_key_blob))
        return _request(self.private_key)


@dataclass(frozen=True)
class GitHubAppSecretOptions:
    """The git-auth Secret for a GitHub App: Flux fetches over HTTPS with the App's installation token.

    ``app_id`` and ``installation_id`` are the numbers GitHub shows; ``private_key`` is the App's PEM
    (kept secret). ``base_url`` is the GitHub API for GitHub Enterprise Server (``https://<host>/api/v3``),
    else github.com's. Source-controller trades the key for a token of at most an hour, each fetch.
    """

    app_id: int
    installation_id: int
    private_key: pulumi.Input[str]
    base_url: str | None = None
    name: str = GITHUB_APP_SECRET_NAME
    provider: ClassVar[str | None] = GITHUB_PROVIDER
    """The GitRepository's ``spec.provider``: ``github``, which makes source-controller read the App."""
    resource_kind: ClassVar[str] = "github-app-auth"

    def __post_init__(self) -> None:
        problems = Problems("GitHubAppSecretOptions")
        problems.gate("app_id", checks.github_id_problem, self.app_id)
        problems.gate("installation_id", checks.github_id_problem, self.installation_id)
        if self.base_url is not None:
            problems.gate("base_url", checks.github_api_url_problem, self.base_url)
        problems.gate("name", checks.dns_label_problem, self.name)
        problems.raise_if_any()

    @property
    def reconcile_request(self) -> pulumi.Output[str]:
        """The GitRepository's reconcile request for this App: a digest of its IDs and key."""
        return _request(str(self.app_id), str(self.installation_id), self.private_key)


GitAuth = SourceSecretOptions | GitHubAppSecretOptions
"""How Flux authenticates to git: an SSH deploy key, or a GitHub App."""


def source_secret_data(options: GitAuth) -> dict[str, pulumi.Input[str]]:
    """The Secret's ``stringData``. A key: ``identity``, ``identity.pub`` (when known) and
    ``known_hosts``. An App: its IDs, its private key and its API's base URL (when not github.com's)."""
    if isinstance(options, GitHubAppSecretOptions):
        app: dict[str, pulumi.Input[str]] = {
            GITHUB_APP_ID_KEY: str(options.app_id),
            GITHUB_APP_INSTALLATION_ID_KEY: str(options.installation_id),
            GITHUB_APP_PRIVATE_KEY_KEY: pulumi.Output.secret(options.private_key),
        }
        if options.base_url is not None:
            app[GITHUB_APP_BASE_URL_KEY] = options.base_url
        return app
    data: dict[str, pulumi.Input[str]] = {
        IDENTITY_KEY: pulumi.Output.secret(options.private_key),
        KNOWN_HOSTS_KEY: options.known_hosts,
    }
    if options.public_key is not None:
        data[IDENTITY_PUB_KEY] = options.public_key
    return data


def build_source_secret(
    name: str, options: GitAuth, namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.SecretPatch:
    """The git-auth Secret in the Flux namespace, a resource of its own for each kind of auth."""
    resource_name = f"{name}-{options.resource_kind}"
    return fixed_secret(resource_name, options.name, source_secret_data(options), namespace, parent)


def build_sops_secret(
    name: str, age_key: pulumi.Input[str], namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.SecretPatch:
    """The age key kustomize-controller decrypts SOPS files with (``sops-age``, key ``age.agekey``)."""
    data = {SOPS_AGE_KEY: pulumi.Output.secret(age_key)}
    return fixed_secret(f"{name}-sops-age", SOPS_SECRET_NAME, data, namespace, parent)


# -- 3. sync -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncOptions:
    """The GitRepository and Kustomization that sync ``path`` of ``url`` at ``branch``, in ``namespace``.

    ``ready_timeout`` is how long ``up`` waits for each to report Ready (``0s``: it does not wait); it
    must be longer than ``timeout``, and is ``timeout`` plus a margin when not given (:attr:`ready_wait`).
    ``substitute_from`` names ConfigMaps in ``namespace`` whose keys fleet manifests use as ``${key}``.
    ``provider`` is the GitRepository's ``spec.provider`` (``github`` for a GitHub App), and
    ``reconcile_request`` the value of its ``reconcile.fluxcd.io/requestedAt``, which ``up`` waits for
    Flux to have handled: ``FluxBootstrap`` sets both from its source.
    """

    url: pulumi.Input[str]
    path: str
    branch: str = DEFAULT_BRANCH
    namespace: str = FLUX_NAMESPACE
    name: str = FLUX_SYNC_NAME
    secret_name: str = FLUX_SECRET_NAME
    git_interval: str = DEFAULT_GIT_INTERVAL
    interval: str = DEFAULT_INTERVAL
    retry_interval: str = DEFAULT_RETRY_INTERVAL
    timeout: str = DEFAULT_TIMEOUT
    decryption_secret: str | None = None
    health_checks: Sequence[Mapping[str, str]] = ()
    ready_timeout: str | None = None
    substitute_from: Sequence[str] = ()
    provider: str | None = None
    reconcile_request: pulumi.Input[str] | None = None

    def __post_init__(self) -> None:
        problems = Problems("SyncOptions")
        for field_name, check in _SYNC_CHECKS.items():
            value = getattr(self, field_name)
            if value is not None:
                problems.gate(field_name, check, value)
        if self.ready_timeout is not None and not _refused(self.ready_timeout, self.timeout):
            problem = checks.ready_timeout_after_timeout_problem(self.ready_timeout, self.timeout)
            if problem is not None:
                problems.add("ready_timeout", problem)
        problems.raise_if_any()

    @property
    def ready_wait(self) -> str:
        """How long ``up`` waits for Ready: ``ready_timeout``, else ``timeout`` plus a margin."""
        return self.ready_timeout or checks.default_ready_timeout(self.timeout)


def _refused(*durations: str) -> bool:
    """True when any of ``durations`` is not one (its own check reports it)."""
    return any(checks.go_duration_problem(duration) is not None for duration in durations)


# The fields of SyncOptions, and the one check each shares with the stack config.
_SYNC_CHECKS = {
    "url": checks.git_url_problem,
    "provider": checks.git_provider_problem,
    "reconcile_request": checks.reconcile_request_problem,
    "path": checks.relative_path_problem,
    "branch": checks.branch_problem,
    "namespace": checks.dns_label_problem,
    "git_interval": checks.go_duration_problem,
    "interval": checks.go_duration_problem,
    "retry_interval": checks.go_duration_problem,
    "timeout": checks.go_duration_problem,
    "ready_timeout": checks.ready_timeout_problem,
}


def ready_annotations(ready_timeout: str) -> dict[str, str]:
    """The annotations that make ``up`` wait for a Flux object's Ready condition, up to ``ready_timeout``.

    None for ``0s``. The provider's timeout is whole seconds, so a fraction rounds up.
    """
    seconds = math.ceil(checks.parse_duration(ready_timeout).total_seconds())
    if seconds == 0:
        return {}
    return {WAIT_FOR_ANNOTATION: WAIT_FOR_READY, TIMEOUT_ANNOTATION: str(seconds)}


def _metadata(options: SyncOptions) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": options.name, "namespace": options.namespace}
    annotations = ready_annotations(options.ready_wait)
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def _git_repository_metadata(options: SyncOptions) -> dict[str, Any]:
    """The GitRepository's metadata: with a reconcile request, the wait is for Flux to have handled it
    (``lastHandledReconcileAt``) and to be Ready, not suspended, all on the same observed object."""
    metadata = _metadata(options)
    request = options.reconcile_request
    if request is None:
        return metadata
    annotations: dict[str, Any] = {**metadata.get("annotations", {}), RECONCILE_REQUEST_ANNOTATION: request}
    if WAIT_FOR_ANNOTATION in annotations:
        annotations[WAIT_FOR_ANNOTATION] = pulumi.Output.from_input(request).apply(
            lambda value: json.dumps(
                [f"jsonpath={HANDLED_REQUEST_PATH}={value}", WAIT_FOR_READY, f"jsonpath={NOT_SUSPENDED_PATH}"]
            )
        )
    return {**metadata, "annotations": annotations}


def git_repository_manifest(options: SyncOptions) -> dict[str, Any]:
    """The ``GitRepository`` object."""
    spec: dict[str, Any] = {
        "url": options.url,
        "ref": {"branch": options.branch},
        "interval": options.git_interval,
        "secretRef": {"name": options.secret_name},
    }
    if options.provider is not None:
        spec["provider"] = options.provider
    return {
        "apiVersion": GIT_REPOSITORY_API_VERSION,
        "kind": "GitRepository",
        "metadata": _git_repository_metadata(options),
        "spec": spec,
    }


def kustomization_manifest(options: SyncOptions) -> dict[str, Any]:
    """The ``Kustomization`` object: prune on; SOPS decryption, health checks and post-build
    substitution when asked for."""
    spec: dict[str, Any] = {
        "interval": options.interval,
        "retryInterval": options.retry_interval,
        "timeout": options.timeout,
        "path": f"./{options.path.strip('/')}",
        "prune": True,
        "deletionPolicy": KUSTOMIZATION_DELETION_POLICY,
        "sourceRef": {"kind": "GitRepository", "name": options.name},
    }
    if options.decryption_secret is not None:
        spec["decryption"] = {"provider": "sops", "secretRef": {"name": options.decryption_secret}}
    if options.health_checks:
        spec["healthChecks"] = [dict(check) for check in options.health_checks]
    if options.substitute_from:
        spec["postBuild"] = {
            # Not optional: without the ConfigMap, Flux would substitute nothing and apply ${baseDomain}.
            "substituteFrom": [
                {"kind": "ConfigMap", "name": name, "optional": False} for name in options.substitute_from
            ]
        }
    return {
        "apiVersion": KUSTOMIZATION_API_VERSION,
        "kind": "Kustomization",
        "metadata": _metadata(options),
        "spec": spec,
    }


@dataclass(frozen=True)
class SyncObjects:
    """The two sync custom resources."""

    git_repository: k8s.apiextensions.CustomResource
    kustomization: k8s.apiextensions.CustomResource


def _custom_resource(
    resource_name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata={
            **manifest["metadata"],
            "annotations": {**OWNED, **manifest["metadata"].get("annotations", {})},
        },
        spec=manifest["spec"],
        opts=opts,
    )


def build_sync(
    name: str,
    options: SyncOptions,
    controllers: k8s.helm.v3.Release | None,
    secrets: Sequence[k8s.core.v1.SecretPatch],
    parent: pulumi.Resource,
    sync_after: Sequence[pulumi.Resource] = (),
) -> SyncObjects:
    """The GitRepository and Kustomization, after the controllers (their CRDs) and the Secrets they use.

    ``controllers`` is ``None`` when Flux is installed outside this component. Both also wait for
    ``sync_after``: what the path needs to exist (the scaffolded path, the ConfigMaps the Kustomization
    substitutes from). The GitRepository too: it fetches once when made, and a fetch before the scaffold's
    commit would leave the Kustomization an artifact without its path until the next interval.
    """
    installed = [controllers] if controllers is not None else []
    # `pulumi.com/timeoutSeconds` bounds every operation on the object, deletes included; a delete gets
    # its own, longer bound: kustomize-controller holds its finalizer while what it applied goes
    # (WaitForTermination), up to `timeout`, so a delete must outlast that (never below the provider's 10m).
    deletes = pulumi.CustomTimeouts(delete=checks.delete_timeout(options.timeout))
    git_repository = _custom_resource(
        f"{name}-git-repository",
        git_repository_manifest(options),
        pulumi.ResourceOptions(
            parent=parent, depends_on=[*installed, *secrets, *sync_after], custom_timeouts=deletes
        ),
    )
    kustomization = _custom_resource(
        f"{name}-kustomization",
        kustomization_manifest(options),
        pulumi.ResourceOptions(
            parent=parent,
            depends_on=[*installed, git_repository, *sync_after],
            custom_timeouts=deletes,
        ),
    )
    return SyncObjects(git_repository=git_repository, kustomization=kustomization)


# -- notifications (optional) --------------------------------------------------------------------------


@dataclass(frozen=True)
class NotificationArgs:
    """A notification Provider and an Alert on the sync objects' events (``error``: failures only).

    ``webhook`` (kept secret) is written into the Secret ``secret_name`` (default
    ``NOTIFICATION_WEBHOOK_SECRET_NAME``) as its ``address``, where notification-controller reads it.
    Without it, ``secret_name`` names a Secret made elsewhere (for a token), and ``address`` is plain.
    """

    provider_type: str
    channel: str | None = None
    address: str | None = None
    secret_name: str | None = None
    event_severity: str = "error"
    webhook: pulumi.Input[str] | None = None

    @property
    def secret_ref(self) -> str | None:
        """The Secret the Provider reads: the webhook's, or one made elsewhere, or none."""
        if self.webhook is not None:
            return self.secret_name or NOTIFICATION_WEBHOOK_SECRET_NAME
        return self.secret_name


@dataclass(frozen=True)
class Notifications:
    """What ``build_notifications`` made: the webhook Secret (if any), the Provider and the Alert."""

    secret: k8s.core.v1.SecretPatch | None
    provider: k8s.apiextensions.CustomResource
    alert: k8s.apiextensions.CustomResource


def notification_manifests(
    args: NotificationArgs, namespace: pulumi.Input[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The notification ``Provider`` and the ``Alert`` on the sync objects' events."""
    provider_spec: dict[str, Any] = {"type": args.provider_type}
    if args.channel is not None:
        provider_spec["channel"] = args.channel
    if args.address is not None:
        provider_spec["address"] = args.address
    if args.secret_ref is not None:
        provider_spec["secretRef"] = {"name": args.secret_ref}
    metadata = {"name": FLUX_SYNC_NAME, "namespace": namespace}
    provider = {"apiVersion": NOTIFICATION_API_VERSION, "kind": "Provider", "metadata": metadata}
    alert = {"apiVersion": NOTIFICATION_API_VERSION, "kind": "Alert", "metadata": metadata}
    return {**provider, "spec": provider_spec}, {
        **alert,
        "spec": {
            "providerRef": {"name": FLUX_SYNC_NAME},
            "eventSeverity": args.event_severity,
            "eventSources": [
                {"kind": "GitRepository", "name": "*"},
                {"kind": "Kustomization", "name": "*"},
            ],
        },
    }


def build_notifications(
    name: str,
    args: NotificationArgs,
    namespace: NamespaceResource,
    controllers: k8s.helm.v3.Release | None,
    parent: pulumi.Resource,
) -> Notifications:
    """The webhook Secret, the notification ``Provider`` and the ``Alert`` that uses it."""
    secret = None
    if args.webhook is not None and args.secret_ref is not None:
        data = {NOTIFICATION_ADDRESS_KEY: pulumi.Output.secret(args.webhook)}
        secret = fixed_secret(f"{name}-notification-webhook", args.secret_ref, data, namespace, parent)
    provider_manifest, alert_manifest = notification_manifests(args, namespace.metadata.name)
    installed: list[pulumi.Resource] = [controllers] if controllers is not None else []
    depends_on = [*installed, *([secret] if secret is not None else [])]
    notifier = _custom_resource(
        f"{name}-notification-provider",
        provider_manifest,
        pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )
    alert = _custom_resource(
        f"{name}-alert",
        alert_manifest,
        pulumi.ResourceOptions(parent=parent, depends_on=[*installed, notifier]),
    )
    return Notifications(secret=secret, provider=notifier, alert=alert)


# -- the component -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluxBootstrapArgs:
    """Inputs of ``FluxBootstrap``: the three option groups whole, and what spans them.

    ``source`` and ``sync`` have no defaults (a key or an App, and a repository, are needed);
    ``install`` defaults to the pinned chart's default controllers, and ``None`` means Flux's controllers
    and CRDs are installed outside this component (the Flux Operator, an EKS add-on): then it adopts the
    namespace, and leaves it in place on destroy. ``sops_age_key`` (kept secret) turns on SOPS decryption.

    ``environment`` hands the environment contract to the fleet: it is written as the ``environment``
    ConfigMap in Flux's namespace, and the Kustomization substitutes from it (``${baseDomain}``).
    ``sync_after`` are resources the Kustomization waits for, such as the scaffolded fleet path.
    """

    source: GitAuth
    sync: SyncOptions
    install: InstallOptions | None = field(default_factory=InstallOptions)
    notifications: NotificationArgs | None = None
    sops_age_key: pulumi.Input[str] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels on the Flux namespace."""
    environment: Environment | None = None
    sync_after: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        problems = Problems("FluxBootstrapArgs")
        problems.check(
            isinstance(self.source, SourceSecretOptions | GitHubAppSecretOptions),
            "source",
            "must be a SourceSecretOptions (a deploy key) or a GitHubAppSecretOptions",
        )
        problems.check(isinstance(self.sync, SyncOptions), "sync", "must be a SyncOptions")
        problems.check(
            self.install is None or isinstance(self.install, InstallOptions),
            "install",
            "must be an InstallOptions, or None (installed outside this component)",
        )
        problems.check(
            self.environment is None or isinstance(self.environment, Environment),
            "environment",
            "must be an Environment, or None",
        )
        known_hosts = self.source.known_hosts if isinstance(self.source, SourceSecretOptions) else None
        url = self.sync.url if isinstance(self.sync, SyncOptions) else None
        if isinstance(url, str) and checks.git_url_problem(url) is None:
            github_app = isinstance(self.source, GitHubAppSecretOptions)
            problems.gate("sync.url", lambda value: checks.git_auth_url_problem(value, github_app), url)
            if isinstance(self.source, GitHubAppSecretOptions):  # its token is good on its own GitHub only
                base_url = self.source.base_url
                problems.gate("sync.url", lambda value: checks.github_app_url_problem(value, base_url), url)
        if isinstance(known_hosts, str) and isinstance(url, str) and checks.ssh_url_problem(url) is None:
            problems.gate(
                "source.known_hosts",
                lambda hosts: checks.known_hosts_for_url_problem(hosts, url),
                known_hosts,
            )
        if self.notifications is not None and isinstance(self.install, InstallOptions):
            # The config's check, in words that point at install.components, where the Args list them.
            problems.check(
                checks.notifications_problem(self.install.installed) is None,
                "notifications",
                f"needs {checks.NOTIFICATION_CONTROLLER} in install.components",
            )
        problems.raise_if_any()


class FluxBootstrap(pulumi.ComponentResource):
    """Flux on a cluster, syncing the fleet repository: see the module docstring."""

    namespace: pulumi.Output[str]
    repository_url: pulumi.Output[str]
    namespace_resource: NamespaceResource
    controllers: k8s.helm.v3.Release | None
    source_secret: k8s.core.v1.SecretPatch
    sops_secret: k8s.core.v1.SecretPatch | None
    environment_config_map: k8s.core.v1.ConfigMapPatch | None
    sync: SyncObjects
    notifications: Notifications | None

    def __init__(
        self, name: str, args: FluxBootstrapArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        labels = {"app.kubernetes.io/part-of": "flux", **args.labels}
        self.namespace_resource = (
            k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=args.sync.namespace, labels=labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
            if args.install is not None
            # Installed elsewhere, Flux's namespace exists and is not this component's: its labels are
            # patched in, and it is neither created nor deleted here, under any provider (a create of an
            # existing object fails from pulumi-kubernetes 4.29 on, unless the provider upserts).
            else k8s.core.v1.NamespacePatch(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaPatchArgs(name=args.sync.namespace, labels=labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
        )
        self.controllers = (
            build_install(name, args.install, self.namespace_resource, self)
            if args.install is not None
            else None
        )
        self.source_secret = build_source_secret(name, args.source, self.namespace_resource, self)
        self.sops_secret = (
            build_sops_secret(name, args.sops_age_key, self.namespace_resource, self)
            if args.sops_age_key is not None
            else None
        )
        # The sync reads the source's Secret, as its provider, and waits on its credential's request.
        source = args.source
        sync = replace(
            args.sync,
            secret_name=source.name,
            provider=source.provider,
            reconcile_request=source.reconcile_request,
        )
        if self.sops_secret is not None:
            sync = replace(sync, decryption_secret=SOPS_SECRET_NAME)
        secrets = [self.source_secret, *([self.sops_secret] if self.sops_secret is not None else [])]
        self.environment_config_map = None
        sync_after = list(args.sync_after)
        if args.environment is not None:
            self.environment_config_map = build_environment_configmap(
                f"{name}-environment", args.environment, self.namespace_resource, self
            )
            sync = replace(sync, substitute_from=(*sync.substitute_from, ENVIRONMENT_CONFIGMAP))
            sync_after.append(self.environment_config_map)
        self.sync = build_sync(name, sync, self.controllers, secrets, self, sync_after)
        self.notifications = (
            build_notifications(name, args.notifications, self.namespace_resource, self.controllers, self)
            if args.notifications is not None
            else None
        )
        self.namespace = pulumi.Output.all(self.namespace_resource.urn, args.sync.namespace).apply(
            lambda values: str(values[1])
        )
        self.repository_url = pulumi.Output.from_input(sync.url)
        self.register_outputs(
            {
                "namespace": self.namespace,
                "repositoryUrl": self.repository_url,
                "chartVersion": args.install.version if args.install is not None else None,
            }
        )
