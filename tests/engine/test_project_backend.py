"""A project's own ``backend.url`` on the real engine: the stack is operated where Pulumi keeps it.

Pulumi takes ``PULUMI_BACKEND_URL``, else the project's ``backend.url`` (``GetCurrentCloudURLWithSource``,
pkg/workspace/creds.go, v3.274.1). Here no variable is set anywhere: the projects pin their backends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, detect_drift, history, up
from gitops_infra.automation._state.target import DEFAULT_STATE_DIR
from gitops_infra.cli import EXIT_OK, main

from ..support import commit_all, fixture_project, init_repo, workspace
from .conftest import SECRET_TOKEN, STACK, FixtureRepo

pytestmark = pytest.mark.engine


def _pin(root: Path, backend: Path) -> None:
    with (root / "Pulumi.yaml").open("a") as settings:
        settings.write(f"backend:\n  url: {backend.as_uri()}\n")


def _unset(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``env`` without ``PULUMI_BACKEND_URL``, which this process's environment lacks too."""
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    return {key: value for key, value in env.items() if key != "PULUMI_BACKEND_URL"}


def _stacks(backend: Path) -> list[str]:
    return sorted(p.name for p in backend.glob(".pulumi/stacks/**/*.json"))


def test_a_project_that_pins_its_backend_is_operated_there_and_up_create_makes_no_second_copy(
    repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    up(STACK, options=repo.options)  # version 1, on the backend the project is about to pin
    _pin(repo.root, repo.backend)
    repo.commit("the project pins its backend")
    # A local default beside it (an old local run's, say) must not take its place.
    local = repo.root / DEFAULT_STATE_DIR
    local.mkdir()
    options = StackOptions(work_dir=repo.root, env=_unset(repo.env, monkeypatch))

    assert not detect_drift(STACK, options=options).has_drift
    # The advice a missing stack used to get: with it, a second copy of the stack was deployed.
    result = up(STACK, options=options, create=True)

    assert result.version == 2 and [d.version for d in history(STACK, options=options)] == [2, 1]
    assert _stacks(repo.backend) == [f"{STACK}.json"] and _stacks(local) == []


def _project(repo: FixtureRepo, tmp_path: Path, name: str, backend: Path) -> tuple[Path, Path]:
    """A committed fixture project ``name`` pinning ``backend``, its dev stack updated once; its root and
    files directory."""
    root = fixture_project(init_repo(tmp_path / name, name))
    settings = root / "Pulumi.yaml"
    settings.write_text(settings.read_text().replace("name: fixture\n", f"name: {name}\n", 1))
    files = tmp_path / f"{name}-files"
    files.mkdir()
    backend.mkdir()
    env = {**repo.env, "PULUMI_BACKEND_URL": backend.as_uri()}
    stack = auto.Stack.create(STACK, workspace(root, env))
    stack.set_all_config(
        {
            "fixture:directory": auto.ConfigValue(str(files)),
            "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
            "fixture:files": auto.ConfigValue(json.dumps({"a": name})),
        }
    )
    _pin(root, backend)
    commit_all(root, f"{name}, pinned to its backend")
    up(STACK, options=StackOptions(work_dir=root, env=env))
    return root, files


def test_a_fleet_of_projects_on_different_backends_is_checked_in_one_drift_all(
    repo: FixtureRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = _project(repo, tmp_path, "first", tmp_path / "backend-first")
    second, second_files = _project(repo, tmp_path, "second", tmp_path / "backend-second")
    (second_files / "a").write_text("edited out of band")
    env: dict[str, str | None] = {**_unset(repo.env, monkeypatch), "PULUMI_BACKEND_URL": None}

    result = CliRunner(env=env).invoke(
        main, ["drift", "--all", "--project", str(first), "--project", str(second), "--json"]
    )

    document = json.loads(result.stdout)
    by_name = {s["name"]: s for s in document["stacks"]}
    assert by_name["organization/first/dev"]["error"] is None, result.stdout
    assert by_name["organization/second/dev"]["error"] is None, result.stdout
    assert by_name["organization/first/dev"]["has_drift"] is False
    assert by_name["organization/second/dev"]["has_drift"] is True
    assert result.exit_code != EXIT_OK  # drift found
    assert not (first / DEFAULT_STATE_DIR).exists() and not (second / DEFAULT_STATE_DIR).exists()
