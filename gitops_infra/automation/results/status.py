"""Where a stack stands (its last deployment, its lock, its GitOps layer), what ``recover`` cleared, and
the error that stopped a stack's check."""

from __future__ import annotations

from dataclasses import dataclass

from .deployments import Deployment
from .gitops import GitOpsReport

__all__ = ["RecoverResult", "StackError", "StackLock", "StackStatus"]


@dataclass(frozen=True)
class StackError:
    """A stack whose check failed: the error's type and message (never a traceback).

    A fleet's result carries it for each stack that could not be checked, so one stack's error does not
    stop the others.
    """

    type: str
    message: str


@dataclass(frozen=True)
class StackLock:
    """Who holds a stack's lock: the update's user, machine and process (file backends say)."""

    user: str
    host: str
    pid: int

    def __str__(self) -> str:
        return f"{self.user}@{self.host} pid {self.pid}"


@dataclass(frozen=True)
class StackStatus:
    """Where one stack stands."""

    stack: str
    last: Deployment | None
    """The newest deployment (update, refresh, destroy), or ``None`` for a stack never deployed."""
    at_head: bool | None
    """Whether ``last`` ran the work tree's commit; ``None`` when either is unknown."""
    locked: bool | None
    """Whether the stack is locked (an update holds it, or a damaged lock file blocks it); ``None`` when
    the backend cannot say (not a file one)."""
    lock: StackLock | None = None
    error: StackError | None = None
    project: str | None = None
    gitops: GitOpsReport | None = None
    """What Flux reports of the stack's cluster (read only), when the stack bootstraps Flux."""
    damaged_locks: tuple[str, ...] = ()
    """Lock files that name no holder (empty, cut short: a write that died), as ``<path> <what is
    wrong>``. Each blocks every engine command on the stack as a lock does; ``recover`` clears them."""

    @property
    def healthy(self) -> bool:
        """False when the GitOps layer was read and is not healthy, or could not be read."""
        return self.gitops is None or self.gitops.healthy


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
    removed_worktrees: tuple[str, ...] = ()
    """Rollback worktrees a killed rollback left, now removed."""
    restored_checkpoint: str | None = None
    """The history checkpoint put in place of an unreadable one, or ``None``."""
    broken_checkpoint_kept_at: str | None = None
    """Where the unreadable checkpoint was kept, or ``None``."""
    damaged_locks: tuple[str, ...] = ()
    """Lock files that named no holder (empty, cut short), now removed: ``<path> <what was wrong>``."""
