"""``Tenant``: an app team's namespaces, and a sync of its own that can write nowhere else.

For tenant ``<t>``, whose first namespace ``<h>`` is its home, the component makes:

- each namespace, labelled ``toolkit.fluxcd.io/tenant: <t>`` (Flux's label) and ``gitops-infra.io/tenant:
  <t>``, with the ``environment`` contract in it (the same ConfigMap the platform writes) and, when asked,
  a ResourceQuota and a LimitRange named ``<t>``;
- the ServiceAccount ``<t>-reconciler`` in ``<h>``, and in each namespace a RoleBinding ``<t>-reconciler``
  that grants it ``role`` (a ClusterRole, ``admin`` by default) there and nowhere else;
- the git credential Secret ``<t>-git``, the GitRepository ``<t>`` and the Kustomization ``<t>`` in ``<h>``,
  both labelled ``gitops-infra.io/tenant: <t>``. The Kustomization applies as ``<t>-reconciler``, prunes,
  and puts what it applies in ``<h>`` when the tenant has that one namespace;
- with ``deploy_key``, a ``DeployKey`` registered on the tenant's own repository (the GitHub provider
  comes through ``opts``), whose private half the Secret holds.

``up`` waits for the GitRepository, so a credential is proven as the platform's is; not for the
Kustomization: what the team commits is the team's, and its failure is theirs to see (``status``), not a
failed ``up`` of the platform. With Flux locked down (``InstallOptions.multi_tenancy``) the reconciler
cannot write into another namespace, make a cluster-scoped object, or use a source in another namespace.

Removal deletes in order: the Kustomization depends on every other object, so it goes first, and
kustomize-controller prunes what it applied while the reconciler and its RoleBindings still exist
(``deletionPolicy: WaitForTermination``); then the rest; then the namespaces, which everything depends on.

Example::

    team = Tenant(
        "team-a",
        TenantArgs(
            name="team-a",
            url="ssh://git@github.com/acme/fleet",
            path="tenants/team-a",
            auth=SourceSecretOptions(private_key=key.private_key, public_key=key.public_key),
        ),
        opts=pulumi.ResourceOptions(providers=[cluster], depends_on=[flux]),
    )
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import OWNED, custom_resource
from gitops_infra.components.deploy_key import DeployKey, DeployKeyArgs
from gitops_infra.components.environment import build_environment_configmap
from gitops_infra.components.flux.source_secret import (
    GitAuth,
    GitHubAppSecretOptions,
    SourceSecretOptions,
    build_source_secret,
)
from gitops_infra.components.flux.sync import SyncOptions, git_repository_manifest, kustomization_manifest
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment
from gitops_infra.defaults import (
    DEFAULT_GIT_INTERVAL,
    DEFAULT_INTERVAL,
    DEFAULT_RETRY_INTERVAL,
    DEFAULT_TENANT_ROLE,
    DEFAULT_TIMEOUT,
    FLUX_TENANT_LABEL,
    TENANT_LABEL,
)

__all__ = ["Tenant", "TenantArgs"]

TYPE_TOKEN = "gitops-infra:index:Tenant"


@dataclass(frozen=True)
class TenantArgs:
    """Inputs of ``Tenant``. The Kubernetes provider (and, with ``deploy_key``, GitHub's) comes through
    ``opts``, and so does what the tenant waits for (Flux's CRDs: ``depends_on=[flux]``).

    ``name`` and ``namespaces`` (``[name]`` when empty; the first is the home) name objects and resources,
    so they are plain text. The source is ``url`` at ``branch``, ``path``; Flux authenticates with
    ``auth`` (the fleet's credential, or a key or App of the tenant's own), or with a key made and
    registered on GitHub from ``deploy_key``: exactly one of the two. ``quota`` is a ResourceQuota's
    ``spec.hard`` and ``limits`` a LimitRange's ``spec.limits``, each made in every namespace.
    ``environment`` writes the contract into each namespace, and ``substitute`` hands it to the
    Kustomization's post-build substitution (``${baseDomain}``), as the platform's root does.
    """

    name: str
    url: pulumi.Input[str]
    auth: GitAuth | None = None
    deploy_key: DeployKeyArgs | None = None
    path: str = "."
    branch: str = checks.DEFAULT_BRANCH
    namespaces: Sequence[str] = ()
    role: str = DEFAULT_TENANT_ROLE
    quota: Mapping[str, pulumi.Input[str]] | None = None
    limits: Sequence[Mapping[str, Any]] = ()
    environment: Environment | None = None
    substitute: bool = True
    git_interval: str = DEFAULT_GIT_INTERVAL
    interval: str = DEFAULT_INTERVAL
    retry_interval: str = DEFAULT_RETRY_INTERVAL
    timeout: str = DEFAULT_TIMEOUT
    ready_timeout: str | None = None

    def __post_init__(self) -> None:
        problems = Problems("TenantArgs")
        problems.gate("name", checks.dns_label_problem, self.name)
        for index, problem in checks.tenant_namespaces_problems(self.tenant_namespaces):
            problems.add("namespaces" if index < 0 else f"namespaces[{index}]", problem)
        problems.gate("role", checks.rbac_name_problem, self.role)
        problems.check(
            (self.auth is None) != (self.deploy_key is None),
            "auth",
            "set exactly one of auth (a credential you hold) and deploy_key (a key made and registered)",
        )
        problems.check(
            self.auth is None or isinstance(self.auth, SourceSecretOptions | GitHubAppSecretOptions),
            "auth",
            "must be a SourceSecretOptions (a deploy key) or a GitHubAppSecretOptions",
        )
        for resource, quantity in (self.quota or {}).items():
            problems.gate(f"quota[{resource!r}]", checks.resource_name_problem, resource)
            problems.gate(f"quota[{resource!r}]", checks.quantity_problem, quantity)
        for index, limit in enumerate(self.limits):
            problems.check(
                limit.get("type") in checks.LIMIT_TYPES,
                f"limits[{index}].type",
                f"must be one of {', '.join(checks.LIMIT_TYPES)}",
            )
        problems.raise_if_any()
        # The sync's own fields (path, branch, url, durations) are checked by the options they become.
        self.sync_options()

    @property
    def tenant_namespaces(self) -> tuple[str, ...]:
        """``namespaces``, else one named after the tenant."""
        return tuple(self.namespaces) or (self.name,)

    def sync_options(self) -> SyncOptions:
        """The GitRepository and Kustomization ``<name>`` in the home namespace, as the reconciler."""
        namespaces = self.tenant_namespaces
        return SyncOptions(
            url=self.url,
            path=self.path,
            branch=self.branch,
            namespace=namespaces[0],
            name=self.name,
            secret_name=f"{self.name}-git",
            git_interval=self.git_interval,
            interval=self.interval,
            retry_interval=self.retry_interval,
            timeout=self.timeout,
            ready_timeout=self.ready_timeout,
            substitute_from=(ENVIRONMENT_CONFIGMAP,) if self.environment and self.substitute else (),
            service_account_name=f"{self.name}-reconciler",
            target_namespace=namespaces[0] if len(namespaces) == 1 else None,
            labels={TENANT_LABEL: self.name},
        )


class Tenant(pulumi.ComponentResource):
    """An app team's namespaces, reconciler and sync: see the module docstring."""

    namespace: pulumi.Output[str]
    namespaces: pulumi.Output[list[str]]
    kustomization_name: pulumi.Output[str]
    namespace_resources: list[k8s.core.v1.Namespace]
    service_account: k8s.core.v1.ServiceAccount
    role_bindings: list[k8s.rbac.v1.RoleBinding]
    deploy_key: DeployKey | None
    git_secret: k8s.core.v1.SecretPatch
    git_repository: k8s.apiextensions.CustomResource
    kustomization: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: TenantArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        tenant, names = args.name, args.tenant_namespaces
        labels = {FLUX_TENANT_LABEL: tenant, TENANT_LABEL: tenant}
        child = pulumi.ResourceOptions(parent=self)
        self.namespace_resources = [
            k8s.core.v1.Namespace(
                f"{name}-{namespace}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace, labels=labels),
                opts=child,
            )
            for namespace in names
        ]
        home = self.namespace_resources[0]
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=self.namespace_resources)
        reconciler = f"{tenant}-reconciler"
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-reconciler",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=reconciler, namespace=names[0], labels=labels),
            opts=in_namespace,
        )
        self.role_bindings = [
            k8s.rbac.v1.RoleBinding(
                f"{name}-{namespace}-reconciler",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=reconciler, namespace=namespace, labels=labels, annotations=OWNED
                ),
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=args.role
                ),
                subjects=[
                    k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=reconciler, namespace=names[0])
                ],
                # roleRef cannot change in place: a new role is a new binding of the same name.
                opts=pulumi.ResourceOptions.merge(
                    in_namespace, pulumi.ResourceOptions(delete_before_replace=True)
                ),
            )
            for namespace in names
        ]
        contract = [
            build_environment_configmap(f"{name}-{namespace}-environment", args.environment, ns, self)
            for namespace, ns in zip(names, self.namespace_resources, strict=True)
            if args.environment is not None
        ]
        bounds = self._bounds(name, args, names, in_namespace)
        auth = self._auth(name, args)
        self.git_secret = build_source_secret(name, replace(auth, name=f"{tenant}-git"), home, self)
        sync = replace(args.sync_options(), provider=auth.provider, reconcile_request=auth.reconcile_request)
        self._build_sync(name, sync, [self.service_account, *self.role_bindings, *contract, *bounds])
        self.namespace = pulumi.Output.all(home.urn, names[0]).apply(lambda values: str(values[1]))
        self.namespaces = pulumi.Output.from_input(list(names))
        self.kustomization_name = pulumi.Output.all(self.kustomization.urn, tenant).apply(
            lambda values: str(values[1])
        )
        self.register_outputs(
            {
                "name": tenant,
                "namespace": self.namespace,
                "namespaces": self.namespaces,
                "kustomization": self.kustomization_name,
            }
        )

    def _auth(self, name: str, args: TenantArgs) -> GitAuth:
        """The credential the Secret holds: ``auth``, or the key of a DeployKey made for the repository."""
        self.deploy_key = None
        if args.auth is not None:
            return args.auth
        assert args.deploy_key is not None  # TenantArgs holds exactly one
        self.deploy_key = DeployKey(
            f"{name}-repository", args.deploy_key, opts=pulumi.ResourceOptions(parent=self)
        )
        return SourceSecretOptions(
            private_key=self.deploy_key.private_key,
            public_key=self.deploy_key.public_key,
            known_hosts=args.deploy_key.known_hosts,
        )

    def _bounds(
        self, name: str, args: TenantArgs, names: Sequence[str], opts: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """The ResourceQuota and LimitRange ``<tenant>`` in each namespace, where asked for."""
        made: list[pulumi.Resource] = []
        for namespace in names:
            metadata = k8s.meta.v1.ObjectMetaArgs(name=args.name, namespace=namespace, annotations=OWNED)
            if args.quota:
                made.append(
                    k8s.core.v1.ResourceQuota(
                        f"{name}-{namespace}-quota",
                        metadata=metadata,
                        spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=dict(args.quota)),
                        opts=opts,
                    )
                )
            if args.limits:
                made.append(
                    k8s.core.v1.LimitRange(
                        f"{name}-{namespace}-limits",
                        metadata=metadata,
                        spec=k8s.core.v1.LimitRangeSpecArgs(
                            limits=[cast(Any, dict(limit)) for limit in args.limits]
                        ),
                        opts=opts,
                    )
                )
        return made

    def _build_sync(self, name: str, sync: SyncOptions, after: Sequence[pulumi.Resource]) -> None:
        """The GitRepository, which ``up`` waits for, and the Kustomization, which it does not; the
        Kustomization depends on everything, so it is deleted first (see the module docstring)."""
        deletes = pulumi.CustomTimeouts(delete=checks.delete_timeout(sync.timeout))
        self.git_repository = custom_resource(
            f"{name}-git-repository",
            git_repository_manifest(sync),
            pulumi.ResourceOptions(
                parent=self, depends_on=[self.git_secret, *after], custom_timeouts=deletes
            ),
        )
        self.kustomization = custom_resource(
            f"{name}-kustomization",
            kustomization_manifest(replace(sync, ready_timeout=NO_WAIT)),
            pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.git_repository, self.git_secret, *after],
                custom_timeouts=deletes,
            ),
        )


NO_WAIT = "0s"
"""The Kustomization's ready timeout: ``up`` does not wait for a tenant's own manifests."""
