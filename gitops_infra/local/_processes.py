"""The plain processes a local harness starts: each on a free loopback port, logged to a file, ready before
the next starts, and stopped by its recorded pid.

A :class:`Harness` is the processes of one part (the cluster, the fleet server) started together: all of
them up, or, failing, none left behind. :func:`running` does the same for several parts.

Only the standard library: :mod:`._cluster`, :mod:`._nodes` and :mod:`._fleet_server` start their
components with it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

__all__ = [
    "READY_SECONDS",
    "STOP_SECONDS",
    "Harness",
    "Process",
    "Processes",
    "component_flags",
    "free_port",
    "running",
    "says_ok",
    "tail",
]

READY_SECONDS = 90.0
"""How long a component may take to become ready before the harness gives up with its log."""
STOP_SECONDS = 20.0


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def component_flags(kubeconfig: str | Path, port: int) -> list[str]:
    """The flags a Kubernetes control-plane component (controller manager, scheduler) takes here: the
    admin kubeconfig for the API and for delegated authn/authz, loopback on ``port``, no leader election."""
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--leader-elect=false",
    ]


def says_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    """Whether ``url`` (a component's ``/healthz`` or ``/readyz``) answers ``ok``."""
    with urllib.request.urlopen(url, timeout=2, context=context) as response:
        return bool(response.read() == b"ok")


def tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` of the log at ``path``, or ``(no log)``."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None


@dataclass
class Processes:
    """The processes one harness started: each stopped by its pid, last started first."""

    log_dir: Path
    running: list[Process] = field(default_factory=list)

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Process:
        log = self.log_dir / f"{name}.log"
        with log.open("ab") as out:  # a restarted controller keeps the earlier log above its own
            popen = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                # Its own session: a Ctrl-C meant for pytest or `make` does not reach it mid-teardown.
                start_new_session=True,
            )
        process = Process(name=name, popen=popen, log=log)
        self.running.append(process)
        return process

    def wait_until(self, process: Process, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if not process.alive():
                raise RuntimeError(
                    f"{process.name} exited ({process.popen.returncode}) before {what}:\n{tail(process.log)}"
                )
            with contextlib.suppress(OSError, ValueError, ssl.SSLError):
                if ready():
                    return
            time.sleep(0.2)
        raise RuntimeError(f"{process.name}: no {what} within {READY_SECONDS:.0f} s:\n{tail(process.log)}")

    def stop(self, process: Process) -> None:
        if process.alive():
            with contextlib.suppress(ProcessLookupError):
                process.popen.send_signal(signal.SIGTERM)
            try:
                process.popen.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait(timeout=STOP_SECONDS)
        if process in self.running:
            self.running.remove(process)

    def stop_all(self) -> None:
        for process in reversed(list(self.running)):
            self.stop(process)


class Harness:
    """Processes started together: ``start`` brings them all up or, failing, stops what it started."""

    workdir: Path
    processes: Processes

    def start(self) -> Self:
        """Start everything, each part ready before the next; stop what started if anything fails."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop every process this harness started, newest first."""
        self.processes.stop_all()


@contextlib.contextmanager
def running(*parts: Harness) -> Iterator[None]:
    """Start ``parts`` in order; stop all of them, newest first, whatever happens."""
    started: list[Harness] = []
    try:
        for part in parts:
            part.start()
            started.append(part)
        yield
    finally:
        for part in reversed(started):
            part.stop()
        for part in parts:
            shutil.rmtree(part.workdir / "etcd", ignore_errors=True)
