"""Cancel the engine cleanly when this process is asked to stop (SIGINT, SIGTERM).

``pulumi.automation`` runs the engine as a child process and waits for it. A signal sent to this process
alone (a CI runner cancelling a job, ``kill``) would leave that child running with the stack locked. While
:func:`cancel_on_signals` is active, the first SIGINT or SIGTERM is passed on to the engine as SIGINT,
which is Pulumi's own Ctrl-C: it lets in-flight resource operations finish, records them, releases the
lock and exits with an error. A second signal is passed on too, and Pulumi then stops at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import psutil

__all__ = ["Interruption", "cancel_on_signals", "interrupted"]

HANDLED = (signal.SIGINT, signal.SIGTERM)
ENGINE_NAME = "pulumi"
"""The engine's process name (the CLI binary, as ``pulumi.automation`` runs it)."""


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
    engines = []
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if child.name() == ENGINE_NAME:
                engines.append(child)
    return engines


@contextmanager
def cancel_on_signals() -> Iterator[Interruption]:
    """While active, SIGINT/SIGTERM cancel the running engine gracefully instead of orphaning it.

    The interrupted operation then fails with the engine's own error (the caller sees a
    ``GitOpsInfraError``), and ``Interruption.signum`` says which signal came. With no engine running,
    the signal raises ``KeyboardInterrupt`` as usual. Outside the main thread this does nothing, as
    Python only delivers signals there.

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

    def forward(signum: int, _frame: FrameType | None) -> None:
        interruption.signum = interruption.signum or signum
        children = _engine_processes()
        if not children:
            raise KeyboardInterrupt
        for child in children:
            # A child may have finished on its own in the meantime.
            with contextlib.suppress(psutil.NoSuchProcess):
                child.send_signal(signal.SIGINT)

    global _active
    outer, _active = _active, interruption
    previous = {signum: signal.signal(signum, forward) for signum in HANDLED}
    try:
        yield interruption
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _active = outer
