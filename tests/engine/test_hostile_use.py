"""Hostile but realistic use, on the real engine: each case was once reproduced against this layer.

A closed stdout, a qualified stack name, a lock from another machine, a long history, a malformed
commit, a corrupted or truncated state, and the debris of ``kill -9``: every path ends in a clear error or
a correct result, the lock released, nothing left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from gitops_infra import errors
from gitops_infra.automation import StackOptions, history, recover, refresh, rollback_to_commit, up
from gitops_infra.automation._state.file_backend import FileBackendStack
from gitops_infra.errors import ConfigError, OperationFailedError, StackLockedError

from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

CLI = [sys.executable, "-m", "gitops_infra.cli"]
WATCHDOG_SECONDS = 120
"""How long a command may take before the test kills it and fails: a hang guard, not a benchmark."""


def _env(repo: FixtureRepo, **extra: str) -> dict[str, str]:
    return {**os.environ, **repo.env, **extra}


def _run_cli(repo: FixtureRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args, "--cwd", str(repo.root)],
        env=_env(repo),
        capture_output=True,
        text=True,
        timeout=WATCHDOG_SECONDS,
    )


def _kill_tree(process: subprocess.Popen[str]) -> list[psutil.Process]:
    # Stopped first, until the tree stops growing: a plugin the engine starts between a look at the tree
    # and the kill would outlive it, and recover would rightly refuse while it runs (seen under load).
    root = psutil.Process(process.pid)
    tree: list[psutil.Process] = []
    while True:
        found: list[psutil.Process] = []
        with contextlib.suppress(psutil.NoSuchProcess):
            found = [root, *root.children(recursive=True)]
        new = [member for member in found if member not in tree]
        if not new:
            break
        for member in new:
            with contextlib.suppress(psutil.NoSuchProcess):
                member.suspend()
        tree += new
    for member in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.kill()
    psutil.wait_procs(tree, timeout=30)
    return tree


def _wait_for(condition: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _through_a_pipe_closed_after_one_line(repo: FixtureRepo, *args: str) -> subprocess.Popen[str]:
    """Run the CLI as `... | head -1` would: read one line of stdout, then close the pipe."""
    process = subprocess.Popen(
        [*CLI, *args, "--cwd", str(repo.root)],
        env=_env(repo, FIXTURE_SLOW_CREATE="2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    assert first, "the command printed nothing before the pipe was closed"
    process.stdout.close()
    try:
        process.wait(timeout=WATCHDOG_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_tree(process)
        pytest.fail(f"`{' '.join(args)}` hung after its stdout was closed (the stack stayed locked)")
    return process


# -- 1. a closed stdout ------------------------------------------------------------------------------


def test_up_into_a_pipe_that_closes_early_finishes_releases_the_lock_and_exits_1(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    # `a` changes at once (the first line); the creates come seconds later, into the closed pipe.
    repo.configure({"a": "uno", "c": "three", "d": "four"})

    process = _through_a_pipe_closed_after_one_line(repo, "up", "dev", "--yes")

    stderr = process.stderr.read() if process.stderr else ""
    assert process.returncode == 1, stderr
    assert stderr.startswith("OutputClosed: stdout was closed"), stderr
    assert "Traceback" not in stderr
    assert not repo.locks(), "the lock must be released"
    assert history("dev", options=repo.options)[0].result == "succeeded"
    assert repo.on_disk() == {"a": "uno", "c": "three", "d": "four"}


def test_rollback_into_a_pipe_that_closes_early_leaves_no_lock_and_no_worktree(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    commit_a = repo.head()
    repo.configure({"a": "uno", "c": "three"})
    repo.commit("B")
    up("dev", options=repo.options)

    process = _through_a_pipe_closed_after_one_line(repo, "rollback", "dev", commit_a, "--yes")

    assert process.returncode == 1
    assert not repo.locks()
    assert len(repo.worktrees()) == 1, repo.worktrees()
    assert repo.on_disk() == {"a": "one", "b": "two"}


# -- 3. recover and the lock, whatever the name and wherever it was taken ------------------------------


def _start_slow_up(repo: FixtureRepo) -> subprocess.Popen[str]:
    repo.configure({"a": "one", "b": "two", "c": "three"})
    process = subprocess.Popen(
        [*CLI, "up", "dev", "--yes", "--cwd", str(repo.root)],
        env=_env(repo, FIXTURE_SLOW_CREATE="6"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _wait_for(repo.locks, "the update to take the stack's lock")
    return process


def test_recover_by_qualified_name_refuses_while_the_update_runs(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    process = _start_slow_up(repo)
    try:
        refused = _run_cli(repo, "recover", "organization/fixture/dev", "--yes")
        assert refused.returncode == 1, refused.stdout
        assert refused.stderr.startswith("StackLockedError: ") and "still running" in refused.stderr
        assert repo.locks(), "the running update's lock must stay"
    finally:
        process.wait(timeout=WATCHDOG_SECONDS)
    assert process.returncode == 0
    assert repo.on_disk() == {"a": "one", "b": "two", "c": "three"}


def test_a_lock_from_another_machine_needs_force(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    # What a runner elsewhere leaves behind (the file backend's own lock format): it cannot be checked
    # from here, so only the operator can say it is dead.
    lock = repo.backend / ".pulumi/locks/organization/fixture/dev/0123abcd.json"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(
        json.dumps(
            {"pid": 4242, "username": "ci", "hostname": f"not-{socket.gethostname()}", "timestamp": ""}
        )
    )

    with pytest.raises(StackLockedError, match="another machine"):
        recover("organization/fixture/dev", options=repo.options)
    assert lock.exists()

    result = recover("dev", options=repo.options, force=True)
    assert result.stale_lock is not None and result.stale_lock.endswith("pid 4242")
    assert not repo.locks()


# -- 4. history past the engine's default page ---------------------------------------------------------


def test_history_version_and_previous_see_past_the_first_ten_entries(
    repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    up("dev", options=repo.options)
    commit_a = repo.head()
    repo.configure({"a": "uno", "b": "two"})
    repo.commit("B")
    for _ in range(11):  # the newest eleven updates all ran from B
        up("dev", options=repo.options)
    for _ in range(14):
        last = refresh("dev", options=repo.options)

    entries = history("dev", options=repo.options)
    assert len(entries) == 26
    assert last.version == 26
    assert [d.version for d in entries] == list(range(26, 0, -1))
    with monkeypatch.context() as engine_only:
        # Read from the history files as they are; the engine's `stack history` must say the same.
        engine_only.setattr(FileBackendStack, "history_entries", lambda self: None)
        assert history("dev", options=repo.options) == entries
    rolled = rollback_to_commit("dev", "previous", options=repo.options)
    assert rolled.rolled_back_to == commit_a
    assert rolled.version == 27
    assert repo.on_disk() == {"a": "one", "b": "two"}


# -- 5. a malformed commit ------------------------------------------------------------------------------


def test_rollback_to_a_commit_with_a_malformed_pulumi_yaml_is_a_clear_error(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    good = (repo.root / "Pulumi.yaml").read_text()
    (repo.root / "Pulumi.yaml").write_text("name: fixture\nruntime: [python\n")
    broken = repo.commit("a broken Pulumi.yaml")
    (repo.root / "Pulumi.yaml").write_text(good)
    repo.commit("fixed")
    before = repo.state_bytes()

    with pytest.raises(ConfigError) as info:
        rollback_to_commit("dev", broken, options=repo.options)
    assert info.value.problems[0].startswith(f"Pulumi.yaml at {broken[:12]}: is not valid YAML")
    assert len(repo.worktrees()) == 1
    assert repo.state_bytes() == before
    assert not repo.locks()


# -- 8. a corrupted state ---------------------------------------------------------------------------------


def test_an_engine_panic_on_a_corrupted_state_is_reported_by_its_panic_line(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    state = json.loads(repo.state_bytes())
    state["checkpoint"]["latest"]["resources"][-1]["urn"] = "garbage"
    repo.checkpoint().write_text(json.dumps(state))

    with pytest.raises(OperationFailedError) as info:
        up("dev", options=repo.options)
    message = str(info.value)
    assert "Panic: fatal: An assertion has failed: Urn is: 'garbage'" in message, message
    assert ".go:" not in message and "goroutine" not in message


# -- 12. the debris of kill -9 ----------------------------------------------------------------------------


def test_recover_removes_the_worktree_of_a_killed_rollback(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    commit_a = repo.head()
    repo.configure({"a": "one"})
    repo.commit("B: b removed")
    up("dev", options=repo.options)

    process = subprocess.Popen(
        [*CLI, "rollback", "dev", commit_a, "--yes", "--cwd", str(repo.root)],
        env=_env(repo, FIXTURE_SLOW_CREATE="6"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _wait_for(repo.locks, "the rollback to take the stack's lock")
    _kill_tree(process)
    assert len(repo.worktrees()) == 2, "kill -9 skipped the rollback's cleanup"

    result = recover("dev", options=repo.options)
    assert len(result.removed_worktrees) == 1
    assert len(repo.worktrees()) == 1
    assert not any(Path(tree).exists() for tree in result.removed_worktrees)
    assert not repo.locks()


def test_recover_refuses_while_plugins_of_a_killed_group_still_run(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    process = _start_slow_up(repo)
    time.sleep(2)  # the creates are under way in the dynamic provider
    group = _group(process.pid)
    os.killpg(process.pid, signal.SIGKILL)  # the process group only: Pulumi's plugins have their own
    process.wait(timeout=30)
    # SIGKILL is not instant: on a loaded machine the engine (which holds the lock) can still be exiting
    # when the group's leader has been reaped, and recover rightly refuses while it runs.
    _wait_for(lambda: not any(_running(member) for member in group), "the killed group to exit")
    survivors = [p for p in psutil.process_iter() if _in(p, repo.root)]
    try:
        assert survivors, "no plugin outlived the group, so there is nothing to detect"
        with pytest.raises(StackLockedError, match="plugin processes of a dead update still run"):
            recover("dev", options=repo.options)
        assert repo.locks()
    finally:
        for survivor in survivors:
            with contextlib.suppress(psutil.NoSuchProcess):
                survivor.kill()
        psutil.wait_procs(survivors, timeout=30)

    recover("dev", options=repo.options)
    assert not repo.locks()
    assert up("dev", options=repo.options).outputs["files"] == {"a": "one", "b": "two", "c": "three"}


def _group(pgid: int) -> list[psutil.Process]:
    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == pgid:
                members.append(process)
    return members


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _in(process: psutil.Process, root: Path) -> bool:
    try:
        return Path(process.cwd()) == root and "pulumi" in " ".join(process.cmdline())
    except psutil.Error:
        return False


# -- 13. a checkpoint cut short ---------------------------------------------------------------------------


def test_recover_restores_the_newest_intact_checkpoint_of_a_truncated_state(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    repo.configure({"a": "one", "b": "two", "c": "three"})
    up("dev", options=repo.options)
    # What ENOSPC mid-write left: the checkpoint and its backup both cut short.
    checkpoint = repo.checkpoint()
    for path in (checkpoint, checkpoint.with_name(checkpoint.name + ".bak")):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OperationFailedError):
        up("dev", options=repo.options)

    with pytest.raises(errors.CheckpointError) as offer:
        recover("dev", options=repo.options)
    assert offer.value.candidate is not None and offer.value.candidate.endswith(".checkpoint.json")
    assert "is not valid JSON" in str(offer.value)

    restored = _run_cli(repo, "recover", "dev", "--yes", "--json")
    assert restored.returncode == 0, restored.stderr
    report = json.loads(restored.stdout)
    assert report["restored_checkpoint"] == offer.value.candidate
    kept = Path(report["broken_checkpoint_kept_at"])
    assert kept.exists() and kept.read_bytes() != repo.state_bytes()
    json.loads(repo.state_bytes())  # whole again
    final = up("dev", options=repo.options)
    assert final.outputs["files"] == {"a": "one", "b": "two", "c": "three"}
    assert repo.on_disk() == {"a": "one", "b": "two", "c": "three"}


# -- the file backend's lock race --------------------------------------------------------------------------


def test_a_lock_released_while_the_engine_reads_it_counts_as_locked_and_is_waited_for(
    repo: FixtureRepo,
) -> None:
    # The file backend lists lock files, then reads each; a lock released in between made the engine
    # fail with "stat …/locks/…json: no such file or directory", which read as a failed update (seen
    # once under load in the concurrent-update test). A dangling lock entry makes that read fail on
    # every run, as if the release always won the race.
    up("dev", options=repo.options)
    entry = repo.backend / ".pulumi/locks/organization/fixture/dev/deadbeef.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.symlink_to(repo.backend / "released.json")

    with pytest.raises(StackLockedError):
        up("dev", options=repo.options)

    threading.Timer(2.0, entry.unlink).start()
    waited = up("dev", options=StackOptions(work_dir=repo.root, env=repo.env, lock_wait=60))
    assert not waited.has_changes
