"""How the CLI writes while a command runs: a console that survives a closed pipe, and step lines.

Imported when a command runs, not when the CLI starts: rich and ``pulumi.automation`` are not needed to
print ``--help`` or to refuse a bad argument.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ._text import printable

if TYPE_CHECKING:
    from pulumi import automation as auto

__all__ = ["CliConsole", "StepPrinter", "silence"]


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


class StepPrinter:
    """Prints one line per finished resource step, from the engine's event stream."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: auto.EngineEvent) -> None:
        done = event.res_outputs_event
        failed = event.res_op_failed_event
        diag = event.diagnostic_event
        # By value: importing pulumi.automation for one enum costs a fleet command a quarter second.
        if done is not None and done.metadata.op.value != "same" and _shown(done.metadata.type):
            meta = done.metadata
            self.console.print(f"  {meta.op.value:<8} {meta.type}  {meta.urn.rsplit('::', 1)[-1]}")
        elif failed is not None:
            self.console.print(f"  failed   {failed.metadata.urn}", style="red")
        elif diag is not None and diag.severity == "error":
            self.console.print(f"  error: {diag.message.strip()}", style="red")


def _shown(resource_type: str) -> bool:
    # The stack and provider resources are bookkeeping; `pulumi up` does not list them either.
    return resource_type != "pulumi:pulumi:Stack" and not resource_type.startswith("pulumi:providers:")
