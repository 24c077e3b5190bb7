"""SIGHUP, a closed terminal's or a dropped ssh session's signal, is handled as SIGTERM is; a Ctrl-C typed
at a terminal reaches the engine once.

Each case runs in a process of its own, in a session of its own: a hangup that is not handled ends the
process it reaches, and the test sends it to a whole process group, as a shell sends it to a job, or a
terminal sends a Ctrl-C to its foreground process group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitops_infra.automation.signals import HANDLED, cancel_on_signals

# The engine as far as signals go (Pulumi's `backend/cancellation_scope.go`): the first SIGINT cancels,
# and the run ends a moment later, once what was in flight is done; a second one terminates it at once.
# Its log says which. It unblocks SIGINT on start, as the Go runtime does.
_ENGINE = """
import signal, sys, time
from pathlib import Path

log, seconds = Path(sys.argv[1]), float(sys.argv[2])
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
received = []

def on_sigint(signum, frame):
    received.append(signum)
    if len(received) > 1:
        log.write_text("terminated")
        sys.exit(2)

signal.signal(signal.SIGINT, on_sigint)
log.write_text("running")
deadline = time.monotonic() + seconds
while not received and time.monotonic() < deadline:
    time.sleep(0.05)
if received:
    time.sleep(1.5)
log.write_text("cancelled" if received else "finished")
sys.exit(1 if received else 0)
"""

# The CLI's own group with one command that stands for any: it runs the engine (a child named `pulumi`,
# as the engine is found by its name), waits until it runs, sends SIGNAL (or nothing) to TARGET (its
# process group, as a shell passes a terminal's hangup on to its job), and waits for the engine.
_COMMAND = """
import os, signal, subprocess, sys, time
from pathlib import Path

import click

from gitops_infra.cli._invocation import Invocation, command
from gitops_infra.cli._main import _Cli

engine, log, seconds, signum, target = sys.argv[1:6]

@click.group(cls=_Cli)
def cli() -> None:
    "A group with one command."

@cli.command()
@command
def work(invocation: Invocation) -> int:
    child = subprocess.Popen([engine, log, seconds])
    while Path(log).read_text() != "running":
        time.sleep(0.05)
    if signum:
        os.killpg(os.getpgid(0), int(signum)) if target == "group" else os.kill(os.getpid(), int(signum))
    child.wait()
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, ["pulumi", "up"])
    return 0

cli(["work", "dev", "--json"])
"""

# The library's block alone around the same engine, for a caller's own script.
_LIBRARY = """
import subprocess, sys
from gitops_infra.automation import cancel_on_signals

engine, log, seconds = sys.argv[1:4]
with cancel_on_signals() as interruption:
    subprocess.run([engine, log, seconds])
print(interruption.signum)
"""


def _engine(tmp_path: Path) -> list[str]:
    """The engine's argv: the program, then its log (which says "running" once it runs)."""
    engine = tmp_path / "pulumi"
    engine.write_text(f"#!{sys.executable} -S\n{_ENGINE}")
    engine.chmod(0o755)
    log = tmp_path / "engine.log"
    log.write_text("")
    return [str(engine), str(log)]


