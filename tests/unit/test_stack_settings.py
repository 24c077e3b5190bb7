"""A stack's settings, read where and as the engine reads them, by every guard (issue 44, item 1).

The engine's own agreement on these layouts is in tests/engine/test_stack_settings.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions
from gitops_infra.automation._state.project import Project
from gitops_infra.automation._state.target import StackTarget
from gitops_infra.automation.stack_name import parse_stack_name
from gitops_infra.errors import CommitNotFoundError, ConfigError

from ..support import commit_all, fake_engine, init_repo

DEV = parse_stack_name("dev")


def _project(root: Path, files: dict[str, str]) -> Project:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return Project.find(root)


def _values(project: Project, key: str) -> list[object]:
    return [setting.value for setting in project.read_stack_settings(DEV).values(key)]


def test_the_stack_file_is_in_stack_config_dir_with_the_project_file_s_extension(tmp_path: Path) -> None:
    project = _project(tmp_path, {"Pulumi.yml": "name: p\nstackConfigDir: ./conf/../stacks\n"})
    assert project.stack_settings_path(DEV) == tmp_path / "stacks" / "Pulumi.dev.yml"
    # Go's filepath.Join: an absolute stackConfigDir is under the project all the same.
    (tmp_path / "Pulumi.yml").write_text("name: p\nstackConfigDir: /stacks\n")
    assert Project.find(tmp_path).stack_settings_path(DEV) == tmp_path / "stacks" / "Pulumi.dev.yml"


def test_the_project_s_defaults_fill_in_what_the_stack_does_not_set_as_merge_config_does(
    tmp_path: Path,
) -> None:
    project = _project(
        tmp_path,
        {
            "Pulumi.yaml": (
                "name: p\nconfig:\n"
                "  size: small\n"  # short form: p:size's default
                "  p:tier: {type: string, default: gold}\n"  # long form
                "  aws:region: eu-west-1\n"  # short form in another namespace: a value
                "  p:zone: {value: a, default: null}\n"  # a null default is none: the value
                "  p:name: first\n"  # two spellings of one key: the first in sorted order
                "  name: second\n"
            ),
            "Pulumi.dev.yaml": "config:\n  p:tier: silver\n",
        },
    )
    assert _values(project, "p:size") == ["small"]
    assert _values(project, "p:tier") == ["silver"]  # the stack's own wins
    assert _values(project, "aws:region") == ["eu-west-1"]
    assert _values(project, "p:zone") == ["a"]
    assert _values(project, "p:name") == ["second"]  # "name" sorts before "p:name"
    assert _values(project, "p:missing") == []


def test_a_key_the_stack_file_spells_twice_is_either_value(tmp_path: Path) -> None:
    # stackConfigNamespacedWithProject fills a Go map: which spelling wins is the map's order.
    project = _project(
        tmp_path,
        {"Pulumi.yaml": "name: p\n", "Pulumi.dev.yaml": "config:\n  env: a\n  p:env: b\n  p:config:env: a\n"},
    )
    assert _values(project, "p:env") == ["a", "b"]


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        pytest.param(
            {"Pulumi.yaml": "name: p\nconfig: stacks\nstackConfigDir: stacks\n"},
            "Pulumi.yaml: config names the stack files' directory, and so does stackConfigDir",
            id="both directories",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nstackConfigDir: [a]\n"},
            "Pulumi.yaml.stackConfigDir: must be a directory's path",
            id="a directory that is no text",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nconfig:\n  p:x: 1.5\n"},
            "Pulumi.yaml: config.p:x: must be a value",
            id="a short form the schema refuses",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nconfig:\n  p:x: {name: prod}\n"},
            "Pulumi.yaml: config.p:x: must be a value",
            id="a mapping that is no declaration",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\n", "Pulumi.dev.yaml": "config: [a]\n"},
            "Pulumi.dev.yaml: config: must be a mapping",
            id="a stack config that is no mapping",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\n", "Pulumi.dev.yaml": "config:\n  a:b:c: 1\n"},
            "Pulumi.dev.yaml: config: 'a:b:c' is not a config key",
            id="a key ParseKey refuses",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\n", "Pulumi.dev.yaml/x": ""},
            "Pulumi.dev.yaml: is not a file",
            id="a directory where the file would be",
        ),
    ],
)
def test_what_the_engine_refuses_is_a_config_error_naming_the_file(
    tmp_path: Path, files: dict[str, str], problem: str
) -> None:
    project = _project(tmp_path, files)
    with pytest.raises(ConfigError) as info:
        project.read_stack_settings(DEV)
    assert problem in str(info.value)


# -- rollback's and promote's guard: the commit must have the stack's config, where it reads it -----------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    root = init_repo(tmp_path / "repo", "settings")
    (root / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (root / ".gitignore").write_text(".tools/\n")
    fake_engine(root)
    return root


def _checked_out(root: Path, sha: str) -> None:
    from gitops_infra.automation._state.git import repo_root
    from gitops_infra.automation.rollback import checked_out

    target = StackTarget.resolve("prod", StackOptions(work_dir=root))
    with checked_out(target, repo_root(root), sha, sha[:7]):
        pass


def test_a_commit_that_predates_the_stack_file_in_stack_config_dir_is_refused(repo: Path) -> None:
    before = commit_all(repo, "the project, before prod's config")
    (repo / "stacks").mkdir()
    (repo / "stacks" / "Pulumi.prod.yaml").write_text("config:\n  p:environment: {name: production}\n")
    after = commit_all(repo, "prod's config")
    with pytest.raises(
        CommitNotFoundError, match=r"has no stacks/Pulumi\.prod\.yaml: it predates stack 'prod'"
    ):
        _checked_out(repo, before)
    _checked_out(repo, after)  # the commit that has it is taken


def test_a_commit_whose_project_kept_the_stack_file_elsewhere_is_read_by_its_own_layout(repo: Path) -> None:
    # Back then the stack files were beside Pulumi.yaml: the engine at that commit reads them there.
    (repo / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (repo / "Pulumi.prod.yaml").write_text("config: {}\n")
    old = commit_all(repo, "prod's config beside the project")
    (repo / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (repo / "stacks").mkdir()
    (repo / "Pulumi.prod.yaml").rename(repo / "stacks" / "Pulumi.prod.yaml")
    commit_all(repo, "the stack files moved")
    _checked_out(repo, old)
    # ... and a commit with a stale Pulumi.prod.yaml beside a project that reads stacks/ has none.
    (repo / "Pulumi.prod.yaml").write_text("config: {}\n")
    (repo / "stacks" / "Pulumi.prod.yaml").unlink()
    stale = commit_all(repo, "a stale file where the engine does not read")
    (repo / "stacks" / "Pulumi.prod.yaml").write_text("config: {}\n")
    commit_all(repo, "prod's config back")
    with pytest.raises(CommitNotFoundError, match=r"has no stacks/Pulumi\.prod\.yaml"):
        _checked_out(repo, stale)
