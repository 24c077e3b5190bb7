"""The CLI starts without the engine, and ``import gitops_infra`` loads nothing until a name is used.

Each case runs in a fresh interpreter, so that what it imports is all that ``sys.modules`` holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import click
import pytest

import gitops_infra
import gitops_infra.automation
import gitops_infra.automation.fleet
import gitops_infra.automation.results
import gitops_infra.cli
import gitops_infra.local

from ..support import REPO_ROOT

# What --help and argument errors must not pay for: the engine wrapper and SDKs, rich, pydantic, YAML.
HEAVY = ("pulumi", "pulumi_aws", "pulumi_kubernetes", "rich", "pydantic", "yaml", "psutil", "grpc")
HEAVY_OURS = ("gitops_infra.components", "gitops_infra.config", "gitops_infra.automation._engine")

_RUN_CLI = """
import json, sys
from gitops_infra.cli import main
sys.argv = ["gitops-infra", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def _modules_after(code: str, *args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY_OURS))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        [],
        ["up", "--help"],
        ["up"],  # missing STACK
        ["up", ""],  # an empty stack name
        ["drift", "--all", "--parallel", "0"],
        ["rollback", "--help"],
        ["contract", "--help"],
        ["no-such-command", "--json"],
    ],
)
def test_help_and_argument_errors_import_nothing_heavy(args: list[str]) -> None:
    modules = _modules_after(_RUN_CLI, json.dumps(args))
    assert "gitops_infra.cli" in modules
    assert _heavy(modules) == []


def test_the_group_s_help_imports_no_command_module() -> None:
    modules = _modules_after(_RUN_CLI, json.dumps(["--help"]))
    commands = "gitops_infra.cli._commands"
    assert sorted(m for m in modules if m == commands or m.startswith(commands + ".")) == []
    # Nor shutil, which click's formatter imports (with zlib, bz2 and lzma) only to ask the width.
    assert "shutil" not in modules and "lzma" not in modules


