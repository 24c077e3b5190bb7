"""Flux's webhook Receiver: the public URL GitHub posts to, and the path notification-controller serves.

Example::

    assert checks.receiver_url_problem("https://flux-webhook.example.com") is None
    assert checks.receiver_url_problem("http://flux-webhook.example.com") is not None
"""

from __future__ import annotations

import hashlib
import re

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "RECEIVER_URL_PATTERN",
    "RECEIVER_WEBHOOK_PATH_PREFIX",
    "receiver_url_problem",
    "receiver_webhook_path",
]

# A host, an optional port and an optional path (an Ingress may serve the receiver under a prefix); no
# query or fragment, since the Receiver's path is appended to it.
RECEIVER_URL_PATTERN = r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?$"
"""The Receiver's public URL: ``https://`` (GitHub sends the payload, signed but not encrypted), a host,
an optional port and path."""
_RECEIVER_URL = re.compile(RECEIVER_URL_PATTERN)
RECEIVER_WEBHOOK_PATH_PREFIX = "/hook/"
"""notification-controller's ``apiv1.ReceiverWebhookPath``: every Receiver's path starts with it."""


def receiver_url_problem(value: object) -> str | None:
    """``None`` for a public URL GitHub can post to (``https://flux-webhook.example.com``)."""
    return pattern_problem(
        _RECEIVER_URL,
        value,
        "must be an https:// URL with a host and an optional port and path, and no query or fragment",
    )


def receiver_webhook_path(token: str, name: str, namespace: str) -> str:
    """The path a Receiver serves, ``/hook/sha256(token + name + namespace)`` in hex, as
    notification-controller's ``Receiver.GetWebhookPath`` computes it into ``status.webhookPath``."""
    digest = hashlib.sha256(f"{token}{name}{namespace}".encode()).hexdigest()
    return f"{RECEIVER_WEBHOOK_PATH_PREFIX}{digest}"
