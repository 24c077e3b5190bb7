"""The one boundary where ``pulumi.automation`` is called and its errors become ours.

Every operation runs its engine work through :func:`run_engine`, which selects (or creates) the stack, retries
while the stack is locked if the caller opted in, and translates upstream exceptions in one context
manager, :func:`map_engine_errors` (as httpx's ``map_httpcore_exceptions``), with ``raise ... from exc``.
Nothing else in the package catches ``pulumi.automation`` errors.

Each attempt gets its own :class:`EngineEvents`: the events it streams, and the policy findings among
them that explain a blocked update. Nothing of one run is kept on the shared, frozen ``StackTarget``.

Each attempt also gets a temp directory of its own (``TMPDIR`` for the engine, its plugins and the
program), removed when the attempt ends, with whatever they left there: see :func:`engine_temp_dir`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pulumi import automation as auto

from ...errors import (
    EngineNotFoundError,
    GitOpsInfraError,
    OperationFailedError,
    PluginMissingError,
    PolicyViolation,
    PolicyViolationError,
    StackLockedError,
    StackNotFoundError,
    WorkspaceError,
)
from .._cluster.readiness import AWAIT_FAILURE, not_ready_reasons
from .._state.target import INSTALL_HINT, StackTarget
from ..options import EventCallback

__all__ = [
    "EngineEvents",
    "engine_temp_dir",
    "locked_error",
    "map_engine_errors",
    "run_engine",
    "settings_copy",
]

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


def _engine_message(exc: auto.CommandError) -> str:
    """What the engine said went wrong, from the text of a failed command, deduplicated."""
    # pulumi.automation keeps only the command's text (code, stdout, stderr) on the exception.
    text = str(exc)
    # Each stream on its own, so that an error ending stderr does not run on into stdout's first line.
    streams = [s["stderr"], s["stdout"]] if (s := _COMMAND_TEXT.search(text)) else [text]
    text = "\n".join(streams)
    if report := _bug_report(text):
        return " ".join(report)
    blocks = [block for stream in streams for block in _error_blocks(stream)]
    found = list(dict.fromkeys(_summary(block) for block in blocks))
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


def locked_error(target: StackTarget) -> StackLockedError:
    return StackLockedError(
        f"stack {target.stack!r} is locked by another update; wait for it to finish, pass a lock_wait to "
        "retry, or, if that update died, run `gitops-infra recover` (recover() in Python)",
        stack=target.stack,
    )


def _not_ready(stack: auto.Stack | None, message: str) -> list[str]:
    """Why the objects the update waited for are not Ready, from the checkpoint (best effort)."""
    if stack is None or AWAIT_FAILURE not in message:
        return []
    try:
        return not_ready_reasons(stack.export_stack().deployment or {}, stack=stack.name)
    except (auto.CommandError, ValueError, TypeError):
        return []  # the engine's own message still stands


def _translate(
    exc: auto.CommandError, target: StackTarget, operation: str, events: EngineEvents
) -> GitOpsInfraError:
    """What a failed engine command means: a missing stack, a policy, a plugin, or the engine's message."""
    if isinstance(exc, auto.StackNotFoundError):
        # Creating it is the advice only once the backend is known to be the stack's: on any other, a
        # create deploys a second copy of what the stack already runs.
        return StackNotFoundError(
            f"stack {target.stack!r} not found on {target.backend.where()}; check the name, and that the "
            "stack's state is on that backend; if the stack is new, create it with `gitops-infra up "
            "--create` (create=True in Python)",
            stack=target.stack,
        )
    message = _engine_message(exc)
    violations = [_violation(event) for event in events.policy_events]
    mandatory = [v for v in violations if v.level == "mandatory"]
    if mandatory:
        listed = "; ".join(f"{v.pack}/{v.policy} on {v.urn or 'the stack'}: {v.message}" for v in mandatory)
        count = len(mandatory)
        return PolicyViolationError(
            f"{operation} on stack {target.stack!r} blocked by {count} mandatory policy "
            f"violation{'s' if count != 1 else ''}: {listed}",
            stack=target.stack,
            operation=operation,
            violations=violations,
            engine_message=message,
        )
    if _PLUGIN_MISSING.search(message):
        return PluginMissingError(f"{operation} on stack {target.stack!r} needs a missing plugin: {message}")
    not_ready = _not_ready(events.stack, message)
    return OperationFailedError(
        f"{operation} on stack {target.stack!r} failed: {'; '.join([*not_ready, message])}",
        stack=target.stack,
        operation=operation,
        engine_message=message,
        not_ready=not_ready,
    )


