"""How the engine marks secret and unknown values in the property payloads it exchanges.

The markers are pulumi's own, read through :mod:`gitops_infra.automation._engine.compat`; they are used here
once, so that the recorder (mocked registrations), drift detection and the streamed results (engine
events) agree on what a secret looks like.
"""

from __future__ import annotations

from typing import Any

from ...redaction import SECRET
from .compat import SECRET_SIG, SECRET_SIG_KEY, STACK_TYPE, UNKNOWN

__all__ = ["STACK_TYPE", "UNKNOWN", "is_secret_payload", "masked", "secret_payload_value"]


def is_secret_payload(value: Any) -> bool:
    """True for a secret as the engine sends it: ``{<sig key>: <secret sig>, "value"/"ciphertext": ...}``."""
    return isinstance(value, dict) and value.get(SECRET_SIG_KEY) == SECRET_SIG


def secret_payload_value(value: dict[str, Any]) -> Any:
    """The plaintext a secret payload carries (``None`` when the engine sent only masked ciphertext)."""
    return value.get("value")


def masked(value: Any) -> Any:
    """``value`` with every secret payload in it, at any depth, replaced by ``SECRET``."""
    if is_secret_payload(value):
        return SECRET
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    return value
