"""Rollback to a known-good commit: run ``up`` with the program and stack config of that commit.

Pulumi has no rollback of its own; the documented way is to check out the older code and run ``up``.
This does it without touching the caller's work tree: the commit is checked out into a temporary
``git worktree`` that is always removed afterwards, and the update runs on the same backend and stack.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal, overload

from ..errors import CommitNotFoundError, GitError
from ._engine.processes import alive_here, used_as_cwd
from ._engine.runner import run_engine
from ._engine.work import preview_work, up_work
from ._state.git import has_commit, repo_root, resolve_commit, run_git, shallow_hint
from ._state.history import deployments
from ._state.stack_files import PROJECT_FILE, SETTINGS_EXTENSIONS, find_settings
from ._state.target import Project, StackTarget
from .options import PREVIOUS, StackOptions
from .results.deployments import DeploymentKind, DeploymentResult, PreviewResult, UpResult

__all__ = [
    "PREVIOUS",
    "WORKTREE_PREFIX",
    "checked_out",
    "remove_stale_worktrees",
    "rollback_to_commit",
    "rollback_worktrees",
]

WORKTREE_PREFIX = "gitops-infra-rollback-"
"""The temp directory a rollback checks its commit out under: ``<tmp>/gitops-infra-rollback-*/tree``."""
_OWNER_FILE = "owner.json"
"""Beside ``tree``: which process made the worktree, so ``recover`` can tell a stale one from a live one."""


def _previous_commit(target: StackTarget) -> str:
    """The newest successful update's commit that is not the current one: the commit of the newest
    update, even a failed one, since a failed update leaves the stack partly at its commit (a rotation
    to a key Flux could not use). So after a failed ``up``, "previous" is the last good commit."""
    updates = [d for d in deployments(target) if d.kind is DeploymentKind.UPDATE]
    current = updates[0].commit if updates else None
    if current:
        for deployment in updates:
            succeeded = deployment.result is DeploymentResult.SUCCEEDED
            if succeeded and deployment.commit and deployment.commit != current:
                return deployment.commit
    raise CommitNotFoundError(
        f"stack {target.stack!r} has no earlier successful update from a different commit to roll back to",
        commit=PREVIOUS,
    )


@contextmanager
def _worktree(repo: Path, sha: str) -> Iterator[Path]:
    """A detached checkout of ``sha`` in a temp directory, removed whatever happens inside.

    A ``kill -9`` skips the removal: ``owner.json`` beside the checkout lets ``recover`` find it later
    and tell it from the worktree of a rollback that is still running.
    """
    parent = Path(tempfile.mkdtemp(prefix=WORKTREE_PREFIX))
    tree = parent / "tree"
    try:
        (parent / _OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
        added = run_git(repo, "worktree", "add", "--detach", str(tree), sha)
        if added.returncode != 0:
            raise GitError(f"could not check out {sha[:12]}: {added.stderr.strip()}")
        yield tree
    finally:
        _remove_worktree(repo, tree)


def _remove_worktree(repo: Path, tree: Path) -> None:
    run_git(repo, "worktree", "remove", "--force", str(tree))
    shutil.rmtree(tree.parent, ignore_errors=True)
    run_git(repo, "worktree", "prune")


def _owner_alive(parent: Path) -> bool:
    """True when the rollback that made this worktree may still be running."""
    try:
        owner = json.loads((parent / _OWNER_FILE).read_text())
        pid, host = int(owner["pid"]), str(owner["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False  # no owner recorded: nothing can still be using it under our prefix
    # Another machine's rollback (a shared temp dir) cannot be judged from here: leave it.
    return host != socket.gethostname() or alive_here(host, pid)


def rollback_worktrees(project: Path) -> tuple[Path, ...]:
    """The temporary worktrees (``WORKTREE_PREFIX``) of rollbacks and promotions in ``project``'s
    repository, whatever became of the run that made them."""
    done = run_git(project, "worktree", "list", "--porcelain")
    if done.returncode != 0:
        return ()  # not a git repository: rollbacks never ran here
    trees = (
        Path(line.removeprefix("worktree "))
        for line in done.stdout.splitlines()
        if line.startswith("worktree ")
    )
    return tuple(
        tree for tree in trees if tree.name == "tree" and tree.parent.name.startswith(WORKTREE_PREFIX)
    )


def remove_stale_worktrees(project: Path) -> tuple[Path, ...]:
    """Remove the rollback worktrees a killed rollback left in ``project``'s repository; return them.

    Only our own (``WORKTREE_PREFIX``) whose rollback process is gone are touched, and never one that a
    live process still works in (a plugin of the killed run finishing a create); then ``git worktree
    prune`` drops what git still lists for directories that no longer exist.
    """
    trees = rollback_worktrees(project)
    if not trees:
        return ()
    repo = repo_root(project)
    removed: list[Path] = []
    for tree in trees:
        if _owner_alive(tree.parent) or used_as_cwd(tree):
            continue
        _remove_worktree(repo, tree)
        removed.append(tree)
    run_git(repo, "worktree", "prune")
    return tuple(removed)


def _share_virtualenv(project: Project, checkout: Project) -> None:
    """Let the checkout use the project's virtualenv when its Pulumi.yaml names one by a relative path.

    A worktree holds only tracked files, so a git-ignored ``.venv`` would be missing there.
    """
    runtime = checkout.settings.get("runtime")
    options = runtime.get("options") if isinstance(runtime, dict) else None
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if isinstance(venv, str) and not Path(venv).is_absolute():
        source, link = project.path / venv, checkout.path / venv
        if source.is_dir() and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(source.resolve(), target_is_directory=True)


@overload
def rollback_to_commit(
    stack: str,
    commit: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    preview_only: Literal[False] = ...,
) -> UpResult: ...


@overload
def rollback_to_commit(
    stack: str,
    commit: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    preview_only: Literal[True],
) -> PreviewResult: ...


def rollback_to_commit(
    stack: str,
    commit: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
    preview_only: bool = False,
) -> UpResult | PreviewResult:
    """Roll ``stack`` back to the program and ``Pulumi.<stack>.yaml`` of ``commit``.

    With ``preview_only``, nothing is applied: the result is the ``PreviewResult`` of that commit,
    computed in the same temporary worktree, so a person (or a pull request) can look before it leaps.

    ``commit`` is a sha, a tag or a ref, or ``"previous"``: the commit of the last successful update
    before the current one (the newest update's, succeeded or failed). An unknown commit, or one with no
    ``Pulumi.yaml`` for this project, is refused before anything runs. The update's message names the
    commit (unless ``message`` is given), and the returned result's ``rolled_back_to`` holds its full sha.

    Example::

        result = rollback_to_commit("prod", "v1.4.0")
        result = rollback_to_commit("prod", "previous")
        print(result.rolled_back_to, result.changes)
        print(rollback_to_commit("prod", "previous", preview_only=True).steps)
    """
    target = StackTarget.resolve(stack, options)
    repo = repo_root(target.project.path)
    sha = resolve_commit(repo, _previous_commit(target) if commit == PREVIOUS else commit)
    with checked_out(target, repo, sha, commit) as at_commit:
        if preview_only:
            return run_engine(at_commit, "rollback", preview_work(stack, "preview"))
        work = up_work(at_commit, message=message or f"rollback to {sha[:12]} ({commit})")
        result = run_engine(at_commit, "rollback", work)
    return replace(result, rolled_back_to=sha)


@contextmanager
def checked_out(target: StackTarget, repo: Path, sha: str, named_as: str) -> Iterator[StackTarget]:
    """``target`` with the program and stack config of commit ``sha``, checked out in a temporary
    worktree that is always removed; rollback and promotion both deploy through it.

    ``named_as`` is how the caller named the commit. A commit with no ``Pulumi.yaml`` for this project is
    refused before anything is checked out.
    """
    relative = target.project.path.resolve().relative_to(repo.resolve())
    if not has_commit(repo, sha):
        raise CommitNotFoundError(
            f"commit {sha[:12]} ({named_as}) is not in this clone{shallow_hint(repo)}", commit=named_as
        )

    def at_commit(base: str) -> bool:
        paths = (relative / f"{base}{extension}" for extension in SETTINGS_EXTENSIONS)
        return any(run_git(repo, "cat-file", "-e", f"{sha}:{p.as_posix()}").returncode == 0 for p in paths)

    if not at_commit(PROJECT_FILE):
        raise CommitNotFoundError(
            f"commit {sha[:12]} ({named_as}) has no {relative / 'Pulumi.yaml'}; it predates this project",
            commit=named_as,
        )
    # Both sides look where the engine reads, each by its own project file (ProjectStackPath): the
    # commit's Pulumi.yaml may keep its stack files elsewhere (stackConfigDir) or be a Pulumi.yml.
    has_config = target.project.stack_settings(target.stack_name) is not None
    with _worktree(repo, sha) as tree:
        checkout = tree / relative
        # The commit's own files, read as carefully as the work tree's: a clear error, not a traceback.
        settings_file = find_settings(checkout, PROJECT_FILE) or checkout / f"{PROJECT_FILE}.yaml"
        project = Project.load(checkout, shown_as=f"{relative / settings_file.name} at {sha[:12]}")
        _share_virtualenv(target.project, project)
        stack_file = project.stack_settings_path(target.stack_name)
        in_repo = stack_file.relative_to(tree).as_posix() if stack_file.is_relative_to(tree) else stack_file
        there = project.read_stack_settings(target.stack_name, shown_as=f"{in_repo} at {sha[:12]}")
        if has_config and not there.exists:
            # The stack would run with no config of its own: whatever the program's defaults make of that.
            raise CommitNotFoundError(
                f"commit {sha[:12]} ({named_as}) has no {in_repo}: it predates stack {target.stack!r}'s "
                f"config (its {settings_file.name} has the engine read it there), so the stack would run "
                "without it; pick a commit that has it",
                commit=named_as,
            )
        yield target.running(project)
