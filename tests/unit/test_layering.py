"""The layering rules, checked on the source: what may import what, and where Pulumi's internals go.

- ``contract.py`` and ``checks.py`` import no Pulumi: app teams' tools and the policy pack parse the
  contract and run the shared rules without any SDK.
- ``automation/`` imports neither ``components/``, ``config.py`` nor ``platform.py``: it runs any Pulumi
  project; this program's own config step is handed to it (``offline_plan(config_step=...)``).
- Every private Pulumi name goes through one module, ``automation/_compat.py``: a ``_`` name of pulumi's,
  pulumi's runtime submodules (``pulumi.runtime.rpc``, ``.mocks``, ``.proto``, ...) and its protobufs.
- ``cli/`` has no import cycle, counting every import (inside a function, or for type checking only), and
  nothing imports a command module (``cli/_commands/``) but the group, by name, when a command is looked
  up. A renderer (``cli/_render/``) imports, of the CLI, only other renderers and ``_output``.

Each rule is a function of a module's source, so the rules are also shown to catch what they forbid.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "gitops_infra"
DOOR = PACKAGE / "automation" / "_compat.py"
PULUMI_FREE = (PACKAGE / "contract.py", PACKAGE / "checks.py")
NOT_FROM_AUTOMATION = ("gitops_infra.components", "gitops_infra.config", "gitops_infra.platform")
# The names of pulumi's runtime package that are its public API; its submodules are internals.
PUBLIC_RUNTIME = {"Mocks", "MockCallArgs", "MockResourceArgs", "set_mocks", "set_all_config", "test"}
# Single-underscore attributes that are public by convention (namedtuple's API).
PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _parse(source: str) -> ast.Module:
    return ast.parse(source)


def _imports(source: str, module: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(module imported, names imported from it)`` for each import in ``source``, made absolute."""
    package = module.split(".")
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                # `from . import x` in a module (not a package __init__) is relative to its package.
                anchor = package[: len(package) - node.level]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, tuple(alias.name for alias in node.names)


def pulumi_imports(source: str, module: str) -> list[str]:
    return [name for name, _ in _imports(source, module) if name.split(".")[0].startswith("pulumi")]


def forbidden_layers(source: str, module: str) -> list[str]:
    found = []
    for name, names in _imports(source, module):
        if name.startswith(NOT_FROM_AUTOMATION):
            found.append(name)
        else:  # `from .. import components`
            found += [f"{name}.{n}" for n in names if f"{name}.{n}".startswith(NOT_FROM_AUTOMATION)]
    return found


def private_pulumi_uses(source: str, module: str) -> list[str]:
    found = []
    for name, names in _imports(source, module):
        parts = name.split(".")
        if parts[0] == "google" and parts[1:2] == ["protobuf"]:
            found.append(name)
        if parts[0] != "pulumi":
            continue
        private_module = any(part.startswith("_") for part in parts)
        runtime_submodule = parts[:2] == ["pulumi", "runtime"] and len(parts) > 2
        if private_module or runtime_submodule:
            found.append(name)
        found += [f"{name}.{n}" for n in names if n.startswith("_")]
        if parts == ["pulumi", "runtime"]:
            found += [f"{name}.{n}" for n in names if n not in PUBLIC_RUNTIME]
    tree = _parse(source)
    # `x._name` on anything but our own objects and other libraries' modules may be one of pulumi's.
    others = {"self", "cls"} | {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if not alias.name.startswith("pulumi")
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not node.attr.endswith("_")  # an enum's _name_ and _value_ are its API
            and node.attr not in PUBLIC_UNDERSCORED
            and not (isinstance(node.value, ast.Name) and node.value.id in others)
        ):
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


