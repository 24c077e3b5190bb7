"""Recovery after an update that died without cleaning up (``kill -9``, a lost CI runner, a full disk).

Such an update leaves the stack locked, and may leave *pending operations* in its state: resources the
engine had started to create, update or delete when it died. It may leave more: Pulumi's plugin
processes still running, a rollback's temporary worktree, or (on a full disk) a checkpoint cut short.
:func:`recover` is the documented way back:

1. refuse while anything of the dead update may still be working: the lock's owner alive on this
   machine, a lock taken on another machine (unless ``force``: only you know that runner is gone), or
   Pulumi plugin processes left running in the project or in a rollback's or promotion's temporary
   worktree (unless ``force``);
2. remove the rollback worktrees killed rollbacks left behind (never one a live process works in);
3. if the checkpoint cannot be read, restore the newest intact copy from the backend's history, keeping
   the broken file aside (only with ``restore_checkpoint``; otherwise say what would be restored);
4. clear the stale lock (``pulumi cancel``), and a damaged one: a lock file cut short, which names no
   holder and blocks every command all the same;
5. refresh with ``--clear-pending-creates``, so the state matches what really exists.

The next ``up`` then converges: it creates what is missing and changes what differs.
"""

from __future__ import annotations

import socket
from pathlib import Path

from pulumi import automation as auto

from ..errors import CheckpointError, StackLockedError
from ._engine.processes import alive_here, leftover_plugins
from ._engine.runner import EngineEvents, run_engine
from ._engine.streamed import message_flags, run_command
from ._state.file_backend import FileBackendStack, checkpoint_problem
from ._state.target import StackTarget
from .options import StackOptions
from .results.status import RecoverResult
from .rollback import remove_stale_worktrees, rollback_worktrees

__all__ = ["recover"]


def _pending(stack: auto.Stack) -> tuple[str, ...]:
    deployment = stack.export_stack().deployment or {}
    return tuple(
        f"{op.get('type', '?')} {op.get('resource', {}).get('urn', '?')}"
        for op in deployment.get("pending_operations") or []
    )


def _refuse_while_running(target: StackTarget, files: FileBackendStack | None, force: bool) -> str | None:
    """Raise while the dead update may still be working; return who held the lock, if anyone."""
    locks = files.locks() if files is not None else []
    stack = target.stack
    for lock in locks:
        if alive_here(lock.host, lock.pid):
            raise StackLockedError(
                f"stack {stack!r} is locked by an update that is still running ({lock}); "
                "recover only after it has stopped",
                stack=stack,
            )
        if lock.host != socket.gethostname() and not force:
            raise StackLockedError(
                f"stack {stack!r} is locked by an update on another machine ({lock}), which cannot be "
                "checked from here; if that runner is gone, recover with --force (force=True)",
                stack=stack,
            )
    # A rollback's or a promotion's plugins run in its temporary worktree, not in the project.
    places = (target.project.path, *rollback_worktrees(target.project.path))
    leftovers = leftover_plugins(*places)
    if leftovers and not force:
        listed = ", ".join(str(process) for process in leftovers)
        where = " or ".join(str(place) for place in places)
        raise StackLockedError(
            f"Pulumi plugin processes of a dead update still run in {where}: {listed}. They may still be "
            "changing resources: stop them (kill the pids) and recover again, or use --force",
            stack=stack,
        )
    return str(locks[0]) if locks else None


def _restore_checkpoint(
    target: StackTarget, files: FileBackendStack | None, restore: bool
) -> tuple[str, str] | None:
    """Put back the newest intact checkpoint when the current one is unreadable (only if ``restore``)."""
    current = files.checkpoint() if files is not None else None
    if files is None or current is None:
        return None
    problem = checkpoint_problem(current)
    if problem is None:
        return None
    candidate = files.newest_intact_checkpoint()
    where = f"the checkpoint of stack {target.stack!r} ({current}) {problem}"
    if candidate is None:
        raise CheckpointError(
            f"{where}, and the backend's history holds no intact copy to restore",
            stack=target.stack,
            checkpoint=str(current),
            candidate=None,
        )
    if not restore:
        raise CheckpointError(
            f"{where}. The newest intact copy is {candidate.name}: recover with --yes "
            "(restore_checkpoint=True) to keep the broken file aside, restore that copy and refresh",
            stack=target.stack,
            checkpoint=str(current),
            candidate=str(candidate),
        )
    kept = files.restore(current, candidate)
    return str(candidate), str(kept)


def recover(
    stack: str,
    *,
    options: StackOptions | None = None,
    force: bool = False,
    restore_checkpoint: bool = False,
) -> RecoverResult:
    """Clear what a dead update left behind: its lock, its pending operations and its debris.

    Never acts under an update whose process is still running on this machine. ``force`` accepts a
    lock taken on another machine, and leftover plugin processes, as gone. ``restore_checkpoint`` lets
    it replace an unreadable checkpoint with the newest intact copy from the backend's history; without
    it, an unreadable checkpoint raises ``CheckpointError`` naming that copy. See the module docstring.

    Example::

        result = recover("dev")
        print(result.stale_lock, result.pending, result.changes)
        up("dev")  # converges from what really exists
    """
    target = StackTarget.resolve(stack, options)
    files = target.file_backend()
    stale_lock = _refuse_while_running(target, files, force)
    # A damaged lock names no holder to check, and no run holds one: a lock is written beside its place
    # (`<id>.json.<n>.tmp`) and renamed into it whole, so one that stays is what a write that died left.
    # A run still working holds a readable lock, or has plugins running: the checks above refuse then.
    damaged = files.damaged_locks() if files is not None else []
    removed = remove_stale_worktrees(target.project.path)
    restored = _restore_checkpoint(target, files, restore_checkpoint)

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> RecoverResult:
        pending = _pending(pulumi_stack)
        pulumi_stack.cancel()
        for lock in damaged:  # `cancel` empties the engine's own lock directory; the other layout's too
            lock.path.unlink(missing_ok=True)
        refreshed = run_command(
            pulumi_stack,
            events,
            "refresh",
            "--clear-pending-creates",
            *message_flags("recover after an interrupted update"),
        )
        return RecoverResult(
            stack=stack,
            stale_lock=stale_lock,
            pending=pending,
            changes=refreshed.changes,
            removed_worktrees=tuple(str(Path(tree)) for tree in removed),
            restored_checkpoint=restored[0] if restored else None,
            broken_checkpoint_kept_at=restored[1] if restored else None,
            damaged_locks=tuple(str(lock) for lock in damaged),
        )

    return run_engine(target, "recover", work)
