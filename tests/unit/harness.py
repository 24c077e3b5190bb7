"""A reusable Pulumi mock harness that records the whole resource graph.

``run(program)`` executes ``program`` under ``pulumi.runtime.set_mocks`` and returns a ``Run`` with:

- ``graph``: every registered resource, components included (type, name, URN, parent URN,
  ``depends_on`` URNs, provider reference, inputs with secrets unwrapped, which inputs were secret, and
  options such as the replacement trigger);
- ``values``: the resolved value and secretness of each ``Output`` the program returned.

Parent links and dependencies are not in ``MockResourceArgs``, so ``RecordingMonitor`` reads them from
the ``RegisterResourceRequest`` itself. It also reports the ``resourceReferences`` feature as unsupported:
otherwise a resource passed as an input (``eks.ManagedNodeGroup(cluster=...)``) is deserialized on the
monitor's thread and the run fails now and then with "attached to a different loop". Without the
feature, resources are sent as their URN or ID instead, deterministically.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import pulumi
from google.protobuf import json_format
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import resource_pb2

PROJECT = "gitops-infra"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
SIG_KEY = "4dabf18193072939515e22adb298388d"
T = TypeVar("T")


@dataclass(frozen=True)
class Registered:
    """One registered resource, as the engine would have seen it."""

    type: str
    name: str
    urn: str
    custom: bool
    parent: str
    dependencies: tuple[str, ...]
    provider: str
    inputs: dict[str, Any]
    secret_paths: frozenset[str]
    replacement_trigger: Any
    delete_before_replace: bool
    remote: bool

    def input(self, path: str) -> Any:
        """The input at a dotted path (``metadata.name``, ``routes.0.cidrBlock``)."""
        value: Any = self.inputs
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return value

    def is_secret(self, path: str) -> bool:
        """True when the input at ``path`` (or a value that contains it) was sent as a secret."""
        return any(path == p or path.startswith(p + ".") for p in self.secret_paths)


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
        assert len(found) == 1, f"expected one {type_} {name or ''}, found {[r.name for r in found]}"
        return found[0]

    def named(self, name: str) -> Registered:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"expected one resource named {name}, found {len(found)}"
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
        if value.get(SIG_KEY) == SECRET_SIG:
            secrets.add(path)
            return _unwrap(value.get("value"), path, secrets)
        return {k: _unwrap(v, f"{path}.{k}" if path else k, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v, f"{path}.{i}" if path else str(i), secrets) for i, v in enumerate(value)]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class RecordingMonitor(MockMonitor):
    """A ``MockMonitor`` that records each registration and does not support resource references."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.graph = Graph()
        self._lock = threading.Lock()

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        secrets: set[str] = set()
        inputs = _unwrap(json_format.MessageToDict(request.object), "", secrets)
        trigger_secrets: set[str] = set()
        trigger = (
            _unwrap(json_format.MessageToDict(request.replacement_trigger), "", trigger_secrets)
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
            provider=request.provider,
            inputs=inputs,
            secret_paths=frozenset(secrets),
            replacement_trigger=trigger,
            delete_before_replace=bool(request.deleteBeforeReplace),
            remote=bool(request.remote),
        )
        with self._lock:
            self.graph.resources.append(registered)
        return response

    def SupportsFeature(self, request: Any) -> Any:
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)

    def GetDeploymentInfo(self, request: Any) -> Any:
        info = super().GetDeploymentInfo(request)
        features = [
            f
            for f in info.supportedFeatures
            if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES
        ]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)


MOCK_KUBECONFIG = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mock", "cluster": {"server": "https://mock"}}],
    }
)


class PlatformMocks(pulumi.runtime.Mocks):
    """Outputs echo the inputs, plus the computed outputs the components read."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        state = dict(args.inputs)
        name = args.name
        if args.typ == "eks:index:Cluster":
            issuer = f"oidc.eks.eu-west-1.amazonaws.com/id/{name.upper()}"
            state |= {
                "kubeconfigJson": MOCK_KUBECONFIG,
                "kubeconfig": json.loads(MOCK_KUBECONFIG),
                "oidcProviderArn": f"arn:aws:iam::123456789012:oidc-provider/{issuer}",
                "oidcProviderUrl": issuer,
                "clusterSecurityGroupId": f"sg-{name}",
            }
        elif args.typ == "tls:index/privateKey:PrivateKey":
            algorithm = str(state.get("algorithm", "")).lower()
            state |= {
                "publicKeyOpenssh": f"ssh-{algorithm} AAAA-{name}",
                "privateKeyOpenssh": f"-----BEGIN OPENSSH PRIVATE KEY-----\nmock-{name}\n-----END",
            }
        elif args.typ.startswith("aws:"):
            state.setdefault("arn", f"arn:aws:mock::123456789012:{name}")
            state.setdefault("name", name)
        resource_id = f"{name}-id" if args.custom else ""
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        raise AssertionError(f"unexpected invoke {args.token}: programs under test must not call functions")


@dataclass(frozen=True)
class Resolved:
    """An Output's value after the run, and whether it was secret."""

    value: Any
    secret: bool


@dataclass(frozen=True)
class Run(Generic[T]):
    result: T
    graph: Graph
    values: Mapping[str, Resolved]


def run(
    program: Callable[[], T],
    *,
    outputs: Callable[[T], Mapping[str, pulumi.Output[Any]]] | None = None,
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
) -> Run[T]:
    """Run ``program`` under mocks; resolve the Outputs ``outputs(result)`` names."""
    mocks = PlatformMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config(dict(config or {}), secret_keys or [])
    box: dict[str, Any] = {}
    resolved: dict[str, Resolved] = {}

    async def resolve(named: Mapping[str, pulumi.Output[Any]]) -> None:
        for key, output in named.items():
            resolved[key] = Resolved(value=await output.future(), secret=await output.is_secret())

    @pulumi.runtime.test
    def execute() -> Any:
        box["result"] = program()
        if outputs is None:
            return None
        return pulumi.Output.from_input(resolve(outputs(box["result"])))

    execute()
    return Run(result=box["result"], graph=monitor.graph, values=resolved)
