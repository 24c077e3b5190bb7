"""``gitops-infra destroy``: delete every resource of a stack, its cluster drained first and the AWS
resources left behind swept for after."""

from __future__ import annotations

from datetime import timedelta

import click

from ... import automation
from ...errors import OperationFailedError
from .._invocation import Invocation, command, formats, lock_wait_option, message_option, positive_duration
from .._main import EXIT_OK, EXIT_PENDING, main
from .._output import echo
from .._render.destroy import (
    failed_destroy_markdown,
    print_destroy,
    print_destroy_preview,
    print_failed_destroy,
)
from .._render.progress import DrainPrinter

__all__: list[str] = []


@main.command()
@command
@formats
@click.option("--yes", "-y", is_flag=True, help="Destroy without asking.")
@click.option("--confirm", "confirm_name", metavar="STACK", help="Repeat a prod stack's name to destroy it.")
@click.option("--preview-only", is_flag=True, help="Only show what the drain and the destroy would delete.")
@click.option(
    "--no-drain",
    is_flag=True,
    help="Do not drain the stack's cluster first (AWS resources its objects made may be left behind).",
)
@click.option(
    "--drain-timeout",
    default="10m",
    show_default=True,
    callback=positive_duration,
    metavar="DURATION",
    help="How long the drain may take in all (a Go duration: 90s, 10m, 1h).",
)
@message_option
@lock_wait_option
def destroy(
    invocation: Invocation,
    yes: bool,
    confirm_name: str | None,
    preview_only: bool,
    no_drain: bool,
    drain_timeout: timedelta,
    message: str | None,
    lock_wait: float,
) -> int:
    """Delete every resource of STACK (its config and history stay). A prod stack needs --confirm STACK.

    A stack that made its cluster is drained first: Flux suspended and Argo CD's automated sync off,
    then its Ingresses and Gateways, LoadBalancer Services, what mounts its PersistentVolumeClaims, the
    claims, and Karpenter's nodes deleted and gone, so that the AWS controllers delete what they made
    for them. After the destroy,
    the AWS resources still tagged for the cluster are listed as orphans: exit 2 when there are any (or
    the sweep could not look). The sweep reads the cluster's account as the stack's AWS provider reaches
    it (aws:profile, then aws:assumeRoles). A destroy that fails is swept too: its findings come with the
    error (exit 1).
    """
    progress = not preview_only and not (invocation.json or invocation.markdown)
    options = invocation.options(lock_wait=lock_wait, progress=progress)
    timeout = drain_timeout.total_seconds()
    if preview_only:
        with invocation.activity("Previewing the destroy of"):
            preview = automation.destroy(
                invocation.stack,
                options=options,
                preview_only=True,
                drain=not no_drain,
                drain_timeout=timeout,
            )
        invocation.emit(preview, lambda out: print_destroy_preview(out, invocation.stack, preview))
        return EXIT_OK
    invocation.confirm(f"Delete every resource of stack {invocation.stack!r}?", yes)
    if no_drain:
        invocation.warn("--no-drain: the cluster is not drained; AWS resources its objects made may be left")
    on_drain = DrainPrinter(invocation.console) if progress else None
    try:
        with invocation.activity("Destroying"):
            result = automation.destroy(
                invocation.stack,
                options=options,
                message=message,
                confirm=confirm_name,
                drain=not no_drain,
                drain_timeout=timeout,
                on_drain=on_drain,
            )
    except OperationFailedError as exc:
        if exc.sweeps:  # the error itself follows, from the error boundary (with them in --json's)
            _failed_destroy(invocation, exc)
        raise
    invocation.emit(result, lambda out: print_destroy(out, result))
    return EXIT_OK if result.clean else EXIT_PENDING


def _failed_destroy(invocation: Invocation, exc: OperationFailedError) -> None:
    """What the sweep found after a destroy that failed: text, or the Markdown of a job summary."""
    if invocation.markdown:
        invocation.stdout_closed = not echo(failed_destroy_markdown(exc), nl=False)
    elif not invocation.json:
        print_failed_destroy(invocation.console, invocation.stack, exc.sweeps)
