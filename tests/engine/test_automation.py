"""The automation layer against the real engine, on the fixture project inside a temp git repo."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from gitops_infra.automation import (
    SECRET,
    DriftKind,
    Layer,
    PropertyDiff,
    StackOptions,
    UpResult,
    detect_drift,
    history,
    preview,
    refresh,
    rollback_to_commit,
    up,
)
from gitops_infra.automation import drift as drift_module
from gitops_infra.errors import (
    CommitNotFoundError,
    OperationFailedError,
    StackLockedError,
    StackNotFoundError,
    WorkspaceError,
)

from ..support import git, workspace
from .conftest import SECRET_TOKEN, FixtureRepo, concurrent_ups

pytestmark = pytest.mark.engine

FILE_TYPE = "pulumi-python:dynamic:Resource"


def _file_urn(name: str) -> str:
    return f"urn:pulumi:dev::fixture::{FILE_TYPE}::{name}"


def _rollback_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("gitops-infra-rollback-*"))


def test_preview_of_an_empty_stack_lists_the_creates(repo: FixtureRepo) -> None:
    result = preview("dev", options=repo.options)

    creates = {step.urn for step in result.steps if step.op == "create"}
    assert {_file_urn("a"), _file_urn("b")} <= creates
    assert result.changes == {"create": 3}  # the stack, a and b (providers are not counted)
    assert result.has_changes
    assert repo.on_disk() == {}, "preview must not create anything"


def test_up_applies_and_a_second_up_changes_nothing(repo: FixtureRepo) -> None:
    head = git(repo.root, "rev-parse", "HEAD")

    first = up("dev", options=repo.options, message="first deploy")
    assert first.changes == {"create": 3}
    assert first.outputs["files"] == {"a": "one", "b": "two"}
    assert repo.on_disk() == {"a": "one", "b": "two"}
    assert (first.version, first.commit) == (1, head)

    second = up("dev", options=repo.options)
    assert not second.has_changes
    assert second.changes == {"same": 3}
    assert second.version == 2
    assert not preview("dev", options=repo.options).has_changes


def test_what_the_engine_leaves_in_its_temp_dir_goes_with_the_operation(
    repo: FixtureRepo, tmp_path: Path
) -> None:
    """Each operation's engine, plugins and program get a TMPDIR of their own, removed when it ends, and
    with it what they left (the Kubernetes provider leaves the kubeconfig it was given, see the cluster
    tier); a raw pulumi.automation run leaves its files where TMPDIR says."""
    engine_tmp = Path(repo.env["TMPDIR"])
    log = tmp_path / "temp-files.log"
    options = StackOptions(work_dir=repo.root, env={**repo.env, "FIXTURE_TEMP_LOG": str(log)})

    up("dev", options=options)
    left = [Path(line) for line in log.read_text().splitlines()]
    assert len(left) == 2  # one per file resource
    for path in left:
        assert path.parent.parent == engine_tmp and path.parent.name.startswith("gitops-infra-engine-")
        assert not path.exists()
    assert list(engine_tmp.iterdir()) == []

    repo.configure({"a": "one", "b": "two", "c": "three"})
    raw_env = {**repo.env, "FIXTURE_TEMP_LOG": str(log)}
    auto.Stack.select("dev", workspace(repo.root, raw_env)).up(on_output=None)
    raw = Path(log.read_text().splitlines()[-1])
    assert raw.parent == engine_tmp and raw.exists()


def test_events_stream_to_the_callback(repo: FixtureRepo) -> None:
    events: list[auto.EngineEvent] = []
    up("dev", options=StackOptions(work_dir=repo.root, env=repo.env, on_event=events.append))

    summaries = [e.summary_event for e in events if e.summary_event is not None]
    assert len(summaries) == 1
    assert {_file_urn("a"), _file_urn("b")} <= {
        e.resource_pre_event.metadata.urn for e in events if e.resource_pre_event is not None
    }


def test_drift_is_reported_without_writing_state_and_refresh_accepts_it(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    assert not detect_drift("dev", options=repo.options).has_drift

    (repo.files_dir / "a").write_text("edited by hand")
    (repo.files_dir / "b").unlink()
    before = repo.state_bytes()

    report = detect_drift("dev", options=repo.options)

    assert report.has_drift
    by_urn = {r.urn: r for r in report.resources}
    assert set(by_urn) == {_file_urn("a"), _file_urn("b")}
    assert by_urn[_file_urn("a")].kind is DriftKind.CHANGED
    assert by_urn[_file_urn("a")].diffs == (PropertyDiff("content", "one", "edited by hand"),)
    assert by_urn[_file_urn("b")].kind is DriftKind.DELETED
    assert repo.state_bytes() == before, "detect_drift must not write state"
    assert len(history("dev", options=repo.options)) == 1, "detect_drift must not record an update"

    refreshed = refresh("dev", options=repo.options)
    assert refreshed.changes.get("update") == 1 and refreshed.changes.get("delete") == 1
    assert not detect_drift("dev", options=repo.options).has_drift
    assert repo.state_bytes() != before


def test_rollback_to_a_commit_restores_reality_outputs_and_leaves_no_worktree(repo: FixtureRepo) -> None:
    commit_a = git(repo.root, "rev-parse", "HEAD")
    up("dev", options=repo.options)
    repo.configure({"a": "uno", "b": "two", "c": "three"})
    commit_b = repo.commit("B: change a, add c")
    at_b = up("dev", options=repo.options)
    assert repo.on_disk() == {"a": "uno", "b": "two", "c": "three"}
    assert at_b.commit == commit_b
    leftovers = _rollback_dirs()

    rolled = rollback_to_commit("dev", commit_a[:10], options=repo.options)

    assert rolled.rolled_back_to == commit_a
    assert rolled.outputs["files"] == {"a": "one", "b": "two"}
    assert repo.on_disk() == {"a": "one", "b": "two"}
    assert rolled.changes.get("update") == 1 and rolled.changes.get("delete") == 1
    # No worktree or temp checkout is left, and the caller's work tree is untouched.
    assert len(repo.worktrees()) == 1
    assert _rollback_dirs() == leftovers
    assert git(repo.root, "rev-parse", "HEAD") == commit_b
    assert git(repo.root, "status", "--porcelain") == ""

    deployments = history("dev", options=repo.options)
    assert [(d.kind, d.result, d.commit) for d in deployments] == [
        ("update", "succeeded", commit_a),
        ("update", "succeeded", commit_b),
        ("update", "succeeded", commit_a),
    ]
    assert [d.version for d in deployments] == [3, 2, 1]
    assert commit_a[:12] in deployments[0].message


def test_rollback_to_previous_and_to_a_tag(repo: FixtureRepo) -> None:
    commit_a = git(repo.root, "rev-parse", "HEAD")
    git(repo.root, "tag", "known-good")
    up("dev", options=repo.options)
    repo.configure({"a": "uno"})
    commit_b = repo.commit("B: only a")
    up("dev", options=repo.options)

    to_previous = rollback_to_commit("dev", "previous", options=repo.options)
    assert to_previous.rolled_back_to == commit_a
    assert repo.on_disk() == {"a": "one", "b": "two"}

    up("dev", options=repo.options)  # back on B from the work tree
    assert repo.on_disk() == {"a": "uno"}
    to_tag = rollback_to_commit("dev", "known-good", options=repo.options)
    assert to_tag.rolled_back_to == commit_a
    assert repo.on_disk() == {"a": "one", "b": "two"}
    assert history("dev", options=repo.options)[0].commit == commit_a
    assert commit_b != commit_a


def test_concurrent_up_gets_stack_locked_and_state_stays_intact(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    repo.configure({"a": "one", "b": "two"}, delay="4")

    outcomes = concurrent_ups(2, repo.options)

    locked = [o for o in outcomes if isinstance(o, StackLockedError)]
    applied = [o for o in outcomes if isinstance(o, UpResult)]
    assert (len(locked), len(applied)) == (1, 1), outcomes
    assert locked[0].stack == "dev"
    assert "locked" in str(locked[0])
    # The state is intact: a further update runs and sees nothing to do.
    repo.configure({"a": "one", "b": "two"})
    assert not up("dev", options=repo.options).has_changes
    assert [d.result for d in history("dev", options=repo.options)] == ["succeeded"] * 3


def test_concurrent_up_waits_for_the_lock_when_asked(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    repo.configure({"a": "one", "b": "two"}, delay="3")
    patient = StackOptions(work_dir=repo.root, env=repo.env, lock_wait=120)

    outcomes = concurrent_ups(2, patient)

    assert all(isinstance(o, UpResult) for o in outcomes), outcomes
    assert len(history("dev", options=repo.options)) == 3


def test_unknown_commit_is_refused_before_anything_runs(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    before = repo.state_bytes()

    with pytest.raises(CommitNotFoundError) as unknown:
        rollback_to_commit("dev", "no-such-ref", options=repo.options)
    assert unknown.value.commit == "no-such-ref"
    assert "no-such-ref" in str(unknown.value)

    first_commit = git(repo.root, "rev-list", "--max-parents=0", "HEAD")
    with pytest.raises(CommitNotFoundError, match=r"Pulumi\.yaml"):
        rollback_to_commit("dev", first_commit, options=repo.options)

    assert repo.state_bytes() == before
    assert len(repo.worktrees()) == 1
    assert git(repo.root, "status", "--porcelain") == ""


def test_previous_with_no_earlier_commit_is_refused(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    with pytest.raises(CommitNotFoundError, match="no earlier successful update"):
        rollback_to_commit("dev", "previous", options=repo.options)


def test_missing_passphrase_is_a_workspace_error_that_changes_nothing(
    repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    up("dev", options=repo.options)
    before = repo.state_bytes()
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    env = {k: v for k, v in repo.env.items() if k != "PULUMI_CONFIG_PASSPHRASE"}

    with pytest.raises(WorkspaceError) as missing:
        up("dev", options=StackOptions(work_dir=repo.root, env=env))

    assert str(missing.value).startswith("PULUMI_CONFIG_PASSPHRASE is not set")
    assert repo.state_bytes() == before


def test_unknown_stack_is_a_clear_error(repo: FixtureRepo) -> None:
    with pytest.raises(StackNotFoundError) as unknown:
        up("staging", options=repo.options)
    assert unknown.value.stack == "staging"
    assert "'staging' not found" in str(unknown.value)
    assert not (repo.root / "Pulumi.staging.yaml").exists()


def test_a_failing_program_reports_the_engine_message(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    repo.configure({"a": "one", "b": "two"}, fail="the program refused to run")

    with pytest.raises(OperationFailedError) as failed:
        up("dev", options=repo.options)

    assert failed.value.operation == "up"
    assert "the program refused to run" in str(failed.value)
    assert repo.on_disk() == {"a": "one", "b": "two"}


def test_secrets_never_appear_in_results_reprs_events_or_errors(repo: FixtureRepo) -> None:
    events: list[auto.EngineEvent] = []
    options = StackOptions(work_dir=repo.root, env=repo.env, on_event=events.append)

    applied = up("dev", options=options)
    (repo.files_dir / "a").write_text("drifted")
    seen: list[object] = [
        applied,
        preview("dev", options=options),
        detect_drift("dev", options=options),
        history("dev", options=options),
        refresh("dev", options=options),
    ]
    repo.configure({"a": "one"}, fail=f"boom {SECRET}")
    with pytest.raises(OperationFailedError) as failed:
        up("dev", options=options)
    seen.append(failed.value)

    assert applied.outputs["token"] == SECRET
    texts = [repr(item) for item in seen] + [str(failed.value), failed.value.engine_message]
    texts += [repr(event) for event in events]
    assert events, "the callback saw no events"
    assert not [text for text in texts if SECRET_TOKEN in text]
    assert SECRET_TOKEN not in json.dumps([repr(item) for item in seen])


def test_the_gitops_layer_is_read_while_the_refresh_runs_and_only_when_asked(
    repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    up("dev", options=repo.options)
    read_at: list[float] = []
    summary_at: list[float] = []
    real = drift_module.read_gitops

    def read_gitops(target: Any) -> Any:  # the real read, with when it began
        read_at.append(time.monotonic())
        return real(target)

    def on_event(event: auto.EngineEvent) -> None:
        if event.summary_event is not None:
            summary_at.append(time.monotonic())

    monkeypatch.setattr(drift_module, "read_gitops", read_gitops)
    options = dataclasses.replace(repo.options, on_event=on_event)

    both = detect_drift("dev", options=options)
    assert both.layers == (Layer.IAC, Layer.GITOPS) and both.gitops is None  # the fixture has no Flux
    assert len(read_at) == 1 and len(summary_at) == 1
    assert read_at[0] < summary_at[0], "the GitOps layer waited for the refresh to end"

    iac = detect_drift("dev", options=options, layers=[Layer.IAC])
    assert iac.layers == (Layer.IAC,) and len(read_at) == 1 and len(summary_at) == 2
