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
    PolicyViolation,
    PolicyViolationError,
    StackLockedError,
    StackNotFoundError,
)
from .workspace import INSTALL_HINT, Workspace, safe_url

__all__ = ["run"]

T = TypeVar("T")

LOCK_POLL_SECONDS = 0.5
_PLUGIN_MISSING = re.compile(
    r"no resource plugin '[^']+' found|could not find (?:a )?plugin|plugin .* not found"
)
# The engine's own lines start with "error: "; the rest of stderr is the program's and the plugins' noise.
_ENGINE_ERROR_LINE = re.compile(r"^\s*error: (.*)$")
_OTHER_DIAGNOSTIC = re.compile(r"^\s*(?:warning|info|debug): ")
_TRACEBACK = "Traceback (most recent call last):"
# How pulumi.automation's CommandError renders the failed command.
_COMMAND_TEXT = re.compile(r"\n code: -?\d+\n stdout: (?P<stdout>.*)\n stderr: (?P<stderr>.*)\Z", re.DOTALL)
# Said after any program failure; only worth showing when there is nothing more specific.
_GENERIC_FAILURE = "an unhandled error occurred"
# The engine's crash and integrity reports ("This is a bug!") carry the cause in a field of their own,
# followed by a Go stack trace whose lines say nothing to the user.
_BUG_HEADLINE = re.compile(r"^\s*(?:error: )?(The Pulumi CLI encountered an? .*)$")
_REPORT_FIELD = re.compile(r"^\s*(Panic|Error):\s+(\S.*?)\s*$")
_STACK_FRAME = re.compile(r"^\s|^goroutine \d+|\.go:\d+|^[\w./*()-]+\(.*\)$|^={3,}")


def _error_blocks(text: str) -> list[list[str]]:
    """Each ``error:`` line of the engine's output with the lines that continue it."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if match := _ENGINE_ERROR_LINE.match(line):
            current = [match.group(1).strip()]
            blocks.append(current)
        elif current is not None and line.strip() and not _OTHER_DIAGNOSTIC.match(line):
            current.append(line.strip())
        else:
            current = None
    return blocks


def _summary(block: list[str]) -> str:
    if _TRACEBACK in block:
        # A Python program's exception: what failed, and the exception line, not the stack.
        return f"{block[0]} {block[-1]}"
    return " ".join(block)


def _bug_report(text: str) -> list[str]:
    """From an engine crash or integrity report: its headline and its ``Panic:``/``Error:`` field."""
    lines = text.splitlines()
    headline = next((m.group(1) for line in lines if (m := _BUG_HEADLINE.match(line))), None)
    fields = [f"{m.group(1)}: {m.group(2)}" for line in lines if (m := _REPORT_FIELD.match(line))]
    return [headline, *fields] if headline and fields else fields


def _engine_message(exc: upstream.CommandError) -> str:
    """What the engine said went wrong, from the text of a failed command, deduplicated."""
    # pulumi.automation keeps only the command's text (code, stdout, stderr) on the exception.
    text = str(exc)
    if streams := _COMMAND_TEXT.search(text):
        text = f"{streams['stderr']}\n{streams['stdout']}"
    if report := _bug_report(text):
        return " ".join(report)
    found = list(dict.fromkeys(_summary(block) for block in _error_blocks(text)))
    specific = [message for message in found if not message.startswith(_GENERIC_FAILURE)]
    if specific or found:
        return "; ".join(specific or found)
    # Nothing the engine marked: its last line that is not part of a Go stack trace.
    meaningful = [
        line.strip() for line in text.splitlines() if line.strip() and not _STACK_FRAME.search(line)
    ]
    return meaningful[-1] if meaningful else type(exc).__name__


def _violation(event: auto.PolicyEvent) -> PolicyViolation:
    # The engine sends the policy's description and the violation's own message as two lines.
    lines = [line.strip() for line in event.message.strip().splitlines() if line.strip()]
    return PolicyViolation(
        pack=event.policy_pack_name,
        policy=event.policy_name,
        level=event.enforcement_level,
        urn=event.resource_urn or None,
        message=lines[-1] if lines else event.policy_name,
    )


def _locked(ws: Workspace) -> StackLockedError:
    return StackLockedError(
        f"stack {ws.stack!r} is locked by another update; wait for it to finish, pass a lock_wait to "
        "retry, or, if that update died, run `gitops-infra recover` (recover() in Python)",
        stack=ws.stack,
    )


def _translate(exc: Exception, ws: Workspace, operation: str) -> GitOpsInfraError:
    if isinstance(exc, upstream.StackNotFoundError):
        return StackNotFoundError(
            f"stack {ws.stack!r} not found on {safe_url(ws.backend_url)}; check the name, or create it with "
            "`gitops-infra up --create` (create=True in Python)",
            stack=ws.stack,
        )
    if isinstance(exc, upstream.ConcurrentUpdateError):
        return _locked(ws)
    if isinstance(exc, upstream.CommandError):
        message = _engine_message(exc)
        violations = [_violation(event) for event in ws.policy_events]
        if any(v.level == "mandatory" for v in violations):
            listed = "; ".join(
                f"{v.pack}/{v.policy} on {v.urn or 'the stack'}: {v.message}"
                for v in violations
                if v.level == "mandatory"
            )
            count = sum(v.level == "mandatory" for v in violations)
            return PolicyViolationError(
                f"{operation} on stack {ws.stack!r} blocked by {count} mandatory policy "
                f"violation{'s' if count != 1 else ''}: {listed}",
                stack=ws.stack,
                operation=operation,
                violations=violations,
                engine_message=message,
            )
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


# The file backend lists a stack's lock files, then reads each: when the holder releases its lock in
# between, the read fails with "no such file" instead of "currently locked". It is the same contention.
_LOCK_RACE = re.compile(r"\.pulumi/locks/\S+: no such file or directory")


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
        ws.policy_events.clear()
        try:
            # Without ``create``, the operation's own ``--stack`` finds a missing stack: no select call.
            workspace = ws.local_workspace(select=create)
            stack = (
                auto.Stack.create_or_select(ws.stack, workspace)
                if create
                else auto.Stack.select(ws.stack, workspace)
            )
            return work(stack)
        except upstream.CommandError as exc:
            locked = isinstance(exc, upstream.ConcurrentUpdateError) or _LOCK_RACE.search(str(exc))
            if not locked:
                raise _translate(exc, ws, operation) from exc
            if time.monotonic() >= deadline:
                raise _locked(ws) from exc
            time.sleep(LOCK_POLL_SECONDS)
        except upstream.InvalidVersionError as exc:
            raise _translate(exc, ws, operation) from exc
