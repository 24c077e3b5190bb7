"""``destroy``: delete every resource of a stack, recorded like an update; a prod stack must be named.

The stack itself, its config and its history stay, as with ``pulumi destroy``: a later ``up`` builds it
again, and ``history`` shows the destroy with the commit it ran from.
"""

from __future__ import annotations

import json
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
    """Why ``target`` is a prod stack (``environment 'prod'``), or ``None`` when it is not.

    A stack is prod when its ``environment.name``, or else its own name, is one of
    ``PROD_ENVIRONMENTS`` (the names the policy pack treats as prod). ``environment`` is read as Pulumi
    reads it: ``<project>:environment`` or a bare ``environment`` (a bare key is the project's), in
    ``Pulumi.<stack>.yaml`` and else in the project's own ``config:`` defaults, as a mapping or as the
    JSON text ``pulumi config set`` writes without ``--path``. A value that is there but cannot be read (a
    secret, text that is not JSON, a name that is not text) makes the stack prod: a destroy fails closed,
    as the policy pack does.
    """
    for environment in _environment_values(target):
        reason = _prod_reason(environment)
        if reason is not None:
            return reason
    if target.stack_name.name.lower() in PROD_ENVIRONMENTS:
        return f"stack name {target.stack_name.name!r}"
    return None


def _prod_reason(environment: object) -> str | None:
    if isinstance(environment, str):
        try:
            environment = json.loads(environment)
        except ValueError:
            return "its environment cannot be read: a text value that is not JSON"
    if not isinstance(environment, Mapping):
        return "its environment cannot be read: not a mapping"
    if "secure" in environment:
        return "its environment cannot be read: a secret"
    name = environment.get("name")
    if name is not None and not isinstance(name, str):
        return "its environment cannot be read: environment.name is not text"
    if isinstance(name, str) and name.lower() in PROD_ENVIRONMENTS:
        return f"environment {name!r}"
    return None


def _environment_values(target: StackTarget) -> list[object]:
    """The ``environment`` config values as written: the stack's own, else the project's defaults."""
    keys = (f"{target.project.name}:environment", "environment")
    settings = target.project.stack_settings(target.stack_name)
    stack_config = read_mapping(settings, stack=target.stack).get("config") if settings is not None else None
    if stack_config is not None and not isinstance(stack_config, Mapping):
        return [stack_config]  # a config that is not a mapping cannot be read: prod
    found = [stack_config[key] for key in keys if stack_config is not None and key in stack_config]
    if found:
        return found
    project_config = target.project.settings.get("config")
    if not isinstance(project_config, Mapping):
        return []
    return [
        declared.get("value", declared.get("default"))
        for key in keys
        if isinstance(declared := project_config.get(key), Mapping)
        and ("value" in declared or "default" in declared)
    ]


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
            f"stack {stack!r} is prod ({prod}): destroying it needs its name repeated, "
            f"confirm={stack!r} in Python or `--confirm {stack}` on the command line",
            stack=stack,
        )

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> DestroyResult:
        streamed = run_command(pulumi_stack, events, "destroy", *message_flags(message))
        return recorded(DestroyResult, target, pulumi_stack, streamed)

    return run_engine(target, "destroy", work)
