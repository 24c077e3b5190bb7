"""The Sealed Secrets keys (``sealed-secrets keygen`` and ``cert``): what was written where, and the cert.

A key's result holds only its cert, which is public; the private key is in no result."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation

__all__ = ["print_sealing_cert", "print_sealing_key"]


def print_sealing_key(out: Console, key: automation.SealingKey) -> None:
    """Where the pair went, and what makes the stack use it."""
    held = ", ".join(repr(rotation) for rotation in key.rotations)
    out.print(
        f"Wrote a new key pair for rotation {key.rotation!r} into the secret {key.config_key} of stack "
        f"{key.stack} (it now holds {held})."
    )
    out.print(
        "The stack uses it with secrets.sealedSecrets.keySource: config and the rotation in "
        "secrets.sealedSecrets.rotations (the last one seals), after `gitops-infra up`."
    )


def print_sealing_cert(out: Console, cert: automation.SealingCert) -> None:
    """The PEM alone, so that ``> cert.pem`` is the file ``kubeseal --cert`` takes."""
    out.print(cert.cert.rstrip("\n"))
