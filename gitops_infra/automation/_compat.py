"""The one door to Pulumi's private internals. Nothing else in gitops_infra imports a ``_`` name from pulumi.

Each item says what it is for and which upstream change would break it. The unit tests run against the
newest ``pulumi`` setup installs and against the lowest one ``pyproject.toml`` allows (``make
test-floor``), so a break in either shows here first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pulumi.automation import CommandResult, EngineEvent, LocalWorkspace, Stack
from pulumi.automation import _stack as upstream_stack
from pulumi.runtime import rpc
from pulumi.runtime.settings import SETTINGS
from pulumi.runtime.sync_await import _ensure_event_loop

__all__ = ["SECRET_SIG", "SECRET_SIG_KEY", "drain_event_loop", "run_pulumi_cmd", "run_streamed"]

SECRET_SIG_KEY: str = rpc._special_sig_key
"""The key that marks a special value (a secret, an asset) in the engine's property payloads.

Breaks if ``pulumi.runtime.rpc`` renames ``_special_sig_key``; the value itself is part of Pulumi's
wire protocol and does not change.
"""
SECRET_SIG: str = rpc._special_secret_sig
"""The value of ``SECRET_SIG_KEY`` for a secret. Breaks if ``rpc`` renames ``_special_secret_sig``."""


def drain_event_loop() -> None:
    """Run what a failed mocked run left on the event loop to its end, and drop its failed outputs.

    A program that fails under ``pulumi.runtime.test`` stops at its first error, but its other
    registrations are still tasks on the event loop every run in this process shares. Left there, they
    would run during the next run and fail it with this one's error. Under mocks they finish at once,
    so they are run out rather than cancelled (cancelled, they left the next run waiting forever).

    Breaks if ``pulumi.runtime.sync_await._ensure_event_loop`` is renamed or stops returning the loop
    ``_sync_await`` runs on, or if ``SETTINGS.outputs``/``SETTINGS.lock`` (failed outputs kept "to pick
    up at program exit") change shape.
    """
    loop = _ensure_event_loop()  # type: ignore[no-untyped-call]
    if loop.is_running():
        return
    while pending := [task for task in asyncio.all_tasks(loop) if not task.done()]:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    with SETTINGS.lock:
        failed = list(SETTINGS.outputs)
        SETTINGS.outputs.clear()
    for task in failed:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it as never retrieved


def run_pulumi_cmd(workspace: LocalWorkspace, args: list[str]) -> Any:
    """Run one ``pulumi`` command in ``workspace``, with its environment and engine; return its result.

    ``LocalWorkspace`` has no public way to run a command it does not wrap (a masked ``stack output``).
    Breaks if ``LocalWorkspace._run_pulumi_cmd_sync`` is renamed or changes its signature.
    """
    return workspace._run_pulumi_cmd_sync(args)


def run_streamed(stack: Stack, args: list[str], on_event: Callable[[EngineEvent], None]) -> CommandResult:
    """Run ``pulumi <args> --stack <stack>`` with its engine events streamed to ``on_event``; nothing else.

    ``Stack.up``, ``refresh`` and ``destroy`` follow their command with ``pulumi stack output`` and
    ``pulumi stack history``, whose answers the events already carried; this is their command alone, set
    up the way they set it up. The events are all delivered when it returns: the engine waits for the
    event stream to be acknowledged before it exits. Breaks if ``Stack._setup_event_log`` (the gRPC or
    log-file event stream, by engine version), ``Stack._run_pulumi_cmd_sync`` or
    ``pulumi.automation._stack._cleanup`` are renamed or change their signatures.
    """
    log, watcher, stop, temp_dir, server = stack._setup_event_log(
        args[0], on_event, stack.workspace.pulumi_version
    )
    try:
        result: CommandResult = stack._run_pulumi_cmd_sync([*args, "--event-log", log])
    finally:
        upstream_stack._cleanup(temp_dir, watcher, stop, None, server)
    return result
