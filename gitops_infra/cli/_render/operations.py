"""The operations on a stack: a preview (of ``up``, a rollback), an update (``up``, ``rollback``), a
promotion and its evidence, a refresh, the history and a recovery; and the previews of many stacks
(``preview --all``). A destroy has its own module, ``destroy``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ...checks import format_duration
from .escape import one_line
from .gitops import gitops_markdown, tenants_outcome
from .markdown import Plain, code, counts, details, table, word
from .names import namer

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation

__all__ = [
    "changes_line",
    "fleet_preview_markdown",
    "preview_lines",
    "preview_markdown",
    "print_fleet_preview",
    "print_history",
    "print_preview",
    "print_promotion",
    "print_recovery",
    "print_refresh",
    "print_update",
    "promotion_markdown",
    "update_line",
]

_DONE = {"create": "created", "update": "updated", "delete": "deleted", "replace": "replaced"}


def changes_line(changes: dict[str, int], *, applied: bool = False) -> str:
    def phrase(op: str, count: int) -> str:
        if op == "same":
            return f"{count} unchanged"
        return f"{count} {_DONE.get(op, op)}" if applied else f"{count} to {op}"

    return ", ".join(phrase(op, count) for op, count in sorted(changes.items())) or "no resources"


def print_preview(out: Console, title: str, result: automation.PreviewResult) -> None:
    for step in result.steps:
        keys = f"  ({', '.join(step.keys)})" if step.keys else ""
        out.print(f"{step.op:<8} {step.urn}{keys}")
    out.print(f"{title}: {changes_line(dict(result.changes))}")


def preview_lines(result: automation.PreviewResult) -> list[str]:
    """A preview's Markdown lines: the counts, then the steps folded."""
    lines = [f"### Preview of {code(result.stack)}", "", *counts(result.changes)]
    if result.steps:
        rows = [(word(step.op), code(step.urn), ", ".join(step.keys)) for step in result.steps]
        lines += details(f"{len(result.steps)} steps", table(["operation", "resource", "changed"], rows))
    return lines


def preview_markdown(result: automation.PreviewResult) -> str:
    """A preview (of ``up`` or a rollback) as Markdown: the counts, then the steps folded."""
    return "\n".join(preview_lines(result)) + "\n"


def print_fleet_preview(out: Console, found: automation.FleetPreview) -> None:
    shown = namer(found.stacks)
    if not found.stacks:
        out.print(f"no stacks in shard {found.shard}" if found.shard else "no stacks")
    for previewed in found.stacks:
        if previewed.error is not None:
            error = one_line(f"{previewed.error.type}: {previewed.error.message}")
            out.print(f"{one_line(shown(previewed))}: error: {error}")
        elif previewed.result is not None:
            out.print(f"{shown(previewed)}: {changes_line(dict(previewed.result.changes))}")


def fleet_preview_markdown(found: automation.FleetPreview) -> str:
    """Previews of many stacks as Markdown: one row a stack, then each one's steps or error folded."""
    shown = namer(found.stacks)
    title = f"shard {code(found.shard)} of the fleet" if found.shard else "every stack"
    rows = [
        (
            shown(p),
            Plain(f"error: {word(p.error.type)}")
            if p.error is not None
            else changes_line(dict(p.result.changes) if p.result else {}),
        )
        for p in found.stacks
    ]
    lines = [f"### Preview of {title}", "", *table(["stack", "result"], rows)]
    body: list[str] = []
    for p in found.stacks:
        if p.error is not None:
            body += [f"{code(shown(p))}: {code(p.error.message)}", ""]
        elif p.result is not None and p.result.steps:
            steps = [(word(step.op), code(step.urn), ", ".join(step.keys)) for step in p.result.steps]
            body += [code(shown(p)), "", *table(["operation", "resource", "changed"], steps), ""]
    if body:
        lines += details("details", body[:-1])
    return "\n".join(lines) + "\n"


def update_line(verb: str, result: automation.UpResult | automation.DestroyResult) -> str:
    """``<verb> <stack> (version N from <commit>): <what changed>``."""
    commit = f" from {result.commit[:12]}" if result.commit else ""
    changes = changes_line(dict(result.changes), applied=True)
    return f"{verb} {result.stack} (version {result.version}{commit}): {changes}"


def print_update(out: Console, verb: str, result: automation.UpResult) -> None:
    out.print(update_line(verb, result))
    for key, value in sorted(result.outputs.items()):
        out.print(f"  {key}: {json.dumps(value)}")