@pytest.mark.parametrize("columns", [None, "", "0", "junk", "40", "60", "100", "300"])
@pytest.mark.parametrize("max_content_width", [None, 120])
def test_the_group_s_formatter_is_as_wide_as_click_s_own(
    columns: str | None, max_content_width: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitops_infra.cli import main
    from gitops_infra.cli._main import _Context

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = _Context(main, max_content_width=max_content_width).make_formatter()
    clicks = click.Context(main, max_content_width=max_content_width).make_formatter()
    assert ours.width == clicks.width
    monkeypatch.setattr(click.formatting, "FORCED_WIDTH", 33)  # what click's CliRunner sets
    assert _Context(main).make_formatter().width == 33


def test_the_group_lists_each_command_as_its_own_help_says_and_loads_it_from_its_module() -> None:
    import importlib

    from gitops_infra.cli import _main, main

    table = _main._COMMANDS
    for module in {module for module, _ in table.values()}:
        importlib.import_module(f"gitops_infra.cli.{module}")
    assert sorted(main.commands) == sorted(table)  # every command is in the table, and no more
    for name, (module, summary) in table.items():
        command = main.commands[name]
        assert command.callback is not None and command.callback.__module__ == f"gitops_infra.cli.{module}"
        for limit in (20, 45, 64, 200):
            listed = click.Command(name, help=summary).get_short_help_str(limit)
            assert listed == command.get_short_help_str(limit), (name, limit)


def test_a_command_that_runs_does_import_what_it_needs() -> None:
    # The same probe sees heavy imports when there are some, so the test above can fail.
    modules = _modules_after(_RUN_CLI, json.dumps(["contract", "schema"]))
    assert "pydantic" in modules and "gitops_infra.contract" in modules


PROVIDER_SDKS = ("pulumi_aws", "pulumi_eks", "pulumi_kubernetes", "pulumi_github", "pulumi_tls")


def _sdks(modules: set[str]) -> list[str]:
    ours = ("gitops_infra.components", "gitops_infra.config", "gitops_infra.platform")
    return sorted(m for m in modules if m.split(".")[0] in PROVIDER_SDKS or m.startswith(ours))


_PLAN = """
import json, sys
from gitops_infra.cli import main
try:
    main(["plan", sys.argv[1], "--cwd", sys.argv[2]])  # arguments given: the usual exit, so this prints
except SystemExit as exit:
    assert exit.code in (None, 0), exit.code
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


@pytest.mark.parametrize(
    ("stack", "loaded"),
    [
        # An existing cluster, an existing key, no managed repository: nothing on AWS, GitHub or TLS.
        ("local", []),
        ("dev", ["pulumi_aws", "pulumi_eks", "pulumi_github", "pulumi_tls"]),
    ],
)
def test_a_stack_imports_only_the_provider_sdks_its_resources_need(stack: str, loaded: list[str]) -> None:
    # Every preview and up runs the program: pulumi_aws and pulumi_eks alone are ~0.5 s of CPU.
    modules = _modules_after(_PLAN, stack, str(REPO_ROOT))
    assert "pulumi_kubernetes" in modules
    assert (
        sorted(
            {m.split(".")[0] for m in modules} & {"pulumi_aws", "pulumi_eks", "pulumi_github", "pulumi_tls"}
        )
        == loaded
    )


@pytest.mark.parametrize(
    "args",
    [["contract", "schema"], ["contract", "check", "-"]],
)
def test_the_contract_tool_for_app_teams_loads_no_pulumi(args: list[str]) -> None:
    # `contract check` reads stdin: the probe's is empty, which is a document with nothing to check.
    modules = _modules_after(_RUN_CLI, json.dumps(args))
    assert "gitops_infra.contract" in modules
    assert sorted(m for m in modules if m.split(".")[0] == "pulumi") == []
    assert _sdks(modules) == []


def test_the_policy_pack_loads_no_provider_sdk() -> None:
    code = (
        "import sys, json\n"
        "from gitops_infra.policy.pack import policies\n"
        "from gitops_infra import parse_environment\n"
        "policies()\n"
        "sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    )
    modules = _modules_after(code)
    assert "pulumi_policy" in modules and "gitops_infra.contract" in modules
    assert _sdks(modules) == []


def test_importing_the_packages_loads_no_sdk_until_a_name_is_used() -> None:
    code = (
        "import sys, json, gitops_infra, gitops_infra.automation\n"
        "before = sorted(sys.modules)\n"
        "gitops_infra.DeployKey\n"
        "sys.stderr.write('MODULES ' + json.dumps(before) + '\\n')\n"
        "assert 'gitops_infra.components.deploy_key' in sys.modules and 'pulumi' in sys.modules\n"
    )
    assert _heavy(_modules_after(code)) == []


LAZY_PACKAGES = [
    gitops_infra,
    gitops_infra.automation,
    gitops_infra.automation.fleet,
    gitops_infra.automation.results,
    gitops_infra.cli,
    gitops_infra.local,
]


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda package: package.__name__)
def test_every_lazy_name_is_in_all_and_resolves(package: types.ModuleType) -> None:
    listed = package.__all__
    assert sorted(name for name in dir(package) if not name.startswith("_")) == sorted(listed)
    for name in listed:
        assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_lazy_package_reexports_what_its_type_checking_block_imports_and_reads_it_on_first_use(
    tmp_path: Path,
) -> None:
    package = tmp_path / "lazy_probe"
    package.mkdir()
    (package / "pieces.py").write_text("VALUE = 'from pieces'\nOTHER = 2\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from gitops_infra._lazy import exports\n"
        "if TYPE_CHECKING:\n"
        "    from .pieces import VALUE as RENAMED, OTHER\n"
        "    from json import dumps\n"
        "    import os\n"  # not a `from` import: nothing to re-export
        "UNTYPED = 1\n"
        "__all__ = ['OTHER', 'RENAMED', 'dumps']\n"
        "__getattr__, __dir__ = exports(__name__)\n"
    )
    code = (
        "import sys, json\n"
        "import lazy_probe\n"
        "assert 'lazy_probe.pieces' not in sys.modules\n"
        "names = dir(lazy_probe)\n"
        "got = [lazy_probe.RENAMED, lazy_probe.OTHER, lazy_probe.dumps is json.dumps]\n"
        "try:\n"
        "    lazy_probe.VALUE\n"
        "except AttributeError as error:\n"
        "    got.append(str(error))\n"
        "print(json.dumps([names, got]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["OTHER", "RENAMED", "dumps"],
        ["from pieces", 2, True, "module 'lazy_probe' has no attribute 'VALUE'"],
    ]


def test_no_public_name_is_shadowed_by_a_submodule_once_everything_is_imported() -> None:
    # Importing a submodule sets it on its package: a module named after a function it exports would
    # replace that function there (`automation.promote` became a module once `up` had run).
    code = (
        "import importlib, pkgutil, json, sys\n"
        "import gitops_infra, gitops_infra.automation as automation, gitops_infra.cli as cli\n"
        "for package in (gitops_infra, automation, cli):\n"
        "    for info in pkgutil.iter_modules(package.__path__):\n"
        "        if info.name != '__main__':\n"
        "            importlib.import_module(f'{package.__name__}.{info.name}')\n"
        "shadowed = [f'{p.__name__}.{n}' for p in (gitops_infra, automation, cli) for n in p.__all__\n"
        "            if type(getattr(p, n)).__name__ == 'module']\n"
        "sys.stderr.write('MODULES ' + json.dumps(shadowed) + '\\n')\n"
    )
    assert sorted(_modules_after(code)) == []


def test_an_sdk_stand_in_imports_its_module_on_first_use_and_copies_without_importing() -> None:
    import copy
    import pickle

    from gitops_infra._lazy import sdk

    stand_in = sdk("gitops_infra_no_such_sdk")  # made without importing anything
    assert copy.copy(stand_in) is not stand_in
    assert repr(pickle.loads(pickle.dumps(stand_in))) == repr(stand_in)
    with pytest.raises(ModuleNotFoundError, match="gitops_infra_no_such_sdk"):
        _ = stand_in.Provider
    assert sdk("json") is sys.modules["json"]  # an SDK already imported is the module itself
