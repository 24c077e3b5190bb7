"""The git the automation layer runs: the project's repository, its commits, its work tree's state.

Rollback and promotion check commits out with git itself (``git worktree``); the promotion guard asks
git which commit the work tree holds. Every call goes through :func:`run_git`, so a missing git is one
clear ``GitError``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..errors import CommitNotFoundError, GitError

__all__ = ["head_commit", "repo_root", "resolve_commit", "run_git", "tracked_changes"]


def run_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``git -C repo args``, its output captured; ``GitError`` when git is not installed."""
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise GitError("gitops-infra needs git on PATH for this (rollback, promotion); install git") from exc


def repo_root(project: Path) -> Path:
    """The top of the git repository ``project`` is in; ``GitError`` outside one."""
    done = run_git(project, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitError(f"{project} is not inside a git repository; this needs the project's history")
    return Path(done.stdout.strip())


def resolve_commit(repo: Path, ref: str) -> str:
    """The full sha ``ref`` (a sha, tag or ref) names in ``repo``; ``CommitNotFoundError`` otherwise."""
    done = run_git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise CommitNotFoundError(f"{ref!r} is not a commit, tag or ref in {repo}", commit=ref)
    return done.stdout.strip()


def head_commit(repo: Path) -> str:
    """The commit the work tree of ``repo`` has checked out."""
    return resolve_commit(repo, "HEAD")


def tracked_changes(repo: Path) -> bool:
    """True when tracked files differ from the checked-out commit (untracked files do not count)."""
    return bool(run_git(repo, "status", "--porcelain", "--untracked-files=no").stdout.strip())
