"""``destroy``: delete every resource of a stack, recorded like an update; a prod stack must be named.

The stack itself, its config and its history stay, as with ``pulumi destroy``: a later ``up`` builds it
again, and ``history`` shows the destroy with the commit it ran from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, overload

from pulumi import automation as auto

from ..checks import PROD_ENVIRONMENTS
from ..errors import ConfirmationRequiredError
from ._engine import EngineEvents, run_engine
from ._stack_files import read_mapping
from ._streamed import message_flags, run_command
from ._target import StackTarget
from ._work import preview_work, recorded
from .options import EventCallback, StackOptions
from .results import DestroyResult, PreviewResult

__all__ = ["destroy", "prod_environment"]


def prod_environment(target: StackTarget) -> str | None:
    """The prod name that makes ``target`` a prod stack, or ``None``.

    A stack is prod when its config's ``<project>:environment.name``, or else its own name, is one of
    ``PROD_ENVIRONMENTS`` (the names the policy pack treats as prod).
    """
    settings = target.project.stack_settings(target.stack_name)
    config: object = {}
    if settings is not None:
        config = read_mapping(settings, stack=target.stack).get("config") or {}
    environment = config.get(f"{target.project.name}:environment") if isinstance(config, Mapping) else None
    name = environment.get("name") if isinstance(environment, Mapping) else None
    for candidate in (name, target.stack_name.name):
        if isinstance(candidate, str) and candidate.lower() in PROD_ENVIRONMENTS:
            return candidate
    return None


@overload
def destroy(
    stack: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    confirm: str | None = ...,
    preview_only: Literal[False] = ...,
) -> DestroyResult: ...


@overload
def destroy(
    stack: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    confirm: str | None = ...,
    preview_only: Literal[True],
) -> PreviewResult: ...


def destroy(
    stack: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
    confirm: str | None = None,
    preview_only: bool = False,
) -> DestroyResult | PreviewResult:
    """Delete every resource of ``stack``; with ``preview_only``, only show what would be deleted.

    A prod stack (see :func:`prod_environment`) is destroyed only when ``confirm`` repeats its name;
    otherwise ``ConfirmationRequiredError`` is raised before anything runs. A ``confirm`` that names
    another stack is refused for any stack. A preview needs no confirmation.

    Example::

        print(destroy("dev", preview_only=True).changes)   # {"delete": 12}
        destroy("dev", message="tear down the review environment")
        destroy("prod", confirm="prod")
    """
    target = StackTarget.resolve(stack, options)
    if preview_only:

        def run_preview(pulumi_stack: auto.Stack, on_event: EventCallback) -> auto.PreviewResult:
            return pulumi_stack.preview_destroy(on_event=on_event)

        return run_engine(target, "destroy", preview_work(stack, run_preview))
    if confirm is not None and confirm != stack:
        # A name given and wrong is a mix-up (the wrong terminal, the wrong variable): never a go-ahead.
        raise ConfirmationRequiredError(
            f"confirm names {confirm!r}, but the stack to destroy is {stack!r}; nothing was destroyed",
            stack=stack,
        )
    prod = prod_environment(target)
    if prod is not None and confirm != stack:
        raise ConfirmationRequiredError(
            f"stack {stack!r} is prod (environment {prod!r}): destroying it needs its name repeated, "
            f"confirm={stack!r} in Python or `--confirm {stack}` on the command line",
            stack=stack,
        )

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> DestroyResult:
        streamed = run_command(pulumi_stack, events, "destroy", *message_flags(message))
        return recorded(DestroyResult, target, pulumi_stack, streamed)

    return run_engine(target, "destroy", work)
