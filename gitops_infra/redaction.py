"""How a value that must not be shown is shown: one marker, ``[secret]``, everywhere.

Results, the offline plan, reprs and planned placeholders all use :data:`SECRET`. It is also what
Pulumi's own CLI prints for a secret (``pulumi stack output``), so the two read the same.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

__all__ = ["SECRET", "masked_values", "safe_url"]

SECRET = "[secret]"
"""What a secret value is shown as, everywhere (the same marker Pulumi's own CLI prints)."""


def masked_values(mapping: Mapping[str, str]) -> dict[str, str]:
    """``mapping`` for a repr: the keys, and every value masked (any of them may be a passphrase)."""
    return dict.fromkeys(mapping, SECRET)


def safe_url(url: str | None) -> str | None:
    """A URL for a repr or a message, without the password its user part may carry."""
    if url is None:
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return SECRET
    if parts.password is None:
        return url
    netloc = f"{parts.username}:{SECRET}@{parts.hostname or ''}" + (f":{port}" if port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
