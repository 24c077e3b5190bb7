"""How a command is invoked, and the options commands share.

- :class:`Invocation`: what a command gets, and how it hands a result to a renderer
  (:meth:`~Invocation.emit`);
- :func:`command` and :func:`fleet_command`: STACK (or ``--all`` and the fleet's selection), ``--cwd`` and
  ``--json``, run through the error boundary (``_main.run_command``) to an exit code;
- the shared options: ``--format``, ``--policy-pack``, ``--create``, ``--lock-wait``, ``--message``, and
  the checks of a stack name and of a duration.

Imported when a command is looked up, so it imports nothing heavy: the library (``pulumi.automation``, the
provider SDKs) and rich load when a command runs, as it needs them.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import click

from .. import automation
from ..errors import GitOpsInfraError, StackNameError
from ..policy import POLICY_PACK
from ._main import CliError, run_command
from ._output import OUTPUT, echo
from ._render import to_json, to_markdown

if TYPE_CHECKING:
    from rich.console import Console

    from ..automation.fleet.inventory import FleetStack, Shard
    from ..automation.options import EventCallback
    from ._console import CliConsole

__all__ = [
    "Fleet",
    "Invocation",
    "Selection",
    "checked_stack",
    "command",
    "create_option",
    "fleet_command",
    "formats",
    "lock_wait_option",
    "message_option",
    "policy_packs_option",
    "positive_duration",
    "selection_options",
]

_LOG_WIDTH = 1000


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
            from ._render.progress import StepPrinter

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
            self.stdout_closed = not echo(to_json(result, warnings=OUTPUT.warnings))
        else:
            human(self.console)

    def warn(self, text: str) -> None:
        """``warning: <text>`` on stderr (stdout may be the whole of a document); under --json, in the
        document's ``warnings``, since stderr then holds nothing the document does not."""
        if self.json:
            OUTPUT.warnings.append(text)
        else:
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
    from ..automation.fleet.inventory import parse_selector

    try:
        return parse_selector(value)
    except GitOpsInfraError as exc:
        raise click.BadParameter(str(exc)) from None


def _checked_shard(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Shard | None:
    from ..automation.fleet.inventory import Shard

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
        from ..automation.fleet.inventory import fleet_stacks, project_here

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
        code = run_command(lambda: fn(invocation, **kwargs), stack=invocation.stack, cwd=cwd)
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


def positive_duration(_ctx: click.Context, _param: click.Parameter, value: str | None) -> timedelta | None:
    """A Go duration (``90s``, ``10m``, ``24h``) longer than nothing, or None when the option is not given."""
    from ..checks import parse_duration

    if value is None:
        return None
    try:
        age = parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if age <= timedelta(0):
        raise click.BadParameter(f"{value!r} is not a positive duration")
    return age


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
