"""``gitops-infra sealed-secrets``: the Sealed Secrets keys a stack holds in its config (``keygen``), and
the cert it seals with (``cert``)."""

from __future__ import annotations

import click

from ... import automation
from .._invocation import Invocation, command
from .._main import EXIT_OK, main
from .._render.sealing_keys import print_sealing_cert, print_sealing_key

__all__: list[str] = []


@main.group(name="sealed-secrets")
def sealed_secrets_group() -> None:
    """The Sealed Secrets keys in a stack's config, and the cert it seals with (for kubeseal --cert)."""


@sealed_secrets_group.command(name="keygen")
@command
@click.option(
    "--rotation",
    default="",
    show_default=False,
    metavar="VALUE",
    help='The rotation to make the key for (a value of secrets.sealedSecrets.rotations; default "").',
)
def keygen(invocation: Invocation, rotation: str) -> int:
    """Make a key pair (RSA 4096, a self-signed cert) for a rotation, into STACK's secret sealedSecretsKeys.

    The pairs already there are kept; a rotation that has one is refused (a key that sealed something is
    never replaced: add a rotation). The private key is written encrypted, and never printed.
    """
    with invocation.activity("Making a sealing key for"):
        key = automation.generate_sealing_key(
            invocation.stack, rotation=rotation, options=invocation.options()
        )
    invocation.emit(key, lambda out: print_sealing_key(out, key))
    return EXIT_OK


@sealed_secrets_group.command(name="cert")
@command
def cert(invocation: Invocation) -> int:
    """Print the cert STACK seals with (its output sealedSecretsCert, PEM), for kubeseal --cert."""
    found = automation.sealing_cert(invocation.stack, options=invocation.options())
    invocation.emit(found, lambda out: print_sealing_cert(out, found))
    return EXIT_OK
