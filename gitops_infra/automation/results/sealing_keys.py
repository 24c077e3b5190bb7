"""What the Sealed Secrets key commands return: a key pair written into a stack's config, and the cert a
stack seals with. Neither holds a private key: only certs, which are public."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SealingCert", "SealingKey"]


@dataclass(frozen=True)
class SealingKey:
    """A key pair ``generate_sealing_key`` made and wrote into ``stack``'s secret config value ``config_key``
    (``gitops-infra:sealedSecretsKeys``) for ``rotation``."""

    stack: str
    rotation: str
    cert: str
    """The new key's self-signed cert, PEM: what ``kubeseal --cert`` seals with once the rotation is last."""
    config_key: str
    rotations: tuple[str, ...]
    """Every rotation the value holds a pair for now, in the order they were written."""


@dataclass(frozen=True)
class SealingCert:
    """The cert ``stack`` seals with (its output ``output``), PEM: for ``kubeseal --cert``."""

    stack: str
    cert: str
    output: str
