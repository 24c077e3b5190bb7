"""The lines printed while the engine works: each finished resource step, and each object the drain
suspends, deletes and sees gone.

Each is handed to the library as a callback (``StackOptions.on_event``, ``destroy(on_drain=...)``), and
prints on the command's console as the events come.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pulumi import automation as auto
    from rich.console import Console

    from ... import automation

__all__ = ["DrainPrinter", "StepPrinter"]


class StepPrinter:
    """Prints one line per finished resource step, from the engine's event stream."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: auto.EngineEvent) -> None:
        done = event.res_outputs_event
        failed = event.res_op_failed_event
        diag = event.diagnostic_event
        # By value: importing pulumi.automation for one enum costs a fleet command a quarter second.
        if done is not None and done.metadata.op.value != "same" and _shown(done.metadata.type):
            meta = done.metadata
            self.console.print(f"  {meta.op.value:<8} {meta.type}  {meta.urn.rsplit('::', 1)[-1]}")
        elif failed is not None:
            self.console.print(f"  failed   {failed.metadata.urn}", style="red")
        elif diag is not None and diag.severity == "error":
            self.console.print(f"  error: {diag.message.strip()}", style="red")


def _shown(resource_type: str) -> bool:
    # The stack and provider resources are bookkeeping; `pulumi up` does not list them either.
    return resource_type != "pulumi:pulumi:Stack" and not resource_type.startswith("pulumi:providers:")


class DrainPrinter:
    """One line per object as the drain suspends, deletes and sees it gone."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: str, obj: automation.KubeObject) -> None:
        self.console.print(f"  drain: {event:<9} {obj}")
