"""Many stacks at once: drift, previews and where each stack stands, for a project or a fleet.

The stacks are the fleet's (:mod:`~gitops_infra.automation.inventory`): by default every stack with a
``Pulumi.<stack>.yaml`` in the project; or those of several projects, chosen by labels and wave, or one
shard of them. ``detect_drift_all`` and ``preview_all`` check them a few at a time, each in its own engine
process; one stack's error does not stop the others and is reported with that stack. ``status`` reads a
stack's last deployment, whether it ran the work tree's commit, and who holds its lock, without running
the engine's update machinery.
"""

from __future__ import annotations

import json
import signal
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from ..errors import ArgumentError, ConfigError, GitOpsInfraError
from ._file_backend import LockInfo, StackLock
from ._git import head_commit, repo_root
from ._project import Project, find_project_dir
from ._target import StackTarget
from ._work import last_deployment
from .drift import detect_drift
from .gitops import read_gitops
from .inventory import FleetStack, Shard, fleet_stacks, qualified_name
from .operations import preview
from .options import DEFAULT_PARALLEL, StackOptions
from .results import (
    ALL_LAYERS,
    Deployment,
    DriftKind,
    DriftReport,
    GitOpsReport,
    Layer,
    PreviewResult,
    PropertyDiff,
)
from .signals import interrupted

__all__ = [
    "DEFAULT_PARALLEL",
    "DriftCause",
    "FleetDrift",
    "FleetPreview",
    "StackDrift",
    "StackError",
    "StackLock",
    "StackPreview",
    "StackStatus",
    "detect_drift_all",
    "preview_all",
    "project_stacks",
    "status",
    "status_all",
]


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
    project: str | None = None
    """The stack's project: with ``stack``, its fully qualified ``name``."""
    checked_at: datetime | None = None
    """When the check ended: of two results for one stack (a retried job), the newer one counts."""

    @property
    def has_drift(self) -> bool:
        """True when the check ran and found drift."""
        return self.report is not None and self.report.has_drift

    @property
    def healthy(self) -> bool:
        """False when the check ran and its GitOps layer is not healthy (or its cluster could not be read)."""
        return self.report is None or self.report.healthy

    @property
    def name(self) -> str:
        """``organization/<project>/<stack>``, or the stack alone when the project is unknown."""
        return qualified_name(self.project, self.stack) if self.project else self.stack


@dataclass(frozen=True)
class DriftCause:
    """One difference many stacks share: a property of a resource type, from one value to another.

    A provider upgrade that drifted 40 stacks the same way is one cause with 40 stacks, not 40 rows.
    """

    type: str
    kind: DriftKind
    path: str
    """The property path; empty for a resource deleted out of band."""
    recorded: Any
    actual: Any
    stacks: tuple[str, ...]
    """The fully qualified names of the stacks where it happened, sorted."""


@dataclass(frozen=True)
class FleetDrift:
    """Drift across stacks: one ``StackDrift`` each, by fully qualified name.

    ``shard`` is ``I/N`` when the stacks are one shard of the fleet. ``unread`` names each input a merged
    report (``fleet report``) could not read: a shard or job whose result is missing.
    """

    stacks: tuple[StackDrift, ...]
    shard: str | None = None
    unread: tuple[str, ...] = ()

    @property
    def has_drift(self) -> bool:
        """True when any stack drifted."""
        return any(s.has_drift for s in self.stacks)

    @property
    def healthy(self) -> bool:
        """False when any stack's GitOps layer is not healthy."""
        return all(s.healthy for s in self.stacks)

    @property
    def has_errors(self) -> bool:
        """True when any stack could not be checked, or a result is missing."""
        return bool(self.unread) or any(s.error is not None for s in self.stacks)

    @property
    def causes(self) -> tuple[DriftCause, ...]:
        """The drift grouped by cause: most stacks first, then by type and path."""
        first: dict[tuple[str, ...], DriftCause] = {}
        names: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for checked in self.stacks:
            for resource in checked.report.resources if checked.report is not None else ():
                for diff in resource.diffs or (PropertyDiff("", None, None),):
                    cause = DriftCause(
                        resource.type, resource.kind, diff.path, diff.recorded, diff.actual, ()
                    )
                    key = (
                        cause.type,
                        cause.path,
                        cause.kind.value,
                        _canonical(cause.recorded),
                        _canonical(cause.actual),
                    )
                    first.setdefault(key, cause)
                    names[key].add(checked.name)
        ordered = sorted(names, key=lambda key: (-len(names[key]), key))
        return tuple(replace(first[key], stacks=tuple(sorted(names[key]))) for key in ordered)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class StackPreview:
    """One stack's preview: what ``up`` would change, or the error that stopped it."""

    stack: str
    result: PreviewResult | None
    error: StackError | None = None
    project: str | None = None

    @property
    def has_changes(self) -> bool:
        """True when the preview ran and ``up`` would change something."""
        return self.result is not None and self.result.has_changes


@dataclass(frozen=True)
class FleetPreview:
    """Previews across stacks, by fully qualified name; ``shard`` as in :class:`FleetDrift`."""

    stacks: tuple[StackPreview, ...]
    shard: str | None = None

    @property
    def has_changes(self) -> bool:
        """True when ``up`` would change any stack."""
        return any(s.has_changes for s in self.stacks)

    @property
    def has_errors(self) -> bool:
        """True when any stack could not be previewed."""
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


def project_stacks(options: StackOptions | None = None) -> tuple[str, ...]:
    """The stacks with a settings file where the engine reads it (``Pulumi.<stack>.yaml`` in the project's
    ``stackConfigDir``: :func:`fleet_stacks`), sorted.

    ``WorkspaceError`` when there is none: checking "every stack" of a project with no stack file is a
    job pointed at the wrong directory, not a clean bill of health.
    """
    return tuple(s.stack for s in _selected(None, options, None))