def _run(code: str, *args: str, ignore_hangup: bool = False) -> subprocess.CompletedProcess[str]:
    """``code`` in a Python of its own, in a session of its own; with ``ignore_hangup``, as `nohup` runs
    it (SIGHUP ignored from the start)."""
    nohup = "import signal\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\n" if ignore_hangup else ""
    return subprocess.run(
        [sys.executable, "-c", nohup + code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )


def test_a_hangup_mid_command_cancels_the_engine_as_sigterm_does(tmp_path: Path) -> None:
    # The hangup ended the CLI on the spot (exit by SIGHUP, no document), and the engine with it: the
    # engine handles only SIGINT and SIGTERM, so the hangup the shell passed it killed it too.
    engine = _engine(tmp_path)
    done = _run(_COMMAND, *engine, "30", str(int(signal.SIGHUP)), "group")

    assert done.returncode == 128 + signal.SIGHUP, done.stderr
    document = json.loads(done.stdout)  # exactly one document
    assert document["error"] == {"type": "Interrupted", "message": "stopped by SIGHUP before it finished"}
    assert "Traceback" not in done.stderr
    # The engine ignored the hangup itself and was cancelled as Ctrl-C cancels it, the one signal it got.
    assert Path(engine[1]).read_text() == "cancelled"


def test_under_nohup_a_hangup_stays_ignored_and_the_command_runs_to_its_end(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    done = _run(_COMMAND, *engine, "1", str(int(signal.SIGHUP)), "group", ignore_hangup=True)

    assert done.returncode == 0, done.stderr
    assert Path(engine[1]).read_text() == "finished"


def test_a_hangup_outside_a_command_is_129_and_one_document() -> None:
    code = (
        "import os, signal, time\n"
        "import click\n"
        "from gitops_infra.cli._main import _Cli\n"
        "@click.group(cls=_Cli)\n"
        "def cli() -> None:\n"
        "    'A group whose command is stopped before any engine runs.'\n"
        "@cli.command()\n"
        "@click.option('--json', 'as_json', is_flag=True)\n"
        "def early(as_json: bool) -> None:\n"
        "    os.kill(os.getpid(), signal.SIGHUP)\n"
        "    time.sleep(5)\n"
        "cli(['early', '--json'])\n"
    )
    done = _run(code)

    assert done.returncode == 128 + signal.SIGHUP, done.stderr
    assert json.loads(done.stdout)["error"] == {
        "type": "Interrupted",
        "message": "stopped by SIGHUP before it finished",
    }


def test_a_hangup_with_no_engine_running_stops_the_library_s_caller_where_it_waits() -> None:
    # Where a signal would stop it: in a wait (the drain's poll, a read from the cluster), at once.
    code = (
        "import os, signal, time\n"
        "from gitops_infra.automation import cancel_on_signals\n"
        "with cancel_on_signals() as interruption:\n"
        "    started = time.monotonic()\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGHUP)\n"
        "        time.sleep(30)\n"
        "    except KeyboardInterrupt:\n"
        "        print(interruption.signum, interruption.exit_code, time.monotonic() - started < 10)\n"
    )
    done = _run(code)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(int(signal.SIGHUP)), "129", "True"]


def test_the_block_leaves_each_handler_and_the_signal_mask_as_it_found_them() -> None:
    def handler(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    before = {signum: signal.getsignal(signum) for signum in HANDLED}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    previous = signal.signal(signal.SIGHUP, handler)
    try:
        with cancel_on_signals():
            with cancel_on_signals():  # nested, as `drift --all` runs the library's own blocks
                assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN  # what the engines inherit
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set())
                assert {signal.SIGHUP, signal.SIGINT} <= blocked  # taken with their origin
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is handler
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert {signum: signal.getsignal(signum) for signum in HANDLED} == before
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == mask
    assert not [t for t in threading.enumerate() if t.name == "gitops-infra-signals"]


def test_a_process_started_ignoring_every_signal_keeps_ignoring_them() -> None:
    # A shell starts a background job with SIGINT ignored, and `nohup` ignores SIGHUP: neither is ours
    # to take over, in the library or in the CLI.
    code = (
        "import json, signal\n"
        "from gitops_infra.automation.signals import HANDLED, cancel_on_signals\n"
        "from gitops_infra.cli._main import _stop_on_signals\n"
        "for signum in HANDLED:\n"
        "    signal.signal(signum, signal.SIG_IGN)\n"
        "_stop_on_signals()\n"
        "with cancel_on_signals():\n"
        "    seen = [signal.getsignal(signum) is signal.SIG_IGN for signum in HANDLED]\n"
        "print(json.dumps(seen))\n"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True] * len(HANDLED)


def _on_a_terminal(code: str, *args: str) -> tuple[subprocess.Popen[str], int]:
    """``code`` in a Python of its own, in a session of its own whose controlling terminal is a new
    pseudo-terminal, as a shell runs a job in the foreground: what it starts is in that foreground
    process group too. The process, and the terminal's other end, where the test types."""
    typed, terminal = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", _CONTROLLING_TERMINAL + code, *args],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    os.close(terminal)
    return process, typed


_CONTROLLING_TERMINAL = "import fcntl, termios\nfcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"


def _when_running(log: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while log.read_text() != "running" and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text() == "running", process.communicate(timeout=30)


@pytest.mark.parametrize("way", ["typed at the terminal", "kill from elsewhere"])
def test_one_ctrl_c_is_one_cancel_for_the_engine_whoever_sends_it(tmp_path: Path, way: str) -> None:
    # The terminal sends a typed Ctrl-C to its whole foreground process group, the engine included, and
    # the CLI passed it on as well: the engine got two, and Pulumi takes a second one as "terminate
    # immediately". A `kill -INT` of the CLI alone still reaches the engine through it.
    engine = _engine(tmp_path)
    process, typed = _on_a_terminal(_COMMAND, *engine, "30", "", "")
    try:
        _when_running(Path(engine[1]), process)
        assert os.tcgetpgrp(typed) == process.pid, "the CLI is not the terminal's foreground job"
        if way == "typed at the terminal":
            os.write(typed, b"\x03")
        else:
            process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        os.close(typed)

    assert Path(engine[1]).read_text() == "cancelled"  # not "terminated"
    assert process.returncode == 128 + signal.SIGINT, stderr
    assert json.loads(stdout)["error"] == {
        "type": "Interrupted",
        "message": "stopped by SIGINT before it finished",
    }


def test_a_ctrl_c_typed_at_the_terminal_reaches_a_library_caller_s_engine_once(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    process, typed = _on_a_terminal(_LIBRARY, *engine, "30")
    try:
        _when_running(Path(engine[1]), process)
        os.write(typed, b"\x03")
        stdout, stderr = process.communicate(timeout=30)
    finally:
        os.close(typed)

    assert Path(engine[1]).read_text() == "cancelled"
    assert (process.returncode, stdout.split()) == (0, [str(int(signal.SIGINT))]), stderr


def test_a_ctrl_c_typed_with_no_engine_running_stops_the_library_s_caller_where_it_waits() -> None:
    code = (
        "import sys, time\n"
        "from gitops_infra.automation import cancel_on_signals\n"
        "with cancel_on_signals() as interruption:\n"
        "    started = time.monotonic()\n"
        "    try:\n"
        "        print('waiting', flush=True)\n"
        "        time.sleep(30)\n"
        "    except KeyboardInterrupt:\n"
        "        print(interruption.signum, time.monotonic() - started < 10)\n"
    )
    process, typed = _on_a_terminal(code)
    try:
        assert process.stdout is not None and process.stdout.readline() == "waiting\n"
        os.write(typed, b"\x03")
        stdout, stderr = process.communicate(timeout=30)
    finally:
        os.close(typed)

    assert (process.returncode, stdout.split()) == (0, [str(int(signal.SIGINT)), "True"]), stderr
