"""A killed rollback's worktree is removed by `recover`, but never from under a process working in it."""

from __future__ import annotations

import json
import socket
import subprocess
import tempfile
from pathlib import Path

from gitops_infra.automation.rollback import WORKTREE_PREFIX, remove_stale_worktrees, rollback_worktrees

from ..support import commit_all, git, init_repo


def test_a_worktree_a_live_process_works_in_is_kept(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", "worktrees")
    (repo / "README").write_text("x\n")
    commit_all(repo, "one")
    parent = Path(tempfile.mkdtemp(prefix=WORKTREE_PREFIX))
    tree = parent / "tree"
    git(repo, "worktree", "add", "--detach", str(tree), "HEAD")
    # The rollback that made it is gone (no process has this pid), but a plugin of it is not.
    (parent / "owner.json").write_text(json.dumps({"pid": 2**22 + 1, "host": socket.gethostname()}))
    plugin = subprocess.Popen(["sleep", "60"], cwd=tree)
    try:
        assert rollback_worktrees(repo) == (tree,)
        assert remove_stale_worktrees(repo) == ()
        assert tree.is_dir()
    finally:
        plugin.kill()
        plugin.wait()
    assert remove_stale_worktrees(repo) == (tree,)
    assert not parent.exists() and rollback_worktrees(repo) == ()