# The file backend lists a stack's lock files, then reads each: when the holder releases its lock in
# between, the read fails with "no such file" instead of "currently locked". It is the same contention.
_LOCK_RACE = re.compile(r"\.pulumi/locks/\S+: no such file or directory")
# A lock file the engine cannot read (empty, cut short): `checkForLock` (pkg/backend/diy/lock.go, v3.274.1)
# returns the decoder's error as it is, so every command that locks the stack fails with only that; or the
# blob library's, which names the file's key, when it cannot be read at all.
_LOCK_UNREADABLE = re.compile(
    r"unexpected end of JSON input|invalid character .+|json: cannot unmarshal .+ lockContent.*"
    r"|.*\.pulumi/locks/.*",
    re.DOTALL,
)


def _damaged_lock_error(target: StackTarget, exc: auto.CommandError) -> StackLockedError | None:
    """``StackLockedError`` naming the damaged lock files, when those are why the command failed."""
    if not _LOCK_UNREADABLE.fullmatch(_engine_message(exc)):
        return None
    files = target.file_backend()
    damaged = files.damaged_locks() if files is not None else []
    if not damaged:
        return None
    return StackLockedError(
        f"stack {target.stack!r} is locked by a damaged lock file, {'; '.join(map(str, damaged))}: the "
        "engine takes every file there for a lock and cannot read this one, so every update fails until "
        f"it is removed; if no update is running, run `gitops-infra recover {target.stack}` (recover() in "
        "Python) to clear it",
        stack=target.stack,
    )


@dataclass
class EngineEvents:
    """The engine events of one attempt at an operation.

    :meth:`callback` feeds an operation's own collector and the caller's ``on_event``, and keeps the
    policy findings, which explain a blocked update if the attempt fails.
    """

    on_event: EventCallback | None
    operation: str = ""
    """The operation the attempt is part of, as its errors name it (``detect_drift``, ``rollback``)."""
    policy_events: list[auto.PolicyEvent] = field(default_factory=list)
    stack: auto.Stack | None = None
    """The stack the attempt runs on, once selected: a failure reads its checkpoint for the why."""
    temp_dir: Path | None = None
    """The attempt's private engine temp dir (:func:`engine_temp_dir`), once made."""
    settings_copy: Path | None = None
    """A private copy of the stack's settings file, once made (:func:`settings_copy`): the file a command
    that must write nothing is given instead of the stack's own."""

    @property
    def log_file(self) -> Path | None:
        """Where the engine writes the attempt's events, or ``None`` to stream them live.

        A caller's ``on_event`` sees them as they happen. With none, nobody is watching, and the engine
        writes them to a file read when its command ends, at no CPU cost to the engine's cores
        (:func:`~gitops_infra.automation._engine.compat.run_streamed`); the temp dir keeps it private.
        """
        if self.on_event is not None or self.temp_dir is None:
            return None
        return self.temp_dir / "events.jsonl"

    def callback(self, collect: EventCallback | None = None) -> EventCallback:
        """The ``on_event`` to hand ``pulumi.automation``.

        A callback that raises is not called again, and the operation goes on: ``pulumi.automation``
        reads engine events on a thread that catches only ``Exception``, so anything escaping a callback
        (a ``SystemExit`` from a closed stdout, say) would stop that reader and leave the engine blocked on
        its event stream, holding the stack's lock. The failure is reported as a ``RuntimeWarning``.
        """
        callbacks = [cb for cb in (collect, self.on_event) if cb is not None]
        failed: set[int] = set()

        def dispatch(event: auto.EngineEvent) -> None:
            if event.policy_event is not None:
                self.policy_events.append(event.policy_event)
            for index, callback in enumerate(callbacks):
                if index in failed:
                    continue
                try:
                    callback(event)
                except BaseException as exc:  # see the docstring: nothing may escape
                    failed.add(index)
                    warnings.warn(
                        f"an engine event callback raised {type(exc).__name__}: {exc}; it gets no more "
                        "events, and the operation goes on",
                        RuntimeWarning,
                        stacklevel=1,
                    )

        return dispatch


