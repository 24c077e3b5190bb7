"""The names that cross the bootstrap's pieces: the git-auth Secret the source secret writes and the sync
reads, and the name of the sync objects, which the notifications' Provider and Alert share.

Both are ``flux-system``, the names ``flux bootstrap`` gives them.
"""

from __future__ import annotations

__all__ = ["FLUX_SECRET_NAME", "FLUX_SYNC_NAME"]

FLUX_SECRET_NAME = "flux-system"
FLUX_SYNC_NAME = "flux-system"
