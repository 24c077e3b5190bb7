"""The promotion guard's clean-tree check: the engine's own ``git.dirty`` rule, failing closed (real git,
no engine; tests/engine/test_git_dirty.py holds it against the engine's record)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitops_infra.automation._state.git import uncommitted
from gitops_infra.errors import GitError

from ..support import commit_all, git, init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", "git state")
    (root / "__main__.py").write_text("print('the program')\n")
    (root / "Pulumi.prod.yaml").write_text("config: {}\n")
    (root / ".gitignore").write_text("__pycache__/\n")
    commit_all(root, "one")
    return root


def test_a_clean_tree_is_clean_and_an_edit_is_not(repo: Path) -> None:
    assert uncommitted(repo) == ()
    (repo / "__main__.py").write_text("print('edited')\n")
    assert uncommitted(repo) == ("__main__.py",)


def test_an_untracked_file_the_program_may_import_counts_as_the_engine_counts_it(repo: Path) -> None:
    (repo / "helpers.py").write_text("RUN_ON_PROD = True\n")
    assert uncommitted(repo) == ("helpers.py",)


def test_an_ignored_file_does_not_count_since_git_status_does_not_list_it(repo: Path) -> None:
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert uncommitted(repo) == ()


def test_the_repository_s_own_untracked_files_setting_is_followed_as_the_engine_follows_it(
    repo: Path,
) -> None:
    # The engine runs a bare `git status --porcelain -z`, so the repository's config decides.
    (repo / "helpers.py").write_text("RUN_ON_PROD = True\n")
    git(repo, "config", "status.showUntrackedFiles", "no")
    assert uncommitted(repo) == ()


def test_a_project_in_a_subdirectory_sees_the_whole_repository(repo: Path) -> None:
    project = repo / "infra"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    commit_all(repo, "a project below the top")
    (repo / "elsewhere.py").write_text("x = 1\n")
    assert uncommitted(project) == ("elsewhere.py",)


def test_a_renamed_file_is_one_entry(repo: Path) -> None:
    git(repo, "mv", "__main__.py", "main.py")
    assert uncommitted(repo) == ("main.py",)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_still_counts(repo: Path, flag: str) -> None:
    git(repo, "update-index", flag, "__main__.py")
    (repo / "__main__.py").write_text("print('edited where git status does not look')\n")
    assert git(repo, "status", "--porcelain") == ""  # what the engine reads
    assert uncommitted(repo) == ("__main__.py",)


def test_git_status_failing_is_an_error_not_a_clean_tree(repo: Path) -> None:
    (repo / ".git" / "index").write_bytes(b"not an index")
    with pytest.raises(GitError, match="git status` failed"):
        uncommitted(repo)
