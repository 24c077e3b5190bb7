"""Which Flux objects are a tenant's: the tenants the stack's ``tenants`` output names, and their
Kustomization and GitRepository, found in each tenant's home namespace.

A tenant's objects are the platform's to make and Flux's to reconcile, as the tenant's ServiceAccount.
The automation layer knows tenants only from the stack's state: the output ``tenants`` (a list of
``{"name", "namespace", "namespaces", "kustomization"}``, sorted by name) and the label
:data:`TENANT_LABEL` on the objects. What Flux says of them is judged with the rest of the GitOps layer
(``gitops``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gitops_infra.defaults import TENANT_LABEL

from .kube import plain

__all__ = ["TENANT_LABEL", "Tenant", "TenantObjects", "tenant_objects", "tenants_of"]

_STACK = "pulumi:pulumi:Stack"
_OUTPUT = "tenants"


@dataclass(frozen=True)
class Tenant:
    """One tenant as the stack's ``tenants`` output names it."""

    name: str
    namespace: str
    """Its home namespace: where its Kustomization and GitRepository are."""
    namespaces: tuple[str, ...]
    kustomization: str


@dataclass(frozen=True)
class TenantObjects:
    """A tenant and its objects as the cluster returned them (``None``: not there)."""

    tenant: Tenant
    kustomization: Mapping[str, Any] | None
    source: Mapping[str, Any] | None


def tenants_of(deployment: Mapping[str, Any]) -> tuple[Tenant, ...]:
    """The tenants the stack's ``tenants`` output names, by name; none when it has no such output.

    An entry without a name or a home namespace names no object to read, and is left out; the
    platform writes every entry whole.
    """
    outputs: Any = None
    for resource in deployment.get("resources") or []:
        if isinstance(resource, Mapping) and resource.get("type") == _STACK:
            outputs = plain(resource.get("outputs"))
            break
    listed = plain(outputs.get(_OUTPUT)) if isinstance(outputs, Mapping) else None
    found = {}
    for entry in listed if isinstance(listed, list) else []:
        entry = plain(entry)
        if not isinstance(entry, Mapping):
            continue
        name, home = entry.get("name"), entry.get("namespace")
        if not isinstance(name, str) or not name or not isinstance(home, str) or not home:
            continue
        namespaces = entry.get("namespaces")
        others = (
            [n for n in namespaces if isinstance(n, str) and n != home]
            if isinstance(namespaces, list)
            else []
        )
        kustomization = entry.get("kustomization")
        found[name] = Tenant(
            name=name,
            namespace=home,
            namespaces=(home, *others),
            kustomization=kustomization if isinstance(kustomization, str) and kustomization else name,
        )
    return tuple(found[name] for name in sorted(found))


Get = Callable[[str, str], Mapping[str, Any] | None]
"""A read of one object of a kind: (namespace, name) to the object, ``None`` when it is not there."""
Labelled = Callable[[str, str], list[dict[str, Any]]]
"""A list of one kind's objects in a namespace by a label selector."""


def tenant_objects(
    tenant: Tenant, kustomizations: Get, sources: Get, labelled_sources: Labelled
) -> TenantObjects:
    """``tenant``'s Kustomization (the output's name, in its home namespace) and the GitRepository it
    applies from: its ``sourceRef``, or, with no Kustomization to say, the one labelled as the tenant's in
    the home namespace."""
    kustomization = kustomizations(tenant.namespace, tenant.kustomization)
    source: Mapping[str, Any] | None = None
    ref = ((kustomization or {}).get("spec") or {}).get("sourceRef") or {}
    if kustomization is not None and ref.get("kind") == "GitRepository" and ref.get("name"):
        # Cross-namespace references are refused when Flux is locked down, and then the Kustomization's
        # own condition says so; the read follows the reference as Flux would.
        source = sources(str(ref.get("namespace") or tenant.namespace), str(ref["name"]))
    elif kustomization is None:
        found = labelled_sources(tenant.namespace, f"{TENANT_LABEL}={tenant.name}")
        source = min(found, key=lambda o: str((o.get("metadata") or {}).get("name"))) if found else None
    return TenantObjects(tenant, kustomization, source)
