"""The stack operations: ``preview``, ``up``, ``refresh`` and ``history``.

Each takes a stack name, a :class:`~gitops_infra.automation.StackOptions` and a few keywords of its
own, runs the real engine through :mod:`gitops_infra.automation.engine`, and returns a frozen result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pulumi import automation as auto

from ..errors import PromotionError
from ..policy import resolve_policy_packs
from . import engine
from .git import head_commit, repo_root, tracked_changes
from .results import (
    SECRET,
    Deployment,
    PreviewResult,
    RecordedResult,
    RefreshResult,
    Step,
    UpResult,
    changes_of,
)
from .stack_target import EventCallback, StackOptions, StackTarget
from .streamed import Streamed, message_flags, run_command

__all__ = ["history", "preview", "refresh", "up"]

GIT_HEAD = "git.head"
"""The key under which the engine records the commit an update ran from."""
HISTORY_PAGE = 500
"""Entries per ``pulumi stack history`` call. Without a page size the CLI returns only the newest 10."""


def mask_outputs(outputs: Mapping[str, auto.OutputValue]) -> dict[str, Any]:
    """Stack outputs as plain values, with every secret one replaced by ``SECRET``."""
    return {key: SECRET if out.secret else out.value for key, out in outputs.items()}


def _deployment(summary: auto.UpdateSummary, version: int) -> Deployment:
    return Deployment(
        version=summary.version or version,
        kind=summary.kind,
        result=summary.result,
        start_time=summary.start_time,
        end_time=summary.end_time,
        message=summary.message or "",
        commit=(summary.environment or {}).get(GIT_HEAD),
    )


def _deployments(summaries: Sequence[auto.UpdateSummary]) -> tuple[Deployment, ...]:
    # Newest first, as the engine lists them. The file backend records no version numbers, so a
    # deployment's version is its position in the history when the engine gives none.
    count = len(summaries)
    return tuple(_deployment(summary, count - index) for index, summary in enumerate(summaries))


def _all_history(stack: auto.Stack) -> list[auto.UpdateSummary]:
    """Every entry of the stack's history, newest first, fetched a page at a time."""
    summaries: list[auto.UpdateSummary] = []
    page = 1
    while True:
        batch = stack.history(page_size=HISTORY_PAGE, page=page, show_secrets=False)
        summaries.extend(batch)
        if len(batch) < HISTORY_PAGE:
            return summaries
        page += 1


def _utc(seconds: Any) -> datetime | None:
    """A file backend's Unix time as ``pulumi stack history --json`` shows it: UTC, without a zone."""
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None) if isinstance(seconds, int) else None


def _file_deployment(entry: Mapping[str, Any], count: int) -> Deployment:
    """A file backend's newest history entry, the ``count``-th, as :func:`_deployment` makes it."""
    return Deployment(
        version=entry.get("version") or count,
        kind=str(entry.get("kind", "")),
        result=str(entry.get("result", "")),
        start_time=_utc(entry.get("startTime")) or datetime.fromtimestamp(0, UTC).replace(tzinfo=None),
        end_time=_utc(entry.get("endTime")),
        message=str(entry.get("message") or ""),
        commit=(entry.get("environment") or {}).get(GIT_HEAD),
    )


def latest_deployment(target: StackTarget, stack: auto.Stack) -> Deployment:
    """The deployment an operation just recorded: the stack's newest.

    A local file backend's is read from its history files, as ``pulumi stack history`` reads them; its
    version is their count. Elsewhere the whole history is read through the engine: the DIY backends
    record no version numbers, so a version is a position counted from the oldest entry.
    """
    files = target.file_backend()
    newest = files.newest_history_entry() if files is not None else None
    if newest is not None:
        count, entry = newest
        return _file_deployment(entry, count)
    return _deployments(_all_history(stack))[0]


Recorded = TypeVar("Recorded", bound=RecordedResult)


def recorded(kind: type[Recorded], target: StackTarget, s: auto.Stack, streamed: Streamed) -> Recorded:
    """The result of an operation just recorded in ``s``'s history (a refresh, a destroy)."""
    latest = latest_deployment(target, s)
    return kind(stack=target.stack, changes=streamed.changes, version=latest.version, commit=latest.commit)


def _step(metadata: auto.StepEventMetadata) -> Step:
    return Step(urn=metadata.urn, op=metadata.op.value, type=metadata.type, keys=tuple(metadata.keys or ()))


def preview(
    stack: str,
    *,
    options: StackOptions | None = None,
    refresh: bool = False,
    policy_packs: Sequence[str] = (),
    create: bool = False,
) -> PreviewResult:
    """Show what ``up`` would change, without changing anything.

    ``refresh`` reads the real state of every resource first; ``policy_packs`` are CrossGuard policy pack
    directories to enforce, or ``gitops_infra.policy.POLICY_PACK`` for the bundled one; ``create`` creates
    the stack if it does not exist yet.

    Example::

        result = preview("dev")
        if result.has_changes:
            for step in result.steps:
                print(step.op, step.urn, step.keys)
    """
    target = StackTarget.resolve(stack, options)
    packs = resolve_policy_packs(policy_packs)  # once, before the engine: not again on each lock retry

    def run_preview(s: auto.Stack, on_event: EventCallback) -> auto.PreviewResult:
        return s.preview(on_event=on_event, refresh=refresh or None, policy_packs=packs or None)

    return engine.run(target, "preview", preview_work(stack, run_preview), create=create)


