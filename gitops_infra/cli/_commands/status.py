"""``gitops-infra status``: where a stack (or every stack) stands: the last deployment, whether it ran
HEAD, its lock and its GitOps layer."""

from __future__ import annotations

from ... import automation
from .._invocation import Fleet, Invocation, fleet_command, formats
from .._main import EXIT_ERROR, EXIT_OK, main
from .._render.status import print_status

__all__: list[str] = []


@main.command()
@fleet_command
@formats
def status(invocation: Invocation, fleet: Fleet) -> int:
    """Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock."""
    with invocation.activity("Reading the status of"):
        if fleet.every:
            stacks = fleet.stacks(invocation)
            found = automation.status_all(
                stacks, options=invocation.options(), parallel=fleet.parallel, shard=fleet.shard
            )
        else:
            found = (automation.status(invocation.stack, options=invocation.options()),)
    invocation.emit(found if fleet.every else found[0], lambda out: print_status(out, found))
    return EXIT_ERROR if any(s.error is not None for s in found) else EXIT_OK
