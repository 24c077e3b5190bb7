"""The offline plan: run the real stack program in-process under Pulumi mocks.

No engine, no cloud, no credentials and no passphrase: the program reads ``Pulumi.<stack>.yaml``, every
resource it registers is recorded, and nothing is created. The mocks echo each resource's inputs and
invent nothing, so every value only the cloud can compute (IDs, ARNs, endpoints, generated keys) stays
unknown and is shown as ``<computed>``. ``secure:`` values cannot be decrypted here; they are planned
with redacted placeholders.

What a program needs of its config beyond the stack file is the program's business, not this module's:
a ``config_step`` hook gets the stack file's config before the program runs, and may check it and add
placeholders for the secrets a pull request's stack file does not hold. The gitops-infra program's step
is :func:`gitops_infra.config.plan_config`, which the ``gitops-infra plan`` command passes.
"""

from __future__ import annotations

import datetime
import json
import runpy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import MockCallArgs, MockResourceArgs

from ..errors import ConfigError, OperationFailedError, StackNotFoundError
from ..redaction import SECRET
from ._engine.compat import UNKNOWN, root_exports
from ._engine.recording import Graph, Registered, run_mocked
from ._state.stack_files import read_mapping
from ._state.target import Project
from .options import StackOptions
from .results.plan import COMPUTED, Plan, PlannedResource
from .stack_name import StackName, parse_stack_name

__all__ = ["PLACEHOLDER", "ConfigStep", "offline_plan"]

PLACEHOLDER = SECRET
"""The value a secret the plan cannot read is planned with: the marker itself, and kept secret.

A config step plans a secret it needs with ``{"secure": PLACEHOLDER}``, the stack file's own form."""

ConfigStep = Callable[[Mapping[str, Any], str, str], Mapping[str, Any]]
"""``step(config, project, stack)``: the stack file's config (keys ``<namespace>:<key>``, plain data) for
``stack`` of ``project``, checked and completed for the program; raise ``ConfigError`` to refuse it."""


class _EchoMocks(pulumi.runtime.Mocks):
    """Echo every resource's inputs; IDs and other computed outputs stay unknown in a preview."""

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        return "", dict(args.inputs)

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        # A result comes from the cloud, so offline it is never invented. A function (the deploying
        # identity, for one) answers with nothing, which the components read as "not known"; a method
        # on a component (``Cluster/getKubeconfig``) answers unknown, so its Output shows as computed.
        if "/" in args.token.rpartition(":")[2]:
            return {"result": UNKNOWN}, []
        return {}, []


_JSON_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any, where: str, problems: list[str], enclosing: tuple[int, ...] = ()) -> Any:
    """``value`` as the plain data the engine hands a program, or a problem for what has no such form.

    The engine reads the stack file as YAML 1.2 data: a date is a string to it. PyYAML's extra types
    (``!!binary``, ``!!set``) have no counterpart, and an alias to an enclosing node makes a cycle.
    """
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, _JSON_SCALARS):
        return value
    if not isinstance(value, dict | list):
        problems.append(f"{where}: holds a {type(value).__name__} value, which a stack config cannot hold")
        return None
    if id(value) in enclosing:
        problems.append(f"{where}: refers to itself through a YAML alias")
        return None
    inside = (*enclosing, id(value))
    if isinstance(value, list):
        return [_plain(item, f"{where}[{index}]", problems, inside) for index, item in enumerate(value)]
    plain: dict[Any, Any] = {}
    for key, item in value.items():
        if isinstance(key, datetime.date):
            key = key.isoformat()
        elif not isinstance(key, _JSON_SCALARS):
            problems.append(f"{where}: has a {type(key).__name__} key, which a stack config cannot hold")
            continue
        plain[key] = _plain(item, f"{where}.{key}", problems, inside)
    return plain


def _stack_config(project: Project, project_name: str, stack: StackName) -> dict[str, Any]:
    settings = project.stack_settings(stack)
    if settings is None:
        path = project.stack_settings_path(stack)  # where the engine reads it
        raise StackNotFoundError(
            f"no {path.name} in {path.parent}: the offline plan reads it", stack=str(stack)
        )
    config = read_mapping(settings, stack=str(stack)).get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigError([f"{settings.name}: config must be a mapping of keys to values"], stack=str(stack))
    problems: list[str] = []
    plain: dict[str, Any] = {}
    for key, value in config.items():
        if not isinstance(key, str) or not key.partition(":")[2]:
            # The engine refuses a key without a namespace in a stack file, so the plan must not run it:
            # the program reads only namespaced keys and would not see it.
            problems.append(
                f"{settings.name}: config keys are <namespace>:<name>, such as {project_name}:cluster"
            )
            continue
        plain[key] = _plain(value, key, problems)
    if problems:
        raise ConfigError(problems, stack=str(stack))
    return plain


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


