"""Cluster Secret: the environment contract where Argo CD's templating reads it.

The fourth piece of :mod:`gitops_infra.components.argocd`. Argo CD has no post-build substitution, so
the contract (:mod:`gitops_infra.contract`) is published, as the EKS Blueprints GitOps bridge publishes
its metadata, on the Secret that declares the cluster Argo CD runs in (``in-cluster``): every contract key
as an annotation ``gitops-infra.io/<key>``, and the environment's name and the contract's version as
labels, which an ``ApplicationSet``'s cluster generator selects on. A template then reads, for example,
``{{index .metadata.annotations "gitops-infra.io/baseDomain"}}``. The ``environment`` ConfigMaps exist as
with Flux (:mod:`gitops_infra.components.environment`).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.components._kubernetes import OWNED, NamespaceResource
from gitops_infra.components.argocd._names import IN_CLUSTER_SERVER, SECRET_TYPE_LABEL
from gitops_infra.contract import CONTRACT_VERSION_KEY, Environment, environment_data

__all__ = [
    "CLUSTER_SECRET_NAME",
    "CONTRACT_ANNOTATION_PREFIX",
    "CONTRACT_VERSION_LABEL",
    "ENVIRONMENT_LABEL",
    "build_cluster_secret",
    "cluster_secret_metadata",
]

CLUSTER_SECRET_NAME = "in-cluster"
CONTRACT_ANNOTATION_PREFIX = "gitops-infra.io/"
ENVIRONMENT_LABEL = "gitops-infra.io/environment"
CONTRACT_VERSION_LABEL = "gitops-infra.io/contract-version"


def cluster_secret_metadata(environment: Environment) -> dict[str, Any]:
    """The labels and annotations that carry ``environment`` (each contract key, and its version)."""
    data = environment_data(environment)
    return {
        "labels": {
            SECRET_TYPE_LABEL: "cluster",
            ENVIRONMENT_LABEL: environment.name,
            CONTRACT_VERSION_LABEL: data[CONTRACT_VERSION_KEY],
        },
        "annotations": {f"{CONTRACT_ANNOTATION_PREFIX}{key}": value for key, value in sorted(data.items())},
    }


def build_cluster_secret(
    name: str, environment: Environment, namespace: NamespaceResource, parent: pulumi.Resource
) -> k8s.core.v1.Secret:
    """The ``in-cluster`` cluster Secret, with the contract on it. A plain Secret, made and deleted with
    the stack: Argo CD knows the cluster it runs in without one, and falls back to that on destroy."""
    metadata = cluster_secret_metadata(environment)
    return k8s.core.v1.Secret(
        f"{name}-cluster",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=CLUSTER_SECRET_NAME,
            namespace=namespace.metadata.name,
            labels=metadata["labels"],
            annotations={**OWNED, **metadata["annotations"]},
        ),
        type="Opaque",
        # Argo CD's own declaration of the in-cluster destination: no credentials, its service account's.
        string_data={
            "name": CLUSTER_SECRET_NAME,
            "server": IN_CLUSTER_SERVER,
            "config": '{"tlsClientConfig":{"insecure":false}}',
        },
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )
