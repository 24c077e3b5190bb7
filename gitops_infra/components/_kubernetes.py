"""The Kubernetes provider the platform deploys through, made in one place for both kinds of cluster."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

__all__ = ["OWNED", "NamespaceResource", "kubernetes_provider", "owned_in"]

NamespaceResource = k8s.core.v1.Namespace | k8s.core.v1.NamespacePatch
"""A namespace the platform makes (``Namespace``), or one it only labels (``NamespacePatch``)."""

OWNED: dict[str, str] = {"pulumi.com/patchForce": "true"}
"""Annotations on every object whose content the platform declares: its apply takes the fields back.

The provider applies server-side, and a field someone edited out of band (``kubectl edit``, a client
library) then belongs to that editor: the next ``up`` would fail with an apply conflict instead of
restoring the declared value (seen on a real API server, restoring drift of the ``environment``
ConfigMap). Drift is exactly what ``up`` is there to undo, so the platform's apply forces.
"""


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


def owned_in(
    name: str, namespace: NamespaceResource, parent: pulumi.Resource
) -> tuple[k8s.meta.v1.ObjectMetaArgs, pulumi.ResourceOptions]:
    """The metadata and options of an object the platform declares in ``namespace``: named ``name``,
    taking its fields back on apply (``OWNED``), a child of ``parent``, made after the namespace."""
    metadata = k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace.metadata.name, annotations=OWNED)
    return metadata, pulumi.ResourceOptions(parent=parent, depends_on=[namespace])
