"""The component: ``ArgoCdBootstrap`` builds Argo CD's pieces in order, from ``ArgoCdBootstrapArgs``.

The counterpart of :class:`~gitops_infra.components.flux.FluxBootstrap`, with the same ``GitAuth`` and
the same promise: ``up`` returns once the engine has fetched the fleet with the stack's credential and
applied the path (:mod:`.application`). The Kubernetes provider comes through ``opts``.

Every object ``depends_on`` Argo CD's Release (its CRDs), and the root on the repository, the project and
the cluster Secret, so ``destroy`` deletes the root first, while the controllers still run: its resources
finalizer has Argo CD delete what the root applied, then the project, the Secrets, and Argo CD itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource, custom_resource
from gitops_infra.components.argocd.application import RootOptions, build_root
from gitops_infra.components.argocd.cluster_secret import build_cluster_secret
from gitops_infra.components.argocd.install import ArgoCdInstallOptions, build_install
from gitops_infra.components.argocd.project import ProjectOptions, app_project_manifest
from gitops_infra.components.argocd.repository import build_known_hosts, build_repository
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux.source_secret import GitAuth, GitHubAppSecretOptions, SourceSecretOptions
from gitops_infra.contract import Environment

__all__ = ["REPOSITORY_SECRET_SUFFIX", "ArgoCdBootstrap", "ArgoCdBootstrapArgs"]

TYPE_TOKEN = "gitops-infra:index:ArgoCdBootstrap"
REPOSITORY_SECRET_SUFFIX = "-repository"
"""The repository Secret is the root's name with this suffix (``platform-repository``)."""


@dataclass(frozen=True)
class ArgoCdBootstrapArgs:
    """Inputs of ``ArgoCdBootstrap``.

    ``source`` is how Argo CD fetches (a deploy key or a GitHub App, as for Flux), ``root`` the root
    ``Application``, in Argo CD's namespace (``root.namespace``). ``install`` is the pinned chart, or
    ``None`` when Argo CD runs already (installed outside this component: an EKS capability): then the
    component adopts the namespace, leaves it on destroy, and writes the fleet's host keys into
    ``argocd-ssh-known-hosts-cm`` itself. ``destinations`` are the namespaces the root's ``AppProject``
    allows, besides Argo CD's own. ``environment`` is published on the in-cluster cluster Secret
    (:mod:`.cluster_secret`); ``sync_after`` are resources the root waits for (the scaffolded path).
    """

    source: GitAuth
    root: RootOptions
    install: ArgoCdInstallOptions | None = field(default_factory=ArgoCdInstallOptions)
    destinations: Sequence[str] = ()
    environment: Environment | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels on Argo CD's namespace."""
    sync_after: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        problems = Problems("ArgoCdBootstrapArgs")
        problems.check(
            isinstance(self.source, SourceSecretOptions | GitHubAppSecretOptions),
            "source",
            "must be a SourceSecretOptions (a deploy key) or a GitHubAppSecretOptions",
        )
        problems.check(isinstance(self.root, RootOptions), "root", "must be a RootOptions")
        problems.check(
            self.install is None or isinstance(self.install, ArgoCdInstallOptions),
            "install",
            "must be an ArgoCdInstallOptions, or None (installed outside this component)",
        )
        problems.check(
            self.environment is None or isinstance(self.environment, Environment),
            "environment",
            "must be an Environment, or None",
        )
        for index, destination in enumerate(self.destinations):
            problems.gate(f"destinations[{index}]", checks.project_destination_problem, destination)
        url = self.root.url if isinstance(self.root, RootOptions) else None
        if isinstance(url, str) and checks.git_url_problem(url) is None:
            github_app = isinstance(self.source, GitHubAppSecretOptions)
            problems.gate("root.url", lambda value: checks.git_auth_url_problem(value, github_app), url)
            known_hosts = self.source.known_hosts if isinstance(self.source, SourceSecretOptions) else None
            if isinstance(known_hosts, str) and checks.ssh_url_problem(url) is None:
                problems.gate(
                    "source.known_hosts",
                    lambda hosts: checks.known_hosts_for_url_problem(hosts, url),
                    known_hosts,
                )
        problems.raise_if_any()


class ArgoCdBootstrap(pulumi.ComponentResource):
    """Argo CD on a cluster, syncing the fleet repository: see :mod:`gitops_infra.components.argocd`."""

    namespace: pulumi.Output[str]
    repository_url: pulumi.Output[str]
    namespace_resource: NamespaceResource
    install: k8s.helm.v3.Release | None
    known_hosts: k8s.core.v1.ConfigMapPatch | None
    """``argocd-ssh-known-hosts-cm``'s key, when Argo CD is installed outside this component."""
    repository: k8s.core.v1.SecretPatch
    project: k8s.apiextensions.CustomResource
    cluster_secret: k8s.core.v1.Secret | None
    root: k8s.apiextensions.CustomResource

    def __init__(
        self, name: str, args: ArgoCdBootstrapArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        root = args.root
        labels = {"app.kubernetes.io/part-of": "argocd", **args.labels}
        self.namespace_resource = (
            k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=root.namespace, labels=labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
            if args.install is not None
            # Installed elsewhere, the namespace is not this component's: labelled, never created or deleted.
            else k8s.core.v1.NamespacePatch(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaPatchArgs(name=root.namespace, labels=labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
        )
        known_hosts = (
            args.source.known_hosts if isinstance(args.source, SourceSecretOptions) else GITHUB_KNOWN_HOSTS
        )
        self.install = self.known_hosts = None
        if args.install is not None:
            self.install = build_install(name, args.install, known_hosts, self.namespace_resource, self)
        else:
            self.known_hosts = build_known_hosts(name, known_hosts, self.namespace_resource, self)
        installed: list[pulumi.Resource] = [self.install] if self.install is not None else []
        self.repository = build_repository(
            name, root.name + REPOSITORY_SECRET_SUFFIX, root.url, args.source, self.namespace_resource, self
        )
        self.project = custom_resource(
            f"{name}-project",
            app_project_manifest(
                ProjectOptions(
                    repository=root.url,
                    destinations=[root.namespace, root.destination_namespace, *args.destinations],
                    name=root.project,
                    namespace=root.namespace,
                )
            ),
            pulumi.ResourceOptions(parent=self, depends_on=installed),
        )
        self.cluster_secret = (
            build_cluster_secret(name, args.environment, self.namespace_resource, self)
            if args.environment is not None
            else None
        )
        before_root: list[pulumi.Resource] = [
            *installed,
            self.repository,
            self.project,
            *([self.known_hosts] if self.known_hosts is not None else []),
            *([self.cluster_secret] if self.cluster_secret is not None else []),
            *args.sync_after,
        ]
        credential = root.credential if root.credential is not None else args.source.reconcile_request
        self.root = build_root(name, replace(root, credential=credential), before_root, self)
        self.namespace = pulumi.Output.all(self.namespace_resource.urn, root.namespace).apply(
            lambda v: str(v[1])
        )
        self.repository_url = pulumi.Output.from_input(root.url)
        self.register_outputs(
            {
                "namespace": self.namespace,
                "repositoryUrl": self.repository_url,
                "chartVersion": args.install.version if args.install is not None else None,
            }
        )
