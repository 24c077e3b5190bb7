"""Record the resource graph a Pulumi program registers under ``pulumi.runtime.set_mocks``.

Used by the offline plan and by the unit tests. ``MockResourceArgs`` carries neither the parent nor the
dependencies of a resource, so :class:`RecordingMonitor` reads them from the ``RegisterResourceRequest``
itself, components included.

It also answers method calls on components (``eks.Cluster.get_kubeconfig``) through ``Mocks.call``, as
invokes are answered: upstream's ``MockMonitor`` has no ``Call``. And it reports the
``resourceReferences`` feature as unsupported. Otherwise a resource passed as an
input (``eks.ManagedNodeGroup(cluster=...)``) is deserialized on the monitor's thread, and a run fails now
and then with "attached to a different loop". Without the feature, resources are sent as their URN or ID,
deterministically.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import provider_pb2, resource_pb2

from .wire import STACK_TYPE, UNKNOWN, is_secret_payload, secret_payload_value

__all__ = ["COMPUTED", "STACK_TYPE", "Graph", "RecordingMonitor", "Registered"]

COMPUTED = "<computed>"
"""How a value that only the cloud can compute (unknown during a preview) is recorded."""


@dataclass(frozen=True)
class Registered:
    """One registered resource, as the engine would have seen it.

    ``inputs`` hold secret values in the clear (tests assert on them); ``secret_paths`` says which are
    secret, so anything shown to a person must go through :meth:`redacted_inputs`.
    """

    type: str
    name: str
    urn: str
    custom: bool
    parent: str
    dependencies: tuple[str, ...]
    """Every URN this resource waits for: its ``depends_on`` and the resources behind its inputs."""
    property_dependencies: dict[str, tuple[str, ...]]
    """For each input, the URNs of the resources its value came from."""
    provider: str
    inputs: dict[str, Any]
    secret_paths: frozenset[str]
    replacement_trigger: Any
    delete_before_replace: bool
    retain_on_delete: bool
    ignore_changes: tuple[str, ...] = ()
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    """The ``customTimeouts`` the program set, by operation (``create``, ``update``, ``delete``)."""

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


class RecordingMonitor(MockMonitor):
    """A ``MockMonitor`` that records each registration and does not support resource references."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.graph = Graph()
        self._lock = threading.Lock()

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type == STACK_TYPE:
            return response
        secrets: set[str] = set()
        inputs = _unwrap(json_format.MessageToDict(request.object), "", secrets)
        trigger = (
            _unwrap(json_format.MessageToDict(request.replacement_trigger), "", set())
            if request.HasField("replacement_trigger")
            else None
        )
        registered = Registered(
            type=request.type,
            name=request.name,
            urn=response.urn,
            custom=bool(request.custom),
            parent=request.parent,
            dependencies=tuple(request.dependencies),
            property_dependencies={
                key: tuple(deps.urns) for key, deps in sorted(request.propertyDependencies.items())
            },
            provider=request.provider,
            inputs=inputs,
            secret_paths=frozenset(secrets),
            replacement_trigger=trigger,
            delete_before_replace=bool(request.deleteBeforeReplace),
            retain_on_delete=bool(request.retainOnDelete),
            ignore_changes=tuple(request.ignoreChanges),
            custom_timeouts={
                op: value
                for op in ("create", "update", "delete")
                if (value := getattr(request.customTimeouts, op, ""))
            },
        )
        with self._lock:
            self.graph.resources.append(registered)
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
