"""Where stacks stand (``status``): the last deployment, whether it ran HEAD, the lock and the GitOps
layer; a line a stack on a terminal, a table in Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .escape import one_line
from .gitops import gitops_outcome, print_gitops
from .markdown import Plain, code, details, table, word
from .names import namer

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation

__all__ = ["lock_text", "print_status", "status_markdown"]


def print_status(out: Console, found: tuple[automation.StackStatus, ...]) -> None:
    names = namer(found)

    def shown(s: automation.StackStatus) -> str:
        return one_line(names(s))

    if not found:
        out.print("no stacks")
    for s in found:
        if s.error is not None:
            out.print(f"{shown(s)}: error: " + one_line(f"{s.error.type}: {s.error.message}"))
            continue
        lock = one_line(lock_text(s))
        if s.last is None:
            out.print(f"{shown(s)}: never deployed; {lock}")
            continue
        last = s.last
        head = {None: "", True: ", HEAD", False: ", not HEAD"}[s.at_head]
        when = last.start_time.isoformat(timespec="seconds")
        commit = one_line((last.commit or "no commit")[:12])
        kind = one_line(f"{last.kind} {last.result}")  # the engine's words, kept even when not ours
        out.print(
            f"{shown(s)}: version {last.version} {kind} at {when} from {commit}{head}; "
            f"{lock}; {one_line(repr(last.message))}"
        )
        if s.gitops is not None:
            print_gitops(out, s.gitops, indent="  ")


def lock_text(status: automation.StackStatus) -> str:
    """The stack's lock in words: who holds it, and each damaged lock file that blocks it all the same."""
    if status.locked is None:
        return "lock unknown"
    held = [f"locked by {status.lock}"] if status.lock is not None else []
    held += [f"locked by a damaged lock file, {lock} (recover clears it)" for lock in status.damaged_locks]
    return "; ".join(held) or "unlocked"


def status_markdown(statuses: Sequence[automation.StackStatus]) -> str:
    """Statuses as Markdown: one row a stack, then the last deployments' messages and errors folded."""
    rows = []
    shown = namer(statuses)
    for status in statuses:
        last = status.last
        lock = (
            Plain({None: "unknown", False: "no"}[status.locked])
            if not status.locked
            else lock_text(status).removeprefix("locked ")
        )
        head = Plain({None: "", True: "yes", False: "no"}[status.at_head])
        flux = Plain(gitops_outcome(status.gitops).removeprefix("gitops: ") if status.gitops else "")
        if status.error is not None:
            rows.append((shown(status), Plain(f"error: {word(status.error.type)}"), *[Plain("")] * 5))
        elif last is None:
            rows.append((shown(status), Plain("never deployed"), Plain(""), Plain(""), Plain(""), lock, flux))
        else:
            when = last.start_time.isoformat(timespec="seconds")
            summary = f"v{last.version} {last.kind} {last.result}"
            rows.append((shown(status), summary, when, (last.commit or "")[:12], head, lock, flux))
    header = ["stack", "last", "at", "commit", "HEAD", "locked", "gitops"]
    lines = ["### Stack status", "", *table(header, rows)]
    messages = [f"- {code(shown(s))}: {code(s.last.message)}" for s in statuses if s.last and s.last.message]
    messages += [f"- {code(shown(s))}: {code(s.error.message)}" for s in statuses if s.error is not None]
    messages += [f"- {code(shown(s))}: {code(p)}" for s in statuses if s.gitops for p in s.gitops.problems]
    if messages:
        lines += details("messages", messages)
    return "\n".join(lines) + "\n"
