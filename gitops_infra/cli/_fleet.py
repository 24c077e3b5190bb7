"""The commands across stacks: drift and status, of one stack or of every stack (``--all``).

Each parses its arguments, calls one library function and renders the result; the text and Markdown
renderings of their results sit here, beside them.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from .. import automation
from ..errors import GitOpsInfraError
from ._app import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_PENDING,
    CliError,
    Fleet,
    Invocation,
    Selection,
    command,
    echo,
    fleet_command,
    formats,
    lock_wait_option,
    main,
    selection_options,
    to_json,
)
from ._markdown import Plain, code, details, table, word
from ._text import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from ..automation.results import Layer

__all__ = [
    "drift_exit",
    "drift_markdown",
    "fleet_drift_exit",
    "fleet_drift_markdown",
    "gitops_markdown",
    "gitops_outcome",
    "namer",
    "status_markdown",
]


def _checked_layers(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[Layer, ...]:
    from ..automation.results import Layer

    try:
        return Layer.parse(value)
    except GitOpsInfraError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command()
@fleet_command
@formats
@lock_wait_option
@click.option(
    "--layers",
    default="iac,gitops",
    show_default=True,
    callback=_checked_layers,
    help="What to check: iac (the resources, by a refresh preview), gitops (Flux's objects), or both.",
)
def drift(invocation: Invocation, fleet: Fleet, lock_wait: float, layers: tuple[Layer, ...]) -> int:
    """Compare STACK (or --all stacks) with reality in both layers, writing nothing; exit 2 when either
    drifted: a resource differs from the state (iac), or Flux is not healthy (gitops).

    The GitOps layer reads the stack's Flux objects, and every Kustomization and HelmRelease that is not
    Ready or is suspended, through the stack's own kubeconfig. A cluster that cannot be reached is an
    error of that layer; the IaC answer is still given.

    With --all, one line per stack; a stack that cannot be checked is reported and the others go on
    (exit 1 when one errored and none drifted). A stack an update holds is a lock error, unless
    --lock-wait gives the update time to finish.
    """
    options = invocation.options(lock_wait=lock_wait)
    if fleet.every:
        stacks = fleet.stacks(invocation)
        with invocation.activity("Checking drift of"):
            found = automation.detect_drift_all(
                stacks, options=options, parallel=fleet.parallel, shard=fleet.shard, layers=layers
            )
        invocation.emit(found, lambda out: _print_fleet_drift(out, found))
        return fleet_drift_exit(found)
    with invocation.activity("Checking drift of"):
        report = automation.detect_drift(invocation.stack, options=options, layers=layers)

    def human(out: Console) -> None:
        for resource in report.resources:
            out.print(f"{resource.kind.value:<8} {one_line(resource.urn)}")
            for diff in resource.diffs:
                out.print("    " + one_line(f"{diff.path}: {_change(diff.recorded, diff.actual)}"))
        out.print(f"{invocation.stack}: {_iac_outcome(report)}")
        _print_gitops(out, report.gitops, checked=automation.Layer.GITOPS in report.layers)

    invocation.emit(report, human)
    return drift_exit(report)


def drift_exit(report: automation.DriftReport) -> int:
    """2 when a resource drifted or the GitOps layer is not healthy (or its cluster unreachable); else 0."""
    return EXIT_PENDING if report.has_drift or not report.healthy else EXIT_OK


def fleet_drift_exit(found: automation.FleetDrift) -> int:
    """2 when any stack drifted in either layer; else 1 when one could not be checked (or its result is
    missing); else 0."""
    if found.has_drift or not found.healthy:
        return EXIT_PENDING
    return EXIT_ERROR if found.has_errors else EXIT_OK


def _iac_outcome(report: automation.DriftReport) -> str:
    if automation.Layer.IAC not in report.layers:
        return "iac not checked"
    return f"{len(report.resources)} drifted" if report.has_drift else "no drift"


def gitops_outcome(layer: automation.GitOpsReport | None, *, checked: bool = True) -> str:
    """The GitOps layer in a few words: ``healthy``, ``N problem(s)``, ``unreachable``, ``no Flux``."""
    if not checked:
        return "gitops not checked"
    if layer is None:
        return "gitops: no Flux in this stack"
    if layer.error is not None:
        return "gitops: the cluster could not be read"
    if layer.healthy:
        return "gitops: healthy"
    return f"gitops: {len(layer.problems)} problem(s)"


def _print_gitops(
    out: Console, layer: automation.GitOpsReport | None, *, checked: bool = True, indent: str = ""
) -> None:
    if layer is None:  # a stack without Flux has no GitOps section
        if not checked:
            out.print(indent + gitops_outcome(layer, checked=checked))
        return
    out.print(indent + gitops_outcome(layer))
    if layer.healthy:
        for source in layer.sources:
            out.print(f"{indent}  " + one_line(f"{source.shown} at {source.revision}"))
        for sync in layer.syncs:
            out.print(f"{indent}  " + one_line(f"{sync.shown} applied {sync.applied_revision}"))
    for problem in layer.problems:
        # One line each: Flux's messages quote files from git, and a newline in one would forge a line.
        out.print(f"{indent}  {one_line(problem)}")


class _Stack(Protocol):
    @property
    def stack(self) -> str: ...
    @property
    def project(self) -> str | None: ...


_Named = TypeVar("_Named", bound=_Stack)


def namer(stacks: Sequence[_Named]) -> Callable[[_Named], str]:
    """How a rendering names each stack: alone when all are of one project, else ``project/stack``."""
    if len({s.project for s in stacks}) <= 1:
        return lambda s: s.stack
    return lambda s: f"{s.project}/{s.stack}" if s.project else s.stack


def _change(recorded: Any, actual: Any) -> str:
    return f"{json.dumps(recorded, default=str)} -> {json.dumps(actual, default=str)}"


def _print_fleet_drift(out: Console, fleet: automation.FleetDrift) -> None:
    """A line a stack, a cause or a missing result. A report's inputs are artifacts and pod logs anyone
    who can write one controls, so every text from them is one line, escaped (:func:`one_line`): it can
    neither forge a line nor a CI workflow command."""
    names = namer(fleet.stacks)

    def shown(checked: automation.StackDrift) -> str:
        return one_line(names(checked))

    if not fleet.stacks:  # a shard the hash gave no stack: say so, rather than print nothing
        out.print(f"no stacks in shard {one_line(fleet.shard)}" if fleet.shard else "no stacks")
    for unread in fleet.unread:
        out.print(f"missing: {one_line(unread)}")
    for checked in fleet.stacks:
        name = shown(checked)
        if checked.error is not None:
            out.print(f"{name}: error: " + one_line(f"{checked.error.type}: {checked.error.message}"))
            continue
        assert checked.report is not None  # a check without an error has a report
        report = checked.report
        if report.gitops is None:  # not checked, or a stack without Flux
            out.print(f"{name}: {_iac_outcome(report)}")
            continue
        out.print(f"{name}: {_iac_outcome(report)}; {gitops_outcome(report.gitops)}")
        for problem in report.gitops.problems:
            out.print(f"  {one_line(problem)}")
    for cause in fleet.causes:
        change = _change(cause.recorded, cause.actual) if cause.path else "deleted"
        where = one_line(f"{cause.type} {cause.path}")
        out.print(
            f"cause: {where}: {one_line(change)}: {len(cause.stacks)} stack(s): "
            + one_line(", ".join(cause.stacks))
        )


@main.command()
@fleet_command
@formats
def status(invocation: Invocation, fleet: Fleet) -> int:
    """Where STACK (or --all stacks) stands: the last deployment, whether it ran HEAD, and its lock."""
    with invocation.activity("Reading the status of"):
        if fleet.every:
            stacks = fleet.stacks(invocation)
            found = automation.status_all(
                stacks, options=invocation.options(), parallel=fleet.parallel, shard=fleet.shard
            )
        else:
            found = (automation.status(invocation.stack, options=invocation.options()),)
    invocation.emit(found if fleet.every else found[0], lambda out: _print_status(out, found))
    return EXIT_ERROR if any(s.error is not None for s in found) else EXIT_OK


def _print_status(out: Console, found: tuple[automation.StackStatus, ...]) -> None:
    names = namer(found)

    def shown(s: automation.StackStatus) -> str:
        return one_line(names(s))

    if not found:
        out.print("no stacks")
    for s in found:
        if s.error is not None:
            out.print(f"{shown(s)}: error: " + one_line(f"{s.error.type}: {s.error.message}"))
            continue
        lock = one_line(lock_text(s))
        if s.last is None:
            out.print(f"{shown(s)}: never deployed; {lock}")
            continue
        last = s.last
        head = {None: "", True: ", HEAD", False: ", not HEAD"}[s.at_head]
        when = last.start_time.isoformat(timespec="seconds")
        commit = one_line((last.commit or "no commit")[:12])
        kind = one_line(f"{last.kind} {last.result}")  # the engine's words, kept even when not ours
        out.print(
            f"{shown(s)}: version {last.version} {kind} at {when} from {commit}{head}; "
            f"{lock}; {one_line(repr(last.message))}"
        )
        if s.gitops is not None:
            _print_gitops(out, s.gitops, indent="  ")


def _drift_rows(report: automation.DriftReport) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for resource in report.resources:
        if not resource.diffs:
            rows.append((word(resource.kind.value), code(resource.urn), Plain(""), Plain(""), Plain("")))
        for diff in resource.diffs:
            kind = word(resource.kind.value)
            rows.append((kind, code(resource.urn), diff.path, diff.recorded, diff.actual))
    return rows


_DRIFT_HEADER = ["drift", "resource", "property", "recorded", "actual"]


def drift_markdown(result: automation.DriftReport) -> str:
    """One stack's drift as Markdown: the counts by kind, then each drifted property folded."""
    kinds = Counter(r.kind.value for r in result.resources)
    lines = [f"### Drift of {code(result.stack)}", ""]
    lines += (
        table(["drift", "count"], [(word(k), n) for k, n in sorted(kinds.items())])
        if kinds
        else ["No drift."]
    )
    if automation.Layer.IAC not in result.layers:
        lines = [f"### Drift of {code(result.stack)}", "", "The IaC layer was not checked."]
    if result.resources:
        lines += details(f"{len(result.resources)} drifted", table(_DRIFT_HEADER, _drift_rows(result)))
    if result.gitops is not None:
        lines += ["", *gitops_markdown(result.gitops)]
    return "\n".join(lines) + "\n"


