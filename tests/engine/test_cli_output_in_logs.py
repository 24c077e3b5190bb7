"""What the CLI writes where it is read back on the real engine: a pod's log that merges stdout and stderr
(``kubectl logs``), a log or terminal that cannot encode every character, and `history`'s text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from gitops_infra.automation import up
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main

from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

CLI = [sys.executable, "-m", "gitops_infra.cli"]


def _run(repo: FixtureRepo, *args: str, merged: bool = False, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a process of its own; ``merged``: stderr on stdout, as ``kubectl logs`` shows a pod's."""
    return subprocess.run(
        [*CLI, *args, "--cwd", str(repo.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        errors="replace",
        env={**os.environ, **repo.env, **env},
        timeout=180,
    )


def test_history_text_marks_an_update_run_from_a_dirty_work_tree(repo: FixtureRepo) -> None:
    # The docs promise it: the engine records `git.dirty`, and `history` shows it as `dirty`.
    up("dev", options=repo.options)
    (repo.root / "README").write_text("edited, never committed\n")
    up("dev", options=repo.options)

    shown = CliRunner(env=repo.env).invoke(main, ["history", "dev", "--cwd", str(repo.root)])

    assert shown.exit_code == EXIT_OK, shown.output
    newest, oldest = shown.stdout.splitlines()
    assert re.search(r" dirty ", newest), newest
    assert "dirty" not in oldest, oldest


def test_every_json_document_stays_whole_in_a_log_that_merges_stdout_and_stderr(repo: FixtureRepo) -> None:
    # Each failure was also written on stderr beside its document: in a pod's log neither could be read.
    commands = [
        (("up", "dev", "--yes", "--json"), EXIT_OK),
        (("preview", "dev", "--json"), EXIT_OK),
        (("drift", "dev", "--json"), EXIT_OK),
        (("drift", "--all", "--json"), EXIT_OK),
        (("status", "dev", "--json"), EXIT_OK),
        (("history", "dev", "--json"), EXIT_OK),
        (("refresh", "dev", "--json"), EXIT_OK),
        (("destroy", "dev", "--preview-only", "--json"), EXIT_OK),
        (("recover", "dev", "--yes", "--json"), EXIT_OK),
        (("up", "dev", "--json"), EXIT_ERROR),  # no --yes, no terminal
        (("preview", "staging", "--json"), EXIT_ERROR),  # no such stack
        (("rollback", "dev", "no-such-ref", "--yes", "--json"), EXIT_ERROR),
    ]
    for args, code in commands:
        done = _run(repo, *args, merged=True)
        document = json.loads(done.stdout)  # one document and nothing else, or json.loads refuses
        assert done.returncode == code, (args, done.stdout)
        failed = isinstance(document, dict) and isinstance(document.get("error"), dict)
        assert failed == (code == EXIT_ERROR), (args, done.stdout)

    # A failure of the engine itself: the program raises.
    repo.configure({"a": "one", "b": "two"}, fail="the program refused to run")
    done = _run(repo, "up", "dev", "--yes", "--json", merged=True)
    document = json.loads(done.stdout)
    assert done.returncode == EXIT_ERROR
    assert document["error"]["type"] == "OperationFailedError" and document["stack"] == "dev"
    assert "the program refused to run" in document["error"]["message"]


def test_text_on_an_ascii_stdout_escapes_what_it_cannot_encode(repo: FixtureRepo) -> None:
    # PYTHONIOENCODING=ascii: the step line of a resource named `café→` was lost to a UnicodeEncodeError
    # (the engine's event callback caught it), and `history` ended in a traceback on the update's message.
    repo.configure({"a": "one", "caf\u00e9\u2192": "x"})
    repo.commit("a file with a name from outside ASCII")

    applied = _run(repo, "up", "dev", "--yes", "-m", "d\u00e9ploy\u00e9 \u2192 dev", PYTHONIOENCODING="ascii")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "UnicodeEncodeError" not in applied.stderr and "RuntimeWarning" not in applied.stderr
    assert "create   pulumi-python:dynamic:Resource  caf\\xe9\\u2192" in applied.stdout

    listed = _run(repo, "history", "dev", PYTHONIOENCODING="ascii")
    assert listed.returncode == EXIT_OK, listed.stderr
    assert "Traceback" not in listed.stderr
    assert "d\\xe9ploy\\xe9 \\u2192 dev" in listed.stdout
