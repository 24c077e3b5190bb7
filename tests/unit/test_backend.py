"""The backend a stack is on, chosen as Pulumi chooses it (no engine: the choice is made before it runs;
tests/engine/test_project_backend.py runs the engine on it)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions
from gitops_infra.automation._state.backend import BackendSource
from gitops_infra.automation._state.target import DEFAULT_STATE_DIR, StackTarget
from gitops_infra.errors import ConfigError

from ..support import fake_engine, write_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_engine(write_project(tmp_path / "p", "p"))
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path / "p"


def _pin(project: Path, url: str) -> None:
    with (project / "Pulumi.yaml").open("a") as settings:
        settings.write(f"backend:\n  url: {url}\n")


def _target(project: Path, **options: object) -> StackTarget:
    return StackTarget.resolve("dev", StackOptions(work_dir=project, **options))  # type: ignore[arg-type]


def test_the_project_s_own_backend_url_is_the_backend_and_what_the_engine_is_given(project: Path) -> None:
    _pin(project, "s3://team-state?region=eu-west-1")
    (project / DEFAULT_STATE_DIR).mkdir()  # a local default beside it must not take its place
    target = _target(project)
    assert target.backend_url == "s3://team-state?region=eu-west-1"
    assert target.backend.source is BackendSource.PROJECT
    assert target.env["PULUMI_BACKEND_URL"] == "s3://team-state?region=eu-west-1"


def test_pulumi_backend_url_wins_over_the_project_s_as_pulumi_has_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GetCurrentCloudURLWithSource (pkg/workspace/creds.go): the variable, then backend.url.
    _pin(project, "s3://team-state")
    monkeypatch.setenv("PULUMI_BACKEND_URL", "gs://other-state")
    target = _target(project)
    assert (target.backend_url, target.backend.source) == ("gs://other-state", BackendSource.ENV)
    assert "in place of the project's backend.url s3://team-state" in target.backend.where()
    # The options' environment is the engine's: there an empty variable is unset, so the project's wins.
    assert _target(project, env={"PULUMI_BACKEND_URL": ""}).backend_url == "s3://team-state"
    assert _target(project, env={"PULUMI_BACKEND_URL": "file:///x"}).backend_url == "file:///x"
    assert _target(project, backend_url="file:///y").backend.source is BackendSource.OPTIONS


def test_the_local_default_only_when_nothing_names_a_backend(project: Path) -> None:
    target = _target(project)
    assert target.backend_url == (project / DEFAULT_STATE_DIR).as_uri()
    assert target.backend.source is BackendSource.DEFAULT
    _pin(project, "''")
    assert _target(project).backend.source is BackendSource.DEFAULT  # an empty url is none, as Pulumi has it


def test_a_relative_file_url_is_the_project_s_directory_s_as_the_engine_resolves_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # massageBlobPath (pkg/backend/diy/backend.go) makes it absolute against the engine's working
    # directory, which is the project's; a rollback's worktree must not move it.
    _pin(project, "file://./state?no_tmp_dir=false")
    monkeypatch.chdir(tmp_path)
    target = _target(project)
    assert target.backend_url == f"file://{project}/state?no_tmp_dir=false"
    files = target.file_backend()
    assert files is not None and files.root == project / "state" / ".pulumi"


def test_a_file_url_under_home_is_expanded_as_pulumi_expands_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pulumi reads the home directory from the user's passwd entry (os/user), not from $HOME.
    monkeypatch.setenv("HOME", str(project / "not-home"))
    _pin(project, "file://~/states")
    assert _target(project).backend_url == f"file://{pwd.getpwuid(os.getuid()).pw_dir}/states"


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ("backend: s3://bucket\n", "Pulumi.yaml.backend: must be a mapping"),
        ("backend:\n  url: [s3://a]\n", "Pulumi.yaml.backend.url: must be a string"),
    ],
)
def test_a_malformed_backend_section_is_named_before_anything_runs(
    project: Path, section: str, problem: str
) -> None:
    with (project / "Pulumi.yaml").open("a") as settings:
        settings.write(section)
    with pytest.raises(ConfigError) as refused:
        _target(project)
    assert problem in str(refused.value)