def _flux_rows(layer: automation.GitOpsReport) -> list[tuple[Any, ...]]:
    """A row per Flux object: a source with its revision, a sync with the one it applied, others bare."""
    revisions: list[tuple[automation.FluxStatus, str | None]] = [
        *((s, s.revision) for s in layer.sources),
        *((s, s.applied_revision) for s in layer.syncs),
        *((s, None) for s in layer.failing),
    ]
    return [
        (
            word(s.kind),  # the cluster's word, or a report's: any text at all
            f"{s.namespace}/{s.name}",
            Plain({True: "yes", False: "no", None: "not yet"}[s.ready]),
            Plain("yes" if s.suspended else "no"),
            revision if revision else Plain(""),
        )
        for s, revision in revisions
    ]


def gitops_markdown(layer: automation.GitOpsReport) -> list[str]:
    """The GitOps layer as Markdown lines: its outcome, each problem in Flux's words, and the objects."""
    lines = [f"#### GitOps layer: {gitops_outcome(layer).removeprefix('gitops: ')}", ""]
    if layer.problems:
        lines += [*(f"- {code(problem)}" for problem in layer.problems), ""]
    if layer.error is None:
        lines += table(["kind", "object", "ready", "suspended", "revision"], _flux_rows(layer))
    return lines


