"""The git the automation layer runs: the project's repository, its commits, its work tree's state.

Rollback and promotion check commits out with git itself (``git worktree``); the promotion guard asks
git which commit the work tree holds. Every call goes through :func:`run_git`, so a missing git is one
clear ``GitError``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ...errors import CommitNotFoundError, GitError

__all__ = [
    "changed_files",
    "has_commit",
    "head_commit",
    "repo_root",
    "resolve_commit",
    "run_git",
    "shallow_hint",
    "uncommitted",
]


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
        raise CommitNotFoundError(
            f"{ref!r} is not a commit, tag or ref in {repo}{shallow_hint(repo)}", commit=ref
        )
    return done.stdout.strip()


def has_commit(repo: Path, sha: str) -> bool:
    """True when ``repo`` holds commit ``sha`` (a shallow clone may not)."""
    return run_git(repo, "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def shallow_hint(repo: Path) -> str:
    """What to do when a commit is missing from a shallow clone, or ``""`` for a full one."""
    if run_git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() != "true":
        return ""
    return (
        "; this is a shallow clone, which holds only the newest commits: fetch the history "
        "(`git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout)"
    )


def head_commit(repo: Path) -> str:
    """The commit the work tree of ``repo`` has checked out."""
    return resolve_commit(repo, "HEAD")


def uncommitted(project: Path) -> tuple[str, ...]:
    """What makes the work tree of ``project`` dirty, as the engine records it (``git.dirty``), one path
    each (relative to the repository's top); empty when it is clean.

    The engine's rule, exactly: the update is dirty when ``git status --porcelain -z``, run in the
    project's directory, prints anything (``isGitWorkTreeDirty`` in ``pkg/cmd/pulumi/metadata/
    metadata.go``, v3.274.1). So an untracked file counts (a module the program imports runs as much as
    a tracked one), and an ignored one does not, as the repository's ``.gitignore`` and its
    ``status.showUntrackedFiles`` say.

    Stricter than the engine in one way: files marked ``--skip-worktree`` or ``--assume-unchanged`` count,
    since ``git status`` does not look at them at all: an edit hidden that way would reach a stack as if it
    were the commit. Fails closed: ``GitError`` when git cannot say.
    """
    status = run_git(project, "status", "--porcelain", "-z")
    if status.returncode != 0:
        raise GitError(
            f"`git status` failed in {project}, so its work tree cannot be checked: {status.stderr.strip()}"
        )
    found: list[str] = []
    entries = iter(status.stdout.split("\0"))
    for entry in entries:
        if not entry:
            continue
        found.append(entry[3:] or entry)
        if {"R", "C"} & set(entry[:2]):
            next(entries, None)  # -z puts a rename's or copy's source after it, as an entry of its own
    # Every file of the repository (`:/`), wherever in it the project is; -v tags a skip-worktree file
    # `S` and an assume-unchanged one in lowercase (`h`, ...).
    listed = run_git(project, "ls-files", "-v", "--full-name", "--", ":/")
    if listed.returncode != 0:
        raise GitError(f"`git ls-files -v` failed in {project}: {listed.stderr.strip()}")
    found.extend(line[2:] for line in listed.stdout.splitlines() if line[:1] == "S" or line[:1].islower())
    return tuple(found)


def changed_files(repo: Path, ref: str) -> tuple[Path, ...]:
    """The files (absolute) that differ between ``ref`` and the work tree of ``repo``, as ``git diff
    --name-only`` lists them: committed since, or edited and not yet committed."""
    base = resolve_commit(repo, ref)
    done = run_git(repo, "diff", "--name-only", "-z", "--no-renames", base)
    if done.returncode != 0:
        raise GitError(f"`git diff --name-only {ref}` failed in {repo}: {done.stderr.strip()}")
    return tuple(repo / name for name in done.stdout.split("\0") if name)
