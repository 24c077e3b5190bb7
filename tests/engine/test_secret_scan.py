"""Secret scan: after up, drift (both layers), status, rollback, history and a failed update, the planted
secrets leak nowhere.

The fixture's ``SECRET_TOKEN`` is a secret config value exported as a secret output, and a second secret
(``fixture:secretFile``) is the content of a file resource, so it flows through a resource's inputs and
outputs into the state. The scan covers every file under the backend directory and ``PULUMI_HOME``, the
work tree, any event log the automation SDK left in the temp directory, the CLI's output (plain and
``--json``) for up, drift, rollback and history, the engine's event stream (``repr`` of every event), and
the messages and ``repr`` of the errors raised. The managed file itself holds the secret, on purpose: that
is the resource doing its job, so the files directory is the one place not scanned.

The scan is shown to work first: it finds the secret when it is deliberately written somewhere.
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pulumi import automation as auto

from gitops_infra.automation import SECRET, PropertyDiff, StackOptions, detect_drift, up
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main
from gitops_infra.errors import OperationFailedError

from ..support import files_under, secret_leaks_in_files, secret_leaks_in_texts
from .conftest import SECRET_TOKEN, FixtureRepo

pytestmark = pytest.mark.engine

FILE_SECRET = "file-secret-5d2b71c4-never-print-me"
SECRETS = (SECRET_TOKEN, FILE_SECRET)


def leaks_in_files(paths: Iterable[Path]) -> list[str]:
    """``"<path>: <secret>"`` for each file holding one of this test's secrets."""
    return secret_leaks_in_files(paths, SECRETS)


def leaks_in_texts(texts: dict[str, str]) -> list[str]:
    """``"<what>: <secret>"`` for each text holding one of this test's secrets."""
    return secret_leaks_in_texts(texts, SECRETS)


def test_the_scan_finds_a_secret_written_where_it_looks(tmp_path: Path) -> None:
    # Without this, a scan that looked nowhere (or for the wrong bytes) would pass every time.
    clean, dirty, nested = tmp_path / "clean.json", tmp_path / "dirty.json", tmp_path / "a" / "b" / "log"
    clean.write_text('{"token": "v1:ciphertext"}')
    dirty.write_text(f'{{"token": "{SECRET_TOKEN}"}}')
    nested.parent.mkdir(parents=True)
    nested.write_bytes(b"prefix " + base64.b64encode(FILE_SECRET.encode()) + b" suffix")

    assert sorted(leaks_in_files(files_under(tmp_path))) == [
        f"{nested}: {FILE_SECRET}",
        f"{dirty}: {SECRET_TOKEN}",
    ]
    assert leaks_in_files(files_under(tmp_path, skip=[tmp_path / "a", dirty])) == []
    assert leaks_in_texts({"stdout": f"token: {FILE_SECRET}", "events": "none"}) == [f"stdout: {FILE_SECRET}"]


def _cli(repo: FixtureRepo, *args: str) -> Result:
    verb, *rest = args
    return CliRunner(env=repo.env).invoke(main, [verb, "dev", "--cwd", str(repo.root), *rest])


def _event_logs() -> set[Path]:
    # pulumi.automation streams engine events through a file in a temp directory of its own.
    return set(Path(tempfile.gettempdir()).glob("automation-logs-*"))


