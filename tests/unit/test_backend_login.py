"""The backend ``pulumi login`` stored is the one Pulumi chooses where nothing else names one, so it is ours.

Pulumi takes ``PULUMI_BACKEND_URL``, else the project's ``backend.url``, else the ``current`` of the
stored login (``GetCurrentCloudURLWithSource``, pkg/workspace/creds.go, v3.274.1). The file holds access
tokens: none may be kept, shown or quoted. tests/engine/test_login_backend.py runs the real
``pulumi login`` and the engine on it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions
from gitops_infra.automation._state.target import DEFAULT_STATE_DIR, StackTarget
from gitops_infra.errors import ConfigError

from ..support import fake_engine, write_project

TOKEN = "pul-0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_engine(write_project(tmp_path / "p", "p"))
    for name in ("PULUMI_BACKEND_URL", "PULUMI_CREDENTIALS_PATH", "PULUMI_API"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PULUMI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path / "p"


def _login(home: Path, current: object, **more: object) -> Path:
    """A ``credentials.json`` as ``pulumi login`` writes it, with an access token beside the current."""
    home.mkdir(parents=True, exist_ok=True)
    document = {"current": current, "accessTokens": {"https://api.pulumi.com": TOKEN}, **more}
    (home / "credentials.json").write_text(json.dumps(document))
    return home / "credentials.json"


def _target(project: Path, **options: object) -> StackTarget:
    return StackTarget.resolve("dev", StackOptions(work_dir=project, **options))  # type: ignore[arg-type]


def test_the_backend_pulumi_login_stored_is_chosen_where_nothing_else_names_one(
    project: Path, tmp_path: Path
) -> None:
    stored = _login(tmp_path / "home", (tmp_path / "logged-in").as_uri())
    (project / DEFAULT_STATE_DIR).mkdir()  # an old local run's state must not take its place

    target = _target(project)

    assert target.backend_url == (tmp_path / "logged-in").as_uri()
    assert target.env["PULUMI_BACKEND_URL"] == (tmp_path / "logged-in").as_uri()
    where = target.backend.where()
    assert "pulumi login" in where and str(stored) in where
    assert TOKEN not in repr(target) + repr(target.backend) + where


def test_pulumi_s_order_holds_the_variable_then_backend_url_then_the_login_then_pulumi_api(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _login(tmp_path / "home", "s3://logged-in")
    monkeypatch.setenv("PULUMI_API", "https://pulumi.internal.example")
    assert _target(project).backend_url == "s3://logged-in"  # the login before PULUMI_API
    assert _target(project, env={"PULUMI_BACKEND_URL": "gs://var"}).backend_url == "gs://var"
    with (project / "Pulumi.yaml").open("a") as settings:
        settings.write("backend:\n  url: s3://pinned\n")
    assert _target(project).backend_url == "s3://pinned"
    assert _target(project, backend_url="file:///explicit").backend_url == "file:///explicit"
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text().split("backend:")[0])
    (tmp_path / "home" / "credentials.json").unlink()
    assert _target(project).backend_url == "https://pulumi.internal.example"  # prepareBackend's PULUMI_API


def test_the_login_is_read_where_pulumi_reads_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _login(tmp_path / "home", "s3://in-pulumi-home")
    _login(tmp_path / "creds", "s3://in-credentials-path")
    _login(tmp_path / "options-home", "s3://in-the-options-home")
    # PULUMI_CREDENTIALS_PATH before PULUMI_HOME (getCredsFilePath); the options' environment is the
    # engine's, over this process's.
    assert _target(project).backend_url == "s3://in-pulumi-home"
    assert _target(project, env={"PULUMI_HOME": str(tmp_path / "options-home")}).backend_url == (
        "s3://in-the-options-home"
    )
    monkeypatch.setenv("PULUMI_CREDENTIALS_PATH", str(tmp_path / "creds"))
    assert _target(project).backend_url == "s3://in-credentials-path"
    assert _target(project, env={"PULUMI_CREDENTIALS_PATH": ""}).backend_url == "s3://in-pulumi-home"


def test_a_relative_file_login_is_the_project_s_directory_s_as_the_engine_resolves_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pulumi login file://./state` stores the URL as given; the engine resolves it in its working
    # directory, which is the project's (massageBlobPath).
    _login(tmp_path / "home", "file://./state")
    monkeypatch.chdir(tmp_path)
    target = _target(project)
    assert target.backend_url == f"file://{project}/state"
    files = target.file_backend()
    assert files is not None and files.root == project / "state" / ".pulumi"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(None, id="no file"),
        pytest.param(b"", id="an empty file (an interrupted write, which Pulumi takes for none)"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"accessTokens": {}}', id="no current"),
        pytest.param(b'{"current": ""}', id="an empty current (after pulumi logout)"),
        pytest.param(b'{"current": null}', id="a null current"),
    ],
)
def test_the_local_default_only_when_pulumi_would_have_no_backend_either(
    project: Path, tmp_path: Path, content: bytes | None
) -> None:
    if content is not None:
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / "credentials.json").write_bytes(content)
    target = _target(project)
    assert target.backend_url == (project / DEFAULT_STATE_DIR).as_uri()
    assert "nor a `pulumi login`" in target.backend.where()


def test_a_current_key_in_any_case_is_read_as_go_s_decoder_reads_it(project: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "credentials.json").write_text('{"current": "s3://first", "Current": "s3://last"}')
    assert _target(project).backend_url == "s3://last"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(
            f'{{"current": "s3://a", "accessTokens": {{"s3://a": "{TOKEN}"'.encode(),
            "is not valid JSON (line 1, column",
            id="cut short",
        ),
        pytest.param(f'{{"current": "s3://a" "{TOKEN}"}}'.encode(), "is not valid JSON", id="not JSON"),
        pytest.param(b"  \n", "is not valid JSON", id="blank, which is no empty file"),
        pytest.param(f'["{TOKEN}"]'.encode(), "is not a JSON object", id="an array"),
        pytest.param(b'{"current": 7}', "holds a current backend that is not text", id="a current not text"),
        pytest.param(b'{"current": NaN}', "is not valid JSON", id="NaN, which Go refuses"),
        pytest.param(
            json.dumps({"$pulumiSecureStore": 1, "backend": "keyring", "ciphertext": TOKEN}).encode(),
            "is encrypted by Pulumi's credential store",
            id="encrypted",
        ),
    ],
)
def test_a_damaged_login_is_named_without_quoting_it_and_nothing_is_chosen_in_its_place(
    project: Path, tmp_path: Path, content: bytes, problem: str
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "credentials.json").write_bytes(content)
    with pytest.raises(ConfigError) as refused:
        _target(project)
    message = str(refused.value)
    assert f"{tmp_path / 'home' / 'credentials.json'}: {problem}" in message
    assert "s3://a" not in message and TOKEN not in message
    assert "PULUMI_BACKEND_URL" in message  # how to name the backend instead
    # No JSON error, which may quote the file, rides along.
    assert refused.value.__context__ is None or refused.value.__suppress_context__


def test_a_login_that_is_not_a_regular_file_is_refused_at_once(project: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    stored = tmp_path / "home" / "credentials.json"
    os.mkfifo(stored)  # reading a FIFO blocks until a writer comes: forever
    outcome: list[BaseException] = []

    def resolve() -> None:
        try:
            _target(project)
        except BaseException as exc:  # the outcome is looked at below
            outcome.append(exc)

    worker = threading.Thread(target=resolve, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():
        with open(stored, "wb"):  # let the blocked reader go
            pass
        pytest.fail("reading the stored login blocked on a FIFO")
    (refused,) = outcome
    assert isinstance(refused, ConfigError)
    assert f"{stored}: cannot be read (not a regular file)" in str(refused)
    stored.unlink()
    stored.mkdir()
    with pytest.raises(ConfigError, match=r"credentials\.json: cannot be read"):
        _target(project)


def test_a_stored_login_is_not_read_while_pulumi_login_writes_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from gitops_infra.automation._state import backend as _backend

    stored = _login(tmp_path / "home", "s3://written")
    monkeypatch.setattr(_backend, "LOCK_WAIT_SECONDS", 0.3)
    with stored.open("rb+") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)  # as lockedfile.Write holds it (go-internal, Pulumi's writer)
        with pytest.raises(ConfigError, match="locked by another process"):
            _target(project)
    assert _target(project).backend_url == "s3://written"


def test_the_local_demo_s_and_the_test_harness_s_environment_pin_their_backend_over_a_login(
    project: Path, tmp_path: Path
) -> None:
    # A developer's own `pulumi login` must never send the demo (local/demo.py) or a test elsewhere.
    from gitops_infra.local._project import engine_env

    from .. import support

    _login(tmp_path / "home", "s3://the-developer-s-own")
    demo = engine_env(tmp_path / "demo-state", "passphrase")
    assert _target(project, env=demo).backend_url == (tmp_path / "demo-state").as_uri()
    (tmp_path / "t").mkdir()
    harness = support.engine_env(tmp_path / "t")
    assert _target(project, env=harness).backend_url == (tmp_path / "t" / "backend").as_uri()
