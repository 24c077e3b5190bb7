"""The fleet past one machine, on the real engine: shards and matrix jobs, merged into one report.

A fleet of two projects and six stack files (one never created) in one git repository, two stacks
drifted the same way. Whatever way it is split (shards run one after the other, or the generated matrix
run a job a process, each with its own environment, as CI runners would), ``fleet report`` over the
pieces must equal ``drift --all`` on one machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, up
from gitops_infra.cli import EXIT_OK, EXIT_PENDING, main

from .. import support
from ..support import (
    REPO_ROOT,
    Engine,
    commit_all,
    fixture_project,
    init_repo,
    without_times,
    workspace,
    write_project,
)
from .conftest import SECRET_TOKEN

pytestmark = pytest.mark.engine

CLI = str(Path(sys.executable).parent / "gitops-infra")
FLEET_WORKFLOW = REPO_ROOT / "examples" / "ci" / "fleet-drift.yml"
ROLE = "arn:aws:iam::123456789012:role/fleet-drift"
STACKS = {
    "alpha": {
        "dev": {"labels": {"tier": "dev"}},
        "prod": {"wave": 2, "labels": {"tier": "prod"}, "role": ROLE},
        "edited": {"wave": 1, "labels": {"tier": "staging"}},
    },
    "beta": {"dev": None, "eu-1": {"wave": 2, "labels": {"tier": "prod", "region": "eu"}, "role": ROLE}},
}


@dataclass
class Fleet:
    repo: Path
    env: dict[str, str]

    def cli(self, *args: str) -> tuple[int, Any]:
        result = CliRunner(env=self.env).invoke(main, [*args, "--json"])
        return result.exit_code, json.loads(result.stdout)

    def process(
        self, *args: str, extra: dict[str, str] | None = None, shell: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """A command (or a bash script) in a process of its own, from the repository's root, as a runner
        runs it."""
        env = {**os.environ, **self.env, **(extra or {})}
        command = ["bash", "-e", *args] if shell else [CLI, *args]
        return subprocess.run(command, cwd=self.repo, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def fleet(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    # One fleet for the module: its tests only read (drift, preview, status), and each `up` costs seconds.
    tmp_path = tmp_path_factory.mktemp("fleet")
    repo = init_repo(tmp_path / "fleet", "fleet tests")
    env = support.engine_env(tmp_path)
    created = []
    for project, stacks in STACKS.items():
        root = fixture_project(repo / project)
        write_project(root, project, virtualenv=sys.prefix)
        for name, fleet_fields in stacks.items():
            files = tmp_path / f"files-{project}-{name}"
            files.mkdir()
            stack = auto.Stack.create(name, workspace(root, env))
            stack.set_all_config(
                {
                    "fixture:directory": auto.ConfigValue(str(files)),
                    "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
                    "fixture:files": auto.ConfigValue(json.dumps({"a": "one", "b": "two"})),
                }
            )
            if fleet_fields is not None:
                settings = root / f"Pulumi.{name}.yaml"
                data = yaml.safe_load(settings.read_text())
                data["config"]["gitops-infra:fleet"] = fleet_fields
                settings.write_text(yaml.safe_dump(data))
            created.append((root, name, files))
    (repo / "alpha" / "Pulumi.broken.yaml").write_text("config: {}\n")  # never created: an error
    commit_all(repo, "the fleet")
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda c: up(c[1], options=StackOptions(work_dir=c[0], env=env)), created))
    # The same out-of-band edit in two projects: one cause, two stacks.
    for _root, name, files in created:
        if name in ("edited", "eu-1"):
            (files / "a").write_text("edited out of band")
    return Fleet(repo=repo, env=env)


SELECTION = ("--project", "alpha", "--project", "beta")


def test_shards_cover_the_fleet_once_and_their_report_is_the_single_run(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet.repo)  # --project is relative, as in a checkout
    code, whole = fleet.cli("drift", "--all", *SELECTION, "--parallel", "6")
    assert code == EXIT_PENDING
    names = [s["name"] for s in whole["stacks"]]
    assert names == [
        "organization/alpha/broken",
        "organization/alpha/dev",
        "organization/alpha/edited",
        "organization/alpha/prod",
        "organization/beta/dev",
        "organization/beta/eu-1",
    ]
    drifted = {s["name"] for s in whole["stacks"] if s["has_drift"]}
    assert drifted == {"organization/alpha/edited", "organization/beta/eu-1"}
    (cause,) = whole["causes"]
    assert (cause["path"], cause["recorded"], cause["actual"]) == ("content", "one", "edited out of band")
    assert cause["stacks"] == ["organization/alpha/edited", "organization/beta/eu-1"]
    errors = {s["name"]: s["error"]["type"] for s in whole["stacks"] if s["error"]}
    assert errors == {"organization/alpha/broken": "StackNotFoundError"}

    for count in (1, 2, 3):
        outputs = []
        for index in range(count):
            code, shard = fleet.cli("drift", "--all", *SELECTION, "--shard", f"{index}/{count}")
            assert code in (EXIT_OK, EXIT_PENDING, 1) and shard["shard"] == f"{index}/{count}"
            outputs.append(tmp_path / f"shard-{index}-of-{count}.json")
            outputs[-1].write_text(json.dumps(shard))
        seen = [s["name"] for path in outputs for s in json.loads(path.read_text())["stacks"]]
        assert sorted(seen) == names, count  # each stack in exactly one shard
        code, merged = fleet.cli("fleet", "report", *map(str, reversed(outputs)))
        assert code == EXIT_PENDING
        assert without_times(merged) == without_times(whole), count


def _step(job: str, name: str) -> str:
    """The script of step ``name`` of ``job`` in the example fleet workflow."""
    steps = yaml.safe_load(FLEET_WORKFLOW.read_text())["jobs"][job]["steps"]
    (script,) = [str(step["run"]) for step in steps if step.get("name") == name]
    return script


def test_the_example_workflow_run_a_job_a_process_reports_what_one_machine_does(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet.repo)
    code, whole = fleet.cli("drift", "--all", *SELECTION, "--parallel", "6")
    assert code == EXIT_PENDING

    def run(script: str, **env: str) -> subprocess.CompletedProcess[str]:
        """A step's script as a runner runs it (bash -e), in a process with the job's own environment."""
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        return fleet.process(
            "-c", script, extra={"FLEET": " ".join(SELECTION), "PATH": path, **env}, shell=True
        )

    for max_jobs, jobs in ((None, 6), ("2", 2)):  # a job a stack; then more stacks than jobs: shards
        outputs = tmp_path / f"github-output-{max_jobs}"
        matrix_step = _step("matrix", "matrix")
        if max_jobs is not None:
            matrix_step = matrix_step.replace(
                "fleet matrix --op drift", f"fleet matrix --op drift --max-jobs {max_jobs}"
            )
        done = run(matrix_step, GITHUB_OUTPUT=str(outputs))
        assert done.returncode == 0, done.stderr
        entries = json.loads(outputs.read_text().removeprefix("matrix="))["include"]
        assert len(entries) == jobs

        results = fleet.repo / "results"  # where the report job downloads the artifacts
        shutil.rmtree(results, ignore_errors=True)

        def job(
            index: int, entry: dict[str, Any], results: Path = results, run_id: str = str(max_jobs)
        ) -> int:
            temp = tmp_path / f"runner-{run_id}-{index}"
            temp.mkdir()
            env = {
                "STACK": entry["stack"] or "",
                "PROJECT": entry["project"] or "",
                "SHARD": entry["shard"] or "",
            }
            done = run(
                _step("drift", "drift"), RUNNER_TEMP=str(temp), AWS_ROLE_ARN=entry["role"] or "", **env
            )
            # upload-artifact, then download-artifact with a pattern: a directory an artifact.
            (results / f"drift-{index}").mkdir(parents=True)
            shutil.copy(temp / "drift.json", results / f"drift-{index}" / "drift.json")
            return done.returncode

        with ThreadPoolExecutor(max_workers=6) as pool:
            codes = list(pool.map(job, range(len(entries)), entries))
        assert codes == [0] * jobs  # drift and errors are results: every job uploads and stays green
        summary = tmp_path / f"summary-{max_jobs}.md"
        report = run(_step("report", "report"), GITHUB_STEP_SUMMARY=str(summary))
        assert report.returncode == EXIT_PENDING, report.stderr  # the run goes red on drift
        assert "Drift by cause:" in summary.read_text() and SECRET_TOKEN not in summary.read_text()
        merged = fleet.process("fleet", "report", str(results), "--json")
        assert without_times(json.loads(merged.stdout)) == without_times(whole), max_jobs


def test_status_and_preview_take_the_same_selection_and_shards(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet.repo)
    code, statuses = fleet.cli("status", "--all", *SELECTION, "--selector", "tier=prod")
    assert code == EXIT_OK
    assert [(s["project"], s["stack"]) for s in statuses] == [("alpha", "prod"), ("beta", "eu-1")]
    code, previews = fleet.cli("preview", "--all", *SELECTION, "--wave", "2", "--expect-no-changes")
    assert code == EXIT_OK and [p["stack"] for p in previews["stacks"]] == ["prod", "eu-1"]
    assert not previews["has_changes"] and not previews["has_errors"]
    # preview --all looks and creates nothing: the stack never created is an error, as with drift.
    code, previews = fleet.cli("preview", "--all", "--project", "alpha", "--selector", "")
    assert code == 1 and {p["stack"]: bool(p["error"]) for p in previews["stacks"]} == {
        "broken": True,
        "dev": False,
        "edited": False,
        "prod": False,
    }
    seen = []
    for index in range(3):  # status's shards, like drift's, hold each stack exactly once
        _code, shard = fleet.cli("status", "--all", *SELECTION, "--shard", f"{index}/3")
        seen += [f"{s['project']}/{s['stack']}" for s in shard]
    assert sorted(seen) == [
        "alpha/broken",
        "alpha/dev",
        "alpha/edited",
        "alpha/prod",
        "beta/dev",
        "beta/eu-1",
    ]
