"""Every stack at once on the real engine: ``drift --all`` and ``status``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner
from pulumi import automation as auto

from gitops_infra.automation import detect_drift_all, project_stacks, status, status_all, up
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main

from ..support import workspace
from .conftest import SECRET_TOKEN, FixtureRepo

pytestmark = pytest.mark.engine


def _stack(repo: FixtureRepo, name: str, directory: Path, files: dict[str, str]) -> None:
    directory.mkdir()
    stack = auto.Stack.create(name, workspace(repo.root, repo.env))
    stack.set_all_config(
        {
            "fixture:directory": auto.ConfigValue(str(directory)),
            "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
            "fixture:files": auto.ConfigValue(json.dumps(files)),
        }
    )


def _cli(repo: FixtureRepo, *args: str) -> tuple[int, dict[str, object] | list[object]]:
    result = CliRunner(env=repo.env).invoke(main, [*args, "--cwd", str(repo.root), "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_drift_all_checks_every_stack_and_reports_each_one(repo: FixtureRepo, tmp_path: Path) -> None:
    _stack(repo, "prod", tmp_path / "prod-files", {"p": "prod"})
    # A stack file whose stack was never created: its check fails, and the others go on.
    (repo.root / "Pulumi.broken.yaml").write_text("config: {}\n")
    repo.commit("three stacks")
    up("dev", options=repo.options)
    up("prod", options=repo.options)
    (repo.files_dir / "a").write_text("edited out of band")
    assert project_stacks(repo.options) == ("broken", "dev", "prod")

    fleet = detect_drift_all(options=repo.options, parallel=2)

    by_stack = {s.stack: s for s in fleet.stacks}
    assert [s.stack for s in fleet.stacks] == ["broken", "dev", "prod"]
    assert by_stack["dev"].has_drift and not by_stack["prod"].has_drift
    assert by_stack["broken"].report is None and by_stack["broken"].error is not None
    assert by_stack["broken"].error.type == "StackNotFoundError"
    assert fleet.has_drift and fleet.has_errors

    code, document = _cli(repo, "drift", "--all", "--parallel", "3")
    assert code == EXIT_PENDING  # any drift: 2
    assert isinstance(document, dict)
    stacks = {s["stack"]: s for s in document["stacks"]}  # type: ignore[union-attr]
    assert stacks["dev"]["has_drift"] is True and stacks["dev"]["error"] is None
    assert stacks["prod"]["has_drift"] is False
    assert stacks["broken"]["error"]["type"] == "StackNotFoundError"
    assert document["has_drift"] is True and document["has_errors"] is True

    text = CliRunner(env=repo.env).invoke(main, ["drift", "--all", "--cwd", str(repo.root)]).stdout
    broken, dev, prod, cause = text.splitlines()
    assert cause == (
        'cause: pulumi-python:dynamic:Resource content: "one" -> "edited out of band": 1 stack(s): '
        "organization/fixture/dev"
    )
    assert broken.startswith("broken: error: StackNotFoundError: stack 'broken' not found on file://")
    assert (dev, prod) == ("dev: 1 drifted", "prod: no drift")

    (repo.files_dir / "a").write_text("one")  # dev is back as recorded: errors only now
    code, document = _cli(repo, "drift", "--all")
    assert code == EXIT_ERROR and document["has_drift"] is False  # type: ignore[call-overload]


def test_drift_takes_a_stack_or_all_never_both_or_neither(repo: FixtureRepo) -> None:
    for args in (("drift",), ("drift", "dev", "--all"), ("drift", "--all", "--parallel", "0")):
        code, document = _cli(repo, *args)
        assert code == EXIT_ERROR and document["error"]["type"] == "UsageError", args  # type: ignore[call-overload]


def test_status_reports_the_last_update_head_and_a_lock_held_by_a_running_update(repo: FixtureRepo) -> None:
    assert status("dev", options=repo.options).last is None
    up("dev", options=repo.options, message="first")
    repo.configure({"a": "one", "b": "two"}, delay="8")
    head = repo.commit("a slow program")

    text = CliRunner(env=repo.env).invoke(main, ["status", "dev", "--cwd", str(repo.root)]).stdout
    assert text.startswith("dev: version 1 update succeeded at ") and text.endswith(
        ", not HEAD; unlocked; 'first'\n"
    )
    settled = status("dev", options=repo.options)
    assert settled.last is not None and settled.last.message == "first" and settled.last.version == 1
    assert settled.at_head is False  # the last update ran the commit before HEAD
    assert settled.locked is False and settled.lock is None

    runner = threading.Thread(target=lambda: up("dev", options=repo.options, message="slow"))
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while not (during := status("dev", options=repo.options)).locked and time.monotonic() < deadline:
            time.sleep(0.2)
        assert during.locked is True and during.lock is not None
        assert during.lock.pid > 0 and during.lock.host
        code, document = _cli(repo, "status", "dev")
        assert code == EXIT_OK and document["locked"] is True  # type: ignore[call-overload]
        assert document["lock"]["pid"] == during.lock.pid  # type: ignore[call-overload]
    finally:
        runner.join()

    after = status("dev", options=repo.options)
    assert after.locked is False and after.at_head is True
    assert after.last is not None and (after.last.version, after.last.commit) == (2, head)
    (every,) = status_all(options=repo.options)
    assert every.stack == "dev" and every.last == after.last


FILE_SECRET = "file-secret-9d2e-never-in-markdown"


def test_markdown_of_real_runs_counts_what_ran_and_masks_secrets(repo: FixtureRepo) -> None:
    repo.raw_stack().set_config("fixture:secretFile", auto.ConfigValue(FILE_SECRET, secret=True))
    repo.commit("a secret file")

    def markdown(*args: str) -> tuple[int, str]:
        result = CliRunner(env=repo.env).invoke(
            main, [*args, "--cwd", str(repo.root), "--format", "markdown"]
        )
        return result.exit_code, result.stdout

    code, text = markdown("preview", "dev")
    assert code == EXIT_OK
    assert text.startswith("### Preview of `dev`") and "| create | 4 |" in text  # stack, a, b, secret

    up("dev", options=repo.options)
    (repo.files_dir / "secret").write_text("rotated out of band " + FILE_SECRET)
    (repo.files_dir / "a").write_text("edited")
    code, text = markdown("drift", "dev")
    assert code == EXIT_PENDING
    assert "| changed | 2 |" in text and "| `content` | `[secret]` | `[secret]` |" in text
    assert "| `content` | `one` | `edited` |" in text

    code, text = markdown("drift", "--all")
    assert code == EXIT_PENDING and "| `dev` | 2 drifted |" in text

    code, text = markdown("status", "dev")
    assert code == EXIT_OK and "| `dev` | `v1 update succeeded` |" in text and "| yes | no |" in text

    for args in (("preview", "dev"), ("drift", "dev"), ("drift", "--all"), ("status", "--all")):
        assert FILE_SECRET not in markdown(*args)[1] and SECRET_TOKEN not in markdown(*args)[1]


def test_one_ctrl_c_stops_drift_all_and_reports_the_rest_as_not_checked(
    repo: FixtureRepo, tmp_path: Path
) -> None:
    names = ["s1", "s2", "s3", "s4"]
    for name in names:
        _stack(repo, name, tmp_path / f"{name}-files", {name: name})
    repo.commit("five stacks")
    for name in ["dev", *names]:
        up(name, options=repo.options)
    # Each check reads slowly, one at a time: a CI runner's cancel comes while the first one runs.
    env = {**os.environ, **repo.env, "FIXTURE_SLOW_READ": "2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gitops_infra.cli", "drift", "--all", "--parallel", "1", "--json"],
        cwd=repo.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        child.name() == "pulumi" for child in psutil.Process(process.pid).children()
    ):
        time.sleep(0.1)
    time.sleep(1)
    process.send_signal(signal.SIGINT)  # once
    stdout, stderr = process.communicate(timeout=120)

    assert process.returncode == 128 + signal.SIGINT, stderr
    by_stack = {s["stack"]: s for s in json.loads(stdout)["stacks"]}
    assert list(by_stack) == ["dev", *names]
    not_checked = [n for n, s in by_stack.items() if s["error"] and s["error"]["type"] == "Interrupted"]
    # The running check was stopped by the engine; none of the queued ones was started.
    assert not_checked == names, by_stack
    assert "not checked: SIGINT came before it started" in by_stack["s4"]["error"]["message"]
