# mypy: disallow-untyped-calls=False
# (RegistrationMonitor extends pulumi's MockMonitor, and the internals used here carry no annotations.)
"""The one door to Pulumi's private internals: nothing else in gitops_infra touches them.

"Private" is a ``_`` name in pulumi, and anything from pulumi's runtime submodules
(``pulumi.runtime.rpc``, ``.mocks``, ``.proto``, ``.stack``, ``.settings``, ``.sync_await``) or its
protobufs, which are not its public API. ``tests/unit/test_layering.py`` fails on one used elsewhere.

Each item says what it is for and which upstream change would break it. The unit tests run against the
newest ``pulumi`` setup installs and against the lowest one ``pyproject.toml`` allows (``make
test-floor``), so a break in either shows here first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.automation import CommandResult, EngineEvent, LocalWorkspace, Stack
from pulumi.automation import _stack as upstream_stack
from pulumi.runtime import resource as upstream_resource
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import provider_pb2, resource_pb2, source_pb2
from pulumi.runtime.settings import SETTINGS, set_root_resource
from pulumi.runtime.stack import Stack as RootStack
from pulumi.runtime.sync_await import _ensure_event_loop

__all__ = [
    "SECRET_SIG",
    "SECRET_SIG_KEY",
    "STACK_TYPE",
    "UNKNOWN",
    "Registration",
    "RegistrationMonitor",
    "close_event_loop",
    "drain_event_loop",
    "forget_root_resource",
    "replay_event_log",
    "root_exports",
    "run_pulumi_cmd",
    "run_streamed",
    "without_stack_traces",
]

STACK_TYPE = "pulumi:pulumi:Stack"
"""The type of the resource every program's root is: the stack, which holds the stack outputs."""

