"""The rules on tenants: no tenant's reconciler may write cluster-wide, and every tenant Kustomization
names the ServiceAccount it runs as.

Both see the whole stack, because who is a tenant is told by other resources:

- a **tenant Kustomization** is a Flux Kustomization labelled ``gitops-infra.io/tenant``, or one outside
  Flux's namespaces (those the stack labels ``app.kubernetes.io/part-of: flux``, the flux2 release's
  namespace, and the ``fluxNamespaces`` setting);
- a **tenant's reconciler** is a ServiceAccount labelled ``gitops-infra.io/tenant``, or the one a tenant
  Kustomization names (``spec.serviceAccountName`` in its namespace).

**Cluster-wide write**, as this policy reads it, is any write the reconciler could make outside its own
namespaces, or over what the platform set on them:

- a ClusterRoleBinding to a tenant's reconciler, of a ClusterRole that grants any write verb (``create``,
  ``update``, ``patch``, ``delete``, ``deletecollection``, ``escalate``, ``bind``, ``impersonate`` or
  ``*``): a ClusterRoleBinding grants its role in every namespace and on cluster-scoped objects. A
  ClusterRole the stack does not define is judged by name: ``view`` (and ``system:`` roles that only
  read) reads only; any other, ``cluster-admin``, ``admin`` and ``edit`` included, writes;
- a RoleBinding to a tenant's reconciler of ``cluster-admin``, or of a role with a rule granting every
  verb on every resource. By Kubernetes' letter such a binding stays in its namespace; but there it also
  writes the Namespace itself, its ResourceQuota and its LimitRange, which are the platform's (the
  built-in ``admin``, the tenants' default role, writes none of these), and it is what a binding meant
  to be cluster-wide looks like when it is not;
- a RoleBinding to a tenant's reconciler in a namespace labelled as another tenant's.

Group subjects (``system:serviceaccounts:<namespace>``) are not followed: the platform binds the
reconciler by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitops_infra.defaults import FLUX_NAMESPACE, TENANT_LABEL

from ._inputs import at, names, objects, strings

__all__ = [
    "CLUSTER_ROLE_BINDING_TYPES",
    "CLUSTER_ROLE_TYPES",
    "DEFAULT_FLUX_NAMESPACES",
    "READ_ONLY_CLUSTER_ROLES",
    "ROLE_BINDING_TYPES",
    "ROLE_TYPES",
    "TENANT_LABEL",
    "TenantSettings",
    "stack_tenant_binding_violations",
    "stack_tenant_identity_violations",
]

DEFAULT_FLUX_NAMESPACES = (FLUX_NAMESPACE,)
CLUSTER_ROLE_BINDING_TYPES = ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",)
ROLE_BINDING_TYPES = ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",)
CLUSTER_ROLE_TYPES = ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",)
ROLE_TYPES = ("kubernetes:rbac.authorization.k8s.io/v1:Role",)
READ_ONLY_CLUSTER_ROLES = frozenset(
    {"view", "system:aggregate-to-view", "system:discovery", "system:basic-user"}
)
"""Built-in ClusterRoles that grant no write."""
_WRITE_VERBS = frozenset(
    {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*"}
)
_KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
_SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
_NAMESPACES = ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:NamespacePatch")
_HELM_RELEASE = "kubernetes:helm.sh/v3:Release"

Resources = Sequence[tuple[str, str, Mapping[str, Any]]]
"""The stack's resources as ``(type, urn, props)``."""


@dataclass(frozen=True)
class TenantSettings:
    """Config of the tenant policies: the namespaces Flux's own Kustomizations live in."""

    flux_namespaces: tuple[str, ...] = DEFAULT_FLUX_NAMESPACES

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TenantSettings:
        """Settings from a policy's config (``fluxNamespaces``), with defaults."""
        return cls(names(config, "fluxNamespaces", DEFAULT_FLUX_NAMESPACES))


