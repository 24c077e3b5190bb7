"""Many stacks at once: drift, previews and where each stack stands, for a project or a fleet.

The stacks are the fleet's (:mod:`~gitops_infra.automation.fleet.inventory`): by default every stack with a
``Pulumi.<stack>.yaml`` in the project; or those of several projects, chosen by labels and wave, or one
shard of them. ``detect_drift_all``, ``preview_all`` and ``status_all`` check them a few at a time, each
in its own engine process; one stack's error does not stop the others and is reported with that stack.
``project_stacks`` names the stacks of one project.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import TypeVar

from ...errors import ArgumentError, ConfigError, GitOpsInfraError
from .._state.project import Project, find_project_dir
from ..drift import detect_drift
from ..operations import preview
from ..options import DEFAULT_PARALLEL, StackOptions
from ..results.drift import ALL_LAYERS, Layer
from ..results.status import StackError, StackStatus
from ..signals import interrupted
from ..stack_status import status
from .inventory import FleetStack, Shard, fleet_stacks
from .results import FleetDrift, FleetPreview, StackDrift, StackPreview

__all__ = ["detect_drift_all", "preview_all", "project_stacks", "status_all"]


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
    :class:`~gitops_infra.automation.fleet.inventory.FleetStack` (from ``fleet_stacks``) one of any project.
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
