"""The Sealed Secrets key pairs of ``sealedSecretsKeys``: checked against the rotations, and read by rotation.

The value is one secret config key, a JSON object of rotations (``checks.sealing_keys_problems``). The
running program reads its plaintext (``pulumi.Config.get``) to check it before any resource is registered,
so a bad pair is a config error naming its key path, not a failed update; the private keys then go on as
``pulumi.Output`` secrets and the certs, which are public, as plain outputs (the stack output
``sealedSecretsCert`` stays readable). Offline, a value held as ciphertext (``{"secure": ...}``) cannot be
read: it is taken as set, and each pair is the plan's placeholder (a value given as an ``Output`` is read
when it resolves).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.config.secrets import SealedSecretsSpec
from gitops_infra.config.stack import PROJECT, SEALED_SECRETS_KEYS_KEY, SealingKeyPair, StackSecrets
from gitops_infra.defaults import SealingKeySource
from gitops_infra.redaction import SECRET

if TYPE_CHECKING:
    import pulumi
else:
    pulumi = sdk("pulumi")

__all__ = ["sealing_keys"]

KEY = f"{PROJECT}:{SEALED_SECRETS_KEYS_KEY}"
SOURCE = f"{PROJECT}:secrets.sealedSecrets.keySource"


def sealing_keys(
    spec: SealedSecretsSpec | None,
    *,
    read_secret: Callable[[str], pulumi.Output[str] | None],
    plaintext: object,
    given: StackSecrets | None,
    problems: list[str],
) -> dict[str, SealingKeyPair]:
    """The pairs by rotation when ``spec`` takes its keys from the config (``{}`` otherwise), with what is
    wrong added to ``problems``: the secret missing, set while keys are generated, or a pair that fails
    ``checks.sealing_keys_problems``. ``plaintext`` is the value when the caller can read it (a ``str``);
    ``given`` secrets are taken as they are."""
    if spec is None:
        return {}
    from_config = spec.key_source is SealingKeySource.CONFIG
    if given is not None:
        if from_config and spec.enabled and not given.sealed_secrets_keys:
            problems.append(_missing())
        return dict(given.sealed_secrets_keys)
    held = read_secret(SEALED_SECRETS_KEYS_KEY)
    if not from_config:
        if held is not None:
            problems.append(
                f"{KEY}: is set, but {SOURCE} is {spec.key_source.value!r} (the stack makes its keys): set "
                f"keySource: config to use it, or remove it (pulumi config rm {SEALED_SECRETS_KEYS_KEY})"
            )
        return {}
    if held is None:
        if spec.enabled:
            problems.append(_missing())
        return {}
    if not isinstance(plaintext, str) or (plaintext == SECRET and pulumi.runtime.is_dry_run()):
        # Offline, a value not known yet (an Output) or ciphertext: the stack file's form, or the program's
        # under the plan's mocks, the placeholder itself (a value that is the marker is refused by an up).
        return {rotation: _pending(held, rotation) for rotation in spec.rotations}
    found = checks.sealing_keys_problems(plaintext, spec.rotations)
    problems.extend(f"{KEY}{problem}" for problem in found)
    if found:
        return {}
    return {
        rotation: SealingKeyPair(cert=pulumi.Output.from_input(cert), private_key=pulumi.Output.secret(key))
        for rotation, (cert, key) in checks.parse_sealing_keys(plaintext).items()
    }


def _pending(held: pulumi.Output[str], rotation: str) -> SealingKeyPair:
    """The pair of ``rotation``, read from ``held`` when it resolves."""

    def field(index: int) -> pulumi.Output[str]:
        return held.apply(lambda text: _field(text, rotation, index))

    return SealingKeyPair(cert=field(0), private_key=field(1))


def _field(text: str, rotation: str, index: int) -> str:
    """The cert (0) or private key (1) of ``rotation`` in ``text``; the placeholder stays one."""
    return text if text == SECRET else checks.parse_sealing_keys(text)[rotation][index]


def _missing() -> str:
    return (
        f"{SOURCE}: 'config' needs the secret {KEY}, each rotation's key pair: make them with "
        "`gitops-infra sealed-secrets keygen STACK [--rotation VALUE]`"
    )
