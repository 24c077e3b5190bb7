"""Where the CLI writes, and what a failed write means: :func:`echo`, and the streams set up for a command.

Imported when the CLI starts, so it imports nothing heavy. A write that fails (a closed pipe, a full disk)
is the end of output, not of the command: :data:`OUTPUT` remembers it, and the group (``_main``) turns it
into the exit code ``OutputClosed``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack, suppress
from typing import Any

import click

__all__ = ["OUTPUT", "echo", "set_up_streams"]


class _Output:
    lost = False
    """stdout failed (closed, a full disk, fd 1 closed before start): the command must not exit 0."""
    no_teardown = False
    """The command left nothing to clean up (see ``_main.end_without_teardown``)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        """Under ``--json``: what would have been a warning on stderr, for the document instead."""


OUTPUT = _Output()


def echo(text: str, *, err: bool = False, nl: bool = True) -> bool:
    """``click.echo``, except that an output that fails is the end of output: False when it did.

    Any failure counts, not only a closed pipe: ``> /dev/full`` (ENOSPC), an I/O error, or a descriptor
    closed before the CLI started (``>&-``: Python then has no ``sys.stdout`` at all, and click writes
    nothing without a word). Control characters in ``text`` (an error quoting a hostile name) are shown
    as escapes.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        OUTPUT.lost = OUTPUT.lost or not err
        return False
    from ._render.escape import printable

    try:
        click.echo(printable(text, keep_newlines=True), err=err, nl=nl)
    except (OSError, ValueError):  # ValueError: a file already closed
        from ._console import silence

        silence(stream)
        OUTPUT.lost = OUTPUT.lost or not err
        return False
    return True


def set_up_streams(*, as_json: bool) -> Callable[[], None]:
    """Set the process's output up for any text and, with ``as_json``, keep stderr for the document's
    sake; return what sets it all back (the CLI may run in-process, on a caller's streams)."""
    undo = ExitStack()
    _escape_what_cannot_be_encoded(undo)
    if as_json:
        _warnings_into_the_document(undo)
    return undo.close


def _escape_what_cannot_be_encoded(undo: ExitStack) -> None:
    """stdout and stderr write what their encoding cannot hold as an escape (``\\u2192``), not fail.

    In a log or a terminal in ASCII or Latin-1 (``PYTHONIOENCODING=ascii``, an ISO-8859-1 ``LANG``), a
    name or message from outside raised UnicodeEncodeError mid-output: a traceback in place of the rest
    (issue 44). Python's own ``strict`` is the only handler that fails, so only it is replaced.
    """
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (OSError, ValueError):  # a stream already closed
                continue
            undo.callback(_reconfigure, stream, errors="strict")


def _reconfigure(stream: Any, **settings: str) -> None:
    with suppress(OSError, ValueError):  # closed since, or its flush failed: nothing more is written
        stream.reconfigure(**settings)


def _warnings_into_the_document(undo: ExitStack) -> None:
    """Under ``--json``, what Python itself would write on stderr goes to the document's ``warnings``:
    a warning (``warnings.warn``), and a library's log record that no handler takes
    (``logging.lastResort``). See ``_main.report_failure`` for why stderr stays empty."""
    import logging
    import warnings

    class Noted(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            OUTPUT.warnings.append(f"{record.name}: {record.getMessage()}")

    undo.enter_context(warnings.catch_warnings())  # sets showwarning back on exit
    warnings.showwarning = lambda message, category, *_: OUTPUT.warnings.append(
        f"{category.__name__}: {message}"
    )
    undo.callback(setattr, logging, "lastResort", logging.lastResort)
    logging.lastResort = Noted(logging.WARNING)
