"""Sealed Secrets key pairs held in the config: the JSON of ``sealedSecretsKeys``, and each PEM pair in it.

The value maps each rotation (a value of ``secrets.sealedSecrets.rotations``) to ``{"cert": PEM,
"privateKey": PEM}``. :func:`sealing_keys_problems` checks the whole of it against the rotations,
:func:`sealing_key_pair_problem` one pair: both PEMs parse, the key is RSA of at least
:data:`MIN_SEALING_KEY_BITS` bits (the controller's keys are RSA: it wraps each secret's session key with
RSA-OAEP), and the cert is the key's. :func:`parse_sealing_keys` reads a value that passed. The
``cryptography`` package is imported only when a PEM is looked at.

A problem names the key path and never a value: what is checked here is a private key.

Example::

    problems = checks.sealing_keys_problems('{"": {"cert": "x", "privateKey": "y"}}', ("", "2026-12"))
    assert problems == [
        "[''].privateKey: is not a PEM private key",
        "['2026-12']: has no key pair: make one with `gitops-infra sealed-secrets keygen STACK "
        "--rotation 2026-12`",
    ]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "MIN_SEALING_KEY_BITS",
    "SEALING_KEY_FIELDS",
    "parse_sealing_keys",
    "sealing_key_pair_problem",
    "sealing_keys_problems",
]

MIN_SEALING_KEY_BITS = 2048
SEALING_KEY_FIELDS = ("cert", "privateKey")
"""The fields of one rotation's pair: its certificate and its private key, PEM."""


def sealing_key_pair_problem(cert_pem: object, key_pem: object) -> tuple[str, str] | None:
    """``(field, problem)`` for the first thing wrong with one pair (the field ``cert`` or ``privateKey``),
    or ``None``: each a PEM that parses, the key RSA of at least :data:`MIN_SEALING_KEY_BITS` bits, the
    cert the key's."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    if not isinstance(key_pem, str):
        return "privateKey", "must be a PEM private key (text)"
    if not isinstance(cert_pem, str):
        return "cert", "must be a PEM certificate (text)"
    try:
        key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    except (ValueError, TypeError):  # not PEM, encrypted, or an unsupported algorithm
        return "privateKey", "is not a PEM private key"
    if not isinstance(key, rsa.RSAPrivateKey):
        return "privateKey", "must be an RSA key: the controller seals with RSA-OAEP"
    if key.key_size < MIN_SEALING_KEY_BITS:
        return "privateKey", f"is {key.key_size} bits: RSA of at least {MIN_SEALING_KEY_BITS} bits is needed"
    try:
        cert = x509.load_pem_x509_certificate(cert_pem.encode())
    except ValueError:
        return "cert", "is not a PEM certificate"
    if cert.public_key() != key.public_key():
        return "cert", "is not the certificate of privateKey (its public key is another key's)"
    return None


def sealing_keys_problems(text: object, rotations: Sequence[str]) -> list[str]:
    """What is wrong with ``text`` (the value of ``sealedSecretsKeys``) for ``rotations``, each problem
    starting with the path below the key (``['2026-12'].cert: ...``, or ``: ...`` for the whole)."""
    document = _document(text)
    if isinstance(document, str):
        return [f": {document}"]
    problems: list[str] = []
    for rotation, pair in document.items():
        where = f"[{rotation!r}]"
        if rotation not in rotations:
            named = ", ".join(repr(r) for r in rotations)
            problems.append(
                f"{where}: is no rotation of secrets.sealedSecrets.rotations ({named}): add it there, or "
                "remove its pair"
            )
            continue
        if not isinstance(pair, Mapping) or set(pair) != set(SEALING_KEY_FIELDS):
            problems.append(f"{where}: must be an object with exactly cert and privateKey (PEM)")
            continue
        problem = sealing_key_pair_problem(pair["cert"], pair["privateKey"])
        if problem is not None:
            problems.append(f"{where}.{problem[0]}: {problem[1]}")
    for rotation in rotations:
        if rotation not in document:
            option = f" --rotation {rotation}" if rotation else ""
            problems.append(
                f"[{rotation!r}]: has no key pair: make one with "
                f"`gitops-infra sealed-secrets keygen STACK{option}`"
            )
    return problems


def parse_sealing_keys(text: str) -> dict[str, tuple[str, str]]:
    """Each rotation's ``(cert, privateKey)`` of a value :func:`sealing_keys_problems` passed; a
    ``ValueError`` (naming no value) when it is not such an object."""
    document = _document(text)
    if isinstance(document, str):
        raise ValueError(document)
    pairs: dict[str, tuple[str, str]] = {}
    for rotation, pair in document.items():
        if (
            not isinstance(pair, Mapping)
            or set(pair) != set(SEALING_KEY_FIELDS)
            or not all(isinstance(pair[f], str) for f in SEALING_KEY_FIELDS)
        ):
            raise ValueError(f"[{rotation!r}]: must be an object with exactly cert and privateKey (PEM)")
        pairs[rotation] = (pair["cert"], pair["privateKey"])
    return pairs


def _document(text: object) -> Mapping[str, Any] | str:
    """The JSON object ``text`` holds, or the problem with it (no part of the text is quoted)."""
    if not isinstance(text, str):
        return "must be JSON text: an object of rotations, each {cert, privateKey}"
    try:
        document = json.loads(text)
    except ValueError:
        return "is not JSON: it must be an object of rotations, each {cert, privateKey} (PEM)"
    if not isinstance(document, dict):
        return "must be a JSON object of rotations, each {cert, privateKey} (PEM)"
    return document
