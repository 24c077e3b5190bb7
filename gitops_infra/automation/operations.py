"""The stack operations: ``preview``, ``up``, ``refresh`` and ``history``.

Each takes a stack name, a :class:`~gitops_infra.automation.StackOptions` and a few keywords of its
own, runs the real engine through :mod:`gitops_infra.automation._engine.runner`, and returns a frozen result.
"""

from __future__ import annotations

from collections.abc import Sequence

from pulumi import automation as auto

from ..policy import resolve_policy_packs
from ._engine.runner import EngineEvents, run_engine
from ._engine.streamed import message_flags, policy_flags, run_command
from ._engine.work import preview_work, recorded, up_work
from ._state.history import deployments
from ._state.target import StackTarget
from .options import StackOptions
from .promotion import require_promoted_on
from .results.deployments import Deployment, PreviewResult, RefreshResult, UpResult

__all__ = ["history", "preview", "refresh", "up"]


def preview(
    stack: str,
    *,
    options: StackOptions | None = None,
    refresh: bool = False,
    policy_packs: Sequence[str] = (),
    create: bool = False,
) -> PreviewResult:
    """Show what ``up`` would change, without changing anything.

    ``refresh`` reads the real state of every resource first; ``policy_packs`` are CrossGuard policy pack
    directories to enforce, or ``gitops_infra.policy.POLICY_PACK`` for the bundled one; ``create`` creates
    the stack if it does not exist yet.

    Example::

        result = preview("dev")
        if result.has_changes:
            for step in result.steps:
                print(step.op, step.urn, step.keys)
    """
    target = StackTarget.resolve(stack, options)
    packs = resolve_policy_packs(policy_packs)  # once, before the engine: not again on each lock retry

    flags = [*(["--refresh"] if refresh else []), *policy_flags(packs)]
    return run_engine(target, "preview", preview_work(stack, "preview", *flags), create=create)


def up(
    stack: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
    policy_packs: Sequence[str] = (),
    refresh: bool = False,
    create: bool = False,
    require_promoted_from: str | None = None,
) -> UpResult:
    """Apply the program to the stack and record the git commit it ran from.

    ``require_promoted_from`` is a prod pipeline's guard: the work tree's commit must have a successful
    update on that stack, or nothing runs (``PromotionError``, see
    :func:`~gitops_infra.automation.require_promoted`).

    Example::

        result = up("dev", message="deploy from CI")
        print(result.version, result.commit, result.outputs["clusterName"])
        up("prod", require_promoted_from="dev")
    """
    target = StackTarget.resolve(stack, options)
    if require_promoted_from is not None:
        require_promoted_on(target, require_promoted_from, options)
    work = up_work(target, message=message, policy_packs=policy_packs, refresh=refresh)
    return run_engine(target, "up", work, create=create)


def refresh(stack: str, *, options: StackOptions | None = None, message: str | None = None) -> RefreshResult:
    """Read the real state of every resource and write it into the stack's state.

    Use :func:`~gitops_infra.automation.detect_drift` to look without writing.

    Example::

        result = refresh("dev")
        print(result.changes)  # e.g. {"same": 3, "update": 1}
    """
    target = StackTarget.resolve(stack, options)

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> RefreshResult:
        streamed = run_command(pulumi_stack, events, "refresh", *message_flags(message))
        return recorded(RefreshResult, target, pulumi_stack, streamed)

    return run_engine(target, "refresh", work)


def history(stack: str, *, options: StackOptions | None = None) -> tuple[Deployment, ...]:
    """The stack's deployments, newest first, each with the git commit it ran from.

    Example::

        for d in history("prod"):
            print(d.version, d.kind, d.result, d.commit, d.message)
    """
    return deployments(StackTarget.resolve(stack, options))
