"""Each engine command run alone, its result read from its events: ``up``, ``refresh``, ``destroy`` and
the previews.

``pulumi.automation`` follows each of these commands with ``pulumi stack output`` and ``pulumi stack
history --page-size 1``: two more CLI starts (bench/ measures their cost), for answers the engine has
already streamed. The summary event holds the resource changes, and the stack resource's outputs event
holds the stack outputs, each secret one masked as the engine's display masks it. So the command runs
alone, and its result is read from its events; the version and commit it was recorded under come from
:func:`~gitops_infra.automation._state.history.latest_deployment`. The previews run the same way, so that
every command's events reach us by one road
(:attr:`~gitops_infra.automation._engine.runner.EngineEvents.log_file`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pulumi import automation as auto

from ...errors import OperationFailedError
from ..options import EventCallback
from ..results.deployments import changes_of
from .compat import run_streamed
from .runner import EngineEvents
from .wire import STACK_TYPE, masked

__all__ = ["Streamed", "run_command", "run_preview"]

EXEC_KIND = "auto.local"
"""How ``pulumi.automation`` tags the commands a local workspace runs (``exec.kind`` in the history)."""


@dataclass(frozen=True)
class Streamed:
    """What the engine streamed about one update, refresh or destroy."""

    changes: dict[str, int]
    """The resource changes, by operation (the summary event's)."""
    outputs: dict[str, Any] | None
    """The stack outputs after it, every secret value ``SECRET``; ``None`` when none were streamed (a
    destroy removes the stack resource)."""


def run_command(pulumi_stack: auto.Stack, events: EngineEvents, command: str, *flags: str) -> Streamed:
    """Run ``pulumi <command> --yes --skip-preview <flags>`` on ``pulumi_stack``; return what its events said.

    One whose summary never came (an old engine's log-file stream read too late, or an event log that
    could not be written) is asked for its newest history entry instead.
    """
    outputs: dict[str, Any] | None = None

    def collect(event: auto.EngineEvent) -> None:
        nonlocal outputs
        done = event.res_outputs_event
        if done is not None and done.metadata.type == STACK_TYPE and done.metadata.new is not None:
            outputs = masked(done.metadata.new.outputs or {})

    changes = _run(pulumi_stack, events, collect, [command, "--yes", "--skip-preview", *flags])
    if changes is None:
        newest = pulumi_stack.history(page_size=1, show_secrets=False)
        changes = changes_of((newest[0].resource_changes or {}) if newest else {})
    return Streamed(changes=changes, outputs=outputs)


def run_preview(
    pulumi_stack: auto.Stack, events: EngineEvents, collect: EventCallback, command: str, *flags: str
) -> dict[str, int]:
    """Run the preview ``pulumi <command> <flags>`` on ``pulumi_stack`` (``preview``, ``refresh
    --preview-only``, ``destroy --preview-only``), its events fed to ``collect``; the changes it counted.

    A preview records nothing to fall back on, so one whose summary never came (its event log could not
    be written: a full disk) is an error, not an empty result: a drift check would say "no drift".

    A preview writes nothing, the stack's settings file included: the engine gets a private copy of it
    (:func:`~gitops_infra.automation._engine.runner.settings_copy`), so every preview leaves the work tree
    as it was. Every detect-only command is one of these previews; the other commands they run (``stack
    history``, ``stack output``, ``stack export``) never load the stack's settings.
    """
    private = ["--config-file", str(events.settings_copy)] if events.settings_copy is not None else []
    changes = _run(pulumi_stack, events, collect, [command, *flags, *private])
    if changes is None:
        raise OperationFailedError(
            f"{events.operation} on stack {pulumi_stack.name!r} ended without the engine's summary of its "
            "changes, so its result cannot be told; check that the disk holding TMPDIR has room, and retry",
            stack=pulumi_stack.name,
            operation=events.operation,
        )
    return changes


def _run(
    pulumi_stack: auto.Stack, events: EngineEvents, collect: EventCallback, args: list[str]
) -> dict[str, int] | None:
    """Run ``pulumi <args>`` with its events fed to ``collect`` by the attempt's road (live, or from a file:
    :attr:`EngineEvents.log_file`); the changes its summary event counted, ``None`` if none came."""
    changes: dict[str, int] | None = None

    def summarise(event: auto.EngineEvent) -> None:
        nonlocal changes
        if event.summary_event is not None:
            changes = changes_of(event.summary_event.resource_changes or {})
        collect(event)

    run_streamed(
        pulumi_stack, [*args, "--exec-kind", EXEC_KIND], events.callback(summarise), log_file=events.log_file
    )
    return changes


def message_flags(message: str | None) -> list[str]:
    """``--message <message>``, when there is one."""
    return ["--message", message] if message else []


def policy_flags(packs: Sequence[str]) -> list[str]:
    """``--policy-pack <dir>`` for each policy pack directory."""
    return [flag for pack in packs for flag in ("--policy-pack", pack)]
