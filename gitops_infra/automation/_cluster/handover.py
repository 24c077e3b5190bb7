"""Flux lets go of a stack's fleet before Argo CD takes it over (``switch_engine``).

The stack's root Kustomization is suspended and set to ``deletionPolicy: Orphan``: Flux applies nothing
more, and the update that deletes it (the one that brings Argo CD) prunes nothing of what it applied. Argo
CD then applies the same path over the same objects, which stay in place, with their UIDs.

Refused, with nothing changed, when the root applied Flux objects of its own (Kustomizations or
HelmReleases, labelled with the root's name): Argo CD would apply them too, under a Flux that is going,
and an uninstall of Flux's chart takes its CRDs, and those objects, with it. Move them to Applications
first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from ...errors import EngineSwitchError
from .flux_apis import APPLIED_BY_NAME_LABEL, APPLIED_BY_NAMESPACE_LABEL, KUSTOMIZATION, SYNC_KINDS
from .kube import (
    REQUEST_TIMEOUT,
    Discovery,
    client_log,
    connected,
    kubeconfig_of,
    plain,
    provider_access,
    secret_strings,
    why,
)

__all__ = ["RELEASE_PATCH", "release_flux"]

RELEASE_PATCH = {"spec": {"suspend": True, "deletionPolicy": "Orphan"}}


def _roots(deployment: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(namespace, name, provider reference)`` of each Kustomization the stack made."""
    found = []
    for resource in deployment.get("resources") or []:
        type_ = str(resource.get("type", ""))
        if not type_.startswith(f"kubernetes:{KUSTOMIZATION.group}/") or not type_.endswith(
            f":{KUSTOMIZATION.kind}"
        ):
            continue
        metadata = (
            plain((plain(resource.get("outputs")) or plain(resource.get("inputs")) or {}).get("metadata"))
            or {}
        )
        namespace, name = metadata.get("namespace"), metadata.get("name")
        if isinstance(namespace, str) and isinstance(name, str):
            found.append((namespace, name, str(resource.get("provider") or "")))
    return found


def _shown(kind: str, obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{kind} {metadata.get('namespace')}/{metadata.get('name')}"


def _applied_flux_objects(objects: Any, discovery: Discovery, roots: list[tuple[str, str, str]]) -> list[str]:
    """The Kustomizations and HelmReleases the stack's roots applied (by kustomize-controller's labels)."""
    found = []
    for namespace, name, _ in roots:
        selector = f"{APPLIED_BY_NAME_LABEL}={name},{APPLIED_BY_NAMESPACE_LABEL}={namespace}"
        for kind in SYNC_KINDS:
            version = discovery.version(kind.group, kind.plural, kind.versions)
            if version is None:
                continue
            listed = cast(
                dict[str, Any],
                objects.list_cluster_custom_object(
                    kind.group,
                    version,
                    kind.plural,
                    label_selector=selector,
                    _request_timeout=REQUEST_TIMEOUT,
                ),
            )
            found += [_shown(kind.kind, obj) for obj in listed.get("items") or []]
    return sorted(found)


def _release(api: Any, roots: list[tuple[str, str, str]], stack: str) -> None:
    from kubernetes import client

    objects = client.CustomObjectsApi(api)
    discovery = Discovery(api)
    applied = _applied_flux_objects(objects, discovery, roots)
    if applied:
        raise EngineSwitchError(
            f"stack {stack!r}: Flux's root applied Flux objects of its own ({', '.join(applied)}): Argo CD "
            "would apply them too, and they would go with Flux; move them to Applications (or out of the "
            "fleet path) first. Nothing was changed",
            stack=stack,
        )
    version = discovery.version(KUSTOMIZATION.group, KUSTOMIZATION.plural, KUSTOMIZATION.versions)
    if version is None:
        raise EngineSwitchError(f"stack {stack!r}: the cluster serves no Flux Kustomization", stack=stack)
    for namespace, name, _ in roots:
        objects.patch_namespaced_custom_object(
            KUSTOMIZATION.group,
            version,
            namespace,
            KUSTOMIZATION.plural,
            name,
            RELEASE_PATCH,
            _request_timeout=REQUEST_TIMEOUT,
        )


def release_flux(deployment: Mapping[str, Any], *, stack: str, base: Path | None = None) -> tuple[str, ...]:
    """Suspend the stack's root Kustomizations and orphan what they applied; their ``namespace/name``.

    ``deployment`` is the stack's decrypted checkpoint; a relative kubeconfig path is from ``base``.
    """
    roots = _roots(deployment)
    if not roots:
        raise EngineSwitchError(
            f"stack {stack!r} made no Flux Kustomization: nothing to hand over", stack=stack
        )
    access = replace(provider_access(deployment, roots[0][2]), base=base)
    secrets = [access.kubeconfig] if access.kubeconfig else []
    with client_log():
        try:
            kubeconfig = kubeconfig_of(access)
            secrets += secret_strings(kubeconfig)
            with connected(kubeconfig, access.context) as api:
                _release(api, roots, stack)
        except EngineSwitchError:
            raise
        except Exception as exc:  # any failure to reach the cluster: nothing was switched
            said = why(exc, secrets)
            raise EngineSwitchError(
                f"stack {stack!r}: Flux's root could not be released, so nothing was switched: {said}",
                stack=stack,
            ) from None
    return tuple(f"{namespace}/{name}" for namespace, name, _ in roots)
