"""The ``gitops-infra`` group: its commands, loaded lazily, and the one error boundary of every command.

``--help`` imports this module, click and nothing else of ours: the commands' modules load when a command
is looked up, and what a failure needs (JSON, the escaping of control characters) when one is reported.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from contextlib import ExitStack, suppress
from typing import Any, NoReturn

import click

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_PENDING",
    "OUTPUT",
    "CliError",
    "echo",
    "end_without_teardown",
    "main",
    "report_failure",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_PENDING = 2
"""Drift found, or changes pending under ``preview --expect-no-changes``."""


class CliError(click.ClickException):
    """A failure the CLI reports as ``<kind>: <message>`` on stderr (and as JSON with ``--json``)."""

    def __init__(
        self,
        kind: str,
        message: str,
        exit_code: int = EXIT_ERROR,
        *,
        subject: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.exit_code = exit_code  # type: ignore[misc]  # click reads it per instance as well
        self.subject = subject or {}
        """The stack (and its project) the command was about, for the JSON error document: a fleet
        report (``fleet report``) files a failed matrix job's error under its stack."""
        self.details = details or {}
        """What the error carries beside its message, JSON-ready, for the JSON error document: a failed
        destroy's ``sweeps``."""


class _Output:
    lost = False
    """stdout failed (closed, a full disk, fd 1 closed before start): the command must not exit 0."""
    no_teardown = False
    """The command left nothing to clean up (see :func:`end_without_teardown`)."""

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
    from ._text import printable

    try:
        click.echo(printable(text, keep_newlines=True), err=err, nl=nl)
    except (OSError, ValueError):  # ValueError: a file already closed
        from ._console import silence

        silence(stream)
        OUTPUT.lost = OUTPUT.lost or not err
        return False
    return True


# Click 8.2+ raises this for a group called with no command; older versions printed the help themselves.
_HELP_INSTEAD: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",) if hasattr(click.exceptions, name)
)


