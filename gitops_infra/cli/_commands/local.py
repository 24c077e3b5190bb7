"""``gitops-infra local up|down``: the whole loop on your laptop (:mod:`gitops_infra.local.demo`).

``make demo`` and ``make demo-down`` run these. The harness loads only when a command runs: it needs the
``local`` extra, whose absence is a clear ``MissingExtraError``, not a traceback.
"""

from __future__ import annotations

from pathlib import Path

import click

from ...errors import GitOpsInfraError
from .._main import CliError, main

__all__: list[str] = []

_checkout = click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The gitops-infra checkout, set up by `make setup` (default: the current directory).",
)


@main.group(name="local")
def local_group() -> None:
    """A local Kubernetes API, Flux and an SSH fleet repository on loopback, running the local stack."""


@local_group.command(name="up")
@_checkout
def local_up(cwd: Path | None) -> None:
    """Start the local cluster and fleet server, `gitops-infra up local`, then show drift (make demo)."""
    _run("up", cwd)


@local_group.command(name="down")
@_checkout
def local_down(cwd: Path | None) -> None:
    """Stop exactly what `local up` started, and remove .demo/ (make demo-down)."""
    _run("down", cwd)


def _run(action: str, cwd: Path | None) -> None:
    try:
        from ...local import demo

        (demo.up if action == "up" else demo.down)(cwd or Path.cwd())
    except GitOpsInfraError as exc:  # the `local` extra is missing, above all
        raise CliError(type(exc).__name__, str(exc)) from exc
