"""The fleet's inventory, shards, CI matrix, Indexed Job and merged report: no engine needed for any.

The drift they carry is real in ``tests/engine/test_fleet_shards.py``; here, every rule of the split and
the merge, over many fleets.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gitops_infra.automation import StackOptions
from gitops_infra.automation.fleet import FleetDrift, StackDrift, StackError, detect_drift_all
from gitops_infra.automation.fleet.inventory import (
    FleetSpec,
    FleetStack,
    Shard,
    fleet_spec,
    fleet_stacks,
    parse_selector,
    shard_index,
)
from gitops_infra.automation.fleet.reports import merge_drift_reports
from gitops_infra.automation.fleet.results import Operation
from gitops_infra.automation.fleet.runners import changed_since, fleet_matrix, indexed_job
from gitops_infra.automation.results import (
    DriftedResource,
    DriftKind,
    DriftReport,
    PropertyDiff,
    to_jsonable,
)
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main
from gitops_infra.config import load_config
from gitops_infra.errors import ArgumentError, ConfigError, WorkspaceError

ROLE = "arn:aws:iam::123456789012:role/fleet-drift"


def _project(root: Path, name: str, stacks: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n")
    for stack, fleet in stacks.items():
        config = {} if fleet is None else {"gitops-infra:fleet": fleet}
        (root / f"Pulumi.{stack}.yaml").write_text(json.dumps({"config": config}))
    return root


# -- the fleet section ------------------------------------------------------------------------------------

BAD_SPECS = [
    ({"wave": -1}, "gitops-infra:fleet.wave: Input should be greater than or equal to 0"),
    ({"wave": "2"}, "gitops-infra:fleet.wave: Input should be a valid integer"),
    ({"wave": True}, "gitops-infra:fleet.wave: Input should be a valid integer"),
    ({"labels": {"bad key!": "x"}}, "gitops-infra:fleet.labels: 'bad key!': a label key is"),
    ({"labels": {"tier": "no spaces"}}, "gitops-infra:fleet.labels: 'tier': a label value is"),
    ({"labels": {"tier": 3}}, "gitops-infra:fleet.labels.tier: Input should be a valid string"),
    ({"labels": ["tier"]}, "gitops-infra:fleet.labels: Input should be a valid dictionary"),
    ({"role": "arn:aws:iam::123456789012:user/u"}, "gitops-infra:fleet.role: must be an IAM role ARN"),
    ({"region": "eu"}, "gitops-infra:fleet.region: unknown key"),
    ({"secure": "v1:abc"}, "gitops-infra:fleet: must be plain YAML, not a secret"),
    ("wave 2", "gitops-infra:fleet: must be a mapping with wave, labels and role"),
]


@pytest.mark.parametrize(("value", "expected"), BAD_SPECS, ids=[str(case[0]) for case in BAD_SPECS])
def test_a_bad_fleet_section_is_a_problem_by_key_path(value: Any, expected: str) -> None:
    spec, problems = fleet_spec(value)
    assert spec == FleetSpec() and len(problems) == 1 and problems[0].startswith(expected), problems


def test_no_section_is_wave_0_with_no_labels_and_a_good_one_is_read_whole() -> None:
    assert fleet_spec(None) == (FleetSpec(wave=0, labels={}, role=None), [])
    spec, problems = fleet_spec(
        {"wave": 2, "labels": {"example.com/team": "payments", "tier": ""}, "role": ROLE}
    )
    assert problems == [] and spec.wave == 2 and spec.role == ROLE
    assert spec.labels == {"example.com/team": "payments", "tier": ""}


def test_the_program_checks_the_section_like_every_other(minimal: dict[str, Any]) -> None:
    load_config({**minimal, "fleet": {"wave": 1, "labels": {"tier": "prod"}}}, stack="prod")
    with pytest.raises(ConfigError) as info:
        load_config(
            {**{f"gitops-infra:{k}": v for k, v in minimal.items()}, "gitops-infra:fleet": {"wave": -1}},
            stack="prod",
        )
    assert info.value.problems == ("gitops-infra:fleet.wave: Input should be greater than or equal to 0",)


# -- listing -----------------------------------------------------------------------------------------------


def test_the_fleet_spans_projects_by_fully_qualified_name_and_selects_by_labels_and_wave(
    tmp_path: Path,
) -> None:
    infra = _project(
        tmp_path / "infra",
        "infra",
        {"dev": None, "prod": {"wave": 2, "labels": {"tier": "prod"}, "role": ROLE}},
    )
    tenants = _project(
        tmp_path / "tenants",
        "tenants",
        {"dev": {"labels": {"tier": "dev"}}, "prod": {"wave": 2, "labels": {"tier": "prod", "region": "eu"}}},
    )

    every = fleet_stacks([infra, tenants, infra])  # a directory given twice is one project
    assert [s.name for s in every] == [
        "organization/infra/dev",
        "organization/infra/prod",
        "organization/tenants/dev",
        "organization/tenants/prod",
    ]
    assert every[0] == FleetStack(project="infra", stack="dev", project_dir=infra)
    assert every[1].role == ROLE and every[1].wave == 2
    prod = fleet_stacks([infra, tenants], selector={"tier": "prod"})
    assert [s.name for s in prod] == ["organization/infra/prod", "organization/tenants/prod"]
    assert [s.name for s in fleet_stacks([infra, tenants], selector={"tier": "prod", "region": "eu"})] == [
        "organization/tenants/prod"
    ]
    assert [s.name for s in fleet_stacks([infra, tenants], wave=0)] == [
        "organization/infra/dev",
        "organization/tenants/dev",
    ]
    assert fleet_stacks([infra, tenants], selector={"tier": "staging"}) == ()


def test_every_bad_section_of_the_fleet_is_listed_by_file(tmp_path: Path) -> None:
    a = _project(tmp_path / "a", "a", {"dev": {"wave": -1}, "prod": {"labels": {"x": 1}}})
    (a / "Pulumi.broken.yaml").write_text("config: [1, 2]\n")
    (a / "Pulumi.worse.yaml").write_text("config: {a: 1, a: 2}\n")
    (a / "Pulumi.a b.yaml").write_text("config: {}\n")  # a name Pulumi would refuse
    (a / "Pulumi.huge.yaml").write_text("#" * (2 * 1024 * 1024))
    with pytest.raises(ConfigError) as info:
        fleet_stacks([a])
    problems = "\n".join(info.value.problems)
    assert f"{a}/Pulumi.dev.yaml: gitops-infra:fleet.wave:" in problems
    assert f"{a}/Pulumi.prod.yaml: gitops-infra:fleet.labels.x:" in problems
    assert f"{a}/Pulumi.broken.yaml: config: must be a mapping" in problems
    assert f"{a}/Pulumi.worse.yaml:" in problems
    assert f"{a}/Pulumi.a b.yaml: invalid stack name 'a b'" in problems
    assert f"{a}/Pulumi.huge.yaml: is 2097152 bytes; a stack file may have 1048576 at most" in problems
    assert len(info.value.problems) == 6


def test_a_stack_in_two_homes_and_an_empty_fleet_are_errors(tmp_path: Path) -> None:
    a = _project(tmp_path / "a", "same", {"dev": None})
    copy = _project(tmp_path / "copy", "same", {"dev": None})
    with pytest.raises(WorkspaceError, match="organization/same/dev is in two project directories"):
        fleet_stacks([a, copy])
    empty = _project(tmp_path / "empty", "empty", {})
    with pytest.raises(WorkspaceError, match="no stacks in the fleet"):
        fleet_stacks([empty])
    with pytest.raises(WorkspaceError, match="not a Pulumi project directory"):
        fleet_stacks([tmp_path])
    with pytest.raises(WorkspaceError, match="does not exist"):
        fleet_stacks([tmp_path / "nope"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tier=prod", {"tier": "prod"}),
        (" tier = prod , region=eu ", {"tier": "prod", "region": "eu"}),
        ("tier=", {"tier": ""}),
        ("", {}),
        (None, {}),
    ],
)
def test_a_selector_is_key_value_pairs(text: str | None, expected: dict[str, str]) -> None:
    assert parse_selector(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("tier", "is not key=value"),
        ("tier=a=b", "is not key=value"),
        ("tier=prod,,x=y", "an empty part"),
        ("tier=a,tier=b", "names 'tier' twice"),
        ("bad key=x", "a label key"),
        ("tier=bad value", "a label value"),
        ("=x", "a label key"),
    ],
)
def test_a_bad_selector_names_its_part(text: str, why: str) -> None:
    with pytest.raises(ArgumentError, match=why):
        parse_selector(text)


# -- shards ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2/2", "the index counts from 0 to 1"),
        ("0/0", "shard count must be 1 to"),
        ("x/4", "I must be a number"),
        ("-1/4", "I must be a number"),
        ("1/", "must be I/N"),
        ("1", "must be I/N"),
        ("1/4/2", "must be I/N"),
        ("1/99999999", "must be I/N"),
        ("auto/4", "JOB_COMPLETION_INDEX must hold the index"),
    ],
)
def test_a_bad_shard_is_refused_with_what_it_must_be(text: str, why: str) -> None:
    with pytest.raises(ArgumentError, match=why):
        Shard.parse(text, environ={})


def test_auto_takes_the_index_from_the_indexed_job() -> None:
    assert Shard.parse("auto/4", environ={"JOB_COMPLETION_INDEX": "3"}) == Shard(3, 4)
    with pytest.raises(ArgumentError, match="the index counts from 0 to 3"):
        Shard.parse("auto/4", environ={"JOB_COMPLETION_INDEX": "4"})
    with pytest.raises(ArgumentError, match="not 'x'"):
        Shard.parse("auto/4", environ={"JOB_COMPLETION_INDEX": "x"})
    assert str(Shard.parse(" 0/1 ")) == "0/1"


def test_the_split_is_pinned_so_every_machine_and_version_agrees() -> None:
    # SHA-256 of the name, its first 8 bytes big-endian, modulo N. Changing any of it would move stacks
    # between runners mid-rollout, so the split itself is pinned, for N = 1..8.
    pinned = {
        "organization/gitops-infra/prod": [0, 0, 0, 2, 1, 0, 1, 2],
        "organization/gitops-infra/dev": [0, 0, 2, 2, 0, 2, 4, 6],
        "organization/tenants/eu-1": [0, 0, 0, 0, 0, 0, 5, 0],
    }
    for name, indexes in pinned.items():
        assert [shard_index(name, count) for count in range(1, 9)] == indexes, name


def _random_fleet(rng: random.Random, size: int) -> list[FleetStack]:
    names = {(f"p{rng.randrange(5)}", f"s-{rng.getrandbits(40):x}") for _ in range(size)}
    return [FleetStack(project=p, stack=s, project_dir=Path(p)) for p, s in sorted(names)]


def test_the_shards_of_any_fleet_hold_every_stack_exactly_once() -> None:
    rng = random.Random(20261201)
    fleets = [_random_fleet(rng, size) for size in (0, 1, 2, 7, 31, 200, 500) for _ in range(8)]
    for fleet, count in itertools.product(fleets, range(1, 9)):
        held = [s.name for index in range(count) for s in Shard(index, count).of(fleet)]
        assert sorted(held) == sorted(s.name for s in fleet), (len(fleet), count)
    # And the split is of the stack set alone: another order of the same stacks splits the same way.
    fleet = fleets[-1]
    shuffled = rng.sample(fleet, len(fleet))
    for count in range(1, 9):
        for index in range(count):
            assert {s.name for s in Shard(index, count).of(fleet)} == {
                s.name for s in Shard(index, count).of(shuffled)
            }


# -- the CI matrix -----------------------------------------------------------------------------------------


def _fleet(count: int, waves: int = 3) -> list[FleetStack]:
    return [
        FleetStack(project="p", stack=f"s{i:03d}", project_dir=Path("infra/p"), wave=i % waves, role=ROLE)
        for i in range(count)
    ]


def test_a_matrix_is_a_job_a_stack_while_they_fit() -> None:
    fleet = _fleet(5)
    found = fleet_matrix(fleet, Operation.DRIFT, max_jobs=5)
    assert found.stacks == 5
    assert found.github()["include"][0] == {
        "shard": None,
        "stack": "s000",
        "name": "organization/p/s000",
        "project": "infra/p",
        "wave": 0,
        "role": ROLE,
    }
    assert [e["stack"] for e in found.github()["include"]] == [s.stack for s in fleet]
    # up takes one wave a matrix, a stack a job.
    up = fleet_matrix([s for s in fleet if s.wave == 0], Operation.UP).github()["include"]
    assert [(e["wave"], e["stack"]) for e in up] == [(0, "s000"), (0, "s003")]
    # GitLab's parallel:matrix takes strings only, and no unset variable.
    gitlab = fleet_matrix(
        [FleetStack(project="p", stack="dev", project_dir=Path("."), wave=0)], Operation.PREVIEW
    ).gitlab()
    assert gitlab == [{"STACK": "dev", "NAME": "organization/p/dev", "PROJECT": ".", "WAVE": "0"}]


@pytest.mark.parametrize(("count", "jobs"), [(257, 256), (500, 256), (30, 7), (9, 8)])
def test_more_stacks_than_jobs_become_shards_that_cover_each_stack_once(count: int, jobs: int) -> None:
    fleet = _fleet(count, waves=1)
    found = fleet_matrix(fleet, Operation.DRIFT, max_jobs=jobs)
    entries = found.github()["include"]
    assert len(entries) == jobs and found.stacks == count
    assert [e["shard"] for e in entries] == [f"{i}/{jobs}" for i in range(jobs)]
    assert all(e["stack"] is None and e["project"] is None for e in entries)
    covered = [s.name for e in entries for s in Shard.parse(e["shard"]).of(fleet)]
    assert sorted(covered) == sorted(s.name for s in fleet)
    assert {e["wave"] for e in entries} <= {0, None} and {e["role"] for e in entries} <= {ROLE, None}


def test_up_never_shards() -> None:
    with pytest.raises(ArgumentError, match="257 stacks to up, but at most 256 jobs"):
        fleet_matrix(_fleet(257, waves=1), Operation.UP)


def test_up_over_several_waves_is_refused_naming_them_since_a_matrix_runs_its_jobs_at_once() -> None:
    # A matrix starts every job together: prod (wave 2) deployed beside dev (wave 0).
    with pytest.raises(ArgumentError) as refused:
        fleet_matrix(_fleet(5), Operation.UP)
    assert str(refused.value) == (
        "the stacks to up are of waves 0, 1 and 2, but a matrix runs its jobs at once, so wave 2 would "
        "deploy beside wave 0: make one matrix a wave, each after the one before (--wave 0 first, then "
        "--wave 1)"
    )
    # drift and preview only look: any waves share a matrix.
    assert fleet_matrix(_fleet(5), Operation.DRIFT).stacks == 5
    assert fleet_matrix(_fleet(5), Operation.PREVIEW).stacks == 5


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_changed_since_keeps_the_stacks_whose_file_or_program_changed(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    a = _project(tmp_path / "a", "a", {"dev": None, "prod": None})
    b = _project(tmp_path / "b", "b", {"dev": None, "prod": None})
    (b / "__main__.py").write_text("# program\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    fleet = fleet_stacks([a, b])

    assert changed_since(fleet, "HEAD") == ()
    (a / "Pulumi.prod.yaml").write_text('{"config": {"x:y": 1}}')  # one stack file, not committed yet
    assert [s.name for s in changed_since(fleet, "HEAD")] == ["organization/a/prod"]
    _git(tmp_path, "commit", "-qam", "a/prod")
    (b / "__main__.py").write_text("# program, changed\n")  # the program: every stack of b
    _git(tmp_path, "commit", "-qam", "b's program")
    assert [s.name for s in changed_since(fleet, "HEAD~2")] == [
        "organization/a/prod",
        "organization/b/dev",
        "organization/b/prod",
    ]
    assert [s.name for s in changed_since(fleet, "HEAD~1")] == ["organization/b/dev", "organization/b/prod"]
    with pytest.raises(Exception, match="'no-such-ref' is not a commit"):
        changed_since(fleet, "no-such-ref")


# -- the Indexed Job ---------------------------------------------------------------------------------------


def test_the_job_runs_one_shard_a_pod_with_everything_secret_from_the_secret() -> None:
    job = indexed_job(
        op=Operation.DRIFT,
        shards=8,
        parallelism=3,
        image="registry.example.com/fleet@sha256:" + "0" * 64,
        service_account="fleet-drift",
        secret="fleet-credentials",
        selection=["--project", "infra", "--selector", "tier=prod"],
    )
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 8, 3)
    (container,) = spec["template"]["spec"]["containers"]
    assert container["command"] == [
        "gitops-infra",
        "drift",
        "--all",
        "--shard",
        "auto/8",
        "--project",
        "infra",
        "--selector",
        "tier=prod",
        "--json",
    ]
    assert container["envFrom"] == [{"secretRef": {"name": "fleet-credentials"}}]
    assert "env" not in container  # nothing secret inline: all of it from the Secret
    assert spec["template"]["spec"]["serviceAccountName"] == "fleet-drift"
    assert spec["podFailurePolicy"]["rules"][0] == {
        "action": "FailIndex",
        "onExitCodes": {"operator": "In", "values": [2]},
    }


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"op": Operation.UP}, "a Job runs drift or preview"),
        ({"name": "Bad_Name"}, "name 'Bad_Name': must be a DNS label"),
        ({"secret": ""}, "secret '': must be a DNS label"),
        ({"image": "two words"}, "image: must be an image reference"),
        ({"shards": 0}, "shard count must be 1 to"),
        ({"parallelism": 0}, "parallelism must be at least 1"),
    ],
)
def test_a_bad_job_argument_is_named(change: dict[str, Any], why: str) -> None:
    arguments: dict[str, Any] = {"op": Operation.DRIFT, "shards": 2, "image": "fleet:1", **change}
    with pytest.raises(ArgumentError, match=why):
        indexed_job(**arguments)


def test_job_help_names_the_kubernetes_version_the_job_needs() -> None:
    # backoffLimitPerIndex and FailIndex: beta (on by default) from 1.29, GA in 1.33; older servers refuse.
    job = indexed_job(op=Operation.DRIFT, shards=2, image="fleet:1")["spec"]
    assert job["backoffLimitPerIndex"] == 1
    assert job["podFailurePolicy"]["rules"][0]["action"] == "FailIndex"
    result = CliRunner().invoke(main, ["fleet", "job", "--help"], terminal_width=200)
    assert result.exit_code == EXIT_OK, result.output
    help_text = " ".join(result.stdout.split())
    assert (
        "Needs Kubernetes 1.29 or later: backoffLimitPerIndex and the podFailurePolicy action FailIndex"
        in help_text
    )
    assert "GA in 1.33. An older API server refuses the Job." in help_text


# -- the merged report -------------------------------------------------------------------------------------

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _drifted(project: str, stack: str, value: str, at: datetime = T0) -> StackDrift:
    diff = PropertyDiff(path="tags.owner", recorded="platform", actual=value)
    resource = DriftedResource(
        urn=f"urn:pulumi:{stack}::{project}::aws:s3/bucket:Bucket::b",
        type="aws:s3/bucket:Bucket",
        kind=DriftKind.CHANGED,
        diffs=(diff,),
    )
    report = DriftReport(stack=stack, resources=(resource,), project=project, checked_at=at)
    return StackDrift(stack=stack, report=report, project=project, checked_at=at)


def _clean(project: str, stack: str, at: datetime = T0) -> StackDrift:
    return StackDrift(
        stack=stack,
        report=DriftReport(stack=stack, project=project, checked_at=at),
        project=project,
        checked_at=at,
    )


def _write(path: Path, *documents: Any) -> Path:
    path.write_text("\n".join(json.dumps(to_jsonable(d), indent=2) for d in documents))
    return path


def _sharded(stacks: list[StackDrift], count: int) -> list[FleetDrift]:
    return [
        FleetDrift(stacks=tuple(s for s in stacks if Shard(i, count).holds(s.name)), shard=f"{i}/{count}")
        for i in range(count)
    ]


def test_the_merge_of_the_shards_is_the_whole_in_any_order(tmp_path: Path) -> None:
    stacks = [_drifted("p", f"s{i}", "someone") if i % 3 == 0 else _clean("p", f"s{i}") for i in range(20)]
    stacks.append(
        StackDrift(
            stack="broken",
            report=None,
            error=StackError("StackNotFoundError", "no stack"),
            project="q",
            checked_at=T0,
        )
    )
    whole = FleetDrift(stacks=tuple(sorted(stacks, key=lambda s: s.name)))
    for count in range(1, 6):
        files = [
            _write(tmp_path / f"{count}-{i}.json", shard) for i, shard in enumerate(_sharded(stacks, count))
        ]
        for order in (files, files[::-1], random.Random(count).sample(files, len(files))):
            assert merge_drift_reports(order) == whole


def test_drift_is_grouped_by_cause_then_listed_by_stack() -> None:
    fleet = FleetDrift(
        stacks=(
            _drifted("p", "a", "someone"),
            _drifted("p", "b", "someone"),
            _drifted("q", "c", "someone-else"),
            _clean("p", "d"),
        )
    )
    causes = fleet.causes
    assert [(c.actual, c.stacks) for c in causes] == [
        ("someone", ("organization/p/a", "organization/p/b")),
        ("someone-else", ("organization/q/c",)),
    ]
    assert (causes[0].type, causes[0].path, causes[0].recorded) == (
        "aws:s3/bucket:Bucket",
        "tags.owner",
        "platform",
    )
    document = to_jsonable(fleet)
    assert document["causes"][0]["stacks"] == ["organization/p/a", "organization/p/b"]


def test_a_retried_job_keeps_the_newest_result_whichever_file_comes_first(tmp_path: Path) -> None:
    old = _write(tmp_path / "first-try.json", FleetDrift(stacks=(_drifted("p", "a", "x", T0),), shard="0/1"))
    new = _write(
        tmp_path / "retry.json",
        FleetDrift(stacks=(_clean("p", "a", T0 + timedelta(minutes=5)),), shard="0/1"),
    )
    for order in ([old, new], [new, old]):
        merged = merge_drift_reports(order)
        assert not merged.has_drift and merged.stacks[0].checked_at == T0 + timedelta(minutes=5)


def test_a_missing_shard_file_or_failed_job_is_named(tmp_path: Path) -> None:
    stacks = [_clean("p", f"s{i}") for i in range(12)]
    shards = _sharded(stacks, 4)
    files = [_write(tmp_path / f"shard-{i}.json", shard) for i, shard in enumerate(shards) if i != 2]
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "empty.json").write_text("")
    failed = _write(
        tmp_path / "failed.json", {"error": {"type": "WorkspaceError", "message": "no passphrase"}}
    )
    other = _write(tmp_path / "other.json", {"hello": 1})
    os.mkfifo(tmp_path / "fifo.json")  # reading it would block: it is named, never opened
    merged = merge_drift_reports(
        [
            *files,
            tmp_path / "garbage.json",
            tmp_path / "list.json",
            tmp_path / "empty.json",
            failed,
            other,
            tmp_path / "nope.json",
            tmp_path / "fifo.json",
        ]
    )
    assert merged.unread == tuple(
        sorted(
            [
                "shard 2/4: no result",
                f"{tmp_path}/garbage.json: unreadable (JSONDecodeError: Expecting property name enclosed in "
                "double quotes: line 1 column 2 (char 1))",
                f"{tmp_path}/list.json: not a drift report (a JSON list)",
                f"{tmp_path}/empty.json: empty (the job printed nothing)",
                f"{tmp_path}/failed.json: the job failed: WorkspaceError: no passphrase",
                f"{tmp_path}/other.json: not a drift report (neither `stacks` nor `resources`)",
                f"{tmp_path}/nope.json: no such file or directory",
                f"{tmp_path}/fifo.json: not a regular file",
            ]
        )
    )
    assert merged.has_errors and not merged.has_drift
    assert len(merged.stacks) == sum(len(s.stacks) for i, s in enumerate(shards) if i != 2)


def test_a_directory_of_artifacts_and_concatenated_pod_logs_are_read(tmp_path: Path) -> None:
    stacks = [_drifted("p", "a", "x"), _clean("p", "b"), _clean("q", "c")]
    shards = _sharded(stacks, 3)
    (tmp_path / "artifacts" / "drift-0").mkdir(parents=True)
    _write(tmp_path / "artifacts" / "drift-0" / "drift.json", shards[0])
    _write(tmp_path / "pods.log", *shards[1:])  # `kubectl logs` of two pods, one after the other
    # A single stack's `drift STACK --json`, as a matrix job a stack prints it.
    single = _write(tmp_path / "single.json", stacks[0].report)
    merged = merge_drift_reports([tmp_path / "artifacts", tmp_path / "pods.log", single])
    assert merged.unread == () and [s.name for s in merged.stacks] == sorted(s.name for s in stacks)
    assert merged.has_drift


# -- the commands ------------------------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(main, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_fleet_list_and_matrix_over_projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(
        tmp_path / "infra",
        "infra",
        {"dev": None, "prod": {"wave": 2, "labels": {"tier": "prod"}, "role": ROLE}},
    )
    code, listed = _cli("fleet", "list", "--project", "infra", "--selector", "tier=prod")
    assert code == EXIT_OK and [s["name"] for s in listed["stacks"]] == ["organization/infra/prod"]
    assert listed["stacks"][0]["project_dir"] == "infra" and listed["stacks"][0]["role"] == ROLE
    # up over waves 0 and 2 is refused, naming them; one wave is a matrix.
    code, refused = _cli("fleet", "matrix", "--op", "up", "--project", "infra")
    assert code == EXIT_ERROR and refused["error"]["type"] == "ArgumentError", refused
    assert "the stacks to up are of waves 0 and 2" in refused["error"]["message"]
    assert "--wave 0 first, then --wave 2" in refused["error"]["message"]
    for wave, stack in (("0", "dev"), ("2", "prod")):
        result = CliRunner().invoke(
            main, ["fleet", "matrix", "--op", "up", "--project", "infra", "--wave", wave]
        )
        assert result.exit_code == EXIT_OK and result.stdout.count("\n") == 1  # one line, for $GITHUB_OUTPUT
        include = json.loads(result.stdout)["include"]
        assert [(e["stack"], e["project"], e["wave"]) for e in include] == [(stack, "infra", int(wave))]


@pytest.mark.parametrize(
    ("args", "kind", "says"),
    [
        (("drift", "--all", "--shard", "2/2"), "UsageError", "the index counts from 0 to 1"),
        (("drift", "--all", "--shard", "0/0"), "UsageError", "shard count must be 1 to"),
        (("drift", "--all", "--shard", "x/4"), "UsageError", "I must be a number"),
        (("drift", "dev", "--shard", "0/2"), "UsageError", "choose stacks for --all"),
        (("status", "dev", "--selector", "a=b"), "UsageError", "choose stacks for --all"),
        (("preview", "--all", "--create"), "UsageError", "--create goes with one STACK"),
        (("drift", "--all", "--selector", "tier"), "UsageError", "is not key=value"),
        (
            ("drift", "--all", "--selector", "tier=nope"),
            "WorkspaceError",
            "no stack of the fleet matches --selector tier=nope",
        ),
        (("fleet", "list", "--project", "nope"), "UsageError", "'nope' does not exist"),
        (("fleet", "list", "--wave", "-1"), "UsageError", "--wave"),
        (("fleet", "matrix", "--op", "deploy"), "UsageError", "'deploy' is not one of"),
        (
            ("fleet", "matrix", "--op", "drift", "--format", "gitlab", "--max-jobs", "201"),
            "UsageError",
            "gitlab runs at most 200",
        ),
        (
            ("fleet", "job", "--shards", "4", "--image", "x", "--name", "Bad"),
            "ArgumentError",
            "must be a DNS label",
        ),
        (("fleet", "report"), "UsageError", "Missing argument 'FILE...'"),
    ],
)
def test_fleet_errors_are_clear_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], kind: str, says: str
) -> None:
    monkeypatch.chdir(_project(tmp_path / "p", "p", {"dev": {"labels": {"tier": "dev"}}}))
    code, document = _cli(*args)
    assert code == EXIT_ERROR and document["error"]["type"] == kind, document
    assert says in document["error"]["message"]


def test_fleet_report_exits_2_on_drift_and_1_on_a_missing_result(tmp_path: Path) -> None:
    drifted = _write(tmp_path / "a.json", FleetDrift(stacks=(_drifted("p", "a", "x"),), shard="0/2"))
    code, document = _cli("fleet", "report", str(drifted))
    assert code == EXIT_PENDING and document["unread"] == ["shard 1/2: no result"]
    clean = _write(tmp_path / "b.json", FleetDrift(stacks=(_clean("p", "b"),), shard="0/1"))
    assert _cli("fleet", "report", str(clean))[0] == EXIT_OK
    assert _cli("fleet", "report", str(clean), str(tmp_path / "gone.json"))[0] == EXIT_ERROR
    markdown = CliRunner().invoke(main, ["fleet", "report", str(drifted), "--format", "markdown"]).stdout
    assert (
        "Drift by cause:" in markdown
        and "`organization/p/a`" in markdown
        and "shard 1/2: no result" in markdown
    )


def test_fleet_job_prints_yaml_the_api_server_reads(tmp_path: Path) -> None:
    import yaml

    result = CliRunner().invoke(
        main, ["fleet", "job", "--shards", "4", "--image", "fleet:1", "--project", str(tmp_path)]
    )
    assert result.exit_code == EXIT_OK, result.output
    job = yaml.safe_load(result.stdout)
    # Written out in full: no anchor or alias (`&id001`, `*id001`) for a reader to chase.
    assert not any(event.anchor for event in yaml.parse(result.stdout) if hasattr(event, "anchor"))
    assert job["spec"]["completions"] == 4
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][-3:] == [
        "--project",
        str(tmp_path),
        "--json",
    ]
    # The same document with --json.
    code, document = _cli("fleet", "job", "--shards", "4", "--image", "fleet:1", "--project", str(tmp_path))
    assert code == EXIT_OK and document == job


def test_a_failed_job_a_stack_is_filed_under_its_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path / "p", "p", {"dev": None}))
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    result = CliRunner().invoke(main, ["drift", "dev", "--json"])
    document = json.loads(result.stdout)
    assert result.exit_code == EXIT_ERROR and (document["stack"], document["project"]) == ("dev", "p")
    (tmp_path / "dev.json").write_text(result.stdout)
    merged = merge_drift_reports([tmp_path / "dev.json"])
    assert merged.unread == () and merged.stacks[0].name == "organization/p/dev"
    assert merged.stacks[0].error is not None and merged.stacks[0].error.type == document["error"]["type"]


def test_a_hostile_report_cannot_hang_or_flood_the_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge_count = _write(tmp_path / "count.json", {"stacks": [], "shard": "0/99999999999"})
    bad_index = _write(tmp_path / "index.json", {"stacks": [], "shard": "7/2"})
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"stacks": []}) + " " * 400_000)
    monkeypatch.setattr("gitops_infra.automation.fleet.reports.MAX_REPORT_BYTES", 300_000)
    merged = merge_drift_reports([huge_count, bad_index, deep, big])
    assert merged.stacks == () and len(merged.unread) == 4
    assert merged.unread[0] == f"{big}: larger than 300000 bytes; not a drift report"
    assert merged.unread[1] == f"{huge_count}: not a drift report (shard '0/99999999999')"
    assert merged.unread[2].startswith(f"{deep}: unreadable (RecursionError")
    assert merged.unread[3] == f"{bad_index}: not a drift report (shard '7/2')"


def test_a_fleet_wide_check_reports_an_unreadable_stack_file_as_that_stacks_error(tmp_path: Path) -> None:
    a = _project(tmp_path / "a", "a", {"dev": {"labels": {"tier": "dev"}}, "prod": {"wave": -1}})
    (a / "Pulumi.broken.yaml").write_text("config: [\n")
    # Listing refuses it; a fleet-wide check keeps it (it may match the selection) as an error.
    with pytest.raises(ConfigError):
        fleet_stacks([a])
    kept = fleet_stacks([a], selector={"tier": "dev"}, strict=False)
    assert [(s.stack, bool(s.problems)) for s in kept] == [("broken", True), ("dev", False), ("prod", True)]
    assert kept[2].problems == (
        f"{a}/Pulumi.prod.yaml: gitops-infra:fleet.wave: Input should be greater than or equal to 0",
    )
    problems_only = [s for s in kept if s.problems]
    fleet = detect_drift_all(problems_only, options=StackOptions(work_dir=a))  # no engine runs for these
    assert [(s.stack, s.error.type if s.error else None) for s in fleet.stacks] == [
        ("broken", "ConfigError"),
        ("prod", "ConfigError"),
    ]
    assert "gitops-infra:fleet.wave" in fleet.stacks[1].error.message  # type: ignore[union-attr]


def test_an_empty_shard_says_so_and_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path / "p", "p", {"dev": None}))
    empty = next(i for i in range(8) if i != shard_index("organization/p/dev", 8))
    for command in ("drift", "preview", "status"):
        result = CliRunner().invoke(main, [command, "--all", "--shard", f"{empty}/8"])
        assert result.exit_code == EXIT_OK, result.output
        assert result.stdout == ("no stacks\n" if command == "status" else f"no stacks in shard {empty}/8\n")
    code, document = _cli("drift", "--all", "--shard", f"{empty}/8")
    assert code == EXIT_OK and document["stacks"] == [] and document["shard"] == f"{empty}/8"


# -- which files are stacks: those the engine reads as one (issue 44, items 1, 6, 10 and 19) -------------


def test_the_inventory_lists_the_stack_files_where_the_engine_reads_them(tmp_path: Path) -> None:
    # stackConfigDir, and the project file's extension: a stale Pulumi.<stack>.yaml beside a Pulumi.yml
    # project is no stack file, and neither is one beside the project when the stack files are elsewhere.
    root = tmp_path / "p"
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (root / "stacks" / "Pulumi.prod.yml").write_text("config:\n  gitops-infra:fleet: {wave: 2}\n")
    (root / "stacks" / "Pulumi.dev.yml").write_text("config: {}\n")
    (root / "stacks" / "Pulumi.old.yaml").write_text("config: {}\n")
    (root / "Pulumi.prod.yml").write_text("config:\n  gitops-infra:fleet: {wave: 0}\n")
    listed = fleet_stacks([root])
    assert [(s.stack, s.wave) for s in listed] == [("dev", 0), ("prod", 2)]


def test_a_fleet_default_in_the_project_file_places_every_stack_that_sets_none(tmp_path: Path) -> None:
    # mergeConfig gives the program the project's default; the inventory reads the same, short form too.
    root = _project(tmp_path / "p", "p", {"dev": None, "prod": {"wave": 2}})
    (root / "Pulumi.yaml").write_text(
        "name: p\nruntime: python\nconfig:\n  gitops-infra:fleet:\n    value: {wave: 1, labels: {team: a}}\n"
    )
    assert [(s.stack, s.wave, dict(s.labels)) for s in fleet_stacks([root])] == [
        ("dev", 1, {"team": "a"}),
        ("prod", 2, {}),
    ]


def test_pulumi_deployments_settings_are_not_listed_as_a_stack(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "p", {"dev": None})
    # `pulumi deployment settings init` writes them beside the stack files (DetectProjectStackDeploymentPath).
    (root / "Pulumi.dev.deploy.yaml").write_text(
        "settings:\n  sourceContext:\n    git:\n      branch: refs/heads/main\n  operationContext:\n"
        "    preRunCommands: [make setup]\n"
    )
    (root / "Pulumi.empty.deploy.yaml").write_text("")
    assert [s.stack for s in fleet_stacks([root])] == ["dev"]
    # A stack named x.deploy holds a stack's settings: it is one.
    (root / "Pulumi.review.deploy.yaml").write_text("config:\n  gitops-infra:fleet: {wave: 1}\n")
    assert [s.stack for s in fleet_stacks([root])] == ["dev", "review.deploy"]
    # One that cannot be read cannot be told apart: it is listed, with its error.
    (root / "Pulumi.broken.deploy.yaml").write_text("settings: [\n")
    with pytest.raises(ConfigError, match=r"Pulumi\.broken\.deploy\.yaml: is not valid YAML"):
        fleet_stacks([root])


def test_drift_all_skips_pulumi_deployments_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "p", "p", {"dev": None})
    (root / "Pulumi.dev.deploy.yaml").write_text("settings:\n  operationContext: {}\n")
    seen: list[str] = []

    def drift(stack: str, **_: object) -> object:
        seen.append(stack)
        raise WorkspaceError("no engine here")

    monkeypatch.setattr("gitops_infra.automation.fleet.operations.detect_drift", drift)
    fleet = detect_drift_all(options=StackOptions(work_dir=root))
    assert seen == ["dev"] and [s.stack for s in fleet.stacks] == ["dev"]


def test_a_stack_file_read_as_yaml_1_2_as_pulumi_reads_it(tmp_path: Path) -> None:
    # YAML 1.1 made `no` a boolean, which no label may be; to Pulumi (gopkg.in/yaml.v3) it is the text "no".
    root = _project(tmp_path / "p", "p", {})
    (root / "Pulumi.dev.yaml").write_text(
        "config:\n  gitops-infra:fleet:\n    wave: 0o2\n    labels: {public: no, backup: on, legacy: Off}\n"
    )
    (listed,) = fleet_stacks([root])
    assert listed.wave == 2 and dict(listed.labels) == {"public": "no", "backup": "on", "legacy": "Off"}


def test_an_integer_of_more_than_4300_digits_is_that_stack_file_s_problem(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "p", {"dev": {"labels": {"tier": "dev"}}})
    (root / "Pulumi.huge.yaml").write_text(f"config:\n  gitops-infra:fleet: {{wave: {'9' * 5000}}}\n")
    (root / "Pulumi.tagged.yaml").write_text(f"config:\n  p:size: !!int {'9' * 5000}\n")
    with pytest.raises(ConfigError) as info:
        fleet_stacks([root])
    problems = sorted(info.value.problems)
    assert problems[0].startswith(f"{root}/Pulumi.huge.yaml: gitops-infra:fleet.wave: Input should be")
    assert (
        problems[1]
        == f"{root}/Pulumi.tagged.yaml: holds a value tagged !!int that is not one (line 2, column 11)"
    )
    kept = fleet_stacks([root], selector={"tier": "dev"}, strict=False)
    assert [(s.stack, bool(s.problems)) for s in kept] == [("dev", False), ("huge", True), ("tagged", True)]
    runner = CliRunner()
    listed = runner.invoke(main, ["fleet", "list", "--project", str(root)])
    assert listed.exit_code == EXIT_ERROR and "Traceback" not in listed.output, listed.output
    assert "Pulumi.huge.yaml" in listed.output