UNKNOWN: str = rpc.UNKNOWN
"""The value a property has while only the cloud can compute it (during a preview).

Breaks if ``pulumi.runtime.rpc`` drops ``UNKNOWN``; the value itself is part of the wire protocol.
"""

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
    so they are run out rather than cancelled (cancelled, they left the next run waiting forever). The
    failure was the run's to report, so the loop does not report it again as futures are collected.

    Breaks if ``pulumi.runtime.sync_await._ensure_event_loop`` is renamed or stops returning the loop
    ``_sync_await`` runs on, or if ``SETTINGS.outputs``/``SETTINGS.lock`` (failed outputs kept "to pick
    up at program exit") change shape.
    """
    loop = _ensure_event_loop()
    if loop.is_running():
        return
    loop.set_exception_handler(_report_all_but_unretrieved)
    while pending := [task for task in asyncio.all_tasks(loop) if not task.done()]:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    with SETTINGS.lock:
        failed = list(SETTINGS.outputs)
        SETTINGS.outputs.clear()
    for task in failed:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it as never retrieved


def _report_all_but_unretrieved(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The mocked runs' loop reports what asyncio reports, except a future's "exception was never
    retrieved": a failed run's resources keep their failed futures (pulumi holds them), and when the
    collector frees them, asyncio would log the run's error again, with tracebacks, long after the
    caller was given it, maybe in the middle of something else (CI saw one break an ``ast.parse``).
    """
    if not str(context.get("message", "")).endswith("exception was never retrieved"):
        loop.default_exception_handler(context)


@contextlib.contextmanager
def without_stack_traces() -> Iterator[None]:
    """Resources register with no stack trace (nor the source position taken from it) inside the block.

    pulumi walks the Python stack for every resource, stats each frame's file and makes a URI of its
    path: a fifth of an offline plan's CPU, more under a deep caller such as pytest. A mocked run's monitor
    throws both away. ``set_mocks`` makes the mocked monitor the whole process's, so a block as wide
    takes nothing from a real run. Breaks (does nothing, and the unit test says so) if
    ``pulumi.runtime.resource`` renames ``_get_stack_trace``.
    """
    upstream = getattr(upstream_resource, "_get_stack_trace", None)
    if upstream is not None:
        upstream_resource._get_stack_trace = source_pb2.StackTrace  # an empty trace: no frames, no position
    try:
        yield
    finally:
        if upstream is not None:
            upstream_resource._get_stack_trace = upstream


def close_event_loop() -> None:
    """Close the event loop the mocked runtime ran on, if it is open and idle.

    Left open until the interpreter's last collection, the loop is finalized in whatever order that
    collection takes it and its self-pipe sockets; when a socket goes first, the loop's ``__del__`` prints
    "Exception ignored ... Invalid file descriptor: -1" as the process exits. Breaks like
    :func:`drain_event_loop`.
    """
    loop = _ensure_event_loop()
    if not loop.is_running() and not loop.is_closed():
        loop.close()


def run_pulumi_cmd(workspace: LocalWorkspace, args: list[str]) -> Any:
    """Run one ``pulumi`` command in ``workspace``, with its environment and engine; return its result.

    ``LocalWorkspace`` has no public way to run a command it does not wrap (a masked ``stack output``).
    Breaks if ``LocalWorkspace._run_pulumi_cmd_sync`` is renamed or changes its signature.
    """
    return workspace._run_pulumi_cmd_sync(args)


def run_streamed(
    stack: Stack,
    args: list[str],
    on_event: Callable[[EngineEvent], None],
    *,
    log_file: Path | None = None,
) -> CommandResult:
    """Run ``pulumi <args> --stack <stack>`` with its engine events handed to ``on_event``; nothing else.

    ``Stack.up``, ``refresh`` and ``destroy`` follow their command with ``pulumi stack output`` and
    ``pulumi stack history``, whose answers the events already carried; this is their command alone, set
    up the way they set it up.

    Without ``log_file``, the events stream live over gRPC, as ``pulumi.automation`` streams them, and are
    all delivered when it returns: the engine waits for the stream to be acknowledged before it exits.
    With it, the engine writes them to that file (``--event-log`` with a path, which is how
    ``pulumi.automation`` read them before 3.206), and they are handed to ``on_event`` in order once the
    command has ended, also when it failed. The gRPC stream costs this process CPU for each event (an
    ``up`` sends several a resource; bench/README.md has the figure), taken from the cores the engine and
    the program need; a file costs them nothing.

    Breaks if ``Stack._setup_event_log`` (the gRPC or log-file event stream, by engine version),
    ``Stack._run_pulumi_cmd_sync`` or ``pulumi.automation._stack._cleanup`` are renamed or change their
    signatures, or if the CLI's ``--event-log`` (a debug command's flag) goes.
    """
    if log_file is not None:
        try:
            return stack._run_pulumi_cmd_sync([*args, "--event-log", str(log_file)])
        finally:
            replay_event_log(log_file, on_event)
    log, watcher, stop, temp_dir, server = stack._setup_event_log(
        args[0], on_event, stack.workspace.pulumi_version
    )
    try:
        result: CommandResult = stack._run_pulumi_cmd_sync([*args, "--event-log", log])
    finally:
        upstream_stack._cleanup(temp_dir, watcher, stop, None, server)
    return result


def replay_event_log(log_file: Path, on_event: Callable[[EngineEvent], None]) -> None:
    """Hand each event the engine wrote to ``log_file`` to ``on_event``, in order; then remove the file.

    A file the engine never made (it failed before its events began) holds none. A last line with no
    newline is an event a killed engine left half-written: it is dropped. A line that is not an event is
    reported as a ``RuntimeWarning`` and skipped, as ``pulumi.automation``'s own reader does, without its
    text.
    """
    try:
        log = log_file.open(encoding="utf-8")
    except FileNotFoundError:
        return
    with log:
        for line in log:
            if not line.endswith("\n"):
                break
            try:
                event = EngineEvent.from_json(json.loads(line))
            except Exception as exc:  # any malformed event: see the docstring
                warnings.warn(
                    f"an engine event in {log_file.name} could not be read ({type(exc).__name__}); skipped",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            on_event(event)
    log_file.unlink(missing_ok=True)


# -- mocked runs (the offline plan and the unit tests) ----------------------------------------------------


@dataclass(frozen=True)
class Registration:
    """One ``RegisterResource`` request as plain data, and the URN the mocked engine gave it.

    ``inputs`` and ``replacement_trigger`` are the wire form (JSON-ified ``Struct``/``Value``), with
    secrets and unknowns still marked as the engine marks them; ``_recording`` reads them.
    """

    type: str
    name: str
    urn: str
    custom: bool
    parent: str
    dependencies: tuple[str, ...]
    """Every URN the resource waits for: its ``depends_on`` and the resources behind its inputs."""
    property_dependencies: Mapping[str, tuple[str, ...]]
    """For each input, the URNs of the resources its value came from."""
    provider: str
    inputs: Mapping[str, Any]
    replacement_trigger: Any
    """``None`` when the request sets none."""
    delete_before_replace: bool
    retain_on_delete: bool
    ignore_changes: tuple[str, ...]
    import_id: str
    """The ``import_`` option's ID, or ``""``."""
    aliases: tuple[Mapping[str, Any], ...]
    """The ``aliases`` option, each as the engine gets it: ``{"spec": {"type": ...}}`` or ``{"urn": ...}``."""
    custom_timeouts: Mapping[str, str]
    """The ``customTimeouts`` the program set, by operation (``create``, ``update``, ``delete``)."""


def _registration(request: Any, urn: str) -> Registration:
    # Breaks if RegisterResourceRequest renames its fields (resource.proto).
    trigger = (
        json_format.MessageToDict(request.replacement_trigger)
        if request.HasField("replacement_trigger")
        else None
    )
    return Registration(
        type=request.type,
        name=request.name,
        urn=urn,
        custom=bool(request.custom),
        parent=request.parent,
        dependencies=tuple(request.dependencies),
        property_dependencies={
            key: tuple(deps.urns) for key, deps in sorted(request.propertyDependencies.items())
        },
        provider=request.provider,
        inputs=json_format.MessageToDict(request.object),
        replacement_trigger=trigger,
        delete_before_replace=bool(request.deleteBeforeReplace),
        retain_on_delete=bool(request.retainOnDelete),
        ignore_changes=tuple(request.ignoreChanges),
        import_id=request.importId,
        aliases=tuple(json_format.MessageToDict(alias) for alias in request.aliases),
        custom_timeouts={
            op: value
            for op in ("create", "update", "delete")
            if (value := getattr(request.customTimeouts, op, ""))
        },
    )


class RegistrationMonitor(MockMonitor):
    """pulumi's ``MockMonitor``, which hands each registration to :meth:`registered` as plain data.

    ``MockResourceArgs`` carries neither the parent nor the dependencies of a resource, so they are read
    from the ``RegisterResourceRequest`` itself, components included. It also:

    - answers method calls on components (``eks.Cluster.get_kubeconfig``) through ``Mocks.call``, as
      invokes are answered: upstream's ``MockMonitor`` has no ``Call``;
    - reports the ``resourceReferences`` feature as unsupported. Otherwise a resource passed as an input
      (``eks.ManagedNodeGroup(cluster=...)``) is deserialized on the monitor's thread, and a run fails
      now and then with "attached to a different loop". Without the feature, resources are sent as
      their URN or ID, deterministically.

    Breaks if ``MockMonitor`` changes how it answers ``RegisterResource``, ``Invoke``,
    ``SupportsFeature`` or ``GetDeploymentInfo``, or the protobufs change shape.
    """

    def registered(self, registration: Registration) -> None:
        """Called with every registration but the root stack's."""

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != STACK_TYPE:
            self.registered(_registration(request, response.urn))
        return response

    def Call(self, request: Any) -> Any:
        invoke = resource_pb2.ResourceInvokeRequest(
            tok=request.tok, args=request.args, provider=request.provider
        )
        response = self.Invoke(invoke)
        return provider_pb2.CallResponse(
            failures=response.failures, **{"return": getattr(response, "return")}
        )

    def SupportsFeature(self, request: Any) -> Any:
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)

    def GetDeploymentInfo(self, request: Any) -> Any:
        info = super().GetDeploymentInfo(request)
        references = resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES
        features = [f for f in info.supportedFeatures if f != references]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)


def forget_root_resource() -> None:
    """Forget the root stack resource of the last mocked run, so that ``set_mocks`` makes the next run's.

    ``set_mocks`` makes a root only when there is none, so every run in a process kept the first run's:
    a plan of dev after one of prod parented dev's resources to prod's stack. Breaks if
    ``pulumi.runtime.settings`` renames ``set_root_resource`` or stops keeping the root in it.
    """
    set_root_resource(None)  # type: ignore[arg-type]  # annotated as a Resource; the default is None


def root_exports() -> dict[str, Any]:
    """The stack outputs of the mocked run under way: the run's own root stack (see
    :func:`forget_root_resource`) fills this very dict. Breaks if ``pulumi.runtime.stack.Stack`` stops
    keeping its exports in ``outputs``, or ``set_mocks`` stops making that resource the root.
    """
    root = pulumi.runtime.get_root_resource()
    if not isinstance(root, RootStack):
        raise RuntimeError("pulumi.runtime.set_mocks made no root stack resource")
    outputs: dict[str, Any] = root.outputs
    return outputs