def print_promotion(out: Console, result: automation.PromotionResult) -> None:
    """The update, then the evidence the promotion was allowed on."""
    print_update(out, "Promoted to", result)
    evidence = result.evidence
    if evidence is None:
        return
    age = format_duration(timedelta(seconds=evidence.age_seconds or 0))
    out.print(
        f"  evidence: {evidence.source} version {evidence.version} of {evidence.commit[:12]}, {age} old"
    )
    if evidence.drift is not None:
        out.print(f"  evidence: {'drifted' if evidence.drift else 'no drift'}")
    if evidence.gitops is not None:
        for source in evidence.gitops.sources:
            out.print("  evidence: " + one_line(f"{source.shown} Ready at {source.revision}"))
        for sync in evidence.gitops.syncs:
            out.print("  evidence: " + one_line(f"{sync.shown} Ready, applied {sync.applied_revision}"))
        for application in evidence.gitops.applications:
            if application.root:
                shown = f"{application.shown} Synced and Healthy at {application.revision}"
                out.print("  evidence: " + one_line(shown))
        if evidence.gitops.tenants:
            out.print("  evidence: " + tenants_outcome(evidence.gitops))


def promotion_markdown(result: automation.PromotionResult) -> str:
    """A promotion as a pull request comment: what was deployed where, and the evidence it was allowed on."""
    commit = f" {code((result.commit or '')[:12])}" if result.commit else ""
    lines = [f"### Promoted{commit} to {code(result.stack)} (version {result.version})", ""]
    lines += counts(dict(result.changes))
    evidence = result.evidence
    if evidence is not None:
        age = format_duration(timedelta(seconds=evidence.age_seconds or 0))
        rows: list[tuple[Any, ...]] = [
            (Plain("source"), evidence.source),
            (Plain("commit"), evidence.commit),
            (Plain("source update"), Plain(f"version {evidence.version}")),
            (
                Plain("ended"),
                evidence.updated_at.isoformat(timespec="seconds") if evidence.updated_at else "",
            ),
            (Plain("age"), Plain(age)),
        ]
        if evidence.max_age_seconds is not None:
            rows.append(
                (Plain("max age"), Plain(format_duration(timedelta(seconds=evidence.max_age_seconds))))
            )
        if evidence.drift is not None:
            rows.append((Plain("IaC drift"), Plain("drifted" if evidence.drift else "none")))
        if evidence.gitops is not None and evidence.gitops.tenants:
            gitops = evidence.gitops
            rows.append(
                (Plain("tenants"), Plain(f"{gitops.healthy_tenants} of {len(gitops.tenants)} healthy"))
            )
        lines += ["", "Evidence:", "", *table(["check", "found"], rows)]
        if evidence.gitops is not None:
            lines += ["", *gitops_markdown(evidence.gitops)]
    return "\n".join(lines) + "\n"


def print_refresh(out: Console, stack: str, result: automation.RefreshResult) -> None:
    out.print(f"Refreshed {stack}: {changes_line(dict(result.changes), applied=True)}")


def print_history(out: Console, deployments: Sequence[automation.Deployment]) -> None:
    """A line a deployment, newest first: version, kind, result, start, commit, and its message."""
    for d in deployments:
        commit = d.commit[:12] if d.commit else "-"
        # The engine's `git.dirty`: that run's code was not all in the commit (what promote refuses).
        dirty = "dirty" if d.dirty else ""
        when = f"{d.start_time:%Y-%m-%d %H:%M:%S}"
        out.print(
            f"{d.version:>4}  {d.kind:<8} {d.result:<10} {when}  {commit:<12} {dirty:<5}  "
            + one_line(d.message)
        )


def print_recovery(out: Console, stack: str, result: automation.RecoverResult) -> None:
    """What ``recover`` cleared (or restored), then the refresh after it."""
    if result.restored_checkpoint:
        out.print(
            f"Restored {result.restored_checkpoint}; the unreadable checkpoint is kept at "
            f"{result.broken_checkpoint_kept_at}"
        )
    for tree in result.removed_worktrees:
        out.print(f"Removed the stale rollback worktree {tree}")
    if result.stale_lock:
        out.print(f"Cleared the lock of {result.stale_lock}")
    for lock in result.damaged_locks:
        out.print(f"Cleared a damaged lock: {lock}")
    if not (result.stale_lock or result.damaged_locks):
        out.print("No stale lock found")
    for pending in result.pending:
        out.print(f"  dropped pending {pending}")
    out.print(f"Refreshed {stack}: {changes_line(result.changes, applied=True)}")
