"""The example CI workflows call the CLI as it is: every `gitops-infra` line parses, and each option it uses
is in the docs' CLI reference."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest
import yaml

from gitops_infra.cli import main

from ..pages import cli_reference

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"
WORKFLOW = EXAMPLES / "gitops-infra.yml"
FLEET_WORKFLOW = EXAMPLES / "fleet-drift.yml"
# What the workflows' variables hold, for parsing their command lines.
_VARIABLES = {
    r"\$\{\{\s*matrix\.stack\s*\}\}": "dev",
    r'"\$SHARD"': "0/2",
    r'"\$STACK"': "dev",
    r'"\$PROJECT"': "infra",
    r'"\$RUNNER_TEMP/[^"]*"': "out.json",
    r"\$FLEET": "--project infra --project tenants",
    r"\$\{\{[^}]*\}\}": "x",
}
_CALL = re.compile(r"gitops-infra [^)|>;#]*")


def _command_lines(*workflows: Path) -> list[str]:
    """Every `gitops-infra` call in the workflows' run steps, with their variables filled in."""
    calls = []
    for workflow in workflows or (WORKFLOW, FLEET_WORKFLOW):
        jobs = yaml.safe_load(workflow.read_text())["jobs"].values()
        for step in (step for job in jobs for step in job["steps"] if "run" in step):
            script = (
                str(step["run"]) if "\n" in str(step["run"]).strip() else " ".join(str(step["run"]).split())
            )
            for line in script.splitlines():
                for variable, value in _VARIABLES.items():
                    line = re.sub(variable, value, line)
                calls += [" ".join(call.split()) for call in _CALL.findall(line)]
    return calls


def test_the_examples_use_each_new_operation() -> None:
    lines = " ".join(_command_lines(WORKFLOW))
    for usage in ("--format markdown", "drift --all", "--require-promoted-from dev", "status --all"):
        assert usage in lines
    fleet = " ".join(_command_lines(FLEET_WORKFLOW))
    for usage in (
        "fleet matrix --op drift",
        "drift --all --shard 0/2",
        "fleet report",
        "drift dev --cwd infra",
    ):
        assert usage in fleet


@pytest.mark.parametrize("line", _command_lines())
def test_every_cli_call_in_the_example_parses(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for project in ("infra", "tenants"):  # the directories --project and --cwd name must exist
        (tmp_path / project).mkdir()
    monkeypatch.chdir(tmp_path)
    args = shlex.split(line)[1:]
    context = main.make_context("gitops-infra", list(args), resilient_parsing=False)
    name, command, rest = main.resolve_command(context, args)
    assert isinstance(command, click.Command), name
    if isinstance(command, click.Group):  # `fleet report`: the group's command
        context = command.make_context(str(name), rest, parent=context, resilient_parsing=True)
        name, command, rest = command.resolve_command(context, rest)
        assert isinstance(command, click.Command), name
    command.make_context(str(name), rest, parent=context)  # a bad option or argument raises here


ACTIONLINT = WORKFLOW.parents[2] / ".tools" / "actionlint" / "bin" / "actionlint"


@pytest.fixture(scope="module")
def reference() -> dict[str, set[str]]:
    """The docs' CLI reference, generated from the commands: each command's options."""
    return cli_reference()


def _command_path(words: list[str]) -> str:
    """``gitops-infra up``, or ``gitops-infra fleet report`` for a group's command."""
    return " ".join(words[:3] if words[1] in ("fleet", "contract", "policy", "local") else words[:2])


@pytest.mark.parametrize("line", _command_lines())
def test_every_option_the_example_uses_is_in_the_cli_reference(
    line: str, reference: dict[str, set[str]]
) -> None:
    words = line.split()
    options = reference[_command_path(words)]
    for flag in (word.split("=", 1)[0] for word in words if word.startswith("--")):
        assert flag in options, f"{flag} of `{_command_path(words)}` is not in the CLI reference: {options}"
    if "--policy-pack" in words:
        assert words[words.index("--policy-pack") + 1] == "gitops-infra"  # works wherever it is installed


def _actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    if not ACTIONLINT.is_file():
        message = f"no {ACTIONLINT}: run `make setup`, which builds it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", str(path)], capture_output=True, text=True, check=False
    )


def test_the_workflow_lint_passes_the_example_and_fails_a_broken_one(tmp_path: Path) -> None:
    assert _actionlint(WORKFLOW).returncode == 0, _actionlint(WORKFLOW).stdout
    assert _actionlint(FLEET_WORKFLOW).returncode == 0, _actionlint(FLEET_WORKFLOW).stdout
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("needs: up-dev", "needs: up-staging", 1))
    found = _actionlint(broken)
    assert found.returncode == 1
    assert "up-staging" in found.stdout
