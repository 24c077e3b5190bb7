"""`--changed-since` selects the stacks whose own file changed where the engine reads it, and every stack of
a project whose program changed: never every stack for a stack file in ``stackConfigDir``, never none for
one outside the project's directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitops_infra.automation.fleet.inventory import fleet_stacks
from gitops_infra.automation.fleet.runners import changed_since


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    return tmp_path


def _project(directory: Path, name: str, settings: str, stacks: dict[str, Path]) -> Path:
    directory.mkdir(parents=True)
    (directory / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n{settings}")
    (directory / "__main__.py").write_text("# the program\n")
    for stack, path in stacks.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"config:\n  {name}:stack: {stack}\n")
    return directory


def _changed(repo: Path, projects: list[Path]) -> list[str]:
    return [s.name for s in changed_since(fleet_stacks(projects), "HEAD")]


def test_a_stack_file_in_stack_config_dir_selects_its_stack_alone(repo: Path) -> None:
    a = _project(
        repo / "a",
        "a",
        "stackConfigDir: stacks\n",
        {"dev": repo / "a/stacks/Pulumi.dev.yaml", "prod": repo / "a/stacks/Pulumi.prod.yaml"},
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    assert _changed(repo, [a]) == []

    (a / "stacks" / "Pulumi.prod.yaml").write_text("config:\n  a:stack: prod, edited\n")
    assert _changed(repo, [a]) == ["organization/a/prod"]  # not dev: its file did not change

    (a / "stacks" / "README.md").write_text("not a stack file: the program's\n")
    _git(repo, "add", "-A")
    assert _changed(repo, [a]) == ["organization/a/dev", "organization/a/prod"]


def test_a_stack_file_outside_the_project_s_directory_is_still_its_stack_s(repo: Path) -> None:
    # stackConfigDir: ../config (Go's filepath.Join leaves the project): the engine reads it there.
    a = _project(repo / "a", "a", "stackConfigDir: ../config\n", {"dev": repo / "config/Pulumi.dev.yaml"})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "config" / "Pulumi.dev.yaml").write_text("config:\n  a:stack: dev, edited\n")
    assert _changed(repo, [a]) == ["organization/a/dev"]


def test_settings_files_the_engine_reads_for_no_stack_change_no_stack(repo: Path) -> None:
    a = _project(repo / "a", "a", "stackConfigDir: stacks\n", {"dev": repo / "a/stacks/Pulumi.dev.yaml"})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    # Beside the project file, where the engine no longer looks; and Pulumi Deployments' settings.
    (a / "Pulumi.dev.yaml").write_text("config:\n  a:stack: stale\n")
    (a / "stacks" / "Pulumi.dev.deploy.yaml").write_text("settings:\n  sourceContext: {}\n")
    assert _changed(repo, [a]) == []
    (a / "Pulumi.yaml").write_text((a / "Pulumi.yaml").read_text() + "description: changed\n")
    assert _changed(repo, [a]) == ["organization/a/dev"]  # the project file is the program's
