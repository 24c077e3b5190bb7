"""The Sealed Secrets keys a stack holds in its config: ``generate_sealing_key`` makes one and writes it,
``sealing_cert`` reads the cert the stack seals with.

With ``secrets.sealedSecrets.keySource: config`` the key pairs live in one secret config value,
``gitops-infra:sealedSecretsKeys``: a JSON object, each rotation to ``{"cert", "privateKey"}`` (PEM). They
outlive the stack's resources: a ``destroy`` leaves the config alone, so the next ``up`` (on a new
cluster) hands the controller the same keys, and what is sealed in git opens again.

:func:`generate_sealing_key` makes the pair the SealedSecrets component would ask pulumi-tls for (RSA 4096,
a self-signed cert, CN and O ``sealed-secret``, ten years, key encipherment) with ``cryptography``, and
adds it to that value for one rotation, keeping the pairs already there; it refuses a rotation that has
one. The value is read decrypted and written back encrypted, each through the engine's ``pulumi config``
with the value on its standard input, never on a command line. The private key is in no result, message
or log. :func:`sealing_cert` reads the stack output ``sealedSecretsCert``.

Example::

    key = generate_sealing_key("prod", rotation="2027-01")
    print(key.rotations)  # ('', '2027-01'): now add 2027-01 to secrets.sealedSecrets.rotations
    print(sealing_cert("prod").cert)  # for kubeseal --cert
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pulumi import automation as auto

from .. import checks
from ..defaults import SEALED_SECRETS_KEYS_KEY
from ..errors import ArgumentError, ConfigError, OperationFailedError
from ..redaction import SECRET
from ._engine.runner import EngineEvents, run_engine
from ._state.target import StackTarget
from .options import StackOptions
from .results.sealing_keys import SealingCert, SealingKey

__all__ = [
    "SEALING_CERT_OUTPUT",
    "SEALING_KEY_BITS",
    "generate_sealing_key",
    "new_sealing_key_pair",
    "sealing_cert",
]

SEALING_CERT_OUTPUT = "sealedSecretsCert"
"""The stack output holding the cert the stack seals with (the last rotation's)."""
SEALING_KEY_BITS = 4096
"""RSA, as the controller makes its own keys."""
CERT_NAME = "sealed-secret"
"""The cert's CN and O, as the controller's own certs and the SealedSecrets component's."""
CERT_VALIDITY = datetime.timedelta(days=3650)
"""Ten years: the controller's own ``--key-ttl`` default."""
MAX_ROTATION = 64
WRITER_WAIT = 120.0
"""Seconds a keygen waits for another one writing the same stack's value (each takes a second or two)."""
CONFIG_KEY = f"gitops-infra:{SEALED_SECRETS_KEYS_KEY}"


def new_sealing_key_pair() -> tuple[str, str]:
    """A new RSA 4096 key and its self-signed cert, PEM: ``(cert, private_key)`` (PKCS#1, as pulumi-tls
    writes one)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=SEALING_KEY_BITS)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, CERT_NAME),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, CERT_NAME),
        ]
    )
    # The key only wraps each secret's session key (RSA-OAEP): key encipherment, nothing else.
    usage = x509.KeyUsage(
        digital_signature=False,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + CERT_VALIDITY)
        .add_extension(usage, critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem


def generate_sealing_key(
    stack: str, *, rotation: str = "", options: StackOptions | None = None
) -> SealingKey:
    """Make a key pair for ``rotation`` and add it to ``stack``'s secret ``sealedSecretsKeys``.

    ``ArgumentError`` when ``rotation`` is longer than 64 characters or already has a pair (a rotation's
    key, once something is sealed with it, is never replaced: add a new rotation instead);
    ``ConfigError`` when the value there is not an object of pairs. Nothing is written then. Two at once
    on the same stack take turns (a lock on the project's directory), so neither pair is lost.

    Example::

        generate_sealing_key("dev")  # the one key of rotations: [""]
    """
    if len(rotation) > MAX_ROTATION:
        raise ArgumentError(f"rotation: is at most {MAX_ROTATION} characters, as in secrets.sealedSecrets")
    target = StackTarget.resolve(stack, options)
    operation = "sealed-secrets keygen"

    def work(pulumi_stack: auto.Stack, _events: EngineEvents) -> SealingKey:
        with _one_writer(target, operation):
            return add(pulumi_stack)

    def add(pulumi_stack: auto.Stack) -> SealingKey:
        held = pulumi_stack.get_all_config().get(CONFIG_KEY)
        pairs: dict[str, dict[str, str]] = {}
        if held is not None:
            try:
                found = checks.parse_sealing_keys(held.value)
            except ValueError as exc:
                raise ConfigError([f"{CONFIG_KEY}{_path(str(exc))}"], stack=stack) from None
            pairs = {r: {"cert": cert, "privateKey": key} for r, (cert, key) in found.items()}
        if rotation in pairs:
            raise ArgumentError(
                f"{CONFIG_KEY} already holds a key pair for rotation {rotation!r}: a key is never "
                "replaced, since what it sealed would no longer open; add a new rotation (--rotation)"
            )
        cert, key = new_sealing_key_pair()
        pairs[rotation] = {"cert": cert, "privateKey": key}
        _set_secret(target, operation, json.dumps(pairs, indent=2))
        return SealingKey(
            stack=stack, rotation=rotation, cert=cert, config_key=CONFIG_KEY, rotations=tuple(pairs)
        )

    return run_engine(target, operation, work)


def sealing_cert(stack: str, *, options: StackOptions | None = None) -> SealingCert:
    """The cert ``stack`` seals with: its output ``sealedSecretsCert`` (PEM), for ``kubeseal --cert``.

    ``OperationFailedError`` when the stack has no such output (Sealed Secrets is off, or the stack has
    not been deployed since it was turned on).

    Example::

        Path("cert.pem").write_text(sealing_cert("prod").cert)
    """
    target = StackTarget.resolve(stack, options)
    operation = "sealed-secrets cert"

    def work(pulumi_stack: auto.Stack, _events: EngineEvents) -> SealingCert:
        output = pulumi_stack.outputs().get(SEALING_CERT_OUTPUT)
        if output is None or not isinstance(output.value, str) or output.value == SECRET:
            raise OperationFailedError(
                f"stack {stack!r} has no output {SEALING_CERT_OUTPUT}: turn secrets.sealedSecrets on and "
                "run `gitops-infra up` first",
                stack=stack,
                operation=operation,
            )
        return SealingCert(stack=stack, cert=output.value, output=SEALING_CERT_OUTPUT)

    return run_engine(target, operation, work)


def _path(problem: str) -> str:
    """A problem of ``checks.parse_sealing_keys`` put after the key: ``[...]: ...`` as is, else ``: ...``."""
    return problem if problem.startswith("[") else f": {problem}"


@contextmanager
def _one_writer(target: StackTarget, operation: str) -> Iterator[None]:
    """An exclusive ``flock`` on the project's directory, from the read of the value to its write: two
    keygens at once would each add a pair to what it read, and the later write would drop the earlier's
    pair, whose cert was already printed. A directory that is always there (``stackConfigDir`` may not be
    yet), not a file: the engine replaces the settings file, and a lock file would be left behind."""
    where = target.project.path
    descriptor = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + WRITER_WAIT
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OperationFailedError(
                        f"{operation} on stack {target.stack!r}: another keygen has been writing "
                        f"{CONFIG_KEY} in {where} for {WRITER_WAIT:g} s; nothing was written",
                        stack=target.stack,
                        operation=operation,
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _set_secret(target: StackTarget, operation: str, value: str) -> None:
    """``pulumi config set --secret`` of ``value`` on the engine's standard input: ``pulumi.automation``
    would pass it on the command line, which ``ps`` shows every user of the machine. ``--raw`` keeps it
    whole."""
    command = [str(target.engine), "config", "set", "--secret", "--raw", "--non-interactive"]
    done = subprocess.run(
        [*command, "--stack", target.stack, "--", CONFIG_KEY],
        input=value,
        text=True,
        capture_output=True,
        cwd=target.project.path,
        env={**os.environ, **target.env},
        check=False,
    )
    if done.returncode != 0:
        # The engine's message names the key, never the value (which it read from stdin).
        said = done.stderr.strip()
        raise OperationFailedError(
            f"{operation} on stack {target.stack!r} failed: pulumi config set {CONFIG_KEY}: {said}",
            stack=target.stack,
            operation=operation,
            engine_message=said,
        )
