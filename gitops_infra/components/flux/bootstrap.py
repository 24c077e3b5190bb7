"""The component: ``FluxBootstrap`` builds the bootstrap's pieces in order, from ``FluxBootstrapArgs``.

``FluxBootstrapArgs`` takes the three option groups whole, as Flux's ``bootstrap.Run`` takes
``install.Options``, ``sourcesecret.Options`` and ``sync.Options``; each group checks its own fields
when it is made, and the Args check what spans them. Flux lives in the sync's namespace. The Kubernetes
provider comes through ``opts`` (``providers=[k8s_provider]``), as for any Pulumi component, and every
child inherits it.

Every custom resource ``depends_on`` the controllers' Release, so its CRDs exist first; and because
Pulumi deletes dependents first, ``destroy`` removes the sync objects while the controllers still run to
clear their finalizers, then the controllers, then the namespace. The Kustomization's
``deletionPolicy: WaitForTermination`` makes kustomize-controller prune what it applied and hold its
finalizer until that is gone, so the controllers (and their CRDs) are never uninstalled under Flux objects
that still carry ``finalizers.fluxcd.io``. A suspended Kustomization prunes nothing when it is deleted
(kustomize-controller v1.8.3's ``finalizerShouldDeleteResources``): after ``destroy``'s drain, which
suspends it, what it applied stays in the cluster, but for what the drain deleted, and goes with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource
from gitops_infra.components.environment import build_environment_configmap
from gitops_infra.components.flux.install import InstallOptions, build_install
from gitops_infra.components.flux.notifications import NotificationArgs, Notifications, build_notifications
from gitops_infra.components.flux.operator import OperatorOptions, build_operator
from gitops_infra.components.flux.receiver import Receiver, build_receiver
from gitops_infra.components.flux.source_secret import (
    SOPS_SECRET_NAME,
    GitAuth,
    GitHubAppSecretOptions,
    SourceSecretOptions,
    build_sops_secret,
    build_source_secret,
)
from gitops_infra.components.flux.sync import SyncObjects, SyncOptions, build_sync
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment

__all__ = ["FluxBootstrap", "FluxBootstrapArgs"]

TYPE_TOKEN = "gitops-infra:index:FluxBootstrap"


@dataclass(frozen=True)
class FluxBootstrapArgs:
    """Inputs of ``FluxBootstrap``: the three option groups whole, and what spans them.

    ``source`` and ``sync`` have no defaults (a key or an App, and a repository, are needed);
    ``install`` defaults to the pinned chart's default controllers; an ``OperatorOptions`` installs Flux
    through the Flux Operator and a ``FluxInstance`` (:mod:`.operator`); and ``None`` means Flux's
    controllers and CRDs are installed outside this component (an EKS add-on): then it adopts the
    namespace, and leaves it in place on destroy, as it does when the operator runs already.
    ``sops_age_key`` (kept secret) turns on SOPS decryption.

    ``environment`` hands the environment contract to the fleet: it is written as the ``environment``
    ConfigMap in Flux's namespace, and the Kustomization substitutes from it (``${baseDomain}``).
    ``sync_after`` are resources the Kustomization waits for, such as the scaffolded fleet path.
    """

    source: GitAuth
    sync: SyncOptions
    install: InstallOptions | OperatorOptions | None = field(default_factory=InstallOptions)
    notifications: NotificationArgs | None = None
    receiver: bool = False
    """Instant sync: a webhook ``Receiver`` of GitHub's pushes, with its token (:mod:`.receiver`)."""
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
            self.install is None or isinstance(self.install, InstallOptions | OperatorOptions),
            "install",
            "must be an InstallOptions, an OperatorOptions, or None (installed outside this component)",
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
        if isinstance(self.install, InstallOptions | OperatorOptions):
            # The config's check, in words that point at install.components, where the Args list them.
            installed = checks.notifications_problem(self.install.installed) is None
            for key, wanted in (
                ("notifications", self.notifications is not None),
                ("receiver", self.receiver),
            ):
                if wanted:
                    problems.check(
                        installed, key, f"needs {checks.NOTIFICATION_CONTROLLER} in install.components"
                    )
        problems.raise_if_any()


class FluxBootstrap(pulumi.ComponentResource):
    """Flux on a cluster, syncing the fleet repository: see :mod:`gitops_infra.components.flux`."""

    namespace: pulumi.Output[str]
    repository_url: pulumi.Output[str]
    namespace_resource: NamespaceResource
    controllers: k8s.helm.v3.Release | None
    flux_instance: k8s.apiextensions.CustomResource | None
    """The ``FluxInstance`` with ``OperatorOptions``; the sync objects wait for it, as for ``controllers``."""
    operator: k8s.helm.v3.Release | None
    """The Flux Operator's chart, when this component installs the operator."""
    source_secret: k8s.core.v1.SecretPatch
    sops_secret: k8s.core.v1.SecretPatch | None
    environment_config_map: k8s.core.v1.ConfigMapPatch | None
    sync: SyncObjects
    notifications: Notifications | None
    receiver: Receiver | None

    def __init__(
        self, name: str, args: FluxBootstrapArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        labels = {"app.kubernetes.io/part-of": "flux", **args.labels}
        # An operator that runs already was installed, with its namespace, outside this component.
        owns_namespace = args.install is not None and not (
            isinstance(args.install, OperatorOptions) and not args.install.install_operator
        )
        self.namespace_resource = (
            k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=args.sync.namespace, labels=labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
            if owns_namespace
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
            if isinstance(args.install, InstallOptions)
            else None
        )
        self.flux_instance = self.operator = None
        if isinstance(args.install, OperatorOptions):
            built = build_operator(
                name, args.install, self.namespace_resource, self, args.sync.namespace, args.environment
            )
            self.flux_instance, self.operator = built.instance, built.operator
        installed = self.controllers if self.controllers is not None else self.flux_instance
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
        self.sync = build_sync(name, sync, installed, secrets, self, sync_after)
        self.notifications = (
            build_notifications(name, args.notifications, self.namespace_resource, installed, self)
            if args.notifications is not None
            else None
        )
        self.receiver = (
            build_receiver(name, self.namespace_resource, installed, self.sync.git_repository, self)
            if args.receiver
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
                "chartVersion": args.install.version if isinstance(args.install, InstallOptions) else None,
                "fluxVersion": args.install.version if isinstance(args.install, OperatorOptions) else None,
            }
        )
