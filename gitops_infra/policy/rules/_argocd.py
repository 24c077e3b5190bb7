"""The rules on Argo CD's objects: an Application syncs automatically, an AppProject names its destinations,
and a prod stack's Applications prune and self-heal.

An Application's environment is its stack's: the ``environment`` ConfigMap the stack writes (its
``data.name``). A stack with Applications and no such ConfigMap counts as prod: the rule fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gitops_infra.checks import PROD_ENVIRONMENTS, WILDCARD_DESTINATION

from ._inputs import at, decoded, names, objects

__all__ = [
    "APPLICATION_TYPES",
    "APP_PROJECT_TYPES",
    "ProdSyncSettings",
    "application_automated_violations",
    "project_destination_violations",
    "stack_prod_sync_violations",
]

APPLICATION_TYPES = ("kubernetes:argoproj.io/v1alpha1:Application",)
APP_PROJECT_TYPES = ("kubernetes:argoproj.io/v1alpha1:AppProject",)
_ENVIRONMENT_TYPES = ("kubernetes:core/v1:ConfigMap", "kubernetes:core/v1:ConfigMapPatch")


@dataclass(frozen=True)
class ProdSyncSettings:
    """Config of ``argocd-prod-prune-self-heal``."""

    prod_environments: tuple[str, ...] = PROD_ENVIRONMENTS
    """Environment names that mean prod (config ``prodEnvironments``)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ProdSyncSettings:
        return cls(prod_environments=names(config, "prodEnvironments", PROD_ENVIRONMENTS))


def _automated(props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    automated = decoded(at(props, "spec", "syncPolicy", "automated"))
    return automated if isinstance(automated, Mapping) else None


def application_automated_violations(props: Mapping[str, Any]) -> list[str]:
    """An Application sets ``spec.syncPolicy.automated`` (and does not turn it off with ``enabled: false``).

    Without it, Argo CD only reports a new commit as OutOfSync: nothing reaches the cluster until someone
    syncs by hand, and the platform's proof of sync would wait for ever."""
    automated = _automated(props)
    if automated is not None and automated.get("enabled") is not False:
        return []
    return [
        "this Application does not sync automatically (no spec.syncPolicy.automated), so commits reach the "
        "cluster only when someone syncs by hand; set spec.syncPolicy.automated (argocd.prune and "
        "argocd.selfHeal say how)"
    ]


def project_destination_violations(props: Mapping[str, Any]) -> list[str]:
    """An AppProject names each destination: no ``*`` (or other glob) in a namespace or a server."""
    found = []
    for destination in objects(decoded(at(props, "spec", "destinations"))):
        for field in ("namespace", "server", "name"):
            value = destination.get(field)
            if isinstance(value, str) and any(mark in value for mark in (WILDCARD_DESTINATION, "?", "[")):
                found.append(
                    f"this AppProject allows the destination {field} {value!r}, a wildcard: its Applications "
                    "could deploy anywhere it matches (kube-system included); name each namespace "
                    "(argocd.destinations)"
                )
    return found


def _environment_name(resources: Iterable[tuple[str, str, Mapping[str, Any]]]) -> str | None:
    for resource_type, _, props in resources:
        if resource_type in _ENVIRONMENT_TYPES and at(props, "metadata", "name") == "environment":
            name = at(decoded(props.get("data")) or {}, "name")
            if isinstance(name, str):
                return name
    return None


def stack_prod_sync_violations(
    resources: Iterable[tuple[str, str, Mapping[str, Any]]], settings: ProdSyncSettings | None = None
) -> list[tuple[str, str]]:
    """In a prod stack, every Application prunes and self-heals: ``(urn, message)`` for each that does not.

    Without prune, what was removed from git stays in prod; without self-heal, a change made by hand in
    prod stays until the next commit."""
    settings = settings or ProdSyncSettings()
    resources = list(resources)
    environment = _environment_name(resources)
    if environment is not None and environment not in settings.prod_environments:
        return []
    where = f"the {environment} environment" if environment else "a stack with no environment ConfigMap"
    found = []
    for resource_type, urn, props in resources:
        if resource_type not in APPLICATION_TYPES:
            continue
        automated = _automated(props) or {}
        missing = [key for key in ("prune", "selfHeal") if automated.get(key) is not True]
        if missing:
            found.append(
                (
                    urn,
                    f"this Application does not set spec.syncPolicy.automated.{' or '.join(missing)} in "
                    f"{where} (prod): set argocd.prune and argocd.selfHeal to true",
                )
            )
    return found
