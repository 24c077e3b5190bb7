"""Run a Pulumi program under ``pulumi.runtime.set_mocks`` and record the resource graph it registers.

:func:`run_mocked` is the one runner of a program under mocks: the offline plan runs the stack program
through it, and the unit tests run the components through it. Each registration arrives through the
door's :class:`~gitops_infra.automation._engine.compat.RegistrationMonitor` as plain data, parent and
dependencies included, and is kept as a :class:`Registered` with its inputs unwrapped.
"""

from __future__ import annotations

import atexit
import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from ..results.plan import COMPUTED  # how a value only the cloud can compute is recorded
from .compat import (
    Registration,
    RegistrationMonitor,
    close_event_loop,
    drain_event_loop,
    forget_root_resource,
    without_stack_traces,
)
from .wire import STACK_TYPE, UNKNOWN, is_secret_payload, secret_payload_value

__all__ = ["COMPUTED", "STACK_TYPE", "Graph", "RecordingMonitor", "Registered", "run_mocked"]


@dataclass(frozen=True)
class Registered(Registration):
    """One registered resource, as the engine would have seen it, its inputs unwrapped to plain values.

    ``inputs`` hold secret values in the clear (tests assert on them); ``secret_paths`` says which are
    secret, so anything shown to a person must go through :meth:`redacted_inputs`. ``dependencies`` are
    every URN the resource waits for: its ``depends_on`` and the resources behind its inputs.
    """

    secret_paths: frozenset[str] = frozenset()

    def input(self, path: str) -> Any:
        """The input at a dotted path (``metadata.name``, ``routes.0.cidrBlock``)."""
        value: Any = self.inputs
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return value

    def is_secret(self, path: str) -> bool:
        """True when the input at ``path`` (or a value that contains it) was sent as a secret."""
        return any(path == p or path.startswith(p + ".") for p in self.secret_paths)

    def redacted_inputs(self, marker: str) -> dict[str, Any]:
        """The inputs with every secret value replaced by ``marker``."""
        redacted: dict[str, Any] = _redact(self.inputs, "", self.secret_paths, marker)
        return redacted


def _redact(value: Any, path: str, secrets: frozenset[str], marker: str) -> Any:
    if path in secrets:
        return marker
    if isinstance(value, dict):
        return {k: _redact(v, f"{path}.{k}" if path else k, secrets, marker) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, f"{path}.{i}" if path else str(i), secrets, marker) for i, v in enumerate(value)]
    return value


@dataclass
class Graph:
    """All registered resources, in registration order."""

    resources: list[Registered] = field(default_factory=list)

    def __iter__(self) -> Iterator[Registered]:
        return iter(self.resources)

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> Registered:
        found = [r for r in self.of_type(type_) if name is None or r.name == name]
        if len(found) != 1:
            raise LookupError(f"expected one {type_} {name or ''}, found {[r.name for r in found]}")
        return found[0]

    def by_urn(self, urn: str) -> Registered:
        return next(r for r in self.resources if r.urn == urn)

    def children(self, parent: Registered) -> list[Registered]:
        return [r for r in self.resources if r.parent == parent.urn]

    def counts(self) -> Counter[str]:
        return Counter(r.type for r in self.resources)


def _unwrap(value: Any, path: str, secrets: set[str]) -> Any:
    """Turn a JSON-ified protobuf value into plain Python, recording the paths of secret values."""
    if isinstance(value, dict):
        if is_secret_payload(value):
            secrets.add(path)
            return _unwrap(secret_payload_value(value), path, secrets)
        return {k: _unwrap(v, f"{path}.{k}" if path else k, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v, f"{path}.{i}" if path else str(i), secrets) for i, v in enumerate(value)]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == UNKNOWN:
        return COMPUTED
    return value


class RecordingMonitor(RegistrationMonitor):
    """Records each registration into :attr:`graph` (the mocks answer it as usual)."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.graph = Graph()
        self._lock = threading.Lock()

    def registered(self, registration: Registration) -> None:
        secrets: set[str] = set()
        inputs = _unwrap(dict(registration.inputs), "", secrets)
        trigger = registration.replacement_trigger
        recorded = Registered(
            **{
                **vars(registration),
                "inputs": inputs,
                "replacement_trigger": None if trigger is None else _unwrap(trigger, "", set()),
            },
            secret_paths=frozenset(secrets),
        )
        with self._lock:
            self.graph.resources.append(recorded)


@functools.cache
def _close_event_loop_at_exit() -> None:
    """Once per process: the loop every mocked run shares is closed before the interpreter tears down,
    so that its finalizer never runs after its sockets'."""
    atexit.register(close_event_loop)


def run_mocked(
    program: Callable[[], Any],
    mocks: pulumi.runtime.Mocks,
    *,
    project: str,
    stack: str,
    preview: bool,
    config: Mapping[str, str] | None = None,
    secret_keys: Sequence[str] = (),
) -> Graph:
    """Run ``program`` under ``mocks`` (``pulumi.runtime.test``) and return what it registered.

    ``program`` may return an ``Output`` or an awaitable, which the run waits for (how a caller reads
    values only known once the program's resources resolve). Whatever the program leaves pending on the
    event loop every run in this process shares is run out afterwards, even when it fails, so it cannot
    fail the next run with this one's error. The program's exception propagates unchanged.
    """
    _close_event_loop_at_exit()
    monitor = RecordingMonitor(mocks)

    @pulumi.runtime.test  # type: ignore[untyped-decorator]  # pulumi's decorator is unannotated
    def execute() -> Any:
        return program()

    with without_stack_traces():  # from the root stack on, which set_mocks registers
        forget_root_resource()  # this run's own stack is the root, whatever ran before in this process
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor)
        pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys))
        try:
            execute()
        finally:
            drain_event_loop()
    return monitor.graph
