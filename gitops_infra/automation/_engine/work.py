"""The engine work the operations share: a preview, an ``up``, and the result of what they recorded.

``preview``, ``destroy --preview-only`` and a rollback preview all run :func:`preview_work`; ``up``,
``rollback_to_commit`` and ``promote`` all run :func:`up_work`; a refresh and a destroy build their result
with :func:`recorded`, from what the stack's history (:mod:`gitops_infra.automation._state.history`) recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pulumi import automation as auto

from ...policy import resolve_policy_packs
from ...redaction import SECRET
from .._state.engine_switch import refuse_engine_switch
from .._state.history import latest_deployment
from .._state.target import StackTarget
from ..results.deployments import PreviewResult, RecordedResult, Step, UpResult
from .runner import EngineEvents
from .streamed import Streamed, message_flags, policy_flags, run_command, run_preview

__all__ = ["mask_outputs", "preview_work", "recorded", "up_work"]


def mask_outputs(outputs: Mapping[str, auto.OutputValue]) -> dict[str, Any]:
    """Stack outputs as plain values, with every secret one replaced by ``SECRET``."""
    return {key: SECRET if out.secret else out.value for key, out in outputs.items()}


Recorded = TypeVar("Recorded", bound=RecordedResult)


def recorded(
    kind: type[Recorded], target: StackTarget, pulumi_stack: auto.Stack, streamed: Streamed
) -> Recorded:
    """The result of an operation just recorded in ``pulumi_stack``'s history (a refresh, a destroy)."""
    latest = latest_deployment(target, pulumi_stack)
    return kind(stack=target.stack, changes=streamed.changes, version=latest.version, commit=latest.commit)


def _step(metadata: auto.StepEventMetadata) -> Step:
    return Step(urn=metadata.urn, op=metadata.op.value, type=metadata.type, keys=tuple(metadata.keys or ()))


def preview_work(
    stack: str, command: str, *flags: str
) -> Callable[[auto.Stack, EngineEvents], PreviewResult]:
    """The engine work of a preview (of ``up``, ``destroy`` or a rollback): ``pulumi <command> <flags>``,
    collecting every step that is not a no-op."""

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> PreviewResult:
        steps: list[Step] = []  # per attempt: a retried one starts afresh

        def collect(event: auto.EngineEvent) -> None:
            pre = event.resource_pre_event
            if pre is not None and pre.metadata.op != auto.OpType.SAME:
                steps.append(_step(pre.metadata))

        changes = run_preview(pulumi_stack, events, collect, command, *flags)
        return PreviewResult(stack=stack, changes=changes, steps=tuple(steps))

    return work


def up_work(
    target: StackTarget,
    *,
    message: str | None = None,
    policy_packs: Sequence[str] = (),
    refresh: bool = False,
    switching: bool = False,
) -> Callable[[auto.Stack, EngineEvents], UpResult]:
    """The engine work of ``up``, shared with ``rollback_to_commit``, ``promote`` and ``switch_engine``;
    refused before it starts when the stack would change GitOps engines in one update
    (:mod:`.._state.engine_switch`), unless ``switching``: the old engine has let go of the fleet."""
    if not switching:
        refuse_engine_switch(target)
    packs = resolve_policy_packs(policy_packs)
    flags = [*message_flags(message), *policy_flags(packs)]
    if refresh:
        flags.append("--refresh")

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> UpResult:
        streamed = run_command(pulumi_stack, events, "up", *flags)
        latest = latest_deployment(target, pulumi_stack)
        outputs = streamed.outputs if streamed.outputs is not None else mask_outputs(pulumi_stack.outputs())
        return UpResult(
            stack=target.stack,
            changes=streamed.changes,
            outputs=outputs,
            version=latest.version,
            commit=latest.commit,
        )

    return work