def _program(project: Project) -> tuple[str, Path]:
    settings = project.settings
    name = str(settings.get("name", project.path.name))
    main = project.path / str(settings.get("main", "."))
    entrypoint = main / "__main__.py" if main.is_dir() else main
    if not entrypoint.is_file():
        raise ConfigError(
            [f"{project.settings_file.name}.main: no program at {entrypoint} (a __main__.py, or a .py file)"]
        )
    return name, entrypoint


async def _exported(exports: Mapping[str, Any]) -> dict[str, Any]:
    """The stack outputs the program exported, with secrets and unknowns as their markers."""
    exported: dict[str, Any] = {}
    for name, value in exports.items():
        output = pulumi.Output.from_input(value)
        if await output.is_secret():
            exported[name] = SECRET
        elif not await output.is_known():
            exported[name] = COMPUTED
        else:
            exported[name] = await output.future()
    return exported


def _run_program(
    entrypoint: Path, project: str, stack: str, config: Mapping[str, str], secret_keys: list[str]
) -> tuple[Graph, dict[str, Any]]:
    """Run the program under mocks; return what it registered and what it exported."""
    outputs: dict[str, Any] = {}
    interrupted: list[KeyboardInterrupt] = []

    def program() -> pulumi.Output[None]:
        exports = root_exports()

        async def collect() -> None:
            outputs.update(await _exported(exports))

        try:
            runpy.run_path(str(entrypoint), run_name="__main__")
        except KeyboardInterrupt as exc:
            interrupted.append(exc)
            raise
        return pulumi.Output.from_input(collect())

    try:
        graph = run_mocked(
            program,
            _EchoMocks(),
            project=project,
            stack=stack,
            preview=True,
            config=config,
            secret_keys=secret_keys,
        )
    except ConfigError:
        raise
    except Exception as exc:  # the program's own failure, reported like the engine would
        if interrupted:
            # The runtime drains the program's pending registrations before it re-raises, and one that
            # broke because the interrupt cut an import short would be reported in its place.
            raise interrupted[0] from None
        message = str(exc).strip() or type(exc).__name__
        raise OperationFailedError(
            f"plan of stack {stack!r} failed: {message}",
            stack=stack,
            operation="plan",
            engine_message=message,
        ) from exc
    return graph, outputs


def _in_tree_order(graph: Graph) -> list[Registered]:
    """Parents before their children, siblings by URN. Under mocks a resource registers when its inputs
    resolve, an order that varies from run to run; a plan that a job diffs or a pull request shows must
    not."""
    urns = {r.urn for r in graph}
    children: dict[str | None, list[Registered]] = {}
    for resource in graph:
        children.setdefault(resource.parent if resource.parent in urns else None, []).append(resource)
    ordered: list[Registered] = []
    pending = sorted(children.get(None, []), key=lambda r: r.urn, reverse=True)
    while pending:
        resource = pending.pop()
        ordered.append(resource)
        pending += sorted(children.get(resource.urn, []), key=lambda r: r.urn, reverse=True)
    return ordered


def _planned(graph: Graph) -> tuple[PlannedResource, ...]:
    urns = {r.urn for r in graph}
    return tuple(
        PlannedResource(
            type=r.type,
            name=r.name,
            urn=r.urn,
            parent=r.parent if r.parent in urns else None,
            custom=r.custom,
            inputs=r.redacted_inputs(SECRET),
            # Sorted: the runtime records them in the order their Outputs resolved, which varies by run.
            depends_on=tuple(sorted(r.dependencies)),
            property_dependencies={key: tuple(sorted(deps)) for key, deps in r.property_dependencies.items()},
        )
        for r in _in_tree_order(graph)
    )


def offline_plan(
    stack: str, *, options: StackOptions | None = None, config_step: ConfigStep | None = None
) -> Plan:
    """Run the stack program under mocks and return the resources it would create.

    Needs no engine, cloud, credentials or passphrase. ``config_step`` (see :data:`ConfigStep`) checks
    and completes the stack file's config before the program runs; for this repository's program, pass
    :func:`gitops_infra.config.plan_config`, which lists every config problem as one ``ConfigError`` and
    plans unset secrets with placeholders. A program that fails raises ``OperationFailedError``.

    Example::

        from gitops_infra.config import plan_config

        plan = offline_plan("prod", config_step=plan_config)
        for resource in plan.resources:
            print(resource.type, resource.name, resource.parent)
    """
    parse_stack_name(stack)  # first: an empty name must not reach a file name
    project = Project.find(options.work_dir if options else None)
    name = project.checked_stack_name(stack)
    project_name, entrypoint = _program(project)
    raw = _stack_config(project, project_name, name)
    if config_step is not None:
        raw = dict(config_step(raw, project_name, stack))
    config, secret_keys = _engine_config(raw)
    graph, outputs = _run_program(entrypoint, project_name, stack, config, secret_keys)
    return Plan(
        stack=stack,
        project=project_name,
        resources=_planned(graph),
        outputs=outputs,
        placeholders=tuple(secret_keys),
    )
