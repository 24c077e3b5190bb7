"""Rollback to a known-good commit: run ``up`` with the program and stack config of that commit.

Pulumi has no rollback of its own; the documented way is to check out the older code and run ``up``.
This does it without touching the caller's work tree: the commit is checked out into a temporary
``git worktree`` that is always removed afterwards, and the update runs on the same backend and stack.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import yaml

from ..errors import CommitNotFoundError, GitOpsInfraError
from . import engine
from .operations import history, up_work
from .results import UpResult
from .workspace import StackOptions, Workspace

__all__ = ["PREVIOUS", "rollback_to_commit"]

PREVIOUS = "previous"
"""Rollback target meaning: the commit of the last successful update before the current one."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise GitOpsInfraError("rollback_to_commit needs git on PATH; install git and retry") from exc


def _repo_root(project: Path) -> Path:
    done = _git(project, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitOpsInfraError(
            f"{project} is not inside a git repository; rollback needs the project's history"
        )
    return Path(done.stdout.strip())


def _previous_commit(stack: str, options: StackOptions | None) -> str:
    updates = [d for d in history(stack, options=options) if d.kind == "update" and d.result == "succeeded"]
    if updates and updates[0].commit:
        current = updates[0].commit
        for deployment in updates[1:]:
            if deployment.commit and deployment.commit != current:
                return deployment.commit
    raise CommitNotFoundError(
        f"stack {stack!r} has no earlier successful update from a different commit to roll back to",
        commit=PREVIOUS,
    )


def _resolve(repo: Path, ref: str) -> str:
    done = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise CommitNotFoundError(f"{ref!r} is not a commit, tag or ref in {repo}", commit=ref)
    return done.stdout.strip()


@contextmanager
def _worktree(repo: Path, sha: str) -> Iterator[Path]:
    """A detached checkout of ``sha`` in a temp directory, removed whatever happens inside."""
    parent = Path(tempfile.mkdtemp(prefix="gitops-infra-rollback-"))
    tree = parent / "tree"
    try:
        added = _git(repo, "worktree", "add", "--detach", str(tree), sha)
        if added.returncode != 0:
            raise GitOpsInfraError(f"could not check out {sha[:12]}: {added.stderr.strip()}")
        yield tree
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(parent, ignore_errors=True)
        _git(repo, "worktree", "prune")


def _share_virtualenv(project: Path, checkout: Path) -> None:
    """Let the checkout use the project's virtualenv when Pulumi.yaml names one by a relative path.

    A worktree holds only tracked files, so a git-ignored ``.venv`` would be missing there.
    """
    settings = yaml.safe_load((checkout / "Pulumi.yaml").read_text()) or {}
    runtime = settings.get("runtime") if isinstance(settings, dict) else None
    options = runtime.get("options") if isinstance(runtime, dict) else None
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if isinstance(venv, str) and not Path(venv).is_absolute():
        source, target = project / venv, checkout / venv
        if source.is_dir() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source.resolve(), target_is_directory=True)


def rollback_to_commit(
    stack: str,
    commit: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
) -> UpResult:
    """Roll ``stack`` back to the program and ``Pulumi.<stack>.yaml`` of ``commit``.

    ``commit`` is a sha, a tag or a ref, or ``"previous"``: the commit of the last successful update
    before the current one. An unknown commit, or one with no ``Pulumi.yaml`` for this project, is
    refused before anything runs. The update's message names the commit (unless ``message`` is given),
    and the returned result's ``rolled_back_to`` holds its full sha.

    Example::

        result = rollback_to_commit("prod", "v1.4.0")
        result = rollback_to_commit("prod", "previous")
        print(result.rolled_back_to, result.changes)
    """
    ws = Workspace.resolve(stack, options)
    repo = _repo_root(ws.project)
    sha = _resolve(repo, _previous_commit(stack, options) if commit == PREVIOUS else commit)
    relative = ws.project.resolve().relative_to(repo.resolve())
    if _git(repo, "cat-file", "-e", f"{sha}:{(relative / 'Pulumi.yaml').as_posix()}").returncode != 0:
        raise CommitNotFoundError(
            f"commit {sha[:12]} ({commit}) has no {relative / 'Pulumi.yaml'}; it predates this project",
            commit=commit,
        )
    with _worktree(repo, sha) as tree:
        checkout = tree / relative
        _share_virtualenv(ws.project, checkout)
        at_commit = ws.at(checkout)
        work = up_work(at_commit, message=message or f"rollback to {sha[:12]} ({commit})")
        result = engine.run(at_commit, "rollback", work)
    return replace(result, rolled_back_to=sha)