def fleet_drift_markdown(result: automation.FleetDrift) -> str:
    """Every stack's drift as Markdown: one row a stack, then each stack's drift or error folded."""

    def outcome(checked: automation.StackDrift) -> Plain:
        if checked.error is not None:
            return Plain(f"error: {word(checked.error.type)}")  # a report's: any text at all
        assert checked.report is not None  # a check without an error has a report
        if checked.report.gitops is None:  # not checked, or a stack without Flux
            return Plain(_iac_outcome(checked.report))
        return Plain(f"{_iac_outcome(checked.report)}; {gitops_outcome(checked.report.gitops)}")

    shown = namer(result.stacks)
    title = f"shard {code(result.shard)} of the fleet" if result.shard else "every stack"
    lines = [f"### Drift of {title}", ""]
    if result.unread:
        lines += ["Missing results:", "", *(f"- {code(unread)}" for unread in result.unread), ""]
    causes = result.causes
    if causes:
        rows = [
            (
                code(c.type),
                word(c.kind.value),
                c.path if c.path else Plain(""),
                c.recorded if c.path else Plain(""),
                c.actual if c.path else Plain(""),
                len(c.stacks),
                ", ".join(c.stacks),
            )
            for c in causes
        ]
        header = ["resource type", "drift", "property", "recorded", "actual", "stacks", "names"]
        lines += ["Drift by cause:", "", *table(header, rows), ""]
    lines += table(["stack", "result"], [(shown(checked), outcome(checked)) for checked in result.stacks])
    if not result.stacks:
        lines.append("No stacks in this selection.")
    body: list[str] = []
    for checked in result.stacks:
        if checked.error is not None:
            body += [f"{code(shown(checked))}: {code(checked.error.message)}", ""]
        elif checked.report is not None and (checked.report.has_drift or not checked.report.healthy):
            body += [code(shown(checked)), ""]
            if checked.report.has_drift:
                body += [*table(_DRIFT_HEADER, _drift_rows(checked.report)), ""]
            if checked.report.gitops is not None and not checked.report.healthy:
                body += [*gitops_markdown(checked.report.gitops), ""]
    if body:
        lines += details("details", body[:-1])
    return "\n".join(lines) + "\n"


