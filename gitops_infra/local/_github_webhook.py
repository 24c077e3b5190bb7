"""GitHub's webhook delivery, as a Flux ``Receiver`` of type ``github`` sees it: played by the cluster tests
and the bench, since GitHub cannot reach a cluster on loopback.

GitHub POSTs the event's JSON with its name (``X-GitHub-Event``), a delivery ID (``X-GitHub-Delivery``)
and ``X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body with the webhook's secret, in hex>``, which
notification-controller checks with the Receiver's token (go-github's ``ValidatePayload``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.error
import urllib.request
import uuid
from typing import Any

__all__ = ["deliver_github_event"]


def deliver_github_event(
    url: str, secret: str, event: str, payload: dict[str, Any], *, timeout: float = 10.0
) -> int:
    """POST ``payload`` to ``url`` as GitHub delivers ``event``, signed with ``secret``; the HTTP status.

    The status alone comes back: a refusal is an answer here, not an error, and nothing of the request
    (its signature, the URL's path) is put in an exception.
    """
    body = json.dumps(payload).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/gitops-infra",
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": f"sha256={signature}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)
