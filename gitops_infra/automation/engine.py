"""The one boundary where ``pulumi.automation`` is called and its errors become ours.

Every operation runs its engine work through :func:`run`, which selects (or creates) the stack, retries
while the stack is locked if the caller opted in, and translates upstream exceptions with
``raise ... from exc``. Nothing else in the package catches ``pulumi.automation`` errors.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TypeVar

from pulumi import automation as auto
from pulumi.automation import errors as upstream

from ..errors import (
    EngineNotFoundError,
    GitOpsInfraError,
    OperationFailedError,
    PluginMissingError,
    StackLockedError,
    StackNotFoundError,
)
from .workspace import INSTALL_HINT, Workspace

__all__ = ["run"]

T = TypeVar("T")

LOCK_POLL_SECONDS = 0.5
_PLUGIN_MISSING = re.compile(
    r"no resource plugin '[^']+' found|could not find (?:a )?plugin|plugin .* not found"
)
# The engine's own lines start with "error: "; the rest of stderr is the program's and the plugins' noise.
_ENGINE_ERROR_LINE = re.compile(r"^\s*error: (.*)$", re.MULTILINE)


def _engine_message(exc: upstream.CommandError) -> str:
    stderr = getattr(exc, "stderr", "") or ""
    stdout = getattr(exc, "stdout", "") or ""
    lines = _ENGINE_ERROR_LINE.findall(stderr) or _ENGINE_ERROR_LINE.findall(stdout)
    if lines:
        return "; ".join(line.strip() for line in lines)
    tail = (stderr or stdout).strip().splitlines()
    return tail[-1].strip() if tail else str(exc).strip()


def _translate(exc: Exception, ws: Workspace, operation: str) -> GitOpsInfraError:
    if isinstance(exc, upstream.StackNotFoundError):
        return StackNotFoundError(
            f"stack {ws.stack!r} not found on {ws.backend_url}; create it first (for example `up` with "
            "create=True) or check the stack name",
            stack=ws.stack,
        )
    if isinstance(exc, upstream.ConcurrentUpdateError):
        return StackLockedError(
            f"stack {ws.stack!r} is locked by another update; wait for it to finish, pass a lock_wait to "
            "retry, or run `pulumi cancel` if that update is dead",
            stack=ws.stack,
        )
    if isinstance(exc, upstream.CommandError):
        message = _engine_message(exc)
        if _PLUGIN_MISSING.search(message):
            return PluginMissingError(f"{operation} on stack {ws.stack!r} needs a missing plugin: {message}")
        return OperationFailedError(
            f"{operation} on stack {ws.stack!r} failed: {message}",
            stack=ws.stack,
            operation=operation,
            engine_message=message,
        )
    if isinstance(exc, upstream.InvalidVersionError):
        return EngineNotFoundError(f"{exc}; {INSTALL_HINT}")
    raise exc


def run(
    ws: Workspace,
    operation: str,
    work: Callable[[auto.Stack], T],
    *,
    create: bool = False,
) -> T:
    """Run ``work`` on the selected stack and return its result, translating engine errors.

    ``create`` creates the stack (with the workspace's secrets provider) when it does not exist yet.
    While another update holds the lock, retries for up to ``ws.lock_wait`` seconds.
    """
    deadline = time.monotonic() + ws.lock_wait
    while True:
        try:
            workspace = ws.local_workspace()
            stack = (
                auto.Stack.create_or_select(ws.stack, workspace)
                if create
                else auto.Stack.select(ws.stack, workspace)
            )
            return work(stack)
        except upstream.ConcurrentUpdateError as exc:
            if time.monotonic() >= deadline:
                raise _translate(exc, ws, operation) from exc
            time.sleep(LOCK_POLL_SECONDS)
        except (upstream.CommandError, upstream.InvalidVersionError) as exc:
            raise _translate(exc, ws, operation) from exc
