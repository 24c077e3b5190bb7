"""The ``gitops-infra`` group (``main``), its exit codes, and the error boundary every failure exits through.

- The group lists its commands from a table and imports a command's module only when the command is
  looked up (``_COMMANDS``); nothing else imports a command module.
- The exit codes: ``EXIT_OK``, ``EXIT_ERROR``, ``EXIT_PENDING`` (drift found, changes pending), and
  ``128 + N`` for signal N; :func:`drift_exit` and :func:`fleet_drift_exit` say which a drift report is.
- The error boundary: a command's library error becomes a :class:`CliError` in :func:`run_command`, and the
  group writes every failure, a usage error or a signal included, once, through :func:`report_failure`.

``--help`` imports this module, click and ``_output`` and nothing else of ours: the commands' modules load
when a command is looked up, and what a failure needs (JSON, the escaping of control characters) when one
is reported.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ._output import OUTPUT, echo, set_up_streams

if TYPE_CHECKING:
    from pathlib import Path

    from .. import automation
    from ..errors import GitOpsInfraError

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_PENDING",
    "CliError",
    "drift_exit",
    "end_without_teardown",
    "fleet_drift_exit",
    "main",
    "report_failure",
    "run_command",
]

EXIT_OK = 0
EXIT_ERROR = 1
"""An error, printed as ``ErrorType: message`` with no traceback (with ``--json``, as the document)."""
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


def run_command(run: Callable[[], int], *, stack: str, cwd: Path | None) -> int:
    """A command's error boundary: ``run()``'s exit code, under the engine's graceful cancel on a signal.

    A library error (``GitOpsInfraError``) becomes a :class:`CliError` of its type and message (exit 1),
    with the stack it was about and what it carries (a failed destroy's sweeps) for the JSON document; a
    signal ends it as ``Interrupted`` (exit 128 + N), whatever it broke on its way.
    """
    from .. import automation
    from ..errors import GitOpsInfraError

    with automation.cancel_on_signals() as interruption:
        try:
            code = run()
            if interruption.signum:  # the engine stopped early but cleanly (`drift --all` goes on)
                code = interruption.exit_code
        except GitOpsInfraError as exc:
            code = interruption.exit_code if interruption.signum else EXIT_ERROR
            raise CliError(
                type(exc).__name__, str(exc), code, subject=_subject(stack, cwd), details=_details(exc)
            ) from exc
        except KeyboardInterrupt:
            signum = signal.Signals(interruption.signum or signal.SIGINT)
            raise CliError(
                "Interrupted", f"stopped by {signum.name} before it finished", 128 + signum
            ) from None
        except Exception:
            # Whatever a signal broke on its way (`pulumi version`'s probe killed by a Ctrl-C, typed
            # or passed on, ends in CalledProcessError), the news is the signal, not the breakage.
            if not interruption.signum:
                raise
            by = signal.Signals(interruption.signum).name
            raise CliError(
                "Interrupted", f"stopped by {by} before it finished", interruption.exit_code
            ) from None
    return code


def _details(exc: GitOpsInfraError) -> dict[str, Any]:
    """What ``exc`` carries for the JSON error document beside its message: a failed destroy's sweeps,
    keyed as in a destroy's result."""
    from ..errors import OperationFailedError

    if not (isinstance(exc, OperationFailedError) and exc.sweeps):
        return {}
    from ..automation.results import to_jsonable

    return {"sweeps": to_jsonable(exc.sweeps)}


def _subject(stack: str, cwd: Path | None) -> dict[str, str]:
    """``{"stack": ..., "project": ...}`` for a command on one stack, as far as they can be told."""
    if not stack:
        return {}
    from ..automation._state.project import Project
    from ..errors import GitOpsInfraError

    try:
        return {"stack": stack, "project": Project.find(cwd).name}
    except GitOpsInfraError:  # no project there, or no name: the stack alone
        return {"stack": stack}


def drift_exit(report: automation.DriftReport) -> int:
    """2 when a resource drifted or the GitOps layer is not healthy (or its cluster unreachable); else 0."""
    return EXIT_PENDING if report.has_drift or not report.healthy else EXIT_OK


def fleet_drift_exit(found: automation.FleetDrift) -> int:
    """2 when any stack drifted in either layer; else 1 when one could not be checked (or its result is
    missing); else 0."""
    if found.has_drift or not found.healthy:
        return EXIT_PENDING
    return EXIT_ERROR if found.has_errors else EXIT_OK


_COMMANDS: dict[str, tuple[str, str]] = {
    "contract": (
        "_commands.contract",
        "The environment contract app teams read: its JSON Schema, and a check of a document.",
    ),
    "destroy": (
        "_commands.destroy",
        "Delete every resource of STACK (its config and history stay). A prod stack needs --confirm STACK.",
    ),
    "drift": (
        "_commands.drift",
        "Compare STACK (or --all stacks) with reality in both layers, writing nothing; exit 2 when either "
        "drifted: a resource differs from the state (iac), or the GitOps engine is not healthy (gitops).",
    ),
    "fleet": (
        "_commands.fleet",
        "The fleet across projects: list it, split it for CI or a Kubernetes Job, merge what the jobs print.",
    ),
    "history": (
        "_commands.operations",
        "List STACK's deployments, newest first, with the commit each ran from.",
    ),
    "local": (
        "_commands.local",
        "A local Kubernetes API, Flux and an SSH fleet repository on loopback, running the local stack.",
    ),
    "plan": (
        "_commands.plan",
        "Run STACK's program offline under mocks and print the resources it would create.",
    ),
    "policy": ("_commands.policy", "The bundled CrossGuard policy pack (--policy-pack gitops-infra)."),
    "preview": (
        "_commands.operations",
        "Show what `up` would change in STACK (or --all stacks, each reported, nothing created).",
    ),
    "promote": (
        "_commands.operations",
        "Deploy to TARGET the commit of STACK's last successful update (gitops-infra promote dev prod).",
    ),
    "recover": (
        "_commands.operations",
        "Clear what a dead update left on STACK (lock, pending operations, debris), then refresh it.",
    ),
    "refresh": ("_commands.operations", "Write the real state of STACK's resources into its state."),
    "rollback": (
        "_commands.operations",
        "Roll STACK back to COMMIT (a sha, tag or ref; default: the previous deployed commit).",
    ),
    "sealed-secrets": (
        "_commands.sealed_secrets",
        "The Sealed Secrets keys in a stack's config, and the cert it seals with (for kubeseal --cert).",
    ),
    "status": (
        "_commands.status",
        "Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock.",
    ),
    "switch-engine": (
        "_commands.operations",
        "Hand STACK's fleet to the GitOps engine its gitops.engine now names (from Flux to Argo CD).",
    ),
    "up": ("_commands.operations", "Apply the program to STACK."),
}
"""Each command: the module that defines it, under this package (imported by name when the command is
looked up, so ``--help`` pays for none of them), and the first paragraph of its help, for the group's
list. A unit test holds each to the command's own docstring."""


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
    zlib, bz2 and lzma: a visible share of a ``--help`` (bench/README.md has the figure). The width is
    click's own rule (``COLUMNS``, else the terminal, within 50 and ``max_content_width``), and its test
    harness's forced width still wins; a unit test holds the two formatters to the same width.
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
        restore_streams = set_up_streams(as_json=as_json)
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


_OUTPUT_CLOSED = "stdout could not be written (closed, or full); nothing else failed"


def end_without_teardown() -> None:
    """Once this command succeeds, end the process at once rather than tear the interpreter down.

    For a command that holds no files, threads or subprocesses of its own at its end. After the offline
    plan, the teardown (clearing every module, a last collection, freeing each object of the provider
    SDKs one by one) took about half as much CPU as the plan itself (bench/README.md), for memory the
    operating system takes back whole. Only when the
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
