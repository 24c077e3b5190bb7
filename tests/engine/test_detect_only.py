"""Detect-only commands on the real engine leave every file as it was.

The engine writes ``encryptionsalt:`` into a stack file that lacks one whenever a command loads the
passphrase secrets provider, a preview included (``getAndSaveSecretsManager``, pkg/cmd/pulumi/config/
io.go, v3.274.1): a drift check then dirtied the work tree, and, with ``secure:`` values in the file, the
salt it made up could not decrypt them. The scenario: a tracked stack file with a secret and no salt (a
file written by a tool, or by hand), its stack's state holding the salt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitops_infra.automation import (
    destroy,
    detect_drift,
    detect_drift_all,
    history,
    preview,
    preview_all,
    status,
    status_all,
    up,
)
from gitops_infra.cli import EXIT_OK, main

from ..support import git
from .conftest import STACK, FixtureRepo

pytestmark = pytest.mark.engine


def _without_salt(repo: FixtureRepo) -> Path:
    """Dev's stack file as a tool would write it: its secret kept, its salt gone; committed."""
    settings = repo.root / f"Pulumi.{STACK}.yaml"
    lines = settings.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("encryptionsalt:")]
    assert len(kept) == len(lines) - 1 and "secure:" in "".join(kept)
    settings.write_text("".join(kept))
    repo.commit("dev's stack file without its salt")
    return settings


def test_every_detect_only_command_leaves_a_stack_file_without_a_salt_as_it_was(repo: FixtureRepo) -> None:
    up(STACK, options=repo.options)  # the state holds the salt from here on
    settings = _without_salt(repo)
    before = settings.read_bytes()

    def unchanged(what: str) -> None:
        assert settings.read_bytes() == before, f"{what} rewrote {settings.name}"
        assert git(repo.root, "status", "--porcelain") == "", f"{what} left the work tree dirty"

    # Each one decrypts the file's secret with the state's salt, and writes nothing.
    report = detect_drift(STACK, options=repo.options)
    assert not report.has_drift
    unchanged("detect_drift")
    assert preview(STACK, options=repo.options).changes == {"same": 3}
    unchanged("preview")
    fleet = detect_drift_all(options=repo.options)
    assert [(s.stack, s.error, s.has_drift) for s in fleet.stacks] == [(STACK, None, False)]
    unchanged("detect_drift_all")
    previews = preview_all(options=repo.options)
    assert [(s.stack, s.error) for s in previews.stacks] == [(STACK, None)]
    unchanged("preview_all")
    assert destroy(STACK, options=repo.options, preview_only=True).changes == {"delete": 3}
    unchanged("destroy --preview-only")
    assert status(STACK, options=repo.options).at_head is False
    assert [s.error for s in status_all(options=repo.options)] == [None]
    assert history(STACK, options=repo.options)[0].version == 1
    unchanged("status and history")

    runner = CliRunner(env=repo.env)
    for args in (["drift", STACK], ["preview", "--all"], ["status", "--all"], ["drift", "--all"]):
        result = runner.invoke(main, [*args, "--cwd", str(repo.root), "--json"])
        assert result.exit_code == EXIT_OK, result.output
        assert json.loads(result.stdout)
        unchanged(" ".join(args))


def test_an_update_still_records_the_salt_the_state_holds(repo: FixtureRepo) -> None:
    # Writing commands are left to write the file: with the state's salt, which decrypts its secret.
    up(STACK, options=repo.options)
    settings = _without_salt(repo)
    up(STACK, options=repo.options)
    assert "encryptionsalt:" in settings.read_text()
    assert not detect_drift(STACK, options=repo.options).has_drift


def test_the_engine_reads_the_copy_of_the_file_it_would_read_itself_under_stack_config_dir(
    repo: FixtureRepo,
) -> None:
    # The copy is of the engine's own file (ProjectStackPath): with another, the program would miss its
    # config, or run on a stale file's.
    up(STACK, options=repo.options)
    settings = _without_salt(repo)
    (repo.root / "stacks").mkdir()
    moved = settings.rename(repo.root / "stacks" / settings.name)
    with (repo.root / "Pulumi.yaml").open("a") as project:
        project.write("stackConfigDir: stacks\n")
    repo.commit("stack files in their own directory")
    before = moved.read_bytes()

    assert preview(STACK, options=repo.options).changes == {"same": 3}
    assert not detect_drift(STACK, options=repo.options).has_drift

    assert moved.read_bytes() == before and git(repo.root, "status", "--porcelain") == ""