def _labels(props: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = at(props, "metadata", "labels")
    return labels if isinstance(labels, Mapping) else {}


def _name(props: Mapping[str, Any]) -> str | None:
    name = at(props, "metadata", "name")
    return name if isinstance(name, str) else None


def _flux_namespaces(resources: Resources, settings: TenantSettings) -> set[str]:
    found = set(settings.flux_namespaces)
    for kind, _, props in resources:
        if kind in _NAMESPACES and _labels(props).get("app.kubernetes.io/part-of") == "flux":
            found.add(_name(props) or "")
        elif (
            kind == _HELM_RELEASE
            and props.get("chart") == "flux2"
            and isinstance(props.get("namespace"), str)
        ):
            found.add(props["namespace"])
    return found - {""}


def _tenant_kustomizations(
    resources: Resources, settings: TenantSettings
) -> list[tuple[str, Mapping[str, Any]]]:
    flux = _flux_namespaces(resources, settings)
    return [
        (urn, props)
        for kind, urn, props in resources
        if kind == _KUSTOMIZATION
        and (TENANT_LABEL in _labels(props) or at(props, "metadata", "namespace") not in flux)
    ]


def stack_tenant_identity_violations(
    resources: Resources, settings: TenantSettings = TenantSettings()
) -> list[tuple[str, str]]:
    """``(urn, message)`` for each tenant Kustomization that names no ServiceAccount to run as."""
    found = []
    for urn, props in _tenant_kustomizations(resources, settings):
        account = at(props, "spec", "serviceAccountName")
        if not isinstance(account, str) or not account:
            where = f"{at(props, 'metadata', 'namespace')}/{_name(props)}"
            found.append(
                (
                    urn,
                    f"tenant Kustomization {where} sets no spec.serviceAccountName: it would run as Flux "
                    "itself (cluster-admin), or, with Flux locked down, as its namespace's 'default'; name "
                    "the tenant's reconciler",
                )
            )
    return found


def _reconcilers(resources: Resources, settings: TenantSettings) -> dict[tuple[str, str], str | None]:
    """Each tenant reconciler (namespace, name), with its tenant's name where a label says it."""
    found: dict[tuple[str, str], str | None] = {}
    for kind, _, props in resources:
        namespace, name = at(props, "metadata", "namespace"), _name(props)
        if (
            kind == _SERVICE_ACCOUNT
            and TENANT_LABEL in _labels(props)
            and isinstance(namespace, str)
            and name
        ):
            found[(namespace, name)] = str(_labels(props)[TENANT_LABEL])
    for _, props in _tenant_kustomizations(resources, settings):
        namespace, account = at(props, "metadata", "namespace"), at(props, "spec", "serviceAccountName")
        if isinstance(namespace, str) and isinstance(account, str) and account:
            tenant = _labels(props).get(TENANT_LABEL)
            if found.get((namespace, account)) is None:
                found[(namespace, account)] = str(tenant) if tenant else None
    return found


def _writes(rules: Any) -> bool:
    return any(set(strings(rule.get("verbs"))) & _WRITE_VERBS for rule in objects(rules))


def _everything(rules: Any) -> bool:
    return any(
        "*" in strings(rule.get("verbs")) and "*" in strings(rule.get("resources")) for rule in objects(rules)
    )


def stack_tenant_binding_violations(
    resources: Resources, settings: TenantSettings = TenantSettings()
) -> list[tuple[str, str]]:
    """``(urn, message)`` for each binding that gives a tenant's reconciler cluster-wide write (the module
    docstring says what counts)."""
    reconcilers = _reconcilers(resources, settings)
    if not reconcilers:
        return []
    cluster_roles = {_name(p): p.get("rules") for k, _, p in resources if k in CLUSTER_ROLE_TYPES}
    roles = {
        (at(p, "metadata", "namespace"), _name(p)): p.get("rules") for k, _, p in resources if k in ROLE_TYPES
    }
    tenant_namespaces: dict[str, str] = {}
    for kind, _, props in resources:
        if kind in _NAMESPACES and TENANT_LABEL in _labels(props) and _name(props):
            tenant_namespaces[str(_name(props))] = str(_labels(props)[TENANT_LABEL])
    found = []
    for kind, urn, props in resources:
        if kind not in CLUSTER_ROLE_BINDING_TYPES and kind not in ROLE_BINDING_TYPES:
            continue
        ref = at(props, "roleRef")
        ref = ref if isinstance(ref, Mapping) else {}
        role_kind, role = ref.get("kind"), ref.get("name")
        namespace = at(props, "metadata", "namespace")
        for subject in _subjects(props, namespace):
            if subject not in reconcilers:
                continue
            who = f"tenant reconciler {subject[0]}/{subject[1]}"
            if kind in CLUSTER_ROLE_BINDING_TYPES:
                if _cluster_role_writes(role, cluster_roles):
                    found.append(
                        (
                            urn,
                            f"ClusterRoleBinding {_name(props)} gives {who} ClusterRole {role}, which "
                            "writes, in every namespace and cluster-wide; bind a role in the tenant's own "
                            "namespaces with RoleBindings instead",
                        )
                    )
                continue
            rules = cluster_roles.get(role) if role_kind == "ClusterRole" else roles.get((namespace, role))
            if (role_kind == "ClusterRole" and role == "cluster-admin") or _everything(rules):
                found.append(
                    (
                        urn,
                        f"RoleBinding {namespace}/{_name(props)} gives {who} {role_kind} {role}, every verb "
                        "on every resource: it writes the namespace itself, its quota and limits, which are "
                        "the platform's; bind 'admin' (the default) or a narrower role",
                    )
                )
            tenant, owner = reconcilers[subject], tenant_namespaces.get(str(namespace))
            if owner is not None and tenant is not None and owner != tenant:
                found.append(
                    (
                        urn,
                        f"RoleBinding {namespace}/{_name(props)} gives {who} (tenant {tenant}) a role in "
                        f"namespace {namespace}, which is tenant {owner}'s",
                    )
                )
    return found


def _subjects(props: Mapping[str, Any], namespace: Any) -> Iterable[tuple[str, str]]:
    for subject in objects(props.get("subjects")):
        if subject.get("kind") == "ServiceAccount" and isinstance(subject.get("name"), str):
            where = subject.get("namespace") or namespace
            if isinstance(where, str):
                yield where, subject["name"]


def _cluster_role_writes(role: Any, cluster_roles: Mapping[Any, Any]) -> bool:
    if role in cluster_roles:
        return _writes(cluster_roles[role])
    return role not in READ_ONLY_CLUSTER_ROLES  # a role not in the stack cannot be read: judged by name
