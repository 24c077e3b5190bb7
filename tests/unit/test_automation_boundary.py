"""Engine-free tests of the automation layer's edges: workspace defaults and error translation.

The engine outputs below are what the real engine printed for each failure (captured from runs of the
engine tests), so the translation is checked against the engine's actual wording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pulumi.automation import CommandResult, EngineEvent
from pulumi.automation import errors as upstream

from gitops_infra.automation import PropertyDiff
from gitops_infra.automation._engine.compat import replay_event_log
from gitops_infra.automation._engine.runner import (
    EngineEvents,
    _engine_message,
    engine_temp_dir,
    map_engine_errors,
)
from gitops_infra.automation._state.target import DEFAULT_STATE_DIR, StackOptions, StackTarget
from gitops_infra.errors import (
    EngineNotFoundError,
    GitOpsInfraError,
    OperationFailedError,
    PluginMissingError,
    StackLockedError,
    StackNotFoundError,
    WorkspaceError,
)

from ..support import fake_engine, write_project

PROGRAM_EXCEPTION = """Previewing update (dev):
    pulumi:pulumi:Stack fixture-dev running error: Program failed with an unhandled exception:
Diagnostics:
  pulumi:pulumi:Stack (fixture-dev):
    error: Program failed with an unhandled exception:
    Traceback (most recent call last):
      File "/tmp/clitry/__main__.py", line 64, in <module>
        raise RuntimeError(failure)
    RuntimeError: the program refused

Resources:
    1 unchanged
"""

MISSING_CONFIG = """Diagnostics:
  pulumi:pulumi:Stack (fixture-dev):
    error: Missing required configuration variable 'fixture:directory'
    \tplease set a value using the command `pulumi config set fixture:directory <value>`
    error: an unhandled error occurred: program exited with non-zero exit code: 1

Resources:
    + 1 to create
"""

LOCKED = """error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) \
to end or delete the lock file with `pulumi cancel`.
  file:///tmp/backend/.pulumi/locks/organization/fixture/dev/a4c8.json: created by root@vm (pid 17828)
