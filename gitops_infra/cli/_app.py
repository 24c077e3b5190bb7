"""What every command shares: the group, the error boundary, the options, and how a result is emitted.

Imported when the CLI starts, so it imports nothing heavy: the library (``pulumi.automation``, the provider
SDKs) and rich load when a command runs, as it needs them.
"""

from __future__ import annotations

import functools
import json
import math
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, overload

import click

from .. import automation
from ..errors import GitOpsInfraError, StackNameError
from ..policy import POLICY_PACK
from ._markdown import to_markdown
from ._text import printable

if TYPE_CHECKING:
    from rich.console import Console

    from ..automation.inventory import FleetStack, Shard
    from ..automation.options import EventCallback
    from ._console import CliConsole

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_PENDING",
    "CliError",
    "Fleet",
    "Invocation",
    "Selection",
    "changes_line",
    "checked_stack",
    "command",
    "create_option",
    "echo",
    "fleet_command",
    "formats",
    "lock_wait_option",
    "main",
    "message_option",
    "policy_packs_option",
    "selection_options",
    "to_json",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_PENDING = 2
"""Drift found, or changes pending under ``preview --expect-no-changes``."""

_LOG_WIDTH = 1000


class CliError(click.ClickException):
    """A failure the CLI reports as ``<kind>: <message>`` on stderr (and as JSON with ``--json``)."""

    def __init__(
        self, kind: str, message: str, exit_code: int = EXIT_ERROR, *, subject: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.exit_code = exit_code  # type: ignore[misc]  # click reads it per instance as well
        self.subject = subject or {}
        """The stack (and its project) the command was about, for the JSON error document: a fleet
        report (``fleet report``) files a failed matrix job's error under its stack."""


@dataclass
class _Output:
    lost: bool = False
    """stdout failed (closed, a full disk, fd 1 closed before start): the command must not exit 0."""


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
    try:
        click.echo(printable(text, keep_newlines=True), err=err, nl=nl)
    except (OSError, ValueError):  # ValueError: a file already closed
        from ._console import silence

        silence(stream)
        OUTPUT.lost = OUTPUT.lost or not err
        return False
    return True


def to_json(result: Any) -> str:
    from ..automation.results import to_jsonable

    return json.dumps(to_jsonable(result), indent=2, sort_keys=True)


@dataclass
class Invocation:
    """What every command shares: the stack, where it runs, and how output is rendered."""

    stack: str
    cwd: Path | None
    json: bool
    console: CliConsole
    stdout_closed: bool = False
    markdown: bool = False
    """Render the result as Markdown (``--format markdown``), for a pull request or a job summary."""

    def options(self, *, lock_wait: float = 0.0, progress: bool = False) -> automation.StackOptions:
        """Options for the library call; ``progress`` prints each finished step as it happens."""
        on_event: EventCallback | None = None
        if progress and not (self.json or self.markdown):  # either is the whole of stdout
            from ._console import StepPrinter

            on_event = StepPrinter(self.console)
        return automation.StackOptions(work_dir=self.cwd, on_event=on_event, lock_wait=lock_wait)

    def activity(self, what: str) -> AbstractContextManager[Any]:
        """A spinner on a terminal while the engine works; nothing otherwise."""
        if self.json or not self.console.is_terminal:
            return nullcontext()
        return self.console.status(f"{what} {self.stack}…")

    def emit(self, result: Any, human: Callable[[Console], None]) -> None:
        if self.markdown:
            self.stdout_closed = not echo(to_markdown(result), nl=False)
        elif self.json:
            self.stdout_closed = not echo(to_json(result))
        else:
            human(self.console)

    def warn(self, text: str) -> None:
        """``warning: <text>`` on stderr, whatever the format: stdout may be the whole of a document."""
        echo(f"warning: {text}", err=True)

    @property
    def output_lost(self) -> bool:
        """True when stdout was closed before everything was written to it."""
        return self.stdout_closed or (self.console.closed and not self.json)

    def confirm(self, question: str, yes: bool, *, ask: bool = True) -> None:
        """Go on with ``--yes``; else ask on a terminal (``ask=False`` only checks that one is there)."""
        if yes:
            return
        if not sys.stdin.isatty():
            raise CliError("UsageError", f"{question} Pass --yes to proceed without a terminal to ask on.")
        if ask and not click.confirm(question, default=False, err=True):
            raise click.Abort()


@overload
def checked_stack(_ctx: click.Context, _param: click.Parameter, value: str) -> str: ...


@overload
def checked_stack(_ctx: click.Context, _param: click.Parameter, value: None) -> None: ...


def checked_stack(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """STACK, checked as the Python API checks it: an empty name must never mean "the selected stack"."""
    if value is None:  # an optional stack option left out
        return None
    try:
        automation.parse_stack_name(value)
    except StackNameError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _checked_selector(_ctx: click.Context, _param: click.Parameter, value: str | None) -> dict[str, str]:
    from ..automation.inventory import parse_selector

    try:
        return parse_selector(value)
    except GitOpsInfraError as exc:
        raise click.BadParameter(str(exc)) from None


def _checked_shard(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Shard | None:
    from ..automation.inventory import Shard

    try:
        return Shard.parse(value) if value is not None else None
    except GitOpsInfraError as exc:
        raise click.BadParameter(str(exc)) from None


@dataclass(frozen=True)
class Selection:
    """Which stacks of the fleet a command takes: ``--project``, ``--selector``, ``--wave``."""

    projects: tuple[Path, ...] = ()
    selector: dict[str, str] = field(default_factory=dict)
    wave: int | None = None

    @property
    def given(self) -> bool:
        return bool(self.projects or self.selector) or self.wave is not None

    def stacks(self, cwd: Path | None, *, strict: bool = True) -> tuple[FleetStack, ...]:
        """The stacks chosen; a selector or wave that matches none is an error, as a typo would be.

        ``strict=False`` keeps a stack whose file cannot be read, with its problems (``fleet_stacks``).
        """
        from ..automation.inventory import fleet_stacks, project_here

        projects = self.projects or (project_here(cwd),)
        found = fleet_stacks(projects, selector=self.selector, wave=self.wave, strict=strict)
        if not found:  # only a selector or a wave can leave none: an empty fleet is an error already
            chosen = []
            if self.selector:
                chosen.append("--selector " + ",".join(f"{k}={v}" for k, v in self.selector.items()))
            if self.wave is not None:
                chosen.append(f"--wave {self.wave}")
            raise CliError("WorkspaceError", f"no stack of the fleet matches {' '.join(chosen)}")
        return found


def selection_options(fn: Callable[..., int]) -> Callable[..., int]:
    """``--project``, ``--selector`` and ``--wave``; ``fn`` gets ``selection``."""

    @click.option(
        "--project",
        "projects",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="A Pulumi project directory of the fleet (repeatable; default: the one here, or --cwd's).",
    )
    @click.option(
        "--selector", callback=_checked_selector, metavar="K=V,...", help="Stacks with these labels."
    )
    @click.option("--wave", type=click.IntRange(min=0), help="Stacks of this wave.")
    @functools.wraps(fn)
    def wrapper(
        invocation: Invocation,
        projects: tuple[Path, ...],
        selector: dict[str, str],
        wave: int | None,
        **kwargs: Any,
    ) -> int:
        if projects and invocation.cwd is not None:
            raise CliError("UsageError", "--cwd and --project both name projects: give --project for each")
        return fn(invocation, selection=Selection(projects, selector, wave), **kwargs)

    return wrapper


@dataclass(frozen=True)
class Fleet:
    """What ``--all`` chose: the stacks, the shard of them, and how many to check at once."""

    every: bool
    parallel: int
    selection: Selection
    shard: Shard | None

    def stacks(self, invocation: Invocation) -> tuple[FleetStack, ...]:
        """The stacks to check; one whose stack file cannot be read is checked as an error, not skipped."""
        return self.selection.stacks(invocation.cwd, strict=False)


def fleet_command(fn: Callable[..., int]) -> Callable[..., None]:
    """``command`` for a command that takes STACK or ``--all`` (every stack with a Pulumi.<stack>.yaml,
    or those ``--project``, ``--selector``, ``--wave`` and ``--shard`` choose), checked ``--parallel N`` at
    a time; ``fn`` gets ``fleet``."""

    @functools.wraps(fn)
    def checked(
        invocation: Invocation,
        every: bool,
        parallel: int,
        selection: Selection,
        shard: Shard | None,
        **kwargs: Any,
    ) -> int:
        if every == bool(invocation.stack):
            raise CliError("UsageError", "give either STACK or --all")
        if not every and (selection.given or shard is not None):
            raise CliError("UsageError", "--project, --selector, --wave and --shard choose stacks for --all")
        return fn(invocation, fleet=Fleet(every, parallel, selection, shard), **kwargs)

    selected = click.option(
        "--shard",
        callback=_checked_shard,
        metavar="I/N",
        help="With --all: only the stacks of shard I of N (0 <= I < N; auto/N reads JOB_COMPLETION_INDEX).",
    )(selection_options(checked))
    wrapped = command(selected, stack_required=False)
    wrapped = click.option("--all", "every", is_flag=True, help="Every stack of the project (or the fleet).")(
        wrapped
    )
    return click.option(
        "--parallel",
        type=click.IntRange(min=1),
        default=automation.DEFAULT_PARALLEL,
        show_default=True,
        help="With --all: how many stacks to check at once, each in its own engine process.",
    )(wrapped)


def command(
    fn: Callable[..., int], *, stack_required: bool = True, stack: bool = True
) -> Callable[..., None]:
    """Common arguments (STACK, unless ``stack`` is False; --cwd, --json), one error boundary, and the exit
    code."""

    @click.option(
        "--cwd",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The Pulumi project directory (default: found from the current directory).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
    @functools.wraps(fn)
    def wrapper(stack: str | None, cwd: Path | None, as_json: bool, **kwargs: Any) -> None:
        # Progress and prompts go to stdout on a terminal, and never into a --json document.
        from ._console import CliConsole

        console = CliConsole(stderr=as_json, highlight=False, markup=False, soft_wrap=True)
        if not console.is_terminal:
            # A log has no width to fit: never crop a line (rich assumes 80 columns otherwise).
            console.width = _LOG_WIDTH
        invocation = Invocation(stack=stack or "", cwd=cwd, json=as_json, console=console)
        with automation.cancel_on_signals() as interruption:
            try:
                code = fn(invocation, **kwargs)
                if interruption.signum:  # the engine stopped early but cleanly (`drift --all` goes on)
                    code = interruption.exit_code
            except GitOpsInfraError as exc:
                code = interruption.exit_code if interruption.signum else EXIT_ERROR
                raise CliError(type(exc).__name__, str(exc), code, subject=_subject(invocation)) from exc
            except KeyboardInterrupt:
                code = interruption.exit_code if interruption.signum else 128 + signal.SIGINT
                raise CliError("Interrupted", "stopped before it finished", code) from None
            except Exception:
                # Whatever a signal broke on its way (`pulumi version`'s probe killed by the forwarded
                # Ctrl-C ends in CalledProcessError), the news is the signal, not the breakage.
                if not interruption.signum:
                    raise
                by = signal.Signals(interruption.signum).name
                raise CliError(
                    "Interrupted", f"stopped by {by} before it finished", interruption.exit_code
                ) from None
        if invocation.output_lost:
            name = click.get_current_context().info_name
            raise CliError(
                "OutputClosed",
                f"stdout was closed before `{name}` finished writing its output; `{name}` itself "
                "ran to its end",
            )
        sys.exit(code)

    if not stack:
        return functools.wraps(wrapper)(lambda **kwargs: wrapper(stack=None, **kwargs))
    return click.argument("stack", required=stack_required, callback=checked_stack)(wrapper)


# Click 8.2+ raises this for a group called with no command; older versions printed the help themselves.
_HELP_INSTEAD: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",) if hasattr(click.exceptions, name)
)


def _wants_json(args: list[str]) -> bool:
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _subject(invocation: Invocation) -> dict[str, str]:
    """``{"stack": ..., "project": ...}`` for a command on one stack, as far as they can be told."""
    if not invocation.stack:
        return {}
    from ..automation._project import Project

    try:
        return {"stack": invocation.stack, "project": Project.find(invocation.cwd).name}
    except GitOpsInfraError:  # no project there, or no name: the stack alone
        return {"stack": invocation.stack}


def _report(kind: str, message: str, *, as_json: bool, subject: dict[str, str] | None = None) -> None:
    """The one place a failure is written: ``kind: message`` on stderr, and the JSON document."""
    if as_json:
        document = {"error": {"type": kind, "message": message}, **(subject or {})}
        echo(json.dumps(document, indent=2, sort_keys=True))
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


class _Cli(click.Group):
    """Every failure, a usage error included, exits through :func:`_report` with one exit code.

    Click's usage errors would exit 2, which here means "changes pending": they exit 1 instead. With
    ``--json`` anywhere among the options, each of them is a JSON document on stdout too.

    Commands load lazily (click's documented pattern): a command's module is imported when the command
    is looked up, and ``--help`` lists them all from ``_COMMANDS`` without importing any.
    """

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
        try:
            return _exit_checked(
                lambda: super(_Cli, self).main(argv, prog_name, standalone_mode=False, **extra)
            )
        except KeyboardInterrupt as exc:  # a signal outside a command's own handling (before, between)
            _interrupted(exc, as_json=as_json)
        except CliError as exc:
            _report(exc.kind, exc.format_message(), as_json=as_json, subject=exc.subject)
            sys.exit(exc.exit_code)
        except _HELP_INSTEAD as exc:  # `gitops-infra` alone: the help, as before click 8.2
            click.echo(exc.format_message())
            sys.exit(EXIT_OK)
        except click.UsageError as exc:
            _report("UsageError", exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            _report(type(exc).__name__, exc.format_message(), as_json=as_json)
            sys.exit(EXIT_ERROR)
        except click.Abort as exc:
            if isinstance(exc.__cause__, KeyboardInterrupt):  # click turns a signal into Abort
                _interrupted(exc.__cause__, as_json=as_json)
            _report("Aborted", "nothing was changed", as_json=as_json)
            sys.exit(EXIT_ERROR)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


_OUTPUT_CLOSED = "stdout could not be written (closed, or full); nothing else failed"


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
    _report("Interrupted", f"stopped by {signal.Signals(signum).name} before it finished", as_json=as_json)
    sys.exit(128 + signum)


class _Signalled(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised where the program was, so that it ends as one clean report."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum: int, _frame: object) -> None:
    raise _Signalled(signum)


def _stop_on_signals() -> dict[int, Any]:
    """SIGINT and SIGTERM end the CLI as a report (exit 128+N) wherever they come; the previous handlers.

    A command replaces these with the engine's graceful cancel while it runs (``cancel_on_signals``);
    these cover the rest: argument parsing, the engine lookup, the output. Only in the main thread, where
    Python delivers signals.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, _raise_signalled) for signum in (signal.SIGINT, signal.SIGTERM)}


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gitops-infra")
def main() -> None:
    """Preview, apply, check for drift and roll back GitOps platform stacks."""


def _checked_policy_packs(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    """Each ``--policy-pack``: ``gitops-infra`` (the bundled pack), or a directory that exists.

    A directory is made absolute here, against the shell's directory where it was checked: the engine
    runs from ``--cwd``'s, where a relative path would name another directory or none.
    """
    for pack in value:
        if pack != POLICY_PACK and not (pack and Path(pack).is_dir()):  # Path('') would be '.'
            raise click.BadParameter(f"{pack!r} is not a directory, nor {POLICY_PACK!r} (the bundled pack)")
    return tuple(pack if pack == POLICY_PACK else str(Path(pack).absolute()) for pack in value)


policy_packs_option = click.option(
    "--policy-pack",
    "policy_packs",
    multiple=True,
    metavar="DIR|gitops-infra",
    callback=_checked_policy_packs,
    help="A CrossGuard policy pack directory to enforce, or gitops-infra for the bundled one (repeatable).",
)
create_option = click.option("--create", is_flag=True, help="Create the stack if it does not exist.")


def _finite_seconds(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if not math.isfinite(value):  # nan passes FloatRange, and meant "retry forever"
        raise click.BadParameter(f"{value!r} is not a finite number of seconds")
    return value


lock_wait_option = click.option(
    "--lock-wait",
    type=click.FloatRange(min=0),
    callback=_finite_seconds,
    default=0.0,
    show_default=True,
    help="Seconds to wait for another update's lock before failing.",
)
message_option = click.option("--message", "-m", help="The update's message in the stack history.")


def formats(fn: Callable[..., int]) -> Callable[..., int]:
    """``--format text|markdown``: Markdown is for a pull request comment or a CI job summary."""

    @click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "markdown"]),
        default="text",
        show_default=True,
        help="markdown: a summary table and collapsible details, for a pull request or job summary.",
    )
    @functools.wraps(fn)
    def wrapper(invocation: Invocation, output_format: str, **kwargs: Any) -> int:
        if output_format == "markdown" and invocation.json:
            raise CliError("UsageError", "--json and --format markdown each print the whole output: pick one")
        invocation.markdown = output_format == "markdown"
        return fn(invocation, **kwargs)

    return wrapper


_DONE = {"create": "created", "update": "updated", "delete": "deleted", "replace": "replaced"}


def changes_line(changes: dict[str, int], *, applied: bool = False) -> str:
    def phrase(op: str, count: int) -> str:
        if op == "same":
            return f"{count} unchanged"
        return f"{count} {_DONE.get(op, op)}" if applied else f"{count} to {op}"

    return ", ".join(phrase(op, count) for op, count in sorted(changes.items())) or "no resources"
