"""``gitops-infra fleet``: the fleet across projects: list it, split it for CI (a matrix) or a Kubernetes
Indexed Job, and merge what the jobs print into one report (``fleet report``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click

from .._invocation import Invocation, Selection, command, formats, selection_options
from .._main import EXIT_OK, CliError, fleet_drift_exit, main
from .._output import echo
from .._render import to_json, to_yaml
from .._render.drift import print_fleet_drift
from .._render.inventory import print_fleet_list

__all__: list[str] = []


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

    invocation.emit({"stacks": stacks}, lambda out: print_fleet_list(out, stacks))
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
    from ...automation.fleet import runners

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
    from ...automation.fleet.reports import merge_drift_reports

    merged = merge_drift_reports(inputs)
    invocation.emit(merged, lambda out: print_fleet_drift(out, merged))
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
    from ...automation.fleet import runners

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
        invocation.stdout_closed = not echo(to_yaml(job), nl=False)
    return EXIT_OK
