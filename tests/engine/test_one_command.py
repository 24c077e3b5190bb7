"""Each stack operation runs the one engine command the raw CLI would run, and nothing after it.

A ``pulumi`` wrapper first on ``PATH`` logs every command the automation layer starts, then runs the
real engine. ``pulumi version`` (once per engine binary and process) is not an operation's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gitops_infra.automation import (
    SECRET,
    destroy,
    history,
    preview,
    recover,
    refresh,
    rollback_to_commit,
    up,
)
from gitops_infra.automation.results import RecordedResult, UpResult

from ..support import Engine
from .conftest import FixtureRepo

pytestmark = pytest.mark.engine


@pytest.fixture
def commands(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """The engine commands started since the last call: each one's first word (``up``, ``stack``...)."""
    log = tmp_path / "commands.log"
    wrapper = tmp_path / "wrapped" / "bin" / "pulumi"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{engine.bin_dir / "pulumi"}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")

    def started() -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        words = [next(w for w in line.split() if not w.startswith("-")) for line in lines]
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