def lock_text(status: automation.StackStatus) -> str:
    """The stack's lock in words: who holds it, and each damaged lock file that blocks it all the same."""
    if status.locked is None:
        return "lock unknown"
    held = [f"locked by {status.lock}"] if status.lock is not None else []
    held += [f"locked by a damaged lock file, {lock} (recover clears it)" for lock in status.damaged_locks]
    return "; ".join(held) or "unlocked"


def status_markdown(statuses: Sequence[automation.StackStatus]) -> str:
    """Statuses as Markdown: one row a stack, then the last deployments' messages and errors folded."""
    rows = []
    shown = namer(statuses)
    for status in statuses:
        last = status.last
        lock = (
            Plain({None: "unknown", False: "no"}[status.locked])
            if not status.locked
            else lock_text(status).removeprefix("locked ")
        )
        head = Plain({None: "", True: "yes", False: "no"}[status.at_head])
        flux = Plain(gitops_outcome(status.gitops).removeprefix("gitops: ") if status.gitops else "")
        if status.error is not None:
            rows.append((shown(status), Plain(f"error: {word(status.error.type)}"), *[Plain("")] * 5))
        elif last is None:
            rows.append((shown(status), Plain("never deployed"), Plain(""), Plain(""), Plain(""), lock, flux))
        else:
            when = last.start_time.isoformat(timespec="seconds")
            summary = f"v{last.version} {last.kind} {last.result}"
            rows.append((shown(status), summary, when, (last.commit or "")[:12], head, lock, flux))
    header = ["stack", "last", "at", "commit", "HEAD", "locked", "gitops"]
    lines = ["### Stack status", "", *table(header, rows)]
    messages = [f"- {code(shown(s))}: {code(s.last.message)}" for s in statuses if s.last and s.last.message]
    messages += [f"- {code(shown(s))}: {code(s.error.message)}" for s in statuses if s.error is not None]
    messages += [f"- {code(shown(s))}: {code(p)}" for s in statuses if s.gitops for p in s.gitops.problems]
    if messages:
        lines += details("messages", messages)
    return "\n".join(lines) + "\n"


@main.group(name="fleet")
def fleet_group() -> None:
    """The fleet across projects: list it, split it for CI or a Kubernetes Job, merge what the jobs print.

    Each stack's fleet fields (wave, labels, role) live in its stack file, under gitops-infra:fleet.
    """


@fleet_group.command(name="list")
@functools.partial(command, stack=False)
@selection_options
def fleet_list(invocation: Invocation, selection: Selection) -> int:
    """The stacks of the fleet, by fully qualified name, with their wave, labels and role."""
    stacks = selection.stacks(invocation.cwd)

    def human(out: Console) -> None:
        for s in stacks:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            role = f" role={s.role}" if s.role else ""
            out.print(f"{s.name}  wave={s.wave}  labels={labels or '-'}{role}  ({s.project_dir.as_posix()})")

    invocation.emit({"stacks": stacks}, human)
    return EXIT_OK


