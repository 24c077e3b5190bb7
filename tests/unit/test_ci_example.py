"""The example CI workflow calls the CLI as it is: every `gitops-infra` line parses."""

from __future__ import annotations

import re
import shlex
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
