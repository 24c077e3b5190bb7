"""The offline plan: run the real stack program in-process under Pulumi mocks.

No engine, no cloud, no credentials and no passphrase: the program reads ``Pulumi.<stack>.yaml``, every
resource it registers is recorded, and nothing is created. The mocks echo each resource's inputs and
invent nothing, so every value only the cloud can compute (IDs, ARNs, endpoints, generated keys) stays
unknown and is shown as ``<computed>``. ``secure:`` values cannot be decrypted here; they, and the
project's secret keys that the stack file does not set, are planned with redacted placeholders.
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from ..config import PROJECT, SECRET_KEYS, load_config
from ..errors import ConfigError, OperationFailedError, StackNotFoundError
from .recording import COMPUTED, RecordingMonitor
from .results import SECRET
from .workspace import StackOptions, find_project

__all__ = ["COMPUTED", "Plan", "PlannedResource", "offline_plan"]

PLACEHOLDER = "[secret placeholder]"
"""The value a secret the plan cannot read is planned with (it is shown as ``SECRET`` like any other)."""

NOTE = (
    "Offline plan: the program ran under mocks, so nothing was created and values only the cloud can "
    f"compute (IDs, ARNs, endpoints, generated keys) are unknown, shown as {COMPUTED}. "
    f"Secrets are shown as {SECRET}."
)


@dataclass(frozen=True)
class PlannedResource:
    """A resource the program would register; ``inputs`` have secrets redacted."""

    type: str
    name: str
    urn: str
    parent: str | None
    """The parent's URN, or ``None`` for a resource directly under the stack."""
    custom: bool
    inputs: Mapping[str, Any]


@dataclass(frozen=True)
class Plan:
    """What the stack program would create, recorded without an engine."""

    stack: str
    project: str
    resources: tuple[PlannedResource, ...]
    outputs: Mapping[str, Any]
    placeholders: tuple[str, ...]
    """Secret config keys planned with a placeholder: ``secure:`` ones, and required ones not set."""
    note: str = NOTE


class _EchoMocks(pulumi.runtime.Mocks):
    """Echo every resource's inputs; IDs and other computed outputs stay unknown in a preview."""

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        return "", dict(args.inputs)

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        # A function's result comes from the cloud: offline it is empty, never invented.
        return {}, None


def _stack_config(project: Path, stack: str) -> dict[str, Any]:
    settings = project / f"Pulumi.{stack}.yaml"
    if not settings.is_file():
        raise StackNotFoundError(f"no {settings.name} in {project}: the offline plan reads it", stack=stack)
    loaded = yaml.safe_load(settings.read_text()) or {}
    config = loaded.get("config") if isinstance(loaded, dict) else None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigError([f"{settings.name}: config must be a mapping of keys to values"], stack=stack)
    return config


def _without_ciphertext(value: Any) -> tuple[Any, bool]:
    """``value`` with every ``secure:`` ciphertext replaced by the placeholder, and whether there was one."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return PLACEHOLDER, True
        items = {k: _without_ciphertext(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        pairs = [_without_ciphertext(v) for v in value]
        return [v for v, _ in pairs], any(s for _, s in pairs)
    return value, False


def _engine_config(raw: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Stack config as the engine hands it to a program: strings, structured values as JSON."""
    flat: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in raw.items():
        clear, secret = _without_ciphertext(value)
        flat[key] = clear if isinstance(clear, str) else json.dumps(clear)
        if secret:
            secret_keys.append(key)
    return flat, sorted(secret_keys)


def _program(project: Path) -> tuple[str, Path]:
    settings = yaml.safe_load((project / "Pulumi.yaml").read_text()) or {}
    name = str(settings.get("name", project.name))
    main = project / str(settings.get("main", "."))
    return name, main / "__main__.py" if main.is_dir() else main


async def _exported(root: Stack) -> dict[str, Any]:
    """The stack outputs the program exported, with secrets and unknowns as their markers."""
    exported: dict[str, Any] = {}
    for name, value in root.outputs.items():
        output = pulumi.Output.from_input(value)
        if await output.is_secret():
            exported[name] = SECRET
        elif not await output.is_known():
            exported[name] = COMPUTED
        else:
            exported[name] = await output.future()
    return exported


def offline_plan(stack: str, *, options: StackOptions | None = None) -> Plan:
    """Run the stack program under mocks and return the resources it would create.

    Needs no engine, cloud, credentials or passphrase. An invalid config raises ``ConfigError`` listing
    every problem before the program runs; a program that fails raises ``OperationFailedError``.

    Example::

        plan = offline_plan("prod")
        for resource in plan.resources:
            print(resource.type, resource.name, resource.parent)
    """
    project = find_project((options.work_dir if options and options.work_dir else Path.cwd()).resolve())
    project_name, entrypoint = _program(project)
    raw = _stack_config(project, stack)
    if project_name == PROJECT:
        # This project's secrets are set with `pulumi config set --secret` and are rarely in the file a
        # pull request sees: plan with placeholders rather than fail for want of a credential.
        missing = {f"{PROJECT}:{key}": {"secure": PLACEHOLDER} for key in SECRET_KEYS}
        raw = {**missing, **raw}
        # Fail with the whole listing before any resource is registered.
        load_config(raw, stack=stack)
    config, secret_keys = _engine_config(raw)

    monitor = RecordingMonitor(_EchoMocks())
    pulumi.runtime.set_mocks(monitor.mocks, project=project_name, stack=stack, preview=True, monitor=monitor)
    pulumi.runtime.set_all_config(config, secret_keys)
    # Under mocks the root stack resource outlives a run; start from no exports.
    root = pulumi.runtime.get_root_resource()
    if not isinstance(root, Stack):
        raise RuntimeError("pulumi.runtime.set_mocks did not create the root stack resource")
    root.outputs.clear()
    outputs: dict[str, Any] = {}

    async def collect() -> None:
        outputs.update(await _exported(root))

    def program() -> Awaitable[None]:
        runpy.run_path(str(entrypoint), run_name="__main__")
        return collect()

    try:
        _sync_await(run_pulumi_func(program))
    except ConfigError:
        raise
    except Exception as exc:  # the program's own failure, reported like the engine would
        message = str(exc).strip() or type(exc).__name__
        raise OperationFailedError(
            f"plan of stack {stack!r} failed: {message}",
            stack=stack,
            operation="plan",
            engine_message=message,
        ) from exc

    graph = monitor.graph
    urns = {r.urn for r in graph}
    resources = tuple(
        PlannedResource(
            type=r.type,
            name=r.name,
            urn=r.urn,
            parent=r.parent if r.parent in urns else None,
            custom=r.custom,
            inputs=r.redacted_inputs(SECRET),
        )
        for r in graph
    )
    return Plan(
        stack=stack,
        project=project_name,
        resources=resources,
        outputs=outputs,
        placeholders=tuple(secret_keys),
    )
