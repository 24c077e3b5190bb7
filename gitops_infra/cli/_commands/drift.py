"""``gitops-infra drift``: compare a stack (or every stack) with reality, in both layers, writing nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ... import automation
from ...errors import GitOpsInfraError
from .._invocation import Fleet, Invocation, fleet_command, formats, lock_wait_option
from .._main import drift_exit, fleet_drift_exit, main
from .._render.drift import print_drift, print_fleet_drift

if TYPE_CHECKING:
    from ...automation.results import Layer

__all__: list[str] = []


def _checked_layers(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[Layer, ...]:
    from ...automation.results import Layer

    try:
        return Layer.parse(value)
    except GitOpsInfraError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command()
@fleet_command
@formats
@lock_wait_option
@click.option(
    "--layers",
    default="iac,gitops",
    show_default=True,
    callback=_checked_layers,
    help="What to check: iac (the resources, by a refresh preview), gitops (Flux's objects), or both.",
)
def drift(invocation: Invocation, fleet: Fleet, lock_wait: float, layers: tuple[Layer, ...]) -> int:
    """Compare STACK (or --all stacks) with reality in both layers, writing nothing; exit 2 when either
    drifted: a resource differs from the state (iac), or the GitOps engine is not healthy (gitops).

    The GitOps layer reads the stack's Flux objects, and every Kustomization and HelmRelease that is not
    Ready or is suspended, through the stack's own kubeconfig. A cluster that cannot be reached is an
    error of that layer; the IaC answer is still given.

    With --all, one line per stack; a stack that cannot be checked is reported and the others go on
    (exit 1 when one errored and none drifted). A stack an update holds is a lock error, unless
    --lock-wait gives the update time to finish.
    """
    options = invocation.options(lock_wait=lock_wait)
    if fleet.every:
        stacks = fleet.stacks(invocation)
        with invocation.activity("Checking drift of"):
            found = automation.detect_drift_all(
                stacks, options=options, parallel=fleet.parallel, shard=fleet.shard, layers=layers
            )
        invocation.emit(found, lambda out: print_fleet_drift(out, found))
        return fleet_drift_exit(found)
    with invocation.activity("Checking drift of"):
        report = automation.detect_drift(invocation.stack, options=options, layers=layers)
    invocation.emit(report, lambda out: print_drift(out, invocation.stack, report))
    return drift_exit(report)
