"""Faults survived: interrupts, a hard kill and its recovery, and many concurrent updates.

The CLI runs as a real subprocess here, so signals reach it the way a CI runner's would.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import psutil
import pytest

from gitops_infra.automation import StackOptions, UpResult, detect_drift, history, up
from gitops_infra.errors import StackLockedError

from .conftest import FixtureRepo, concurrent_ups

pytestmark = pytest.mark.engine

CLI = [sys.executable, "-m", "gitops_infra.cli"]
SLOW_CREATE_SECONDS = "4"
ALL_FILES = {"a": "one", "b": "two", "c": "three", "d": "four"}


def _locks(repo: FixtureRepo) -> list[Path]:
    backend = Path(repo.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    return list(backend.glob(".pulumi/locks/**/*.json"))


def _start_slow(
    repo: FixtureRepo, *args: str, env: Mapping[str, str] | None = None, stderr: int = subprocess.STDOUT
) -> subprocess.Popen[str]:
    """`gitops-infra ARGS` with slow creates, in its own session, returned mid-run: the stack locked and
    the creates started. ``env`` adds to the run's environment; stderr goes with stdout unless
    ``stderr`` says otherwise (``subprocess.PIPE``)."""
    env = {**os.environ, **repo.env, "FIXTURE_SLOW_CREATE": SLOW_CREATE_SECONDS, **(env or {})}
    process = subprocess.Popen(
        [*CLI, *args, "--cwd", str(repo.root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not _locks(repo) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _locks(repo), f"`{args[0]}` never took the stack's lock"
    time.sleep(2.5)
    return process


def _start_slow_up(
    repo: FixtureRepo, *flags: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """`gitops-infra up` adding c and d, whose creates each take a few seconds, started mid-update."""
    repo.configure(ALL_FILES)
    return _start_slow(repo, "up", "dev", "--yes", *flags, env=env)


def _wait_for_a_create(log: Path) -> None:
    """Until a create has begun (``FIXTURE_TEMP_LOG``'s file has a line): on a busy machine the program
    may take longer than ``_start_slow``'s wait to get there."""
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.read_text(), "no create began"


def _state_files(repo: FixtureRepo) -> dict[str, str]:
    """File resources in the stack's state, by name, with their recorded content."""
    checkpoint = json.loads(repo.state_bytes())["checkpoint"]["latest"]
    return {
        r["urn"].rsplit("::", 1)[-1]: r["outputs"]["content"]
        for r in checkpoint["resources"]
        if r["type"] == "pulumi-python:dynamic:Resource"
    }


def _engine_processes_in(root: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cwd", "cmdline"]):
        if process.info["cwd"] == str(root) and any(
            "pulumi" in part for part in process.info["cmdline"] or []
        ):
            found.append(process)
    return found


def _after_the_cancel(repo: FixtureRepo, tree: list[psutil.Process], by: str) -> None:
    """What every graceful cancel leaves: no process, no temp file, a failed update in the history, and
    a next `up` that converges with nothing duplicated."""
    _, alive = psutil.wait_procs(tree, timeout=30)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == [], f"a process outlived {by}"
    assert list(Path(repo.env["TMPDIR"]).iterdir()) == [], f"the engine's temp directory outlived {by}"
    assert history("dev", options=repo.options)[0].result == "failed"
    _converges(repo)


def _converges(repo: FixtureRepo) -> None:
    final = up("dev", options=repo.options)
    assert final.outputs["files"] == ALL_FILES
    # Nothing duplicated or orphaned: one state entry per file, and exactly those files on disk.
    assert repo.on_disk() == ALL_FILES
    assert _state_files(repo) == ALL_FILES


@pytest.mark.parametrize(
    ("signum", "flags"),
    [(signal.SIGINT, ()), (signal.SIGTERM, ()), (signal.SIGINT, ("--json",))],
    # --json watches no events: the engine writes them to a file, read once it has stopped.
    ids=["SIGINT", "SIGTERM", "SIGINT-json"],
)
def test_an_interrupted_up_cancels_cleanly_and_the_next_up_converges(
    repo: FixtureRepo, signum: signal.Signals, flags: tuple[str, ...]
) -> None:
    up("dev", options=repo.options)
    # Each create leaves a file in its temp directory first (as the Kubernetes provider its kubeconfig).
    log = repo.root.parent / "temp-files.log"
    process = _start_slow_up(repo, *flags, env={"FIXTURE_TEMP_LOG": str(log)})
    _wait_for_a_create(log)

    process.send_signal(signum)
    output, _ = process.communicate(timeout=120)

    assert process.returncode == 128 + signum, output
    assert "OperationFailedError" in output
    assert not _locks(repo), "a cancelled update must release the stack's lock"
    assert log.read_text(), "no create began before the signal"
    _after_the_cancel(repo, [], "the signal")


@pytest.mark.parametrize(
    "sent_to",
    ["the CLI", "its process group"],
    # A terminal's hangup reaches the whole job, the engine with it (the shell passes it on to the job's
    # process group); `kill -HUP` reaches the CLI alone.
    ids=["kill-HUP", "closed-terminal"],
)
def test_a_hangup_mid_update_cancels_as_sigterm_does_and_the_next_up_converges(
    repo: FixtureRepo, sent_to: str
) -> None:
    # SIGHUP ended the CLI on the spot (exit by signal, no document) and, sent to the job, the engine
    # too: the stack stayed locked, its plugins ran on, and its kubeconfig files stayed in the temp dir.
    up("dev", options=repo.options)
    log = repo.root.parent / "temp-files.log"
    repo.configure(ALL_FILES)
    process = _start_slow(
        repo, "up", "dev", "--yes", "--json", env={"FIXTURE_TEMP_LOG": str(log)}, stderr=subprocess.PIPE
    )
    _wait_for_a_create(log)
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    assert any(p.name() == "pulumi-language-python" for p in tree), "signalled before the program ran"

    if sent_to == "the CLI":
        process.send_signal(signal.SIGHUP)
    else:
        os.killpg(process.pid, signal.SIGHUP)
    stdout, stderr = process.communicate(timeout=120)

    assert process.returncode == 128 + signal.SIGHUP, stderr
    document = json.loads(stdout)  # exactly one document: json.loads refuses anything after it
    assert document["error"]["type"] == "OperationFailedError", document
    assert "Traceback" not in stderr
    assert not _locks(repo), "a cancelled update must release the stack's lock"
    _after_the_cancel(repo, tree, "the hangup")


# Run as a terminal's foreground job is: the session leader, with the terminal as its controlling one
# (which makes its process group the terminal's foreground group), then the command itself.
_AS_THE_FOREGROUND_JOB = """
import fcntl, os, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
os.execv(sys.argv[1], sys.argv[1:])
"""


class _Terminal:
    """`gitops-infra ARGS` with slow creates as a terminal's foreground job: in a session of its own whose
    controlling terminal is a new pseudo-terminal, as a shell runs it; the engine it starts is in that
    foreground process group too. ``type`` writes to the terminal; ``wait`` returns what it showed."""

    def __init__(self, repo: FixtureRepo, *args: str, env: Mapping[str, str]) -> None:
        self._typed, terminal = os.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _AS_THE_FOREGROUND_JOB, *CLI, *args, "--cwd", str(repo.root)],
            env={**os.environ, **repo.env, "FIXTURE_SLOW_CREATE": SLOW_CREATE_SECONDS, **env},
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
        )
        os.close(terminal)
        self._shown: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._typed, 4096)
            except OSError:  # EIO: every process holding the terminal has ended
                return
            if not chunk:
                return
            self._shown.append(chunk)

    def type(self, text: bytes) -> None:
        os.write(self._typed, text)

    def foreground(self) -> int:
        return os.tcgetpgrp(self._typed)

    def wait(self, timeout: float) -> tuple[int, str]:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=30)
        os.close(self._typed)
        return code, b"".join(self._shown).decode(errors="replace")