@contextmanager
def map_engine_errors(target: StackTarget, operation: str, events: EngineEvents) -> Iterator[None]:
    """Translate every ``pulumi.automation`` error raised inside into a ``GitOpsInfraError``.

    Lock contention becomes ``StackLockedError`` (which :func:`run_engine` may retry), and so does a lock
    file the engine cannot read, named with the way to clear it; anything we do not know passes through
    unchanged.
    """
    try:
        yield
    except auto.CommandError as exc:
        if isinstance(exc, auto.ConcurrentUpdateError) or _LOCK_RACE.search(str(exc)):
            raise locked_error(target) from exc
        raise (_damaged_lock_error(target, exc) or _translate(exc, target, operation, events)) from exc
    except auto.InvalidVersionError as exc:
        raise EngineNotFoundError(f"{exc}; {INSTALL_HINT}") from exc


@contextmanager
def engine_temp_dir(target: StackTarget) -> Iterator[Path]:
    """A new private directory (mode 0700) inside the engine's temp directory, removed on the way out.

    pulumi-kubernetes writes the kubeconfig it is configured with to a new file in ``$TMPDIR`` on every
    ``Configure`` (for Helm's settings) and never removes it (``writeKubeconfigToFile`` in
    provider/pkg/provider, v4), so each preview, up, refresh or destroy of a stack with a cluster would
    leave that cluster's credentials on disk. Pointing ``TMPDIR`` here takes them away with the operation.
    """
    parent = target.env.get("TMPDIR") or None
    try:
        scratch = tempfile.TemporaryDirectory(
            prefix="gitops-infra-engine-", dir=parent, ignore_cleanup_errors=True
        )
    except OSError as exc:
        where = parent or tempfile.gettempdir()
        raise WorkspaceError(
            f"cannot make a temp directory for the engine in {where}: {exc.strerror or exc}; "
            "set TMPDIR to a writable directory",
            stack=target.stack,
        ) from None
    with scratch as directory:
        # Python 3.11 returns it relative when TMPDIR is; the engine runs in the project's directory.
        yield Path(directory).absolute()


def settings_copy(target: StackTarget, temp_dir: Path) -> Path | None:
    """A copy of the stack's settings file in ``temp_dir`` (none there if the stack has none), for a
    command that must write nothing to hand the engine with ``--config-file``.

    The engine writes the stack's settings file on any command that loads its secrets provider, a preview
    included, when the file lacks the provider's settings: the passphrase provider makes up an
    ``encryptionsalt:`` (``NewPromptingPassphraseSecretsManager``, pkg/secrets/passphrase/manager.go),
    ``SecretsManagerLoader.GetSecretsManager`` calls that a change that must be saved
    (pkg/cmd/pulumi/stack/secrets.go), and ``getAndSaveSecretsManager`` (pkg/cmd/pulumi/config/io.go)
    saves it, to ``--config-file`` when given, else to the stack's own file (v3.274.1). A tracked file
    rewritten by a drift check makes the work tree dirty. Given a copy, the engine writes the copy.

    ``None`` on Pulumi Cloud (``http(s)://``): a stack there may keep its config in the service
    (``ConfigLocation().IsRemote``), which ``--config-file`` would bypass; and its default secrets manager
    keeps nothing in the file.
    """
    if target.backend_url.startswith(("https://", "http://")):
        return None
    source = target.project.stack_settings_path(target.stack_name)
    copy = temp_dir / "settings" / source.name  # its extension says how the engine writes it
    copy.parent.mkdir(mode=0o700)
    if source.is_file():
        shutil.copyfile(source, copy)
    return copy


def run_engine(
    target: StackTarget,
    operation: str,
    work: Callable[[auto.Stack, EngineEvents], T],
    *,
    create: bool = False,
) -> T:
    """Run ``work`` on the selected stack and return its result, translating engine errors.

    ``work`` gets the stack and the attempt's :class:`EngineEvents`. ``create`` creates the stack (with
    the secrets provider its settings name) when it does not exist yet. While another update holds the
    lock, retries for up to ``target.lock_wait`` seconds.
    """
    deadline = time.monotonic() + target.lock_wait
    while True:
        events = EngineEvents(on_event=target.on_event, operation=operation)
        try:
            with engine_temp_dir(target) as temp_dir, map_engine_errors(target, operation, events):
                events.temp_dir = temp_dir
                events.settings_copy = settings_copy(target, temp_dir)
                # Without ``create``, the operation's own ``--stack`` finds a missing stack: no select.
                workspace = target.local_workspace(select=create, temp_dir=temp_dir)
                stack = (
                    auto.Stack.create_or_select(target.stack, workspace)
                    if create
                    else auto.Stack.select(target.stack, workspace)
                )
                events.stack = stack
                return work(stack, events)
        except StackLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(LOCK_POLL_SECONDS)
