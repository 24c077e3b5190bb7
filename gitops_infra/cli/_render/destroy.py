"""A destroy: what its drain did (or would do), what each sweep found left behind after it, and a destroy
that failed, whose sweeps come with its error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .escape import one_line
from .markdown import Plain, cell, code, counts, table, word
from .operations import preview_lines, print_preview, update_line

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation
    from ...errors import OperationFailedError

__all__ = [
    "destroy_markdown",
    "destroy_preview_markdown",
    "failed_destroy_markdown",
    "print_destroy",
    "print_destroy_preview",
    "print_failed_destroy",
    "print_teardown",
    "teardown_markdown",
]


def print_destroy(out: Console, result: automation.DestroyResult) -> None:
    if not result.changes and result.kept:
        out.print(f"Nothing to destroy on {result.stack}: only protected resources are left (no update).")
    else:
        out.print(update_line("Destroyed", result))
    if result.kept:
        out.print(f"Kept {len(result.kept)} protected (pulumi state unprotect to let a destroy delete it):")
        for urn in result.kept:
            out.print(f"  {one_line(urn)}")  # a URN holds the resource's name, which may hold a newline
    print_teardown(out, result.drain, result.sweeps)


def print_destroy_preview(out: Console, stack: str, preview: automation.DestroyPreview) -> None:
    print_preview(out, f"Destroy of {stack} (preview)", preview)
    print_teardown(out, preview.drain)


def print_failed_destroy(out: Console, stack: str, sweeps: tuple[automation.SweepResult, ...]) -> None:
    """What the sweep found after a destroy that failed (the error itself is the error boundary's)."""
    out.print(f"Destroy of {stack} failed; the sweep after it:")
    print_teardown(out, None, sweeps)


def print_teardown(
    out: Console, drain: automation.DrainResult | None, sweeps: tuple[automation.SweepResult, ...] = ()
) -> None:
    """What the drain did (or would do), and what each sweep found left behind."""
    if drain is not None:
        if drain.skipped:
            out.print(f"Drain: skipped: {drain.skipped}")
        else:
            verb = ("would suspend", "would delete") if drain.planned else ("suspended", "deleted")
            out.print(f"Drain: {verb[0]} {len(drain.suspended)}, {verb[1]} {len(drain.deleted)}")
            for obj in drain.suspended:
                out.print(f"  {verb[0]:<13} {obj}")
            for obj in drain.deleted:
                out.print(f"  {verb[1]:<13} {obj}")
    for sweep in sweeps:
        account = f" (account {sweep.account})" if sweep.account else ""
        where = f"cluster {sweep.cluster} in {sweep.region}{account}"
        if sweep.error is not None:
            out.print(f"Sweep of {where}: could not look: {sweep.error}", style="red")
        elif not sweep.orphans:
            out.print(f"Sweep of {where}: nothing left behind")
        else:
            out.print(f"Sweep of {where}: {len(sweep.orphans)} left behind (not deleted):", style="red")
            for orphan in sweep.orphans:
                out.print(f"  {orphan.type:<36} {orphan.arn}  ({orphan.matched})")


def destroy_preview_markdown(result: automation.DestroyPreview) -> str:
    """A destroy's preview as Markdown: the engine's deletes, as any preview's, then the drain's plan."""
    lines = preview_lines(result)
    if result.drain is not None:
        lines += ["", *teardown_markdown(result.drain)]
    return "\n".join(lines) + "\n"


def destroy_markdown(result: automation.DestroyResult) -> str:
    """A destroy as Markdown: the counts, the drain, and what each sweep found left behind."""
    commit = f" from {code(result.commit[:12])}" if result.commit else ""
    lines = [f"### Destroyed {code(result.stack)} (version {result.version}){commit}", ""]
    if not result.changes and result.kept:
        lines = [f"### Nothing to destroy on {code(result.stack)}: only protected resources are left", ""]
    lines += counts(dict(result.changes))
    if result.kept:
        lines += ["", f"Kept {len(result.kept)} protected:", "", *(f"- {code(urn)}" for urn in result.kept)]
    lines += ["", *teardown_markdown(result.drain, result.sweeps)]
    return "\n".join(lines).rstrip("\n") + "\n"


def failed_destroy_markdown(exc: OperationFailedError) -> str:
    """A failed destroy as Markdown: the error, then what each sweep found left behind."""
    lines = [f"### Destroy of {code(exc.stack)} failed", "", code(f"{type(exc).__name__}: {exc}"), ""]
    lines += teardown_markdown(None, exc.sweeps)
    return "\n".join(lines).rstrip("\n") + "\n"


def teardown_markdown(
    drain: automation.DrainResult | None, sweeps: tuple[automation.SweepResult, ...] = ()
) -> list[str]:
    lines: list[str] = []
    if drain is not None and drain.skipped:
        lines += [f"Drain skipped: {cell(drain.skipped)}", ""]
    elif drain is not None:
        label = "would" if drain.planned else "done"
        rows: list[tuple[Any, ...]] = [
            (Plain("suspend"), word(o.kind), code(o.namespace), code(o.name)) for o in drain.suspended
        ]
        rows += [(Plain("delete"), word(o.kind), code(o.namespace), code(o.name)) for o in drain.deleted]
        title = f"Drain ({label}): {len(drain.suspended)} suspended, {len(drain.deleted)} deleted"
        lines += [f"#### {title}", ""]
        lines += table(["step", "kind", "namespace", "name"], rows) if rows else ["Nothing to drain."]
        lines.append("")
    for sweep in sweeps:
        account = f" (account {code(sweep.account)})" if sweep.account else ""
        where = f"{code(sweep.cluster)} in {code(sweep.region)}{account}"
        if sweep.error is not None:
            lines += [f"#### Sweep of {where}: could not look", "", cell(sweep.error), ""]
        elif not sweep.orphans:
            lines += [f"#### Sweep of {where}: nothing left behind", ""]
        else:
            found = [(code(o.type), code(o.arn), code(o.matched)) for o in sweep.orphans]
            lines += [f"#### Sweep of {where}: {len(sweep.orphans)} left behind", ""]
            lines += [*table(["type", "ARN", "found by"], found), ""]
    return lines