@pytest.mark.parametrize(
    "way",
    [pytest.param(b"\x03", id="ctrl-c-typed"), pytest.param(signal.SIGINT, id="kill-INT-from-elsewhere")],
)
def test_one_ctrl_c_at_a_terminal_cancels_the_update_gracefully_and_the_next_up_converges(
    repo: FixtureRepo, way: bytes | signal.Signals
) -> None:
    # A typed Ctrl-C reaches the terminal's whole foreground process group, the engine included, and the
    # CLI passed it on as well: Pulumi took the second as "terminate immediately". The creates in flight
    # were abandoned, pending in the state, and the update "failed" instead of being cancelled.
    up("dev", options=repo.options)
    log = repo.root.parent / "temp-files.log"
    repo.configure(ALL_FILES)
    terminal = _Terminal(repo, "up", "dev", "--yes", env={"FIXTURE_TEMP_LOG": str(log)})
    deadline = time.monotonic() + 60
    while not _locks(repo) and terminal.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    _wait_for_a_create(log)
    assert terminal.foreground() == terminal.process.pid, "the CLI is not the terminal's foreground job"
    tree = [
        psutil.Process(terminal.process.pid),
        *psutil.Process(terminal.process.pid).children(recursive=True),
    ]
    engine = next(p for p in tree if p.name() == "pulumi")
    assert os.getpgid(engine.pid) == terminal.process.pid, "the engine would not see the typed Ctrl-C"

    if isinstance(way, bytes):
        terminal.type(way)
    else:
        terminal.process.send_signal(way)  # `kill -INT <pid>`: the CLI alone gets it
    code, output = terminal.wait(timeout=120)

    assert code == 128 + signal.SIGINT, output
    assert "update canceled" in output and "update failed" not in output, output  # Pulumi's cancel
    assert not _locks(repo), "a cancelled update must release the stack's lock"
    checkpoint = json.loads(repo.state_bytes())["checkpoint"]["latest"]
    assert not checkpoint.get("pending_operations"), "the engine abandoned its creates in flight"
    # Every create that began finished and is in the state.
    began = len(log.read_text().splitlines())
    assert len(_state_files(repo)) == 2 + began, _state_files(repo)
    _after_the_cancel(repo, tree, "the Ctrl-C")


