"""A stack's history: what each deployment did, read from the backend's files where it can, else the engine.

Every operation that records an update reads it back with :func:`latest_deployment`, ``status`` the newest
with :func:`last_deployment`, and ``history``, ``promote`` and rollback's ``"previous"`` read the whole
history with :func:`deployments`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pulumi import automation as auto

from .._engine.runner import run_engine
from ..results.deployments import Deployment, DeploymentKind, DeploymentResult
from .target import StackTarget

__all__ = ["GIT_DIRTY", "GIT_HEAD", "deployments", "last_deployment", "latest_deployment"]

GIT_HEAD = "git.head"
"""The key under which the engine records the commit an update ran from."""
GIT_DIRTY = "git.dirty"
"""The key under which the engine records ``"true"`` when the work tree had uncommitted changes."""
HISTORY_PAGE = 500
"""Entries per ``pulumi stack history`` call. Without a page size the CLI returns only the newest 10."""


def _deployment(summary: auto.UpdateSummary, version: int) -> Deployment:
    return Deployment(
        version=summary.version or version,
        kind=DeploymentKind(summary.kind),
        result=DeploymentResult(summary.result),
        start_time=summary.start_time,
        end_time=summary.end_time,
        message=summary.message or "",
        commit=(summary.environment or {}).get(GIT_HEAD),
        dirty=(summary.environment or {}).get(GIT_DIRTY) == "true",
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
        kind=DeploymentKind(str(entry.get("kind", ""))),
        result=DeploymentResult(str(entry.get("result", ""))),
        start_time=_utc(entry.get("startTime")) or datetime.fromtimestamp(0, UTC).replace(tzinfo=None),
        end_time=_utc(entry.get("endTime")),
        message=str(entry.get("message") or ""),
        commit=(entry.get("environment") or {}).get(GIT_HEAD),
        dirty=(entry.get("environment") or {}).get(GIT_DIRTY) == "true",
    )


def _newest_in_files(target: StackTarget) -> Deployment | None:
    """A local file backend's newest deployment, from its newest history file alone (its version is the
    count of them); ``None`` elsewhere, or when there is none or it cannot be read here."""
    files = target.file_backend()
    newest = files.newest_history_entry() if files is not None else None
    if newest is None:
        return None
    count, entry = newest
    return _file_deployment(entry, count)


def latest_deployment(target: StackTarget, stack: auto.Stack) -> Deployment:
    """The deployment an operation just recorded: the stack's newest.

    A local file backend's is read from its newest history file. Elsewhere the whole history is read
    through the engine: the DIY backends record no version numbers, so a version is a position counted
    from the oldest entry.
    """
    return _newest_in_files(target) or _deployments(_all_history(stack))[0]


def last_deployment(target: StackTarget) -> Deployment | None:
    """The stack's newest deployment, ``None`` before its first (``status``, stack by stack over a fleet):
    as :func:`latest_deployment`, for a target no operation has selected."""
    newest = _newest_in_files(target)
    if newest is not None:
        return newest
    found = deployments(target)
    return found[0] if found else None


def deployments(target: StackTarget) -> tuple[Deployment, ...]:
    """The stack's deployments, newest first: ``history`` of a target already resolved (``status``,
    ``promote`` and rollback have one).

    A local file backend's are read from its history files, as :func:`latest_deployment` reads the
    newest (an engine command per stack is most of ``status --all``); elsewhere, and for a stack with no
    history or an entry that cannot be read here, through the engine.
    """
    files = target.file_backend()
    entries = files.history_entries() if files is not None else None
    if entries is not None:
        count = len(entries)
        return tuple(_file_deployment(entry, count - index) for index, entry in enumerate(entries))
    return run_engine(target, "history", lambda pulumi_stack, _: _deployments(_all_history(pulumi_stack)))
