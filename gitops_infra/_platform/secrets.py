"""The platform's secret providers, from the config's ``secrets`` section (``StackConfig.secret_providers``).

Sealed Secrets: a :class:`~gitops_infra.components.SealedSecrets` on the cluster's provider when
``secrets.sealedSecrets.enabled``. Its chart is installed unless the GitOps engine is installed outside the
platform (``flux.install`` or ``argocd.install`` ``external``: ``StackConfig.installs_addons``): such a
cluster's add-ons come from elsewhere (on the local cluster, the harness runs the controller), and the
platform then makes only the keys. With ``keySource: config``
the keys are the pairs of the secret ``sealedSecretsKeys`` (``StackSecrets.sealed_secrets_keys``), else
pulumi-tls makes them.

External Secrets: an :class:`~gitops_infra.components.ExternalSecrets` when
``secrets.externalSecrets.enabled``, on the cluster's Kubernetes provider and the AWS provider the cluster
is made with. The role reads the names under ``secretPrefix`` in ``region``; it is associated with the
controller through EKS Pod Identity (the agent add-on included) when the platform made the cluster, and
on an existing cluster it is yours to associate. The chart follows the same rule as Sealed Secrets'; the
store is always made, and its name is the contract's ``clusterSecretStore`` (the config writes it there).

Kept apart from :mod:`gitops_infra.platform`, so each provider's wiring is one function here.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from gitops_infra.components.eks_cluster import EksCluster
from gitops_infra.components.external_secrets import ExternalSecrets, ExternalSecretsArgs
from gitops_infra.components.sealed_secrets import HeldKey, SealedSecrets, SealedSecretsArgs
from gitops_infra.config import StackConfig

__all__ = ["external_secrets", "sealed_secrets"]


def sealed_secrets(
    config: StackConfig, name: str, on_cluster: pulumi.ResourceOptions
) -> SealedSecrets | None:
    """The Sealed Secrets controller and its keys, or ``None`` when ``sealedSecrets`` is off."""
    spec = config.secret_providers.sealed_secrets
    if not spec.enabled:
        return None
    return SealedSecrets(
        f"{name}-sealed-secrets",
        SealedSecretsArgs(
            namespace=spec.namespace,
            rotations=spec.rotations,
            version=spec.version,
            install_controller=config.installs_addons,
            keys={
                rotation: HeldKey(cert=pair.cert, private_key=pair.private_key)
                for rotation, pair in config.secrets.sealed_secrets_keys.items()
            },
        ),
        opts=on_cluster,
    )


def external_secrets(
    config: StackConfig,
    name: str,
    on_cluster: pulumi.ResourceOptions,
    cluster: EksCluster | None,
    tags: Mapping[str, str],
) -> ExternalSecrets | None:
    """The External Secrets controller's role, the controller and the store, or ``None`` when
    ``externalSecrets`` is off. ``on_cluster`` carries both providers: the AWS one the cluster is made
    with (the default, or the one the platform's ``opts`` hand down) and the cluster's Kubernetes one."""
    spec = config.secret_providers.external_secrets
    if not spec.enabled:
        return None
    # The loaded config filled both in (with_stack_defaults), and refused a stack without a region.
    assert spec.region is not None and spec.secret_prefix is not None
    return ExternalSecrets(
        f"{name}-external-secrets",
        ExternalSecretsArgs(
            region=spec.region,
            secret_prefix=spec.secret_prefix,
            kms_key_arn=spec.kms_key_arn,
            iam_role=spec.iam_role,
            # A cluster the platform made lacks the agent; on one you run, the association is yours.
            cluster_name=cluster.cluster_name if cluster is not None else None,
            pod_identity_agent=cluster is not None,
            install=config.installs_addons,
            namespace=spec.namespace,
            store_name=spec.cluster_secret_store,
            tags=dict(tags),
        ),
        opts=on_cluster,
    )
