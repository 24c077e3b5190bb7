"""The Kubernetes provider the platform deploys through, made in one place for both kinds of cluster."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

__all__ = [
    "OWNED",
    "NamespaceResource",
    "custom_resource",
    "fixed_config_map",
    "fixed_secret",
    "kubernetes_provider",
]

NamespaceResource = k8s.core.v1.Namespace | k8s.core.v1.NamespacePatch
"""A namespace the platform makes (``Namespace``), or one it only labels (``NamespacePatch``)."""

OWNED: dict[str, str] = {"pulumi.com/patchForce": "true"}
"""Annotations on every object whose content the platform declares: its apply takes the fields back.

The provider applies server-side, and a field someone edited out of band (``kubectl edit``, a client
library) then belongs to that editor: the next ``up`` would fail with an apply conflict instead of
restoring the declared value (seen on a real API server, restoring drift of the ``environment``
ConfigMap). Drift is exactly what ``up`` is there to undo, so the platform's apply forces.
"""


def custom_resource(
    resource_name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """``manifest`` (a custom resource: Flux's, Argo CD's, External Secrets') as a ``CustomResource`` whose
    apply takes its fields back (``OWNED``)."""
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


def kubernetes_provider(
    name: str, kubeconfig: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> k8s.Provider:
    """A provider for the cluster ``kubeconfig`` reaches, its kubeconfig kept secret.

    ConfigMaps and Secrets are updated in place. By default the provider replaces one whose data
    changed, and one with a fixed name (``environment``, ``flux-system``) is deleted before it is made
    again: app teams would read no contract, and Flux no key, for that moment (seen on a real API
    server; mocks cannot show it).

    A create of an object that already exists updates it (``upsert_existing_objects``), as every
    pulumi-kubernetes before 4.29 did: from 4.29 on a create fails with AlreadyExists unless this is set,
    and day 2 meets objects that exist (Flux's Secret from an earlier bootstrap, a service namespace on a
    cluster you run). Set, not left to the provider's default, so that every provider version behaves
    alike. The hazard it brings back: a resource renamed in the program without an alias is created
    (adopting the object) and then deleted, taking the object with it; the platform's names are fixed.
    """
    return k8s.Provider(
        name,
        kubeconfig=pulumi.Output.secret(kubeconfig),
        enable_config_map_mutable=True,
        enable_secret_mutable=True,
        upsert_existing_objects=True,
        opts=opts,
    )


def fixed_config_map(
    resource_name: str,
    name: str,
    data: pulumi.Input[Mapping[str, pulumi.Input[str]]],
    namespace: NamespaceResource,
    parent: pulumi.Resource,
    *,
    retain_on_delete: bool = False,
) -> k8s.core.v1.ConfigMapPatch:
    """A ConfigMap with a fixed name (``environment``) in ``namespace``, applied as a patch (see below);
    with ``retain_on_delete``, its fields stay on destroy (an object shared with others)."""
    metadata, opts = _fixed(name, namespace, parent, was="kubernetes:core/v1:ConfigMap")
    opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=retain_on_delete))
    return k8s.core.v1.ConfigMapPatch(resource_name, metadata=metadata, data=data, opts=opts)


def fixed_secret(
    resource_name: str,
    name: str,
    string_data: Mapping[str, pulumi.Input[str]],
    namespace: NamespaceResource,
    parent: pulumi.Resource,
    *,
    labels: Mapping[str, str] | None = None,
) -> k8s.core.v1.SecretPatch:
    """A Secret with a fixed name (Flux's git auth, the age key, Argo CD's repository) in ``namespace``,
    applied as a patch; ``labels`` are those a controller finds it by (Argo CD's ``secret-type``)."""
    metadata, opts = _fixed(name, namespace, parent, was="kubernetes:core/v1:Secret", labels=labels)
    return k8s.core.v1.SecretPatch(
        resource_name, metadata=metadata, type="Opaque", string_data=dict(string_data), opts=opts
    )


def _fixed(
    name: str,
    namespace: NamespaceResource,
    parent: pulumi.Resource,
    *,
    was: str,
    labels: Mapping[str, str] | None = None,
) -> tuple[k8s.meta.v1.ObjectMetaPatchArgs, pulumi.ResourceOptions]:
    """The metadata and options of an object with a fixed name that the components declare.

    Whether a ConfigMap or Secret whose data changed is updated or replaced is the provider's setting
    (``enableConfigMapMutable``, ``enableSecretMutable``), not the resource's, and a component cannot
    see the provider it is given. With a plain ``k8s.Provider`` a replacement of a fixed name deletes the
    object before making it again: app teams had no contract, and Flux no key, for that moment (a new
    UID on a real API server). A patch is applied server-side and updated in place under any provider,
    and so is a create of an object that already exists (pulumi-kubernetes 4.29 refuses that for a
    plain resource unless the provider upserts). It takes its fields back from an out-of-band edit
    (``OWNED``), and drift of them shows on refresh as on any resource. The second act is destroy: a
    patch gives up its fields (keys, annotations) and the object itself goes with its namespace; in a
    namespace that is kept, an empty object of that name stays. The alias carries a stack made before
    this over, in place: the state keeps its field manager, and the update takes the same fields.
    Patches need server-side apply, the provider's default since pulumi-kubernetes 4.
    """
    metadata = k8s.meta.v1.ObjectMetaPatchArgs(
        name=name,
        namespace=namespace.metadata.name,
        annotations=OWNED,
        labels=dict(labels) if labels else None,
    )
    opts = pulumi.ResourceOptions(parent=parent, depends_on=[namespace], aliases=[pulumi.Alias(type_=was)])
    return metadata, opts
