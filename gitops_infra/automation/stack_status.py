"""``status``: where one stack stands, read without running the engine's update machinery.

Its last deployment, whether that ran the work tree's commit, who holds its lock (and the damaged lock
files that block it), and what Flux reports of its cluster. The fleet's ``status_all``
(:mod:`gitops_infra.automation.fleet.operations`) runs it on many stacks. The module is not named
``status``: importing it would put the module in the place of the function on the package.
"""

from __future__ import annotations

from ..errors import GitOpsInfraError
from ._cluster.gitops import read_gitops
from ._state.file_backend import LockInfo
from ._state.git import head_commit, repo_root
from ._state.history import last_deployment
from ._state.target import StackTarget
from .options import StackOptions
from .results.status import StackLock, StackStatus

__all__ = ["status"]


def _lock(target: StackTarget) -> tuple[bool | None, StackLock | None, tuple[str, ...]]:
    """Whether the stack is locked, who holds the lock, and the damaged lock files that block it."""
    files = target.file_backend()
    if files is None:
        return None, None, ()
    locks: list[LockInfo] = files.locks()
    damaged = tuple(str(lock) for lock in files.damaged_locks())
    holder = StackLock(user=locks[0].user, host=locks[0].host, pid=locks[0].pid) if locks else None
    return bool(locks or damaged), holder, damaged


def status(stack: str, *, options: StackOptions | None = None, gitops: bool = True) -> StackStatus:
    """Where ``stack`` stands: its last deployment, whether that ran the work tree's commit, its lock,
    and (unless ``gitops`` is False) what Flux reports of its cluster.

    Reading the history, the state and the cluster takes no lock and runs no update, so a stack that an
    update holds still reports, with the lock.

    Example::

        s = status("prod")
        print(s.last.version, s.last.result, s.at_head, s.locked, s.lock)
    """
    target = StackTarget.resolve(stack, options)
    locked, lock, damaged = _lock(target)
    last = last_deployment(target)
    at_head: bool | None = None
    if last is not None and last.commit:
        try:
            at_head = head_commit(repo_root(target.project.path)) == last.commit
        except GitOpsInfraError:  # not a git repository (GitError), or no commit yet
            at_head = None
    layer = read_gitops(target) if gitops and last is not None else None
    return StackStatus(
        stack=stack,
        last=last,
        at_head=at_head,
        locked=locked,
        lock=lock,
        gitops=layer,
        damaged_locks=damaged,
    )
