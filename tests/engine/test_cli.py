"""The gitops-infra CLI on the real engine: every verb, --json, and every exit code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gitops_infra.cli import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main

from ..support import git
from .conftest import SECRET_TOKEN, FixtureRepo

pytestmark = pytest.mark.engine


def _cli(repo: FixtureRepo, *args: str) -> Result:
    runner = CliRunner(env=repo.env)
    verb, *rest = args
    return runner.invoke(main, [verb, "dev", "--cwd", str(repo.root), *rest])


def _json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_preview_json_and_expect_no_changes(repo: FixtureRepo) -> None:
    pending = _cli(repo, "preview", "--json")
    assert pending.exit_code == EXIT_OK, pending.output
    document = _json(pending)
    assert document["has_changes"] is True
    assert document["changes"] == {"create": 3}
    assert {s["op"] for s in document["steps"]} == {"create"}

    assert _cli(repo, "preview", "--expect-no-changes").exit_code == EXIT_PENDING
    assert _cli(repo, "up", "--yes").exit_code == EXIT_OK
    settled = _cli(repo, "preview", "--expect-no-changes")
    assert settled.exit_code == EXIT_OK, settled.output
    assert "3 unchanged" in settled.stdout


def test_up_asks_for_yes_without_a_terminal_and_changes_nothing(repo: FixtureRepo) -> None:
    refused = _cli(repo, "up")
    assert refused.exit_code == EXIT_ERROR
    assert "--yes" in refused.stderr
    assert repo.on_disk() == {}


def test_up_prints_plain_progress_and_json_results(repo: FixtureRepo) -> None:
    plain = _cli(repo, "up", "--yes", "-m", "from the CLI")
    assert plain.exit_code == EXIT_OK, plain.output
    assert "create   pulumi-python:dynamic:Resource  a" in plain.stdout
    assert "Updated dev (version 1" in plain.stdout and "3 created" in plain.stdout
    assert '  files: {"a": "one", "b": "two"}' in plain.stdout
    assert '  token: "[secret]"' in plain.stdout

    again = _cli(repo, "up", "--yes", "--json")
    assert again.exit_code == EXIT_OK, again.output
    document = _json(again)  # the whole of stdout is one JSON document
    assert document["changes"] == {"same": 3}
    assert document["version"] == 2
    assert document["commit"] == git(repo.root, "rev-parse", "HEAD")
    assert document["outputs"]["token"] == "[secret]"
    assert SECRET_TOKEN not in again.output + plain.output


def test_drift_exit_codes_come_from_the_engine(repo: FixtureRepo) -> None:
    assert _cli(repo, "up", "--yes").exit_code == EXIT_OK
    clean = _cli(repo, "drift")
    assert clean.exit_code == EXIT_OK, clean.output
    assert "no drift" in clean.stdout

    (repo.files_dir / "a").write_text("edited by hand")
    drifted = _cli(repo, "drift", "--json")
    assert drifted.exit_code == EXIT_PENDING, drifted.output
    report = _json(drifted)
    assert report["has_drift"] is True
    (resource,) = report["resources"]
    assert resource["kind"] == "changed"
    assert resource["diffs"] == [{"path": "content", "recorded": "one", "actual": "edited by hand"}]

    plain = _cli(repo, "drift")
    assert plain.exit_code == EXIT_PENDING
    assert 'content: "one" -> "edited by hand"' in plain.stdout

    assert _cli(repo, "refresh").exit_code == EXIT_OK
    assert _cli(repo, "drift").exit_code == EXIT_OK


def test_rollback_and_history(repo: FixtureRepo) -> None:
    commit_a = git(repo.root, "rev-parse", "HEAD")
    assert _cli(repo, "up", "--yes").exit_code == EXIT_OK
    repo.configure({"a": "uno"})
    commit_b = repo.commit("B")
    assert _cli(repo, "up", "--yes").exit_code == EXIT_OK

    refused = _cli(repo, "rollback")
    assert refused.exit_code == EXIT_ERROR and "--yes" in refused.stderr

    rolled = _cli(repo, "rollback", "--yes", "--json")  # COMMIT defaults to "previous"
    assert rolled.exit_code == EXIT_OK, rolled.output
    assert _json(rolled)["rolled_back_to"] == commit_a
    assert repo.on_disk() == {"a": "one", "b": "two"}

    listed = _cli(repo, "history", "--json")
    assert listed.exit_code == EXIT_OK
    assert [d["commit"] for d in _json(listed)] == [commit_a, commit_b, commit_a]
    plain = _cli(repo, "history")
    assert commit_b[:12] in plain.stdout and "rollback to" in plain.stdout

    unknown = _cli(repo, "rollback", "no-such-ref", "--yes")
    assert unknown.exit_code == EXIT_ERROR
    assert unknown.stderr.startswith("CommitNotFoundError: ")


def test_errors_are_one_line_with_their_type_and_no_traceback(repo: FixtureRepo) -> None:
    runner = CliRunner(env=repo.env)
    missing = runner.invoke(main, ["preview", "staging", "--cwd", str(repo.root)])
    assert missing.exit_code == EXIT_ERROR
    assert missing.stderr.startswith("StackNotFoundError: stack 'staging' not found")
    assert "Traceback" not in missing.output

    as_json = runner.invoke(main, ["preview", "staging", "--cwd", str(repo.root), "--json"])
    assert as_json.exit_code == EXIT_ERROR
    assert json.loads(as_json.stdout)["error"]["type"] == "StackNotFoundError"

    usage = runner.invoke(main, ["preview"])
    assert usage.exit_code == EXIT_ERROR, "usage errors must not look like 'changes pending'"