def _wants_json(args: list[str]) -> bool:
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def report_failure(
    kind: str,
    message: str,
    *,
    as_json: bool,
    subject: dict[str, str] | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """The one place a failure is written: ``kind: message`` on stderr, or with ``as_json`` the JSON
    document on stdout alone.

    With ``--json`` stderr holds nothing the document does not: ``kubectl logs`` merges a pod's two
    streams, and the line on stderr beside the document made it unreadable (issue 44). Only when stdout
    cannot take the document does the line go to stderr, the one place left to say it.
    """
    if as_json:
        import json
        from datetime import UTC, datetime

        # Its time, as every result has: a fleet report keeps a stack's newest result, and an error
        # without one could not be weighed against an older success.
        at = datetime.now(UTC).isoformat()
        document = {
            "error": {"type": kind, "message": message},
            "checked_at": at,
            **(subject or {}),
            **(details or {}),
        }
        if OUTPUT.warnings:
            document["warnings"] = list(OUTPUT.warnings)
        if echo(json.dumps(document, indent=2, sort_keys=True)):
            return
    echo(f"{kind}: {message}", err=True)


_COMMANDS: dict[str, tuple[str, str]] = {
    "contract": (
        "_contract",
        "The environment contract app teams read: its JSON Schema, and a check of a document.",
    ),
    "destroy": (
        "_operations",
        "Delete every resource of STACK (its config and history stay). A prod stack needs --confirm STACK.",
    ),
    "drift": (
        "_fleet",
        "Compare STACK (or --all stacks) with reality in both layers, writing nothing; exit 2 when either "
        "drifted: a resource differs from the state (iac), or Flux is not healthy (gitops).",
    ),
    "fleet": (
        "_fleet",
        "The fleet across projects: list it, split it for CI or a Kubernetes Job, merge what the jobs print.",
    ),
    "history": ("_operations", "List STACK's deployments, newest first, with the commit each ran from."),
    "local": (
        "_local",
        "A local Kubernetes API, Flux and an SSH fleet repository on loopback, running the local stack.",
    ),
    "plan": ("_plan", "Run STACK's program offline under mocks and print the resources it would create."),
    "policy": ("_policy", "The bundled CrossGuard policy pack (--policy-pack gitops-infra)."),
    "preview": (
        "_operations",
        "Show what `up` would change in STACK (or --all stacks, each reported, nothing created).",
    ),
    "promote": (
        "_operations",
        "Deploy to TARGET the commit of STACK's last successful update (gitops-infra promote dev prod).",
    ),
    "recover": (
        "_operations",
        "Clear what a dead update left on STACK (lock, pending operations, debris), then refresh it.",
    ),
    "refresh": ("_operations", "Write the real state of STACK's resources into its state."),
    "rollback": (
        "_operations",
        "Roll STACK back to COMMIT (a sha, tag or ref; default: the previous deployed commit).",
    ),
    "status": (
        "_fleet",
        "Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock.",
    ),
    "up": ("_operations", "Apply the program to STACK."),
}
"""Each command: the module that defines it (imported when the command is looked up, so ``--help`` pays
for none of them), and the first paragraph of its help, for the group's list. A unit test holds each to
the command's own docstring."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``COLUMNS`` when a positive number, else stdout's terminal,
    else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Context(click.Context):
    """Click's context, whose help formatter is given the terminal's width rather than asking for it.

    Asked, click's ``HelpFormatter`` imports ``shutil`` for ``get_terminal_size``, and ``shutil`` imports
    zlib, bz2 and lzma: some 3 ms of a ``--help`` of 50 (bench/ measures it). The width is click's own rule
    (``COLUMNS``, else the terminal, within 50 and ``max_content_width``), and its test harness's forced
    width still wins; a unit test holds the two formatters to the same width.
    """

    def make_formatter(self) -> click.HelpFormatter:
        width = self.terminal_width
        if width is None and click.formatting.FORCED_WIDTH is None:
            width = max(min(_terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


class _Cli(click.Group):
    """Every failure, a usage error included, exits through :func:`report_failure` with one exit code.

    Click's usage errors would exit 2, which here means "changes pending": they exit 1 instead. With
    ``--json`` anywhere among the options, each of them is a JSON document on stdout too.

    Commands load lazily (click's documented pattern): a command's module is imported when the command
    is looked up, and ``--help`` lists them all from ``_COMMANDS`` without importing any.
    """

    context_class = _Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            import importlib

            # The module registers its commands on this group as it is imported.
            importlib.import_module(f"{__package__}.{_COMMANDS[cmd_name][0]}")
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # A stand-in carrying the summary shortens it exactly as the command itself would.
            command = self.commands.get(name) or click.Command(name, help=_COMMANDS[name][1])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(  # type: ignore[override]
        self, args: list[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = _wants_json(argv)
        extra.pop("standalone_mode", None)
        previous = _stop_on_signals()
        # fd 1 closed before the start (`>&-`): Python has no sys.stdout, and every write would vanish.
        OUTPUT.lost = sys.stdout is None
        OUTPUT.no_teardown = False
        OUTPUT.warnings = []
        restore_streams = _set_up_streams(as_json=as_json)
        try:
            # `args is None`: the process's own entry (the console script, `python -m`), never in-process.
            try:
                result = _exit_checked(
                    lambda: super(_Cli, self).main(argv, prog_name, standalone_mode=False, **extra)
                )
            except SystemExit as exc:  # how a command ends (ctx.exit)
                _end_if_nothing_to_tear_down(exc.code, own_process=args is None)
                raise
            _end_if_nothing_to_tear_down(result, own_process=args is None)
            return result
        except KeyboardInterrupt as exc:  # a signal outside a command's own handling (before, between)
            _interrupted(exc, as_json=as_json)
        except CliError as exc:
            report_failure(
                exc.kind, exc.format_message(), as_json=as_json, subject=exc.subject, details=exc.details
            )
            sys.exit(exc.exit_code)
        except _HELP_INSTEAD as exc:  # `gitops-infra` alone: the help, as before click 8.2
            click.echo(exc.format_message())
            sys.exit(EXIT_OK)
        except click.UsageError as exc:
            report_failure("UsageError", exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            report_failure(type(exc).__name__, exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.Abort as exc:
            if isinstance(exc.__cause__, KeyboardInterrupt):  # click turns a signal into Abort
                _interrupted(exc.__cause__, as_json=as_json)
            report_failure("Aborted", "nothing was changed", as_json=as_json)
            sys.exit(EXIT_ERROR)
        finally:
            restore_streams()
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def _set_up_streams(*, as_json: bool) -> Callable[[], None]:
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
    (``logging.lastResort``). See :func:`report_failure` for why stderr stays empty."""
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


_OUTPUT_CLOSED = "stdout could not be written (closed, or full); nothing else failed"


def end_without_teardown() -> None:
    """Once this command succeeds, end the process at once rather than tear the interpreter down.

    For a command that holds no files, threads or subprocesses of its own at its end. After the offline
    plan, the teardown (clearing every module, a last collection, freeing each object of the provider
    SDKs one by one) took 0.8 s of CPU, for memory the operating system takes back whole. Only when the
    CLI is the process's entry, and only once its output is flushed: a flush that fails takes the usual
    way out, which reports it.
    """
    OUTPUT.no_teardown = True


def _end_if_nothing_to_tear_down(code: Any, *, own_process: bool) -> None:
    """After a success (``code`` 0 or ``None``) in the process's own entry: end here when the command
    asked to (:func:`end_without_teardown`), unless a tracer or profiler runs (coverage, cProfile), which
    writes its report at exit."""
    asked = own_process and OUTPUT.no_teardown and code in (None, EXIT_OK)
    if not asked or sys.gettrace() is not None or sys.getprofile() is not None:
        return
    if _flushed():
        os._exit(EXIT_OK)
    if OUTPUT.lost:
        raise CliError("OutputClosed", _OUTPUT_CLOSED)


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            OUTPUT.lost = OUTPUT.lost or stream is sys.stdout
            return False
    return True


def _exit_checked(run: Callable[[], Any]) -> Any:
    """``run()``; a success whose output was lost on the way exits 1 with ``OutputClosed`` instead."""
    try:
        result = run()
    except SystemExit as exc:
        if exc.code in (0, None) and OUTPUT.lost:
            raise CliError("OutputClosed", _OUTPUT_CLOSED) from None
        raise
    except OSError as exc:
        # click's own writes (--help, --version) are not ours to guard: when one of them failed, say so.
        if not _in_click_echo(exc):
            raise
        from ._console import silence

        silence(sys.stdout)
        raise CliError("OutputClosed", _OUTPUT_CLOSED) from None
    if OUTPUT.lost:
        raise CliError("OutputClosed", _OUTPUT_CLOSED)
    return result


def _in_click_echo(exc: BaseException) -> bool:
    """True when ``exc`` was raised writing output in ``click.echo`` (the innermost frame is there)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return (
        tb is not None and tb.tb_frame.f_code.co_name == "echo" and "click" in tb.tb_frame.f_code.co_filename
    )


def _interrupted(exc: KeyboardInterrupt, *, as_json: bool) -> NoReturn:
    signum = getattr(exc, "signum", signal.SIGINT)
    report_failure(
        "Interrupted", f"stopped by {signal.Signals(signum).name} before it finished", as_json=as_json
    )
    sys.exit(128 + signum)


class _Signalled(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP, raised where the program was, so that it ends as one clean report."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum: int, _frame: object) -> None:
    raise _Signalled(signum)


def _stop_on_signals() -> dict[int, Any]:
    """SIGINT, SIGTERM and SIGHUP end the CLI as a report (exit 128+N) wherever they come, the very signals
    ``cancel_on_signals`` takes (one tuple), less any the process ignores (``nohup``); the previous handlers.

    A command replaces these with the engine's graceful cancel while it runs (``cancel_on_signals``);
    these cover the rest: argument parsing, the engine lookup, the output. Only in the main thread, where
    Python delivers signals (elsewhere ``signal.signal`` refuses, before it changes anything).
    """
    from ..automation.signals import stop_signals

    try:
        return {signum: signal.signal(signum, _raise_signalled) for signum in stop_signals()}
    except ValueError:  # not the main thread
        return {}


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gitops-infra")
def main() -> None:
    """Preview, apply, check for drift and roll back GitOps platform stacks."""
