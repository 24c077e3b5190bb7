"""Cancel the engine cleanly when this process is asked to stop (SIGINT, SIGTERM, SIGHUP).

``pulumi.automation`` runs the engine as a child process and waits for it. A signal sent to this process
alone (a CI runner cancelling a job, ``kill``) would leave that child running with the stack locked. While
:func:`cancel_on_signals` is active, the first SIGINT, SIGTERM or SIGHUP is passed on to the engine as
SIGINT, which is Pulumi's own Ctrl-C: it lets in-flight resource operations finish, records them, releases
the lock and exits with an error. A second signal is passed on too, and Pulumi then stops at once.

Pulumi counts the SIGINTs it gets: the first cancels, the second terminates at once ("^C received;
cancelling. If you would like to terminate immediately, press ^C again": ``backend/cancellation_scope.go``,
Pulumi 3.274), in-flight operations then left pending and their resources missing from the state. A
Ctrl-C typed at a terminal is sent by the kernel to the terminal's whole foreground process group, the
engine included (``pulumi.automation`` starts it in ours; Pulumi's plugins have groups of their own), so
passing it on too would make one Ctrl-C two. So SIGINT is taken with its origin (``si_code``): a terminal's
(``SI_KERNEL``) is not passed on to an engine in our process group, which got it itself; one from
``kill`` (``SI_USER``) reached this process alone and is passed on. (``kill`` of the whole group,
``kill -INT -PGID``, cannot be told from ``kill PID`` and is passed on: send it to the process.)

SIGHUP (a closed terminal, a dropped ssh session) needs more: the shell sends it to the whole job, the
engine included, and the engine handles only SIGINT and SIGTERM (``backend/cancellation_scope.go``,
Pulumi 3.274), so it would die on the spot, holding the lock, its plugins orphaned. Go keeps a SIGHUP
that was ignored when the program started ignored (``sigInstallGoHandler``), while a blocked one is
unblocked on each of its threads (``blockableSig``): so while a block is active SIGHUP is ignored in this
process, which every child inherits through ``exec``, and blocked in its threads, which keeps the kernel
from discarding it (an ignored signal is queued when the thread it is sent to blocks it).

Python's handlers are not told a signal's origin, so SIGINT and SIGHUP are both blocked in this process's
threads while a block is active, and a thread of ours takes them from the queue (``sigwaitinfo``) with
their ``siginfo``. A child started meanwhile inherits the mask. The engine's Go runtime unblocks SIGINT
(it is not ``blockableSig``), and the language host and plugins it starts run with it unblocked (seen
with Pulumi 3.274). Any other child (``git``) runs on through a Ctrl-C, unless the interrupted work
stops it (``subprocess.run`` kills its child on ``KeyboardInterrupt``).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

__all__ = ["Interruption", "cancel_on_signals", "interrupted"]

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that ask a run to stop: Ctrl-C, a runner's or ``kill``'s cancel, and a terminal's hangup.
The CLI's own handlers (``cli/_main.py``) take the same ones."""
ENGINE_NAME = "pulumi"
"""The engine's process name (the CLI binary, as ``pulumi.automation`` runs it)."""
_WATCHED = (signal.SIGINT, signal.SIGHUP)
"""The signals the watch thread takes, with their origin (see the module's docstring)."""
_SENT_HERE = (0, -6)
"""``si_code`` of a signal this process sent itself (``SI_USER``, ``SI_TKILL``: Linux's
``asm-generic/siginfo.h``), as the watcher's stop is; a terminal's hangup is ``SI_KERNEL``, and another
process's ``kill`` has its pid."""
_SI_KERNEL = 0x80
"""``si_code`` of a signal the kernel sent: for SIGINT, a terminal's Ctrl-C (``n_tty``'s ``isig``
signals the foreground process group as ``SEND_SIG_PRIV``), which reached our whole group."""


def stop_signals() -> tuple[int, ...]:
    """Those of :data:`HANDLED` this process was not told to ignore.

    A signal ignored when the process started stays ignored: ``nohup`` ignores SIGHUP so that a run
    outlives its terminal, and a shell starts a background job with SIGINT ignored.
    """
    return tuple(signum for signum in HANDLED if signal.getsignal(signum) is not signal.SIG_IGN)


@dataclass
class Interruption:
    """The first signal received while :func:`cancel_on_signals` was active, if any."""

    signum: int | None = None

    @property
    def exit_code(self) -> int:
        """The shell's convention for "stopped by this signal": 128 + its number."""
        return 128 + (self.signum or 0)


_active: Interruption | None = None
"""The interruption of the innermost :func:`cancel_on_signals` block in force, if any."""


def interrupted() -> int | None:
    """The signal that asked this process to stop, while :func:`cancel_on_signals` is active; else None.

    Work made of many engine runs (``drift --all``) asks this before starting each one: after the first
    signal it starts no new run.
    """
    return _active.signum if _active is not None else None


