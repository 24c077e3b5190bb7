"""Recovery after an update that died without cleaning up (``kill -9``, a lost CI runner).

Such an update leaves the stack locked, and may leave *pending operations* in its state: resources the
engine had started to create, update or delete when it died. :func:`recover` is the documented way back:

1. refuse if the lock belongs to an update that is still running on this machine;
2. clear the stale lock (``pulumi cancel``);
3. refresh with ``--clear-pending-creates``, so the state matches what really exists and no half-known
   create is left in it.

The next ``up`` then converges: it creates what is missing and changes what differs.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from ..errors import StackLockedError
from . import engine
from .results import changes_of
from .workspace import StackOptions, Workspace

__all__ = ["RecoverResult", "recover"]


@dataclass(frozen=True)
class RecoverResult:
    """What ``recover`` found and cleared."""

    stack: str
    stale_lock: str | None
    """Who held the lock that was cleared (file backends say ``user@host pid N``), or ``None``."""
    pending: tuple[str, ...]
    """The pending operations the dead update left, as ``<type> <urn>``."""
    changes: dict[str, int]
    """What the refresh found (``same``, ``update``, ``delete``)."""


@dataclass(frozen=True)
class _Lock:
    user: str
    host: str
    pid: int

    def __str__(self) -> str:
        return f"{self.user}@{self.host} pid {self.pid}"

    def is_alive_here(self) -> bool:
        if self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # it exists; it just is not ours
        return True


def _file_backend_locks(ws: Workspace, project: str) -> list[_Lock]:
    """The lock files a file backend keeps for this stack (other backends keep their locks server-side)."""
    if not ws.backend_url.startswith("file://"):
        return []
    root = Path(ws.backend_url.removeprefix("file://").split("?", 1)[0])
    locks = []
    for path in root.glob(f".pulumi/locks/*/{project}/{ws.stack}/*.json"):
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            locks.append(_Lock(user=str(data["username"]), host=str(data["hostname"]), pid=int(data["pid"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # unreadable: not ours to judge; `pulumi cancel` still clears it
    return locks


def _pending(stack: auto.Stack) -> tuple[str, ...]:
    deployment = stack.export_stack().deployment or {}
    return tuple(
        f"{op.get('type', '?')} {op.get('resource', {}).get('urn', '?')}"
        for op in deployment.get("pending_operations") or []
    )


def recover(stack: str, *, options: StackOptions | None = None, force: bool = False) -> RecoverResult:
    """Clear what a dead update left behind: its lock and its pending operations.

    Refuses with ``StackLockedError`` while the lock's update is still running on this machine, unless
    ``force``. Run it only when the update that held the lock is known to be gone.

    Example::

        result = recover("dev")
        print(result.stale_lock, result.pending, result.changes)
        up("dev")  # converges from what really exists
    """
    ws = Workspace.resolve(stack, options)

    def work(s: auto.Stack) -> RecoverResult:
        project = s.workspace.project_settings().name
        locks = _file_backend_locks(ws, project)
        running = [lock for lock in locks if lock.is_alive_here()]
        if running and not force:
            raise StackLockedError(
                f"stack {stack!r} is locked by an update that is still running ({running[0]}); "
                "recover only after it has stopped",
                stack=stack,
            )
        pending = _pending(s)
        s.cancel()
        result = s.refresh(
            clear_pending_creates=True,
            message="recover after an interrupted update",
            on_event=ws.event_callback(),
            show_secrets=False,
        )
        return RecoverResult(
            stack=stack,
            stale_lock=str(locks[0]) if locks else None,
            pending=pending,
            changes=changes_of(result.summary.resource_changes or {}),
        )

    return engine.run(ws, "recover", work)
