"""The rules for Sealed Secrets key pairs held in the config (``checks.sealing_keys``): each problem names
where it is, and no problem quotes a value."""

from __future__ import annotations

import json
from functools import cache

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from gitops_infra import checks
from gitops_infra.automation.sealing_keys import new_sealing_key_pair


@cache
def pair() -> tuple[str, str]:
    return new_sealing_key_pair()


@cache
def other_pair() -> tuple[str, str]:
    return new_sealing_key_pair()


def _pem(key: object) -> str:
    return key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _value(**pairs: object) -> str:
    return json.dumps(pairs)


def test_a_good_value_passes_and_parses() -> None:
    cert, key = pair()
    text = json.dumps({"": {"cert": cert, "privateKey": key}})
    assert checks.sealing_keys_problems(text, ("",)) == []
    assert checks.parse_sealing_keys(text) == {"": (cert, key)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (7, ": must be JSON text"),
        ("{not json", ": is not JSON"),
        ("[1, 2]", ": must be a JSON object"),
    ],
)
def test_a_value_that_is_not_an_object_of_pairs_is_refused_whole(text: object, expected: str) -> None:
    (problem,) = checks.sealing_keys_problems(text, ("",))
    assert problem.startswith(expected)
    assert "not json" not in problem and "1, 2" not in problem


def test_each_pair_is_checked_by_its_path_and_no_value_is_quoted() -> None:
    cert, key = pair()
    other_cert, _ = other_pair()
    small = _pem(rsa.generate_private_key(public_exponent=65537, key_size=1024))
    curve = _pem(ec.generate_private_key(ec.SECP256R1()))
    text = json.dumps(
        {
            "a": {"cert": cert, "privateKey": "not a key"},
            "b": {"cert": cert, "privateKey": curve},
            "c": {"cert": cert, "privateKey": small},
            "d": {"cert": "not a cert", "privateKey": key},
            "e": {"cert": other_cert, "privateKey": key},
            "f": {"cert": cert},
            "stray": {"cert": cert, "privateKey": key},
        }
    )
    problems = checks.sealing_keys_problems(text, ("a", "b", "c", "d", "e", "f", "missing"))
    assert problems == [
        "['a'].privateKey: is not a PEM private key",
        "['b'].privateKey: must be an RSA key: the controller seals with RSA-OAEP",
        "['c'].privateKey: is 1024 bits: RSA of at least 2048 bits is needed",
        "['d'].cert: is not a PEM certificate",
        "['e'].cert: is not the certificate of privateKey (its public key is another key's)",
        "['f']: must be an object with exactly cert and privateKey (PEM)",
        "['stray']: is no rotation of secrets.sealedSecrets.rotations ('a', 'b', 'c', 'd', 'e', 'f', "
        "'missing'): add it there, or remove its pair",
        "['missing']: has no key pair: make one with `gitops-infra sealed-secrets keygen STACK --rotation "
        "missing`",
    ]
    for secret in (key.splitlines()[1], small.splitlines()[1], "not a key", "not a cert"):
        assert all(secret not in problem for problem in problems)


def test_parse_refuses_a_pair_without_both_fields() -> None:
    with pytest.raises(ValueError, match=r"\['x'\]: must be an object"):
        checks.parse_sealing_keys(json.dumps({"x": {"cert": "c"}}))


def test_parse_refuses_a_pair_with_more_than_both_fields() -> None:
    """As the program's check does: keygen, which rewrites the value from what this reads, would
    otherwise drop the field without a word."""
    with pytest.raises(ValueError, match=r"\['x'\]: must be an object with exactly cert and privateKey"):
        checks.parse_sealing_keys(json.dumps({"x": {"cert": "c", "privateKey": "k", "note": "n"}}))
