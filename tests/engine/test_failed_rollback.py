"""A rollback to a commit whose program raises: no worktree left, OperationFailedError, stack still usable."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from gitops_infra.automation import history, rollback_to_commit, up
from gitops_infra.errors import OperationFailedError

from ..support import git
from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

FAILURE = "commit F cannot deploy: the fixture program raised"


def _urns(state: bytes) -> list[str]:
    return sorted(r["urn"] for r in json.loads(state)["checkpoint"]["latest"]["resources"])


def _rollback_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("gitops-infra-rollback-*"))


def test_a_rollback_to_a_failing_commit_leaves_nothing_behind(repo: FixtureRepo) -> None:
    # F: a commit whose program raises. It was never deployed; the stack runs B.
    repo.configure({"a": "one", "b": "two"}, fail=FAILURE)
    commit_f = repo.commit("F: a program that raises")
    repo.configure({"a": "uno", "c": "three"})
    repo.raw_stack().remove_config("fixture:fail")
    commit_b = repo.commit("B: change a, drop b, add c")
    deployed = up("dev", options=repo.options)
    assert deployed.commit == commit_b
    state_before = repo.state_bytes()
    leftovers = _rollback_dirs()

    with pytest.raises(OperationFailedError) as failed:
        rollback_to_commit("dev", commit_f, options=repo.options)

    assert FAILURE in str(failed.value)
    assert FAILURE in failed.value.engine_message
    assert failed.value.stack == "dev"
    # No worktree, no temp checkout, and the caller's work tree untouched.
    assert len(repo.worktrees()) == 1
    assert _rollback_dirs() == leftovers
    assert git(repo.root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo.root, "rev-parse", "HEAD") == commit_b
    assert git(repo.root, "status", "--porcelain") == ""
    # Nothing was applied: the program failed before registering a resource.
    assert repo.on_disk() == {"a": "uno", "c": "three"}
    assert [(d.result, d.commit) for d in history("dev", options=repo.options)][:1] == [("failed", commit_f)]
    # The state is valid, unlocked of pending operations, and lists the same resources as before.
    latest = json.loads(repo.state_bytes())["checkpoint"]["latest"]
    assert not latest.get("pending_operations")
    assert _urns(repo.state_bytes()) == _urns(state_before)

    # The stack is still usable: an update from the work tree succeeds and changes nothing.
    again = up("dev", options=repo.options)
    assert not again.has_changes
    assert again.outputs["files"] == {"a": "uno", "c": "three"}
    assert repo.on_disk() == {"a": "uno", "c": "three"}
    repo.configure({"a": "one", "b": "two"})
    repo.commit("C: back to a and b")
    final = up("dev", options=repo.options)
    assert final.outputs["files"] == {"a": "one", "b": "two"}
    assert repo.on_disk() == {"a": "one", "b": "two"}
