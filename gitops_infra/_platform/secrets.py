"""The platform's secret providers, from the config's ``secrets`` section (``StackConfig.secret_providers``).

Sealed Secrets: a :class:`~gitops_infra.components.SealedSecrets` on the cluster's provider when
``secrets.sealedSecrets.enabled``. Its chart is installed unless Flux is installed outside the platform
(``flux.install: external``): such a cluster's add-ons come from elsewhere (on the local cluster, the
harness runs the controller), and the platform then makes only the keys. With ``keySource: config``
the keys are the pairs of the secret ``sealedSecretsKeys`` (``StackSecrets.sealed_secrets_keys``), else
pulumi-tls makes them. Kept apart from :mod:`gitops_infra.platform`, so each provider's wiring is one
function here.
"""

from __future__ import annotations

import pulumi

from gitops_infra.components.sealed_secrets import HeldKey, SealedSecrets, SealedSecretsArgs
from gitops_infra.config import StackConfig
from gitops_infra.defaults import FluxInstall

__all__ = ["sealed_secrets"]


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
            install_controller=config.flux.install is not FluxInstall.EXTERNAL,
            keys={
                rotation: HeldKey(cert=pair.cert, private_key=pair.private_key)
                for rotation, pair in config.secrets.sealed_secrets_keys.items()
            },
        ),
        opts=on_cluster,
    )