"""


def _failed(
    stdout: str = "", stderr: str = "", kind: type[upstream.CommandError] = upstream.CommandError
) -> Exception:
    return kind(CommandResult(stdout=stdout, stderr=stderr, code=1))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_engine(write_project(tmp_path, "p"))
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path


def test_engine_message_is_the_exception_line_not_the_traceback() -> None:
    message = _engine_message(_failed(stdout=PROGRAM_EXCEPTION))  # type: ignore[arg-type]
    assert message == "Program failed with an unhandled exception: RuntimeError: the program refused"


def test_engine_message_drops_the_generic_line_when_a_specific_one_exists() -> None:
    message = _engine_message(_failed(stdout=MISSING_CONFIG))  # type: ignore[arg-type]
    assert message.startswith("Missing required configuration variable 'fixture:directory'")
    assert "unhandled error occurred" not in message


def test_engine_message_does_not_run_stderr_into_stdout() -> None:
    # Seen on a real `up` with the kubernetes plugin off PATH: stderr ends on the engine's error, and
    # stdout starts with the progress header, which must not read as part of that error.
    stderr = "error: could not load provider kubernetes: failed to download plugin: failed all 5 attempts"
    message = _engine_message(_failed(stdout="Updating (local):\n @ updating.....\n", stderr=stderr))  # type: ignore[arg-type]
    assert message == "could not load provider kubernetes: failed to download plugin: failed all 5 attempts"


def _translate(exc: Exception, target: StackTarget, operation: str) -> Exception:
    """What ``map_engine_errors`` turns ``exc`` into."""
    with pytest.raises(GitOpsInfraError) as mapped, map_engine_errors(target, operation, EngineEvents(None)):
        raise exc
    assert mapped.value.__cause__ is exc
    return mapped.value


def test_translation_maps_each_upstream_error(project: Path) -> None:
    ws = StackTarget.resolve("dev", StackOptions(work_dir=project))

    locked = _translate(_failed(stderr=LOCKED, kind=upstream.ConcurrentUpdateError), ws, "up")
    assert isinstance(locked, StackLockedError) and locked.stack == "dev"

    missing = _translate(
        _failed(stderr="error: no stack named 'dev' found", kind=upstream.StackNotFoundError), ws, "up"
    )
    assert isinstance(missing, StackNotFoundError) and "'dev' not found" in str(missing)

    plugin = _translate(_failed(stderr="error: no resource plugin 'aws' found in the workspace"), ws, "up")
    assert isinstance(plugin, PluginMissingError) and "'aws'" in str(plugin)

    failed = _translate(_failed(stdout=PROGRAM_EXCEPTION), ws, "preview")
    assert isinstance(failed, OperationFailedError)
    assert (failed.operation, failed.engine_message) == (
        "preview",
        "Program failed with an unhandled exception: RuntimeError: the program refused",
    )


def test_defaults_use_a_local_file_backend_inside_the_project(project: Path) -> None:
    ws = StackTarget.resolve("dev", StackOptions(work_dir=project / ".tools"))  # found from a subdirectory
    assert ws.project.path == project
    assert ws.backend_url == (project / DEFAULT_STATE_DIR).as_uri()
    assert ws.engine == project / ".tools" / "pulumi" / "bin" / "pulumi"
    assert ws.env["PULUMI_BACKEND_URL"] == ws.backend_url


def test_backend_url_from_the_environment_wins(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_BACKEND_URL", "s3://state-bucket")
    assert StackTarget.resolve("dev", StackOptions(work_dir=project)).backend_url == "s3://state-bucket"
    explicit = StackOptions(work_dir=project, backend_url="file:///elsewhere")
    assert StackTarget.resolve("dev", explicit).backend_url == "file:///elsewhere"


def test_missing_passphrase_names_the_variable(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    with pytest.raises(WorkspaceError) as missing:
        StackTarget.resolve("dev", StackOptions(work_dir=project))
    assert str(missing.value).startswith("PULUMI_CONFIG_PASSPHRASE is not set")

    # A stack whose settings name another secrets provider needs no passphrase.
    (project / "Pulumi.dev.yaml").write_text("secretsprovider: awskms://alias/gitops\n")
    assert StackTarget.resolve("dev", StackOptions(work_dir=project)).stack == "dev"


def test_no_engine_says_how_to_install_one(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".tools" / "pulumi" / "bin" / "pulumi").unlink()
    monkeypatch.setenv("PATH", str(project))
    with pytest.raises(EngineNotFoundError, match="make setup"):
        StackTarget.resolve("dev", StackOptions(work_dir=project))


def test_no_project_is_a_workspace_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"no Pulumi\.yaml"):
        StackTarget.resolve("dev", StackOptions(work_dir=tmp_path))


def test_the_engines_temp_dir_is_private_and_goes_with_what_was_left_in_it(
    project: Path, tmp_path: Path
) -> None:
    parent = tmp_path / "engine-tmp"
    parent.mkdir()
    target = StackTarget.resolve("dev", StackOptions(work_dir=project, env={"TMPDIR": str(parent)}))
    with engine_temp_dir(target) as directory:
        assert directory.parent == parent
        assert directory.stat().st_mode & 0o777 == 0o700
        (directory / "kubeconfig123").write_text("left by a plugin")
        (directory / "nested").mkdir()
        (directory / "nested" / "file").write_text("left too")
    assert list(parent.iterdir()) == []
    assert target.env["TMPDIR"] == str(parent)  # the target itself is unchanged


def test_a_relative_tmpdir_gives_the_engine_an_absolute_temp_dir(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine runs in the project's directory, so a path relative to ours would point elsewhere.
    (tmp_path / "rel").mkdir()
    monkeypatch.chdir(tmp_path)
    target = StackTarget.resolve("dev", StackOptions(work_dir=project, env={"TMPDIR": "rel"}))
    with engine_temp_dir(target) as directory:
        assert directory.is_absolute()
        assert directory.parent == tmp_path / "rel"
    assert list((tmp_path / "rel").iterdir()) == []


def test_an_engine_temp_dir_that_cannot_be_made_is_a_workspace_error(project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    target = StackTarget.resolve("dev", StackOptions(work_dir=project, env={"TMPDIR": str(missing)}))
    with (
        pytest.raises(
            WorkspaceError, match=r"cannot make a temp directory for the engine in .*no-such-dir"
        ) as info,
        engine_temp_dir(target),
    ):
        pytest.fail("entered")
    assert "set TMPDIR to a writable directory" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not missing.exists()


def test_reprs_never_show_the_environments_values(project: Path) -> None:
    env = {"PULUMI_CONFIG_PASSPHRASE": "pass-canary", "GITHUB_TOKEN": "ghp_canary", "AWS_REGION": "eu-west-1"}
    options = StackOptions(
        work_dir=project, env=env, backend_url="postgres://ci:db-canary@db.internal:5432/state"
    )
    workspace = StackTarget.resolve("dev", options)
    for shown in (repr(options), repr(workspace), str(options), str(workspace)):
        for canary in ("pass-canary", "ghp_canary", "eu-west-1", "db-canary"):
            assert canary not in shown, shown
        assert "PULUMI_CONFIG_PASSPHRASE" in shown  # which keys are set is still visible


PANIC = """Updating (dev):
================================================================================
The Pulumi CLI encountered a fatal error. This is a bug!
We would appreciate a report: https://github.com/pulumi/pulumi/issues/
Please provide all of the text below in your report.
================================================================================
Pulumi Version:   v3.274.1
Go Version:       go1.26.8
Panic:            fatal: An assertion has failed: Urn is: 'garbage'

