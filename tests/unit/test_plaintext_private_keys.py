"""A private key in plaintext in a stack file: a warning naming the key, refused in prod (issue 44, item 21).

The stack file is committed, and the docs promise that secrets never are: a key given without
``--secret`` was accepted silently before.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from gitops_infra import checks
from gitops_infra.config import load_config, load_stack_config
from gitops_infra.errors import ConfigError

from .conftest import MINIMAL, generated_age_key
from .harness import run


# Keys are made here, when the tests run: the repository holds no key material, not even a made-up one.
def _pem(key: Any, form: serialization.PrivateFormat, password: bytes | None = None) -> str:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, form, encryption).decode()


def _armored(label: str) -> str:
    """The first line of an ASCII-armored block (PGP's), put together here rather than written out."""
    return "-" * 5 + f"BEGIN {label}" + "-" * 5


AGE_KEY = generated_age_key()
PEM_KEY = _pem(ed25519.Ed25519PrivateKey.generate(), serialization.PrivateFormat.OpenSSH)
_EC_KEY = ec.generate_private_key(ec.SECP256R1())
_PUBLIC_KEY = (
    _EC_KEY.public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    .decode()
)
_BODY = PEM_KEY.splitlines()[1]
"""A line of the key's body: no message may quote it."""


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (PEM_KEY, True),
        (_pem(rsa.generate_private_key(65537, 2048), serialization.PrivateFormat.TraditionalOpenSSL), True),
        (_pem(ed25519.Ed25519PrivateKey.generate(), serialization.PrivateFormat.PKCS8), True),
        (_pem(_EC_KEY, serialization.PrivateFormat.TraditionalOpenSSL), True),
        (_pem(_EC_KEY, serialization.PrivateFormat.PKCS8, password=b"test"), True),
        (_armored("PGP PRIVATE KEY BLOCK"), True),
        ("PuTTY-User-Key-File-" + "3: ssh-ed25519", True),
        (AGE_KEY, True),
        (json.dumps({"key": PEM_KEY}), True),  # JSON text, as `pulumi config set` without --path writes
        (_PUBLIC_KEY, False),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host", False),
        ("AGE-SECRET-KEY-1" + "TOOSHORT", False),
    ],
    ids=[
        "openssh",
        "rsa",
        "pkcs8",
        "ec",
        "encrypted pkcs8",
        "pgp",
        "putty",
        "age",
        "json text",
        "public key",
        "ssh public key",
        "age too short",
    ],
)
def test_what_holds_a_private_key(text: str, found: bool) -> None:
    assert checks.private_key_paths(text, "k") == (["k"] if found else [])


def test_the_key_path_is_named_inside_structured_values_and_ciphertext_is_none() -> None:
    value = {"a": [{"b": PEM_KEY}], "c": {"secure": PEM_KEY}, "d": 1}
    assert checks.private_key_paths(value, "p:x") == ["p:x.a[0].b"]


def _config(environment: str, **extra: Any) -> dict[str, Any]:
    config = copy.deepcopy(MINIMAL)
    config["environment"]["name"] = environment
    return {**config, **extra}


def test_a_stack_file_with_a_private_key_in_plaintext_is_warned_about_by_key() -> None:
    config = load_config(_config("test", sopsAgeKey=AGE_KEY, **{"tls:key": PEM_KEY}), stack="test")
    assert [warning.split(":", 1)[0] for warning in config.warnings] == ["sopsAgeKey", "tls"]
    assert config.warnings[1].startswith(f"tls:key: {checks.PLAINTEXT_PRIVATE_KEY}")
    assert not any(AGE_KEY in w or _BODY in w for w in config.warnings)
    # As a secret, it is none of the file's business.
    assert load_config(_config("test", sopsAgeKey={"secure": "v1:abc"}), stack="test").warnings == ()


@pytest.mark.parametrize(
    ("environment", "stack"), [("prod", "test"), ("production", "test"), ("test", "eu/Prod")]
)
def test_a_prod_stack_with_a_private_key_in_plaintext_is_refused_naming_the_key(
    environment: str, stack: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_config(environment, **{"tls:key": PEM_KEY}), stack=stack)
    assert info.value.problems == (f"tls:key: {checks.PLAINTEXT_PRIVATE_KEY} (a prod stack refuses it)",)
    assert _BODY not in str(info.value)


def test_the_program_warns_of_a_key_the_engine_does_not_hold_as_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in _config("test").items()}
    config["gitops-infra:sopsAgeKey"] = AGE_KEY
    run(load_stack_config, stack="test", config=config)
    assert warned == [f"gitops-infra:sopsAgeKey: {checks.PLAINTEXT_PRIVATE_KEY}"]
    warned.clear()
    run(load_stack_config, stack="test", config=config, secret_keys=["gitops-infra:sopsAgeKey"])
    assert warned == []


def test_the_program_refuses_a_prod_stack_s_plaintext_private_key() -> None:
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in _config("prod").items()}
    config["gitops-infra:sopsAgeKey"] = AGE_KEY

    def program() -> Any:
        with pytest.raises(ConfigError) as info:
            load_stack_config(pulumi.Config("gitops-infra"))
        return info.value.problems

    assert run(program, stack="prod", config=config).result == (
        f"gitops-infra:sopsAgeKey: {checks.PLAINTEXT_PRIVATE_KEY} (a prod stack refuses it)",
    )
