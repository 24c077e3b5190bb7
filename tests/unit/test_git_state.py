"""The promotion guard's clean-tree check fails closed (real git, no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitops_infra.automation._git import tracked_changes
from gitops_infra.errors import GitError

from ..support import commit_all, git, init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", "git state")
    (root / "__main__.py").write_text("print('the program')\n")
    (root / "Pulumi.prod.yaml").write_text("config: {}\n")
    commit_all(root, "one")
    return root


def test_a_clean_tree_is_clean_and_an_edit_is_not(repo: Path) -> None:
    assert not tracked_changes(repo)
    (repo / "untracked.txt").write_text("not part of any commit\n")
    assert not tracked_changes(repo)  # untracked files do not run
    (repo / "__main__.py").write_text("print('edited')\n")
    assert tracked_changes(repo)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_still_counts(repo: Path, flag: str) -> None:
    git(repo, "update-index", flag, "__main__.py")
    (repo / "__main__.py").write_text("print('edited where git status does not look')\n")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""  # what the guard used to read
    assert tracked_changes(repo)


def test_git_status_failing_is_an_error_not_a_clean_tree(repo: Path) -> None:
    (repo / ".git" / "index").write_bytes(b"not an index")
    with pytest.raises(GitError, match="git status` failed"):
        tracked_changes(repo)