def _selected(
    stacks: Sequence[str | FleetStack] | None, options: StackOptions | None, shard: Shard | None
) -> tuple[FleetStack, ...]:
    """``stacks`` as fleet stacks (a bare name is one of the options' project); all of it by default."""
    if stacks is None:
        found = fleet_stacks([find_project_dir((options or StackOptions()).work_dir)], strict=False)
    else:
        project = None
        listed = []
        for stack in stacks:
            if isinstance(stack, str):
                project = project or Project.find((options or StackOptions()).work_dir)
                stack = FleetStack(project=project.name, stack=stack, project_dir=project.path)
            listed.append(stack)
        found = tuple(listed)
    return shard.of(found) if shard is not None else found


T = TypeVar("T")


def _each(
    stacks: Sequence[FleetStack],
    options: StackOptions | None,
    parallel: int,
    check: Callable[[FleetStack, StackOptions], T],
    failed: Callable[[FleetStack, StackError], T],
) -> list[T]:
    """``check`` on each stack in its own project, ``parallel`` at a time; ``failed`` for one that raised
    a ``GitOpsInfraError``, and for those not begun once a signal came.

    The signal itself reaches the engines running then (``cancel_on_signals``), which stop cleanly; the
    queued stacks are not started at all, and are reported as not checked.
    """
    if parallel < 1:
        raise ArgumentError(f"parallel must be at least 1, not {parallel}")
    base = options or StackOptions()

    def guarded(stack: FleetStack) -> T:
        signum = interrupted()
        if signum is not None:
            name = signal.Signals(signum).name
            return failed(stack, StackError("Interrupted", f"not checked: {name} came before it started"))
        try:
            if stack.problems:  # its stack file cannot be read: its error, and the others go on
                raise ConfigError(stack.problems, stack=stack.stack)
            return check(stack, replace(base, work_dir=stack.project_dir))
        except GitOpsInfraError as exc:
            return failed(stack, StackError(type(exc).__name__, str(exc)))

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
    stacks: Sequence[str | FleetStack] | None = None,
    *,
    options: StackOptions | None = None,
    parallel: int = DEFAULT_PARALLEL,
    shard: Shard | None = None,
    layers: Collection[Layer] = ALL_LAYERS,
) -> FleetDrift:
    """:func:`~gitops_infra.automation.detect_drift` on every stack, ``parallel`` at a time.

    ``stacks`` defaults to every stack of the options' project; a name is a stack of that project, a
    :class:`~gitops_infra.automation.inventory.FleetStack` (from ``fleet_stacks``) one of any project.
    ``shard`` keeps the stacks of one shard. A stack that cannot be checked (not created yet, a bad
    config, a lock) is reported with its error; the others are checked all the same. A cluster that
    cannot be reached is that stack's GitOps ``error``, and its IaC answer is still given.

    Example::

        fleet = detect_drift_all(fleet_stacks([Path("infra"), Path("tenants")]), shard=Shard(0, 4))
        for s in fleet.stacks:
            print(s.name, s.has_drift, s.error)
    """

    def check(stack: FleetStack, options: StackOptions) -> StackDrift:
        report = detect_drift(stack.stack, options=options, layers=layers)
        return StackDrift(
            stack=stack.stack, report=report, project=stack.project, checked_at=report.checked_at
        )

    def failed(stack: FleetStack, error: StackError) -> StackDrift:
        return StackDrift(
            stack=stack.stack, report=None, error=error, project=stack.project, checked_at=datetime.now(UTC)
        )

    selected = _selected(stacks, options, shard)
    return FleetDrift(
        stacks=tuple(_each(selected, options, parallel, check, failed)),
        shard=str(shard) if shard is not None else None,
    )


def preview_all(
    stacks: Sequence[str | FleetStack] | None = None,
    *,
    options: StackOptions | None = None,
    parallel: int = DEFAULT_PARALLEL,
    shard: Shard | None = None,
    refresh: bool = False,
    policy_packs: Sequence[str] = (),
) -> FleetPreview:
    """:func:`~gitops_infra.automation.preview` of every stack, as :func:`detect_drift_all` checks drift.

    Detect-only: nothing is created, a stack that does not exist is reported with its error.
    """

    def check(stack: FleetStack, options: StackOptions) -> StackPreview:
        result = preview(stack.stack, options=options, refresh=refresh, policy_packs=policy_packs)
        return StackPreview(stack=stack.stack, result=result, project=stack.project)

    def failed(stack: FleetStack, error: StackError) -> StackPreview:
        return StackPreview(stack=stack.stack, result=None, error=error, project=stack.project)

    selected = _selected(stacks, options, shard)
    return FleetPreview(
        stacks=tuple(_each(selected, options, parallel, check, failed)),
        shard=str(shard) if shard is not None else None,
    )


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


def status_all(
    stacks: Sequence[str | FleetStack] | None = None,
    *,
    options: StackOptions | None = None,
    parallel: int = DEFAULT_PARALLEL,
    shard: Shard | None = None,
) -> tuple[StackStatus, ...]:
    """:func:`status` of every stack (chosen as :func:`detect_drift_all` chooses); one that cannot be
    read carries its error."""

    def check(stack: FleetStack, options: StackOptions) -> StackStatus:
        return replace(status(stack.stack, options=options), project=stack.project)

    def failed(stack: FleetStack, error: StackError) -> StackStatus:
        return StackStatus(
            stack=stack.stack, last=None, at_head=None, locked=None, error=error, project=stack.project
        )

    return tuple(_each(_selected(stacks, options, shard), options, parallel, check, failed))
