"""How the engine marks secret and unknown values in the property payloads it exchanges.

The markers are pulumi's own (``pulumi.runtime.rpc``, some through :mod:`gitops_infra._pulumi_compat`);
they are read here once, so that the recorder (mocked registrations) and drift detection (engine events)
agree on what a secret looks like.
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc

from .._pulumi_compat import SECRET_SIG, SECRET_SIG_KEY

__all__ = ["UNKNOWN", "is_secret_payload", "secret_payload_value"]

UNKNOWN: str = rpc.UNKNOWN
"""The value a property has while only the cloud can compute it (during a preview)."""


def is_secret_payload(value: Any) -> bool:
    """True for a secret as the engine sends it: ``{<sig key>: <secret sig>, "value"/"ciphertext": ...}``."""
    return isinstance(value, dict) and value.get(SECRET_SIG_KEY) == SECRET_SIG


def secret_payload_value(value: dict[str, Any]) -> Any:
    """The plaintext a secret payload carries (``None`` when the engine sent only masked ciphertext)."""
    return value.get("value")
