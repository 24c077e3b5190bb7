"""Stack names are checked where they enter, the Python API and the CLI, before anything can run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gitops_infra import errors
from gitops_infra.automation import (
    StackOptions,
    history,
    offline_plan,
    preview,
    recover,
    rollback_to_commit,
    up,
)
from gitops_infra.cli import EXIT_ERROR, main
from gitops_infra.config import plan_config

from ..support import fake_engine, write_project

BAD_NAMES = ["", " ", " dev", "dev ", "dev\n", "a/b/c/d", "dev;rm", "../dev", "org/..", "x" * 101, "a/dev"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a stack file, where no engine can be found: a name check must come first."""
    write_project(tmp_path, "fixture")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_name_is_refused_by_the_python_api_before_anything_runs(project: Path, name: str) -> None:
    options = StackOptions(work_dir=project)
    for operation in (preview, up, history, recover, offline_plan):
        with pytest.raises(errors.StackNameError):
            operation(name, options=options)
    with pytest.raises(errors.StackNameError):
        rollback_to_commit(name, "HEAD", options=options)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_name_is_a_usage_error_of_the_cli_with_exit_1(project: Path, name: str) -> None:
    runner = CliRunner()
    for command in (["up", name, "--yes"], ["preview", name], ["history", name], ["plan", name]):
        result = runner.invoke(main, [*command, "--cwd", str(project), "--json"])
        assert result.exit_code == EXIT_ERROR, (command, result.output)
        error = json.loads(result.stdout)["error"]
        assert error["type"] == "UsageError"
        assert "invalid stack name" in error["message"]


def test_an_empty_name_says_why_it_is_dangerous() -> None:
    from gitops_infra.automation.stack_name import parse_stack_name

    with pytest.raises(errors.StackNameError, match="whichever stack is selected"):
        parse_stack_name("")


@pytest.mark.parametrize(
    ("text", "org", "project", "name"),
    [
        ("dev", None, None, "dev"),
        ("prod.eu-1_b", None, None, "prod.eu-1_b"),
        ("organization/dev", "organization", None, "dev"),
        ("organization/fixture/dev", "organization", "fixture", "dev"),
    ],
)
def test_pulumis_name_forms_parse(text: str, org: str | None, project: str | None, name: str) -> None:
    from gitops_infra.automation.stack_name import parse_stack_name

    parsed = parse_stack_name(text)
    assert (parsed.org, parsed.project, parsed.name, str(parsed)) == (org, project, name, text)
    assert parsed.settings_base == f"Pulumi.{name}"


def test_a_qualified_name_of_another_project_is_refused(project: Path) -> None:
    # The engine would run this project's program on another project's stack.
    with pytest.raises(errors.StackNameError, match="belongs to project 'other'"):
        preview("organization/other/dev", options=StackOptions(work_dir=project))
    with pytest.raises(errors.StackNameError, match="belongs to project 'other'"):
        offline_plan(
            "organization/other/dev", options=StackOptions(work_dir=project), config_step=plan_config
        )


def test_a_qualified_name_reads_the_stack_file_named_after_its_stack_part(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pulumi.dev.yaml names another secrets provider, so no passphrase is needed for
    # organization/fixture/dev either (it used to look for Pulumi.organization/fixture/dev.yaml).
    (project / "Pulumi.dev.yaml").write_text("secretsprovider: awskms://alias/gitops\nconfig: {}\n")
    fake_engine(project)
    from gitops_infra.automation._state.target import StackTarget

    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    options = StackOptions(work_dir=project)
    target = StackTarget.resolve("organization/fixture/dev", options)
    assert target.stack_name.name == "dev"


@pytest.mark.parametrize("extension", [".yml", ".json"])
def test_settings_files_may_be_yml_or_json(project: Path, extension: str) -> None:
    # The engine reads the stack file with the project file's extension (ProjectStackPath).
    settings = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").unlink()
    if extension == ".json":
        settings = json.dumps(yaml.safe_load(settings))
    (project / f"Pulumi{extension}").write_text(settings)
    (project / "Pulumi.dev.yaml").unlink()
    (project / f"Pulumi.dev{extension}").write_text('{"config": {}}')
    (project / "__main__.py").write_text("")
    assert (
        offline_plan("dev", options=StackOptions(work_dir=project), config_step=plan_config).resources == ()
    )