def _sources(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


@pytest.mark.parametrize("path", PULUMI_FREE, ids=lambda p: p.name)
def test_the_contract_and_the_shared_rules_import_no_pulumi(path: Path) -> None:
    assert pulumi_imports(path.read_text(), _module_name(path)) == []


def test_the_contract_and_the_shared_rules_load_no_pulumi_at_all() -> None:
    # What they import in turn counts too: a fresh interpreter shows everything that was loaded.
    code = (
        "import sys, json, gitops_infra.contract, gitops_infra.checks; print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert "gitops_infra.contract" in loaded
    assert [m for m in loaded if m.split(".")[0].startswith("pulumi")] == []


@pytest.mark.parametrize("path", _sources(PACKAGE / "automation"), ids=lambda p: p.name)
def test_automation_imports_neither_the_components_nor_the_config(path: Path) -> None:
    assert forbidden_layers(path.read_text(), _module_name(path)) == []


def test_importing_every_automation_module_loads_no_component_or_config() -> None:
    modules = [_module_name(path) for path in _sources(PACKAGE / "automation")]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert "gitops_infra.automation._engine" in loaded
    assert [m for m in loaded if m.startswith(NOT_FROM_AUTOMATION)] == []


@pytest.mark.parametrize(
    "path", [p for p in _sources(PACKAGE) if p != DOOR], ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_pulumi_internals_go_through_the_one_door(path: Path) -> None:
    assert private_pulumi_uses(path.read_text(), _module_name(path)) == []


def test_the_door_is_where_the_internals_are() -> None:
    # If the door used none, the rule above would guard nothing.
    assert private_pulumi_uses(DOOR.read_text(), _module_name(DOOR)) != []


INTERNALS = [
    ("from pulumi.runtime import rpc", "gitops_infra.automation._wire"),
    ("from pulumi.runtime.stack import Stack", "gitops_infra.automation.plan"),
    ("import pulumi.runtime.mocks", "gitops_infra.x"),
    ("from pulumi.automation import _stack", "gitops_infra.x"),
    ("from pulumi.runtime.sync_await import _ensure_event_loop", "gitops_infra.x"),
    ("from google.protobuf import json_format", "gitops_infra.x"),
    ("workspace._run_pulumi_cmd_sync([])", "gitops_infra.x"),
    ("import pulumi.automation as auto\nauto._stack._cleanup()", "gitops_infra.x"),
]
ALLOWED = [
    ("from ..checks import PROD_ENVIRONMENTS", "gitops_infra.automation.plan"),
    ("from pulumi.runtime import set_mocks, Mocks", "gitops_infra.x"),
    ("parts._replace(netloc=x)", "gitops_infra.redaction"),
]
LAYER_BREAKS = [
    ("from ..config import PROJECT", "gitops_infra.config"),
    ("from .. import components", "gitops_infra.components"),
    ("from gitops_infra.platform import build_platform", "gitops_infra.platform"),
]


@pytest.mark.parametrize(("source", "module"), INTERNALS)
def test_the_door_rule_catches_each_kind_of_internal(source: str, module: str) -> None:
    assert private_pulumi_uses(source, module) != []


@pytest.mark.parametrize(("source", "layer"), LAYER_BREAKS)
def test_the_layer_rule_catches_each_layer(source: str, layer: str) -> None:
    assert forbidden_layers(source, "gitops_infra.automation.plan") == [layer]


@pytest.mark.parametrize(("source", "module"), ALLOWED)
def test_the_rules_let_the_allowed_through(source: str, module: str) -> None:
    assert forbidden_layers(source, module) == []
    assert private_pulumi_uses(source, module) == []


def test_the_pulumi_free_rule_catches_an_sdk() -> None:
    assert pulumi_imports(SDK_IMPORT, "gitops_infra.contract") == ["pulumi_kubernetes"]


SDK_IMPORT = "import pulumi_kubernetes as k8s"


# -- cli/: no import cycle, nothing imports a command, renderers import no command machinery ---------------

CLI = PACKAGE / "cli"
COMMANDS = "gitops_infra.cli._commands"
RENDER = "gitops_infra.cli._render"
RENDER_MAY_IMPORT = (RENDER, "gitops_infra.cli._output")


def _module_sources(root: Path) -> dict[str, tuple[str, bool]]:
    """Each module under ``root``: its source, and whether it is a package's ``__init__``."""
    return {_module_name(path): (path.read_text(), path.name == "__init__.py") for path in _sources(root)}


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Which of ``sources``' modules each one imports: every import statement counts, at the top, inside a
    function or for type checking only. ``from p import m`` imports module ``p.m`` when there is one."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, (source, is_package) in sources.items():
        package = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(_parse(source)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package[: len(package) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else base for a in node.names]
            else:
                continue
            graph[name].update(target for target in targets if target in sources and target != name)
    return graph


def _reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph[module]
    return seen


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each set of modules that import one another in a loop, sorted; none when the graph has no cycle."""
    reach = {module: _reachable(graph, module) for module in graph}
    loops = {
        tuple(sorted(other for other in graph if other in reach[module] and module in reach[other]))
        for module in graph
        if module in reach[module]
    }
    return sorted(list(loop) for loop in loops)


def command_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """``importer -> command module`` for each import of a command module (the group's loader imports
    them by name, with ``importlib``, which is no import statement)."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if target == COMMANDS or target.startswith(COMMANDS + ".")
    )


def render_imports_outside(graph: Mapping[str, set[str]]) -> list[str]:
    """``renderer -> module`` for each module of the CLI a renderer imports beyond renderers and output."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module == RENDER or module.startswith(RENDER + ".")
        for target in targets
        if not any(target == allowed or target.startswith(allowed + ".") for allowed in RENDER_MAY_IMPORT)
    )


CLI_SOURCES = _module_sources(CLI)


def test_the_cli_has_no_import_cycle() -> None:
    graph = import_graph(CLI_SOURCES)
    assert import_cycles(graph) == []
    # The graph sees what the rule is about: imports at the top, inside a function, for type checking.
    assert f"{RENDER}.markdown" in graph[f"{RENDER}.plan"]
    assert f"{RENDER}.plan" in graph[RENDER]  # inside to_markdown's table of renderers
    assert f"{RENDER}.escape" in graph["gitops_infra.cli._output"]  # inside echo


def test_nothing_imports_a_command_module() -> None:
    graph = import_graph(CLI_SOURCES)
    assert command_imports(graph) == []
    assert f"{COMMANDS}.drift" in graph and f"{RENDER}.drift" in graph[f"{COMMANDS}.drift"]


def test_a_renderer_imports_no_command_machinery() -> None:
    assert render_imports_outside(import_graph(CLI_SOURCES)) == []


def _with(module: str, added: str) -> dict[str, tuple[str, bool]]:
    """The CLI's modules, with ``added`` appended to ``module``'s source."""
    source, is_package = CLI_SOURCES[module]
    return {**CLI_SOURCES, module: (source + added, is_package)}


# Each breaks a rule in the real CLI's sources.
LOOPS = [
    # A renderer importing another that imports it back, inside a function.
    (f"{RENDER}.markdown", "\ndef _f() -> None:\n    from .drift import print_drift\n", f"{RENDER}.drift"),
    # The old loop's shape: the shared options importing a command, which imports them.
    ("gitops_infra.cli._invocation", "\nfrom ._commands.plan import plan\n", f"{COMMANDS}.plan"),
    # For type checking only: still a loop a reader has to untangle.
    ("gitops_infra.cli._main", "\nif TYPE_CHECKING:\n    from ._invocation import Invocation\n", None),
]
COMMAND_IMPORTS = [
    (f"{RENDER}.plan", "\nfrom .._commands.plan import plan\n", f"{COMMANDS}.plan"),
    (f"{RENDER}.plan", "\nfrom .._commands import plan\n", f"{COMMANDS}.plan"),
    ("gitops_infra.cli._main", "\ndef _f() -> None:\n    import gitops_infra.cli._commands.fleet\n", None),
    (f"{COMMANDS}.fleet", "\nfrom .drift import drift\n", f"{COMMANDS}.drift"),
]
RENDER_BREAKS = [
    (f"{RENDER}.drift", "\nfrom .._main import EXIT_OK\n", "gitops_infra.cli._main"),
    (f"{RENDER}.status", "\ndef _f() -> None:\n    from .._invocation import Invocation\n", None),
]


@pytest.mark.parametrize(("module", "added", "via"), LOOPS)
def test_the_cycle_rule_catches_a_loop(module: str, added: str, via: str | None) -> None:
    (loop,) = import_cycles(import_graph(_with(module, added)))
    assert module in loop and (via is None or via in loop)


@pytest.mark.parametrize(("module", "added", "command"), COMMAND_IMPORTS)
def test_the_command_rule_catches_each_import_of_a_command(
    module: str, added: str, command: str | None
) -> None:
    found = command_imports(import_graph(_with(module, added)))
    assert len(found) == 1 and found[0].startswith(f"{module} -> {COMMANDS}."), found
    assert command is None or found == [f"{module} -> {command}"]


@pytest.mark.parametrize(("module", "added", "target"), RENDER_BREAKS)
def test_the_render_rule_catches_a_renderer_importing_the_machinery(
    module: str, added: str, target: str | None
) -> None:
    found = render_imports_outside(import_graph(_with(module, added)))
    assert len(found) == 1 and found[0].startswith(f"{module} -> gitops_infra.cli._"), found
    assert target is None or found == [f"{module} -> {target}"]


# Every source is parsed now, while pytest collects, not inside a test: after other unit tests had run,
# CPython 3.11.7's compile() once refused a file here with "AST constructor recursion depth mismatch"
# (seen in `make test`), an interpreter fault, not the file's.
for _source in [
    *(path.read_text() for path in _sources(PACKAGE)),
    *(source for source, _ in (*INTERNALS, *ALLOWED, *LAYER_BREAKS)),
    SDK_IMPORT,
    *(_with(module, added)[module][0] for module, added, _ in (*LOOPS, *COMMAND_IMPORTS, *RENDER_BREAKS)),
]:
    _parse(_source)