goroutine 1 [running]:
runtime/debug.Stack()
	runtime/debug/stack.go:26 +0x5e
main.main()
	github.com/pulumi/pulumi/pkg/v3@v3.274.1/cmd/pulumi/main.go:67 +0x6d

"""


def test_an_engine_panic_is_summarised_by_its_panic_line_not_a_stack_frame() -> None:
    # What the real engine printed for a checkpoint with a corrupted URN (the engine tests reproduce it).
    message = _engine_message(_failed(stderr=PANIC))  # type: ignore[arg-type]
    assert message == (
        "The Pulumi CLI encountered a fatal error. This is a bug! "
        "Panic: fatal: An assertion has failed: Urn is: 'garbage'"
    )
    assert ".go:" not in message


def test_drift_ignores_what_the_api_server_maintains_on_kubernetes_objects() -> None:
    from gitops_infra.automation.drift import _declared

    configmap = "kubernetes:core/v1:ConfigMap"
    for path in (
        "metadata.managedFields",
        "metadata.managedFields[0].time",
        "metadata.resourceVersion",
        "status",
    ):
        assert not _declared(configmap, PropertyDiff(path=path, recorded=1, actual=2)), path
    assert _declared(configmap, PropertyDiff(path="data.baseDomain", recorded="a", actual="b"))
    assert _declared(configmap, PropertyDiff(path="metadata.labels.team", recorded="a", actual="b"))
    # Other providers' resources keep every path: a `status` there may well be declared.
    assert _declared("aws:ec2/vpc:Vpc", PropertyDiff(path="status", recorded="a", actual="b"))


# Two events as the engine writes them to its event log: one JSON object a line.
_SUMMARY = (
    json.dumps(
        {
            "sequence": 1,
            "timestamp": 2,
            "summaryEvent": {"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": {"same": 2}},
        }
    )
    + "\n"
)
_CANCEL = json.dumps({"sequence": 2, "timestamp": 3, "cancelEvent": {}}) + "\n"


def test_an_event_log_is_replayed_in_order_and_removed(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text(_SUMMARY + _CANCEL)
    seen: list[EngineEvent] = []
    replay_event_log(log, seen.append)
    assert [e.summary_event is not None for e in seen] == [True, False]
    assert seen[0].summary_event is not None and seen[0].summary_event.resource_changes == {"same": 2}
    assert seen[1].cancel_event is not None
    assert not log.exists()


def test_a_half_written_last_event_is_dropped_and_a_bad_line_warned_without_its_text(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text('{"sequence":0,"hostile \x1b[31m text\n' + _SUMMARY + _CANCEL[:20])  # a killed engine
    seen: list[EngineEvent] = []
    with pytest.warns(RuntimeWarning, match=r"an engine event in events\.jsonl could not be read") as warned:
        replay_event_log(log, seen.append)
    assert [e.summary_event is not None for e in seen] == [True]
    assert len(warned) == 1 and "hostile" not in str(warned[0].message)


def test_an_event_log_the_engine_never_made_has_no_events(tmp_path: Path) -> None:
    seen: list[EngineEvent] = []
    replay_event_log(tmp_path / "events.jsonl", seen.append)  # the engine failed before its events began
    assert seen == []


def test_only_an_unwatched_attempt_with_a_temp_dir_logs_its_events_to_a_file(tmp_path: Path) -> None:
    assert EngineEvents(None).log_file is None  # no temp dir yet
    assert EngineEvents(None, temp_dir=tmp_path).log_file == tmp_path / "events.jsonl"
    assert EngineEvents(lambda event: None, temp_dir=tmp_path).log_file is None  # watched: streamed live