def test_a_planted_secret_appears_nowhere_in_plaintext(repo: FixtureRepo) -> None:
    event_logs_before = _event_logs()
    events: list[auto.EngineEvent] = []
    watched = StackOptions(work_dir=repo.root, env=repo.env, on_event=events.append)
    repo.raw_stack().set_config("fixture:secretFile", auto.ConfigValue(FILE_SECRET, secret=True))
    commit_a = repo.commit("A: files a and b, and the secret file")
    outputs: dict[str, Result] = {}
    errors: list[BaseException] = []

    # Commit A, through the CLI; then commit B, through the library with the event stream watched.
    outputs["up A"] = _cli(repo, "up", "--yes")
    assert outputs["up A"].exit_code == EXIT_OK, outputs["up A"].output
    assert (repo.files_dir / "secret").read_text() == FILE_SECRET, "the secret reached the resource"
    repo.configure({"a": "uno", "b": "two"})
    repo.commit("B: change a")
    applied = up("dev", options=watched)
    assert applied.changes.get("update") == 1

    # Drift, out of band, on the secret file too: its recorded content is the secret.
    (repo.files_dir / "a").write_text("edited by hand")
    (repo.files_dir / "secret").write_text("overwritten by hand")
    report = detect_drift("dev", options=watched)
    assert "a" in {r.urn.rsplit("::", 1)[-1] for r in report.resources}
    outputs["drift"] = _cli(repo, "drift")
    outputs["drift --json"] = _cli(repo, "drift", "--json")
    assert outputs["drift"].exit_code == outputs["drift --json"].exit_code == EXIT_PENDING
    # The GitOps layer decrypts the state to find a kubeconfig (this stack has none): nothing of it shows.
    outputs["drift --layers gitops --json"] = _cli(repo, "drift", "--layers", "gitops", "--json")
    outputs["status"] = _cli(repo, "status")
    outputs["status --json"] = _cli(repo, "status", "--json")
    assert all(
        outputs[k].exit_code == EXIT_OK for k in ("drift --layers gitops --json", "status", "status --json")
    )

    # Rollback to A, then the history.
    outputs["rollback --json"] = _cli(repo, "rollback", commit_a, "--yes", "--json")
    assert outputs["rollback --json"].exit_code == EXIT_OK, outputs["rollback --json"].output
    assert (repo.files_dir / "a").read_text() == "one"
    outputs["history"] = _cli(repo, "history")
    outputs["history --json"] = _cli(repo, "history", "--json")
    outputs["up --json"] = _cli(repo, "up", "--yes", "--json")
    assert all(outputs[k].exit_code == EXIT_OK for k in ("history", "history --json", "up --json"))

    # A failed update, through the library and the CLI.
    repo.configure({"a": "one"}, fail="the program refused to run")
    with pytest.raises(OperationFailedError) as failed:
        up("dev", options=watched)
    errors.append(failed.value)
    outputs["failed up"] = _cli(repo, "up", "--yes")
    outputs["failed up --json"] = _cli(repo, "up", "--yes", "--json")
    assert outputs["failed up"].exit_code == outputs["failed up --json"].exit_code == EXIT_ERROR
    assert "the program refused to run" in outputs["failed up"].stderr

    texts = {f"{what} stdout": result.stdout for what, result in outputs.items()}
    texts |= {f"{what} stderr": result.stderr for what, result in outputs.items()}
    texts |= {f"result {i}": repr(item) for i, item in enumerate([applied, report])}
    for error in errors:
        texts |= {f"error {error!r}": f"{error}\n{error!r}\n{getattr(error, 'engine_message', '')}"}
        cause = error.__cause__
        while cause is not None:
            texts[f"cause {type(cause).__name__}"] = f"{cause}\n{cause!r}"
            cause = cause.__cause__
    texts |= {f"event {i}": repr(event) for i, event in enumerate(events)}
    assert len(events) > 20, "the event stream was watched"

    backend = Path(repo.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    home = Path(repo.env["PULUMI_HOME"])
    state_files = files_under(backend)
    (checkpoint,) = [p for p in state_files if p.name == "dev.json" and p.parent.name == "fixture"]
    # The secrets are in the state, encrypted (the engine's secret signature marks them).
    assert b"4dabf18193072939515e22adb298388d" in checkpoint.read_bytes()
    scanned = [
        *state_files,
        *files_under(home),
        *files_under(repo.root, skip=[repo.root / ".git"]),
        *files_under(*(_event_logs() - event_logs_before)),
    ]

    assert leaks_in_files(scanned) == []
    assert leaks_in_texts(texts) == []


def test_drift_of_a_secret_property_is_reported_masked(repo: FixtureRepo) -> None:
    repo.raw_stack().set_config("fixture:secretFile", auto.ConfigValue(FILE_SECRET, secret=True))
    up("dev", options=repo.options)
    assert not detect_drift("dev", options=repo.options).has_drift, "an untouched secret is no drift"
    (repo.files_dir / "secret").write_text("overwritten by hand")

    report = detect_drift("dev", options=repo.options)

    assert report.has_drift
    (drifted,) = report.resources
    assert drifted.urn.endswith("::secret")
    # The engine masks both sides of a secret, so the change is reported masked.
    assert drifted.diffs == (PropertyDiff(path="content", recorded=SECRET, actual=SECRET),)
    assert FILE_SECRET not in repr(report)
