"""The console a command writes on: one that survives a closed pipe, and shows no control character.

Imported when a command runs, not when the CLI starts: rich is not needed to print ``--help`` or to refuse
a bad argument.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

from ._render.escape import printable

__all__ = ["CliConsole", "silence"]


def silence(stream: Any) -> None:
    """Point a closed stream's descriptor at /dev/null, so later writes (and the exit flush) are no-ops."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class CliConsole(Console):
    """A ``Console`` that treats a closed output as the end of output, not as the end of the program.

    rich's default raises ``SystemExit`` on a broken pipe; raised inside an engine-event callback, that
    stopped ``pulumi.automation``'s event reader and left the engine blocked, holding the stack's lock.
    """

    closed = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not kwargs.get("stderr") and sys.stdout is None:  # fd 1 closed before the CLI started (`>&-`)
            self.on_broken_pipe()

    @property
    def file(self) -> Any:
        """rich's output stream, with any write failure shown to rich as the closed pipe it handles.

        rich handles a closed pipe (``on_broken_pipe``) but lets any other write failure through: a
        full disk (``> /dev/full``), an I/O error. Each is the end of output all the same.
        """
        stream = Console.file.fget(self)  # type: ignore[attr-defined]
        return _FailuresAsClosedPipe(stream) if stream is not None else None

    @file.setter
    def file(self, new_file: Any) -> None:
        Console.file.fset(self, new_file)  # type: ignore[attr-defined]

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``Console.print``, with every control character in a string shown as an escape.

        What the CLI prints carries names and messages from outside (resource names, commit messages,
        engine errors): an escape sequence, a carriage return or a bidi override in one of them could
        rewrite what the terminal shows. Newlines and tabs stay.
        """
        shown = (printable(o, keep_newlines=True) if isinstance(o, str) else o for o in objects)
        super().print(*shown, **kwargs)

    def on_broken_pipe(self) -> None:
        self.closed = True
        self.quiet = True
        if self.file is not None:
            silence(self.file)


class _FailuresAsClosedPipe:
    """A stream whose failed writes and flushes raise ``BrokenPipeError``, the one failure rich handles."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise BrokenPipeError(exc.errno, exc.strerror) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise BrokenPipeError(exc.errno, exc.strerror) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
