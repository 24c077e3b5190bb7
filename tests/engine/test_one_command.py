"""Each stack operation runs the one engine command the raw CLI would run, and nothing after it.

A ``pulumi`` wrapper first on ``PATH`` logs every command the automation layer starts, then runs the
real engine. ``pulumi version`` (once per engine binary and process) is not an operation's.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from pulumi import automation as auto

from gitops_infra.automation import (
    SECRET,
    destroy,
    detect_drift,
    history,
    preview,
    recover,
    refresh,
    rollback_to_commit,
    up,
)
from gitops_infra.automation._engine.runner import EngineEvents
from gitops_infra.automation.results import RecordedResult, UpResult
from gitops_infra.errors import OperationFailedError

from ..support import Engine
from .conftest import FixtureRepo

pytestmark = pytest.mark.engine


@pytest.fixture
def command_lines(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], list[list[str]]]:
    """The engine commands started since the last call, each as its words (split on spaces)."""
    log = tmp_path / "commands.log"
    wrapper = tmp_path / "wrapped" / "bin" / "pulumi"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{engine.bin_dir / "pulumi"}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")

    def started() -> list[list[str]]:
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return [line.split() for line in lines]

    return started


@pytest.fixture
def commands(command_lines: Callable[[], list[list[str]]]) -> Callable[[], list[str]]:
    """The engine commands started since the last call: each one's first word (``up``, ``stack``...)."""

    def started() -> list[str]:
        words = [next(w for w in line if not w.startswith("-")) for line in command_lines()]
        return [word for word in words if word != "version"]

    return started


def test_up_refresh_rollback_recover_and_destroy_each_run_one_command(
    repo: FixtureRepo, commands: Callable[[], list[str]]
) -> None:
    first = repo.head()
    created = up("dev", options=repo.options, message="A")
    assert commands() == ["up"]
    assert (created.changes, created.version, created.commit) == ({"create": 3}, 1, first)
    assert created.outputs == {"files": {"a": "one", "b": "two"}, "token": SECRET}

    repo.configure({"a": "uno", "c": "three"})  # through the raw CLI: not ours to count
    second = repo.commit("B")
    commands()
    changed = up("dev", options=repo.options)
    assert commands() == ["up"]
    assert (changed.version, changed.commit) == (2, second)
    assert changed.outputs["files"] == {"a": "uno", "c": "three"}

    refreshed = refresh("dev", options=repo.options, message="look")
    assert commands() == ["refresh"]
    rolled = rollback_to_commit("dev", first, options=repo.options)
    assert commands() == ["up"]
    assert (rolled.version, rolled.commit, rolled.rolled_back_to) == (4, first, first)
    assert rolled.outputs["files"] == {"a": "one", "b": "two"}
    recovered = recover("dev", options=repo.options)
    assert commands() == ["stack", "cancel", "refresh"]  # the checkpoint's pending operations, the lock
    removed = destroy("dev", options=repo.options)
    assert commands() == ["destroy"]

    # What the results say is what the engine's own history says.
    engine_history = history("dev", options=repo.options)
    assert [d.version for d in engine_history] == [6, 5, 4, 3, 2, 1]
    results: list[UpResult | RecordedResult] = [removed, rolled, refreshed, changed, created]
    listed = [d for d in engine_history if d.kind != "refresh" or d.message == "look"]
    assert [(r.version, r.commit) for r in results] == [(d.version, d.commit) for d in listed]
    assert recovered.changes == {"same": 3}
    assert removed.changes == {"delete": 3}


def test_preview_runs_one_command(repo: FixtureRepo, commands: Callable[[], list[str]]) -> None:
    preview("dev", options=repo.options)
    assert commands() == ["preview"]


def test_an_unwatched_operation_reads_its_events_from_a_file_and_a_watched_one_streams_them(
    repo: FixtureRepo, command_lines: Callable[[], list[list[str]]]
) -> None:
    # Nobody watching: the engine writes its events to a file in the operation's private temp dir, which
    # costs its cores nothing; the gRPC stream costs this process CPU for every event.
    up("dev", options=repo.options)
    (repo.files_dir / "a").write_text("edited by hand")
    assert detect_drift("dev", options=repo.options).has_drift
    repo.configure({"a": "uno"})  # through the raw CLI, which streams no events
    assert preview("dev", options=repo.options).has_changes
    unwatched = [_event_log(line) for line in command_lines() if "--event-log" in line]
    assert len(unwatched) == 3
    for log in unwatched:
        assert Path(log).name == "events.jsonl" and Path(log).parent.name.startswith("gitops-infra-engine-")
        assert not Path(log).parent.exists()  # gone with the operation

    events: list[auto.EngineEvent] = []
    watched = dataclasses.replace(repo.options, on_event=events.append)
    assert preview("dev", options=watched).has_changes
    up("dev", options=watched)
    watched_logs = [_event_log(line) for line in command_lines() if "--event-log" in line]
    assert len(watched_logs) == 2 and all(log.startswith("tcp://127.0.0.1:") for log in watched_logs)
    assert len([e for e in events if e.summary_event is not None]) == 2


def _event_log(words: list[str]) -> str:
    return words[words.index("--event-log") + 1]


def test_events_that_never_came_fail_a_preview_and_an_up_reads_its_history(
    repo: FixtureRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An event log the engine cannot write (a full disk): it says so only in its verbose log, and goes on.
    up("dev", options=repo.options)
    unwritable = property(lambda events: events.temp_dir / "no-such-dir" / "events.jsonl")
    monkeypatch.setattr(EngineEvents, "log_file", unwritable)

    (repo.files_dir / "a").write_text("edited by hand")
    with pytest.raises(OperationFailedError, match="ended without the engine's summary") as failed:
        detect_drift("dev", options=repo.options)  # not "no drift"
    assert (failed.value.operation, failed.value.stack) == ("detect_drift", "dev")
    with pytest.raises(OperationFailedError, match="ended without the engine's summary"):
        preview("dev", options=repo.options)

    repo.configure({"a": "uno", "b": "two"})
    changed = up("dev", options=repo.options)
    assert changed.changes == {"update": 1, "same": 2}  # from the history the update recorded
    assert changed.outputs == {"files": {"a": "uno", "b": "two"}, "token": SECRET}