def preview_work(
    stack: str, run_preview: Callable[[auto.Stack, EventCallback], auto.PreviewResult]
) -> Callable[[auto.Stack, engine.EngineEvents], PreviewResult]:
    """The engine work of a preview (of ``up``, ``destroy`` or a rollback): ``run_preview`` runs it with an
    ``on_event`` that collects every step that is not a no-op."""

    def work(s: auto.Stack, events: engine.EngineEvents) -> PreviewResult:
        steps: list[Step] = []  # per attempt: a retried one starts afresh

        def collect(event: auto.EngineEvent) -> None:
            pre = event.resource_pre_event
            if pre is not None and pre.metadata.op != auto.OpType.SAME:
                steps.append(_step(pre.metadata))

        result = run_preview(s, events.callback(collect))
        return PreviewResult(stack=stack, changes=changes_of(result.change_summary), steps=tuple(steps))

    return work


def up(
    stack: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
    policy_packs: Sequence[str] = (),
    refresh: bool = False,
    create: bool = False,
    require_promoted_from: str | None = None,
) -> UpResult:
    """Apply the program to the stack and record the git commit it ran from.

    ``require_promoted_from`` is a prod pipeline's guard: the work tree's commit must have a successful
    update on that stack, or nothing runs (``PromotionError``, see :func:`require_promoted`).

    Example::

        result = up("dev", message="deploy from CI")
        print(result.version, result.commit, result.outputs["clusterName"])
        up("prod", require_promoted_from="dev")
    """
    target = StackTarget.resolve(stack, options)
    if require_promoted_from is not None:
        _require_promoted(target, require_promoted_from, options)
    work = up_work(target, message=message, policy_packs=policy_packs, refresh=refresh)
    return engine.run(target, "up", work, create=create)


def up_work(
    target: StackTarget,
    *,
    message: str | None = None,
    policy_packs: Sequence[str] = (),
    refresh: bool = False,
) -> Callable[[auto.Stack, engine.EngineEvents], UpResult]:
    """The engine work of ``up``, shared with ``rollback_to_commit``."""

    packs = resolve_policy_packs(policy_packs)
    flags = [*message_flags(message), *(flag for pack in packs for flag in ("--policy-pack", pack))]
    if refresh:
        flags.append("--refresh")

    def work(s: auto.Stack, events: engine.EngineEvents) -> UpResult:
        streamed = run_command(s, events, "up", *flags)
        latest = latest_deployment(target, s)
        return UpResult(
            stack=target.stack,
            changes=streamed.changes,
            outputs=streamed.outputs if streamed.outputs is not None else mask_outputs(s.outputs()),
            version=latest.version,
            commit=latest.commit,
        )

    return work


def refresh(stack: str, *, options: StackOptions | None = None, message: str | None = None) -> RefreshResult:
    """Read the real state of every resource and write it into the stack's state.

    Use :func:`~gitops_infra.automation.detect_drift` to look without writing.

    Example::

        result = refresh("dev")
        print(result.changes)  # e.g. {"same": 3, "update": 1}
    """
    target = StackTarget.resolve(stack, options)

    def work(s: auto.Stack, events: engine.EngineEvents) -> RefreshResult:
        return recorded(RefreshResult, target, s, run_command(s, events, "refresh", *message_flags(message)))

    return engine.run(target, "refresh", work)


def history(stack: str, *, options: StackOptions | None = None) -> tuple[Deployment, ...]:
    """The stack's deployments, newest first, each with the git commit it ran from.

    Example::

        for d in history("prod"):
            print(d.version, d.kind, d.result, d.commit, d.message)
    """
    return deployments(StackTarget.resolve(stack, options))


def deployments(target: StackTarget) -> tuple[Deployment, ...]:
    """:func:`history` of a target already resolved (``status``, ``promote`` and rollback have one)."""
    return engine.run(target, "history", lambda s, _events: _deployments(_all_history(s)))


def require_promoted(stack: str, source: str, *, options: StackOptions | None = None) -> str:
    """Check that the work tree's commit has a successful update on ``source``; return that commit.

    ``PromotionError``, naming the commit and the stack, otherwise; and for a work tree whose tracked
    files have uncommitted changes, since what would run is then not the commit ``source`` proved.
    """
    return _require_promoted(StackTarget.resolve(stack, options), source, options)


def _require_promoted(target: StackTarget, source: str, options: StackOptions | None) -> str:
    stack = target.stack
    repo = repo_root(target.project)
    head = head_commit(repo)
    if tracked_changes(repo):
        raise PromotionError(
            f"the work tree at {head[:12]} has uncommitted changes, so `up {stack}` would not apply a commit "
            f"stack {source!r} ran; commit them and deploy that commit to {source!r} first",
            stack=source,
            commit=head,
        )
    proven = any(
        d.kind == "update" and d.result == "succeeded" and d.commit == head
        for d in history(source, options=options)
    )
    if not proven:
        raise PromotionError(
            f"commit {head[:12]} has no successful update on stack {source!r}; deploy it there first "
            f"(`gitops-infra up {source}`), then to {stack!r}",
            stack=source,
            commit=head,
        )
    return head
