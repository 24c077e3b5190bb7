"""A damaged lock on the real engine: a lock file cut short blocks every command, so `status` names it and
`recover` clears it.

A write that dies (a crash, a full disk, ``kill -9`` while the lock is taken) can leave an empty or
truncated file in the stack's lock directory. The engine takes every file there for a lock and reads it:
this one fails that read, and every command on the stack fails with it (``checkForLock``,
pkg/backend/diy/lock.go, v3.274.1): that failure is a ``StackLockedError`` naming the file and `recover`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitops_infra.automation import StackOptions, destroy, recover, refresh, status, up
from gitops_infra.cli import EXIT_OK, main
from gitops_infra.errors import GitOpsInfraError, StackLockedError

from .conftest import STACK, FixtureRepo

pytestmark = pytest.mark.engine

LOCKS = ".pulumi/locks/organization/fixture/dev"


DAMAGED = [
    pytest.param("0123abcd.json", "", "is empty", id="empty"),
    pytest.param(
        "0123abcd.json", '{"pid": 4242, "username": "ci", "hostn', "is not valid JSON", id="cut short"
    ),
    pytest.param("0123abcd.json", "\x00\x00\x00\x00", "is not valid JSON", id="zeroed by a crash"),
    # The blob library writes a lock beside its place, then renames it: a write killed in between.
    pytest.param("0123abcd.json.18a2b3c4d5e6f708.tmp", "", "is empty", id="a write's temporary file"),
]
"""Lock files that name no holder, and what ``damaged_locks`` says of each."""


def _damage(repo: FixtureRepo, name: str, content: str) -> Path:
    lock = repo.backend / LOCKS / name
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(content)
    return lock


@pytest.mark.parametrize(("name", "content", "problem"), DAMAGED)
def test_a_damaged_lock_blocks_the_engine_is_reported_by_status_and_cleared_by_recover(
    repo: FixtureRepo, name: str, content: str, problem: str
) -> None:
    up("dev", options=repo.options)
    lock = _damage(repo, name, content)
    with pytest.raises(GitOpsInfraError):  # the engine's own verdict: the stack is blocked
        up("dev", options=repo.options)

    found = status("dev", options=repo.options)
    assert found.locked is True and found.lock is None
    (damaged,) = found.damaged_locks
    assert damaged.startswith(f"{lock} {problem}")
    runner = CliRunner(env=repo.env)
    shown = runner.invoke(main, ["status", "dev", "--cwd", str(repo.root)])
    assert shown.exit_code == EXIT_OK, shown.output
    assert f"locked by a damaged lock file, {lock} {problem}" in shown.stdout
    assert "unlocked" not in shown.stdout
    as_markdown = runner.invoke(main, ["status", "dev", "--cwd", str(repo.root), "--format", "markdown"])
    assert "damaged lock file" in as_markdown.stdout

    recovered = runner.invoke(main, ["recover", "dev", "--yes", "--cwd", str(repo.root)])
    assert recovered.exit_code == EXIT_OK, recovered.output
    assert f"Cleared a damaged lock: {lock} {problem}" in recovered.stdout
    assert "No stale lock found" not in recovered.stdout
    assert not lock.exists()

    assert not up("dev", options=repo.options).has_changes  # the engine runs again
    after = status("dev", options=repo.options)
    assert (after.locked, after.damaged_locks) == (False, ())


def test_recover_returns_the_damaged_lock_it_cleared_and_a_second_recover_finds_none(
    repo: FixtureRepo,
) -> None:
    up("dev", options=repo.options)
    lock = _damage(repo, "0123abcd.json", "")

    first = recover("dev", options=repo.options)
    assert first.stale_lock is None and first.damaged_locks == (f"{lock} is empty",)
    second = recover("dev", options=repo.options)  # day 2: nothing left to clear
    assert second.stale_lock is None and second.damaged_locks == ()


# -- every other command: the engine's bare JSON error becomes a StackLockedError naming the way out --


@pytest.mark.parametrize(("name", "content", "problem"), DAMAGED)
def test_a_damaged_lock_is_a_stack_locked_error_naming_the_file_and_recover(
    repo: FixtureRepo, name: str, content: str, problem: str
) -> None:
    up(STACK, options=repo.options)
    lock = _damage(repo, name, content)

    for operation in (up, refresh):
        with pytest.raises(StackLockedError) as locked:
            operation(STACK, options=repo.options)  # type: ignore[operator]
        message = str(locked.value)
        assert f"{lock} {problem}" in message
        assert f"`gitops-infra recover {STACK}`" in message
        assert "unexpected end of JSON input" not in message and "invalid character" not in message
    with pytest.raises(StackLockedError, match="damaged lock file"):
        destroy(STACK, options=repo.options, drain=False)

    shown = CliRunner(env=repo.env).invoke(main, ["up", STACK, "--yes", "--json", "--cwd", str(repo.root)])
    error = json.loads(shown.stdout)["error"]
    assert error["type"] == "StackLockedError" and str(lock) in error["message"], shown.stdout

    # Day 2: the way out the error names works, and the stack runs again.
    recovered = CliRunner(env=repo.env).invoke(main, ["recover", STACK, "--yes", "--cwd", str(repo.root)])
    assert recovered.exit_code == 0, recovered.output
    assert not lock.exists()
    assert not up(STACK, options=repo.options).has_changes


def test_a_damaged_lock_is_waited_out_like_a_held_one_when_the_caller_waits(repo: FixtureRepo) -> None:
    # With lock_wait, a damaged lock is contention like any other: retried, then named.
    up(STACK, options=repo.options)
    _damage(repo, "0123abcd.json", "")
    waiting = StackOptions(work_dir=repo.root, env=repo.env, lock_wait=1.0)
    with pytest.raises(StackLockedError, match="damaged lock file"):
        up(STACK, options=waiting)