@fleet_group.command(name="matrix")
@functools.partial(command, stack=False)
@selection_options
@click.option(
    "--op", type=click.Choice(["drift", "preview", "up"]), required=True, help="What each job runs."
)
@click.option(
    "--changed-since", metavar="REF", help="Only stacks whose stack file or program changed since REF."
)
@click.option(
    "--max-jobs",
    type=click.IntRange(min=1, max=10_000),
    help="Jobs at most; more stacks become shards (default: 256 for github, 200 for gitlab).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["github", "gitlab"]),
    default="github",
    show_default=True,
    help='github: {"include": [...]} for fromJSON; gitlab: a parallel:matrix list.',
)
def fleet_matrix(
    invocation: Invocation,
    selection: Selection,
    op: str,
    changed_since: str | None,
    max_jobs: int | None,
    output_format: str,
) -> int:
    """The jobs of a CI matrix over the fleet, as one line of JSON: each stack once.

    A matrix runs its jobs at once, so for up the stacks must be of one wave: a selection over several
    is refused, naming them. Make one matrix a wave (--wave 0, then --wave 1 in a job that needs it).
    """
    from ..automation.fleet import runners

    stacks = selection.stacks(invocation.cwd)
    if changed_since is not None:
        stacks = runners.changed_since(stacks, changed_since)
    limit = runners.GITLAB_MAX_JOBS if output_format == "gitlab" else runners.GITHUB_MAX_JOBS
    if max_jobs is not None and max_jobs > limit:
        raise CliError(
            "UsageError", f"--max-jobs {max_jobs}: {output_format} runs at most {limit} jobs a matrix"
        )
    found = runners.fleet_matrix(stacks, runners.Operation(op), max_jobs=max_jobs or limit)
    document = found.github() if output_format == "github" else found.gitlab()
    invocation.stdout_closed = not echo(json.dumps(document, separators=(",", ":")))
    return EXIT_OK


@fleet_group.command(name="report")
@functools.partial(command, stack=False)
@formats
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="FILE...")
def fleet_report(invocation: Invocation, inputs: tuple[Path, ...]) -> int:
    """Merge the --json output of shards and matrix jobs (files, or directories of .json files) into one
    report, the shape of drift --all --json. Exit 2 on drift, else 1 when a result is missing or failed."""
    from ..automation.fleet.reports import merge_drift_reports

    merged = merge_drift_reports(inputs)
    invocation.emit(merged, lambda out: _print_fleet_drift(out, merged))
    return fleet_drift_exit(merged)


@fleet_group.command(name="job")
@functools.partial(command, stack=False)
@selection_options
@click.option("--op", type=click.Choice(["drift", "preview"]), default="drift", show_default=True)
@click.option("--shards", type=click.IntRange(min=1, max=10_000), required=True, help="Pods, one a shard.")
@click.option("--parallelism", type=click.IntRange(min=1), help="Pods at once (default: all).")
@click.option("--image", required=True, help="The image with gitops-infra, the engine and the project.")
@click.option("--name", default="gitops-infra-drift", show_default=True, help="The Job's name.")
@click.option("--namespace", default="gitops-infra", show_default=True)
@click.option("--service-account", help="The pods' service account (for IRSA or Pod Identity).")
@click.option(
    "--secret",
    default="gitops-infra-fleet",
    show_default=True,
    help="The Secret whose keys become the pods' environment (passphrase, backend, credentials).",
)
@click.option("--workdir", default="/workspace", show_default=True, help="Where the image holds the project.")
def fleet_job(
    invocation: Invocation,
    selection: Selection,
    op: str,
    shards: int,
    parallelism: int | None,
    image: str,
    name: str,
    namespace: str,
    service_account: str | None,
    secret: str,
    workdir: str,
) -> int:
    """A Kubernetes Indexed Job (YAML; JSON with --json) whose pod I runs `<op> --all --shard auto/N`.

    Needs Kubernetes 1.29 or later: backoffLimitPerIndex and the podFailurePolicy action FailIndex
    (drift found fails that index without a retry) are beta and on by default from 1.29, GA in 1.33.
    An older API server refuses the Job.
    """
    from ..automation.fleet import runners

    job = runners.indexed_job(
        op=runners.Operation(op),
        shards=shards,
        image=image,
        name=name,
        parallelism=parallelism,
        namespace=namespace,
        service_account=service_account,
        secret=secret,
        workdir=workdir,
        selection=runners.selection_args(selection.projects, selection.selector, selection.wave),
    )
    if invocation.json:
        invocation.stdout_closed = not echo(to_json(job))
    else:
        import yaml

        invocation.stdout_closed = not echo(yaml.safe_dump(job, sort_keys=False), nl=False)
    return EXIT_OK
