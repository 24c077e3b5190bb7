"""A destroy that fails is swept, unless a signal asked the process to stop: SIGHUP (a closed terminal, a
dropped ssh session) as SIGINT and SIGTERM, under ``cancel_on_signals``.

Each case runs in a Python of its own, in a session of its own, as tests/unit/test_signals.py does: a
hangup that is not handled ends the process it reaches. The engine is a child named ``pulumi`` (it is
found by its name) that behaves as the engine does with signals; AWS is not asked: the sweep is counted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..support import fake_engine, write_project

# Go's runtime unblocks the signals it handles on its threads, whatever mask it inherited, and Pulumi
# handles SIGINT (its Ctrl-C: cancel, then exit with an error); a SIGHUP ignored at its start stays ignored.
# It says when its handler is in place (a file): a signal sent before would end it before it could cancel,
# which on a loaded machine a fixed sleep did not rule out (a Python's start can take longer than Go's).
_ENGINE = f"""#!{sys.executable}
import pathlib, signal, sys, time
signal.pthread_sigmask(signal.SIG_SETMASK, set())
signal.signal(signal.SIGINT, lambda *_: sys.exit(1))
pathlib.Path(sys.argv[2]).write_text("ready")
time.sleep(float(sys.argv[1]))
sys.exit(1)
"""

_DESTROY = """
import json, os, signal, subprocess, sys, time
from pathlib import Path

from gitops_infra.automation import StackOptions, teardown
from gitops_infra.automation.signals import cancel_on_signals
from gitops_infra.errors import OperationFailedError

project, engine, sent = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
swept = []
teardown._cluster_state = lambda target: {}
teardown._eks_clusters = lambda deployment: (teardown._Made("dev-eks", "eu-west-1", None),)
teardown._swept = lambda clusters: swept.append(clusters) or ()

def run_engine(target, operation, work):
    ready = project / "engine-ready"
    child = subprocess.Popen([engine, "30" if sent != "none" else "0.1", str(ready)])
    deadline = time.monotonic() + 30
    while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if sent != "none":
        os.killpg(os.getpgid(0), getattr(signal, sent))  # as a shell passes a hangup on to its job
    child.wait()
    raise OperationFailedError(
        "destroy on stack 'dev' failed", stack="dev", operation=operation, engine_message="failed"
    )

teardown.run_engine = run_engine
failed = False
try:
    with cancel_on_signals() as interruption:
        try:
            teardown.destroy("dev", options=StackOptions(work_dir=project), drain=False)
        # A Ctrl-C sent to the whole group also stops the engine, which Pulumi's own handler ends at once
        # here; when our handler runs after the engine has gone, it finds none to cancel and stops the work
        # where it is (KeyboardInterrupt). Either way the signal is recorded and nothing is swept.
        except (OperationFailedError, KeyboardInterrupt):
            failed = True
# The watch thread stops the main thread from its own side: on a loaded machine the work may have ended
# by then, and the interrupt comes as the block closes. The signal was recorded all the same.
except KeyboardInterrupt:
    pass
if failed:
    print(json.dumps({"swept": len(swept), "signal": interruption.signum}))
"""


@pytest.mark.parametrize(
    ("sent", "swept"),
    [
        pytest.param("none", 1, id="failed on its own: swept"),
        pytest.param("SIGTERM", 0, id="SIGTERM"),
        pytest.param("SIGINT", 0, id="SIGINT"),
        pytest.param("SIGHUP", 0, id="SIGHUP"),
    ],
)
def test_a_failed_destroy_is_swept_unless_a_signal_asked_the_process_to_stop(
    tmp_path: Path, sent: str, swept: int
) -> None:
    project = write_project(tmp_path / "p", "p")
    fake_engine(project)
    engine = tmp_path / "pulumi"
    engine.write_text(_ENGINE)
    engine.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-c", _DESTROY, str(project), str(engine), sent],
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
        env={**os.environ, "PULUMI_CONFIG_PASSPHRASE": "p"},
    )
    assert done.returncode == 0, (done.returncode, done.stderr)
    outcome = json.loads(done.stdout)
    assert outcome["swept"] == swept
    assert outcome["signal"] == (None if sent == "none" else getattr(signal, sent))
