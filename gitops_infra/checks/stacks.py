"""What is checked of a stack as a whole: whether it is prod, and private keys in plaintext in its file.

Example::

    assert checks.is_prod("production", "acme/dev")
    assert checks.private_key_paths({"key": "ssh-ed25519 AAAA... (a public key)"}, "tls") == []

``private_key_paths`` names each key path whose text is a private key: its tests generate the keys they
show it (``tests/unit/test_plaintext_private_keys.py``), so that no tracked file holds key material.
"""

from __future__ import annotations

import re

__all__ = [
    "FLEET_SECTION",
    "PLAINTEXT_PRIVATE_KEY",
    "PRIVATE_KEY_PATTERN",
    "PROD_ENVIRONMENTS",
    "is_prod",
    "private_key_paths",
]


PROD_ENVIRONMENTS = ("prod", "production")
"""Environment names that mean prod: the policy pack's default, and where ``destroy`` asks to confirm."""


def is_prod(environment_name: object, stack: str) -> bool:
    """True for a prod stack, as ``destroy`` tells one (``prod_environment``): its environment's name or
    its own (the part after the last ``/``) is one of ``PROD_ENVIRONMENTS``. An environment name that is
    there but not text cannot be told from prod, so it is prod."""
    if environment_name is not None and not isinstance(environment_name, str):
        return True
    names = (environment_name or "", stack.rpartition("/")[2])
    return any(name.lower() in PROD_ENVIRONMENTS for name in names)


PRIVATE_KEY_PATTERN = (
    r"-{5}BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-{5}"  # PEM and OpenSSH; PGP's ends in BLOCK
    r"|PuTTY-User-Key-File-[0-9]+:"
    r"|AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{50,}"  # age: bech32 after its HRP
)
"""Text that holds a private key: what a PEM, OpenSSH, PGP, PuTTY or age private key starts with."""
_PRIVATE_KEY = re.compile(PRIVATE_KEY_PATTERN)
PLAINTEXT_PRIVATE_KEY = (
    "holds a private key in plaintext, in a file that is committed: set it with "
    "`pulumi config set --secret` (a file's content with `< file`), and rotate the key: git history keeps it"
)


def private_key_paths(value: object, where: str) -> list[str]:
    """The key paths under ``where`` whose text holds a private key (see ``PRIVATE_KEY_PATTERN``), in a
    config value as a stack file holds it: text, mappings and lists. A ``{"secure": ...}`` value is
    ciphertext, never one. A value a YAML alias repeats (or that holds itself) is looked into once."""
    found: list[str] = []
    seen: set[int] = set()
    pending: list[tuple[object, str]] = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            if _PRIVATE_KEY.search(item):
                found.append(path)
            continue
        if id(item) in seen or (isinstance(item, dict) and set(item) == {"secure"}):
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            pending.extend((child, f"{path}.{key}") for key, child in reversed(item.items()))
        elif isinstance(item, list | tuple):
            pending.extend((child, f"{path}[{index}]") for index, child in reversed(list(enumerate(item))))
    return found


FLEET_SECTION = "fleet"
"""The stack config section (``gitops-infra:fleet``) that places a stack in the fleet: the stack config
knows it as a key of its own, and the fleet's inventory reads it, even from projects of other programs."""