def test_after_kill_9_recover_clears_the_lock_and_the_next_up_converges(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    process = _start_slow_up(repo)

    # Everything dies at once, as when a CI runner is lost: the CLI, the engine, and the language host
    # and plugins (which Pulumi starts in process groups of their own).
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    assert any(p.name() == "pulumi-language-python" for p in tree), "killed before the program ran"
    for member in tree:
        member.kill()
    process.communicate(timeout=30)
    psutil.wait_procs(tree, timeout=30)
    assert not _engine_processes_in(repo.root)

    with pytest.raises(StackLockedError):
        up("dev", options=repo.options)

    env = {**os.environ, **repo.env}
    recovered = subprocess.run(
        [*CLI, "recover", "dev", "--yes", "--json", "--cwd", str(repo.root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert recovered.returncode == 0, recovered.stderr
    report = json.loads(recovered.stdout)
    assert report["stale_lock"] is not None and f"pid {process.pid}" not in report["stale_lock"]
    assert not _locks(repo)

    _converges(repo)
    assert not up("dev", options=repo.options).has_changes


def _in(tree: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cwd"]):
        cwd = process.info["cwd"]
        if (
            cwd
            and (Path(cwd) == tree or tree in Path(cwd).parents)
            and process.status() != psutil.STATUS_ZOMBIE
        ):
            found.append(process)
    return found


def test_recover_after_a_killed_rollback_waits_for_its_plugins_and_keeps_their_worktree(
    repo: FixtureRepo,
) -> None:
    up("dev", options=repo.options)
    repo.configure(ALL_FILES)
    target = repo.commit("c and d, whose creates are slow")
    process = _start_slow(repo, "rollback", "dev", target, "--yes")
    # kill -9 of the command's process group: the CLI and the engine die; the language host and the
    # providers, in process groups of their own, go on in the rollback's worktree.
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    (tree,) = [Path(t.removeprefix("worktree ")) for t in repo.worktrees() if t.endswith("/tree")]
    assert _in(tree), "no plugin outlived the kill: nothing to test"
    try:
        refused = subprocess.run(
            [*CLI, "recover", "dev", "--yes", "--cwd", str(repo.root)],
            env={**os.environ, **repo.env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode == 1, refused.stdout
        assert refused.stderr.startswith("StackLockedError: Pulumi plugin processes of a dead update"), (
            refused.stderr
        )
        assert str(tree) in refused.stderr
        assert tree.is_dir() and _locks(repo), "recover acted under a run that was still working"
    finally:
        survivors = _in(tree)
        for survivor in survivors:
            survivor.kill()
        psutil.wait_procs(survivors, timeout=30)

    recovered = subprocess.run(
        [*CLI, "recover", "dev", "--yes", "--json", "--cwd", str(repo.root)],
        env={**os.environ, **repo.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert recovered.returncode == 0, recovered.stderr
    assert json.loads(recovered.stdout)["removed_worktrees"] == [str(tree)]
    assert up("dev", options=repo.options).outputs["files"] == ALL_FILES
    assert repo.on_disk() == ALL_FILES and _state_files(repo) == ALL_FILES


def test_recover_refuses_while_the_update_still_runs(repo: FixtureRepo, tmp_path: Path) -> None:
    up("dev", options=repo.options)
    # Held mid-run until the refusal is seen: a loaded machine starts the CLI slower than a create ends.
    hold = tmp_path / "release"
    process = _start_slow_up(repo, env={"FIXTURE_HOLD": str(hold)})
    try:
        env = {**os.environ, **repo.env}
        refused = subprocess.run(
            [*CLI, "recover", "dev", "--yes", "--cwd", str(repo.root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode == 1
        assert refused.stderr.startswith("StackLockedError: ")
        assert "still running" in refused.stderr
    finally:
        hold.touch()
        output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    assert repo.on_disk() == ALL_FILES


def test_drift_during_an_update_reports_the_lock_or_waits_for_it(repo: FixtureRepo, tmp_path: Path) -> None:
    # A refresh preview takes no lock: mid-update it read a half-written state and said "no drift".
    up("dev", options=repo.options)
    hold = tmp_path / "release"
    process = _start_slow_up(repo, env={"FIXTURE_HOLD": str(hold)})
    try:
        with pytest.raises(StackLockedError, match=r"is locked by an update \(.* pid \d+\)"):
            detect_drift("dev", options=repo.options)
        drift = subprocess.run(
            [*CLI, "drift", "dev", "--json", "--cwd", str(repo.root)],
            env={**os.environ, **repo.env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert drift.returncode == 1 and json.loads(drift.stdout)["error"]["type"] == "StackLockedError"
        # With a lock wait, the check runs once the update is done, on the state it wrote: released while
        # the check waits for the lock.
        threading.Timer(3, hold.touch).start()
        waited = subprocess.run(
            [*CLI, "drift", "dev", "--lock-wait", "120", "--json", "--cwd", str(repo.root)],
            env={**os.environ, **repo.env},
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert waited.returncode == 0, waited.stderr
        assert json.loads(waited.stdout)["has_drift"] is False
    finally:
        hold.touch()
        output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output


def test_five_concurrent_ups_apply_one_at_a_time_and_the_state_stays_valid(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    repo.configure({"a": "one", "b": "two"}, delay="2")

    racing = concurrent_ups(5, repo.options)
    assert sum(isinstance(o, UpResult) for o in racing) == 1, racing
    assert sum(isinstance(o, StackLockedError) for o in racing) == 4, racing

    queued = concurrent_ups(5, StackOptions(work_dir=repo.root, env=repo.env, lock_wait=300))
    assert all(isinstance(o, UpResult) for o in queued), queued

    updates = [d for d in history("dev", options=repo.options) if d.kind == "update"]
    assert [d.result for d in updates] == ["succeeded"] * 7
    spans = sorted((d.start_time, d.end_time) for d in updates)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end is not None and end <= start, "two updates overlapped"
    # The state file is valid JSON that the engine still accepts.
    json.loads(repo.state_bytes())
    repo.configure({"a": "one", "b": "two"})
    assert not up("dev", options=repo.options).has_changes
    assert repo.on_disk() == {"a": "one", "b": "two"}