def _engine_processes() -> list[psutil.Process]:
    """The engine: this process's ``pulumi`` children, and nothing else it runs (``git``, say).

    Its own children (language host, plugins) are Pulumi's to stop.
    """
    import psutil

    engines = []
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if child.name() == ENGINE_NAME:
                engines.append(child)
    return engines


def _cancel_engines(signum: int, *, from_the_terminal: bool = False) -> bool:
    """Record ``signum`` and pass Pulumi's Ctrl-C on to each engine running; whether one was.

    With ``from_the_terminal`` (a Ctrl-C the terminal sent to our process group), an engine in our group
    got that Ctrl-C itself, and one more would terminate it at once (see the module's docstring).
    """
    import psutil

    if _active is not None:
        _active.signum = _active.signum or signum
    children = _engine_processes()
    for child in children:
        # A child may have finished on its own in the meantime.
        with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
            if from_the_terminal and os.getpgid(child.pid) == os.getpgrp():
                continue
            child.send_signal(signal.SIGINT)
    return bool(children)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    """In the main thread: cancel the engine, or, with none running, stop the work where it is."""
    if not _cancel_engines(signum):
        raise KeyboardInterrupt


class _Watch:
    """The thread that takes ``signals`` (of :data:`_WATCHED`) from the queue, with their origin, while
    they are blocked (see the module's docstring), for the outermost :func:`cancel_on_signals` block."""

    def __init__(self, signals: tuple[int, ...]) -> None:
        self._signals = signals
        self._stopping = False
        self._late: list[int] = []
        """Signals that came as the block ended: they are the previous handlers', after it."""
        self._thread = threading.Thread(target=self._run, name="gitops-infra-signals", daemon=True)

    def __enter__(self) -> _Watch:
        # Blocked before the thread starts, which inherits the mask.
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(self._signals))
        self._thread.start()
        if signal.SIGHUP in self._signals:
            self._previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping = True
        try:
            if self._thread.ident is not None and self._thread.is_alive():
                signal.pthread_kill(self._thread.ident, self._signals[0])
            self._thread.join()  # a signal of the block's may still stop the wait: the rest is done anyway
        finally:
            if signal.SIGHUP in self._signals:
                signal.signal(signal.SIGHUP, self._previous)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        for signum in dict.fromkeys(self._late):
            signal.raise_signal(signum)

    def _run(self) -> None:
        while True:
            info = signal.sigwaitinfo(set(self._signals))
            if self._stopping:
                if info.si_pid == os.getpid() and info.si_code in _SENT_HERE:
                    return
                self._late.append(info.si_signo)
                continue
            terminal = info.si_signo == signal.SIGINT and info.si_code == _SI_KERNEL
            if not _cancel_engines(info.si_signo, from_the_terminal=terminal):
                self._stop_the_main_thread()

    def _stop_the_main_thread(self) -> None:
        """No engine runs: the main thread is to stop where it waits, as a signal there would stop it.

        A signal of ours that is not blocked there interrupts its wait; the handler then raises, and the
        interruption already says which signal came. With none (SIGTERM ignored from the start), it
        raises at its next step instead.
        """
        main = threading.main_thread().ident
        ours = [s for s in (signal.SIGINT, signal.SIGTERM) if s not in self._signals and _is_ours(s)]
        if ours and main is not None:
            signal.pthread_kill(main, ours[0])
        elif _is_ours(signal.SIGINT):
            _thread.interrupt_main(signal.SIGINT)


def _is_ours(signum: int) -> bool:
    return signal.getsignal(signum) is _on_signal


@contextmanager
def cancel_on_signals() -> Iterator[Interruption]:
    """While active, SIGINT, SIGTERM and SIGHUP cancel the running engine gracefully instead of orphaning
    it.

    The interrupted operation then fails with the engine's own error (the caller sees a
    ``GitOpsInfraError``), and ``Interruption.signum`` says which signal came. With no engine running,
    the signal raises ``KeyboardInterrupt`` as usual. Outside the main thread this does nothing, as
    Python only delivers signals there. A signal the process ignores (SIGHUP under ``nohup``) stays
    ignored. The engines started inside ignore SIGHUP, as the hangup of a terminal reaches them too. A
    Ctrl-C typed at the terminal reaches them too, and is the one Pulumi counts: it is not passed on.

    Example::

        with cancel_on_signals() as interruption:
            try:
                up("dev")
            except GitOpsInfraError:
                if interruption.signum:
                    sys.exit(interruption.exit_code)
                raise
    """
    interruption = Interruption()
    if threading.current_thread() is not threading.main_thread():
        yield interruption
        return

    global _active
    outer, _active = _active, interruption
    handled = stop_signals()
    # SIGINT keeps this handler under the watch too: a thread the block did not start (a caller's own,
    # which does not block it) may still take it, its origin then unknown, and it is passed on.
    previous = {signum: signal.signal(signum, _on_signal) for signum in handled if signum != signal.SIGHUP}
    watched = tuple(signum for signum in handled if signum in _WATCHED) if outer is None else ()
    try:
        with _Watch(watched) if watched else contextlib.nullcontext():
            yield interruption
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _active = outer
