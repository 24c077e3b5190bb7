"""Every stack of a project at once: drift across the fleet, and where each stack stands.

The stacks are the ones with a ``Pulumi.<stack>.yaml`` in the project. ``detect_drift_all`` checks them a
few at a time, each in its own engine process; one stack's error does not stop the others and is
reported with that stack. ``status`` reads a stack's last deployment, whether it ran the work tree's
commit, and who holds its lock, without running the engine's update machinery.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from ..errors import ArgumentError, GitOpsInfraError, WorkspaceError
from ._file_backend import LockInfo, StackLock
from ._git import head_commit, repo_root
from ._stack_files import SETTINGS_EXTENSIONS
from ._target import StackTarget, find_project_dir
from ._work import deployments
from .drift import detect_drift
from .options import DEFAULT_PARALLEL, StackOptions
from .results import Deployment, DriftReport
from .signals import interrupted

__all__ = [
    "DEFAULT_PARALLEL",
    "FleetDrift",
    "StackDrift",
    "StackError",
    "StackLock",
    "StackStatus",
    "detect_drift_all",
    "project_stacks",
    "status",
    "status_all",
]

_SETTINGS = re.compile(
    r"^Pulumi\.(?P<stack>.+)(?:" + "|".join(re.escape(e) for e in SETTINGS_EXTENSIONS) + ")$"
)


@dataclass(frozen=True)
class StackError:
    """A stack whose check failed: the error's type and message (never a traceback)."""

    type: str
    message: str


@dataclass(frozen=True)
class StackDrift:
    """One stack's drift check: its report, or the error that stopped it."""

    stack: str
    report: DriftReport | None
    error: StackError | None = None

    @property
    def has_drift(self) -> bool:
        """True when the check ran and found drift."""
        return self.report is not None and self.report.has_drift


@dataclass(frozen=True)
class FleetDrift:
    """Drift across every stack: one ``StackDrift`` each, in the project's order."""

    stacks: tuple[StackDrift, ...]

    @property
    def has_drift(self) -> bool:
        """True when any stack drifted."""
        return any(s.has_drift for s in self.stacks)

    @property
    def has_errors(self) -> bool:
        """True when any stack could not be checked."""
        return any(s.error is not None for s in self.stacks)


@dataclass(frozen=True)
class StackStatus:
    """Where one stack stands."""

    stack: str
    last: Deployment | None
    """The newest deployment (update, refresh, destroy), or ``None`` for a stack never deployed."""
    at_head: bool | None
    """Whether ``last`` ran the work tree's commit; ``None`` when either is unknown."""
    locked: bool | None
    """Whether an update holds the stack's lock; ``None`` when the backend cannot say (not a file one)."""
    lock: StackLock | None = None
    error: StackError | None = None


def project_stacks(options: StackOptions | None = None) -> tuple[str, ...]:
    """The stacks with a ``Pulumi.<stack>.yaml`` (or ``.yml``, ``.json``) in the project, sorted.

    ``WorkspaceError`` when there is none: checking "every stack" of a project with no stack file is a
    job pointed at the wrong directory, not a clean bill of health.
    """
    project = find_project_dir((options or StackOptions()).work_dir)
    found = {m["stack"] for p in project.iterdir() if p.is_file() and (m := _SETTINGS.match(p.name))}
    if not found:
        raise WorkspaceError(f"no Pulumi.<stack>.yaml in {project}: no stacks to check")
    return tuple(sorted(found))


T = TypeVar("T")


def _each(
    stacks: Sequence[str], parallel: int, check: Callable[[str], T], skipped: Callable[[str, StackError], T]
) -> list[T]:
    """``check`` on each stack, ``parallel`` at a time; once a signal came, ``skipped`` for those not begun.

    The signal itself reaches the engines running then (``cancel_on_signals``), which stop cleanly; the
    queued stacks are not started at all, and are reported as not checked.
    """
    if parallel < 1:
        raise ArgumentError(f"parallel must be at least 1, not {parallel}")

    def guarded(stack: str) -> T:
        signum = interrupted()
        if signum is not None:
            name = signal.Signals(signum).name
            return skipped(stack, StackError("Interrupted", f"not checked: {name} came before it started"))
        return check(stack)

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = [pool.submit(guarded, stack) for stack in stacks]
        results: list[T] = []
        for future in futures:
            while True:
                try:
                    results.append(future.result())
                    break
                except KeyboardInterrupt:
                    # A signal while no engine ran: `interrupted()` says so now, so the rest are skipped.
                    continue
        return results


def detect_drift_all(
    stacks: Sequence[str] | None = None,
    *,
    options: StackOptions | None = None,
    parallel: int = DEFAULT_PARALLEL,
) -> FleetDrift:
    """:func:`~gitops_infra.automation.detect_drift` on every stack of the project, ``parallel`` at a time.

    ``stacks`` defaults to :func:`project_stacks`. A stack that cannot be checked (not created yet, a
    bad config, a lock) is reported with its error; the others are checked all the same.

    Example::

        fleet = detect_drift_all(parallel=4)
        for s in fleet.stacks:
            print(s.stack, s.has_drift, s.error)
    """
    names = tuple(stacks) if stacks is not None else project_stacks(options)

    def check(stack: str) -> StackDrift:
        try:
            return StackDrift(stack=stack, report=detect_drift(stack, options=options))
        except GitOpsInfraError as exc:
            return StackDrift(stack=stack, report=None, error=StackError(type(exc).__name__, str(exc)))

    def skipped(stack: str, error: StackError) -> StackDrift:
        return StackDrift(stack=stack, report=None, error=error)

    return FleetDrift(stacks=tuple(_each(names, parallel, check, skipped)))


def _lock(target: StackTarget) -> tuple[bool | None, StackLock | None]:
    files = target.file_backend()
    if files is None:
        return None, None
    locks: list[LockInfo] = files.locks()
    if not locks:
        return False, None
    return True, StackLock(user=locks[0].user, host=locks[0].host, pid=locks[0].pid)


def status(stack: str, *, options: StackOptions | None = None) -> StackStatus:
    """Where ``stack`` stands: its last deployment, whether that ran the work tree's commit, its lock.

    Reading the history takes no lock, so a stack that an update holds still reports, with the lock.

    Example::

        s = status("prod")
        print(s.last.version, s.last.result, s.at_head, s.locked, s.lock)
    """
    target = StackTarget.resolve(stack, options)
    locked, lock = _lock(target)
    found = deployments(target)
    last = found[0] if found else None
    at_head: bool | None = None
    if last is not None and last.commit:
        try:
            at_head = head_commit(repo_root(target.project.path)) == last.commit
        except GitOpsInfraError:  # not a git repository (GitError), or no commit yet
            at_head = None
    return StackStatus(stack=stack, last=last, at_head=at_head, locked=locked, lock=lock)


def status_all(
    stacks: Sequence[str] | None = None,
    *,
    options: StackOptions | None = None,
    parallel: int = DEFAULT_PARALLEL,
) -> tuple[StackStatus, ...]:
    """:func:`status` of every stack of the project; one that cannot be read carries its error."""
    names = tuple(stacks) if stacks is not None else project_stacks(options)

    def skipped(stack: str, error: StackError) -> StackStatus:
        return StackStatus(stack=stack, last=None, at_head=None, locked=None, error=error)

    def check(stack: str) -> StackStatus:
        try:
            return status(stack, options=options)
        except GitOpsInfraError as exc:
            return skipped(stack, StackError(type(exc).__name__, str(exc)))

    return tuple(_each(names, parallel, check, skipped))
