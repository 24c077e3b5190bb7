"""The example CI workflow calls the CLI as it is: every `gitops-infra` line parses."""

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

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "ci" / "gitops-infra.yml"


def _command_lines() -> list[str]:
    steps = [step for job in yaml.safe_load(WORKFLOW.read_text())["jobs"].values() for step in job["steps"]]
    runs = [" ".join(str(step["run"]).split()) for step in steps if "run" in step]
    return [run for run in runs if run.startswith("gitops-infra ")]


def test_the_example_uses_each_new_operation() -> None:
    lines = " ".join(_command_lines())
    for usage in ("--format markdown", "drift --all", "--require-promoted-from dev", "status --all"):
        assert usage in lines


@pytest.mark.parametrize("line", _command_lines())
def test_every_cli_call_in_the_example_parses(line: str) -> None:
    line = re.sub(r"\$\{\{\s*matrix\.stack\s*\}\}", "dev", line)
    line = re.sub(r"\$\{\{[^}]*\}\}", "x", line)
    args = shlex.split(line.split(">")[0])[1:]  # without the redirection into the job summary
    context = main.make_context("gitops-infra", list(args), resilient_parsing=False)
    name, command, rest = main.resolve_command(context, args)
    assert isinstance(command, click.Command), name
    command.make_context(str(name), rest, parent=context)  # a bad option or argument raises here


README = WORKFLOW.parents[2] / "README.md"
ACTIONLINT = WORKFLOW.parents[2] / ".tools" / "actionlint" / "bin" / "actionlint"


def _usage_lines() -> dict[str, str]:
    """The README's CLI synopsis, by command: ``{"up": "gitops-infra up STACK [--json] ..."}``."""
    section = README.read_text().split("## The CLI", 1)[1].split("```", 2)[1]
    return {
        line.split()[1]: line
        for line in section.splitlines()
        if line.startswith("gitops-infra ") and len(line.split()) > 1
    }


@pytest.mark.parametrize("line", _command_lines())
def test_every_option_the_example_uses_is_in_the_readme(line: str) -> None:
    words = line.split()
    usage = _usage_lines()[words[1]]
    for flag in (word.split("=", 1)[0] for word in words if word.startswith("--")):
        assert flag in usage, f"{flag} of `{words[1]}` is not in the README's synopsis: {usage}"
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
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("needs: up-dev", "needs: up-staging", 1))
    found = _actionlint(broken)
    assert found.returncode == 1
    assert "up-staging" in found.stdout
