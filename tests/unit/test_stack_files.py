"""Unreadable, malicious and malformed stack files: a clear error naming the file, never a traceback.

Engine commands read ``Pulumi.<stack>.yaml`` (for its secrets provider) before the engine runs, and the
offline plan reads it whole. Both go through one guarded loader.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions, offline_plan, preview
from gitops_infra.config import plan_config
from gitops_infra.errors import ConfigError, WorkspaceError

from ..support import stack_project
from .conftest import plan_in_a_subprocess

CANARY = "s3cr3t-canary-in-the-file"
# The loader's limits (MAX_FILE_BYTES, MAX_DEPTH, MAX_NODES), spelled out so that the messages below read
# as a user sees them; test_the_limits_are_the_loaders checks they are the loader's own.
MAX_FILE_BYTES, MAX_DEPTH, MAX_NODES = 1024 * 1024, 64, 100_000
# Nine levels of nine aliases: 9**9 (387 million) values once expanded, in a few hundred bytes.
ALIAS_BOMB = "config:\n  gitops-infra:tags:\n    a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
)
MALFORMED: dict[str, bytes] = {
    "not YAML": f"config:\n  gitops-infra:git: {{owner: [{CANARY}\n".encode(),
    "not UTF-8": b"config:\n  gitops-infra:tags: {owner: \xff\xfe}\n",
    "3,000 nested [": b"config:\n  x:y: " + b"[" * 3000 + b"\n",
    "alias bomb": ALIAS_BOMB.encode(),
    "repeated key": b"config:\n  gitops-infra:tags: {owner: a}\n  gitops-infra:tags: {owner: b}\n",
    "too large": b"config: {}\n" + b"#" * (MAX_FILE_BYTES + 1),
    # Past Python 3.11's 4,300 digits (CVE-2020-10735): a ValueError and a traceback before (issue 44).
    "a 5,000-digit !!int": b"config:\n  x:y: !!int " + b"9" * 5000 + b"\n",
}
EXPECTED = {
    "not YAML": "is not valid YAML",
    "not UTF-8": "is not UTF-8 text",
    "3,000 nested [": f"nests values more than {MAX_DEPTH} levels deep",
    "alias bomb": f"expands to more than {MAX_NODES} values through its aliases",
    "repeated key": "a mapping repeats the key 'gitops-infra:tags'",
    "too large": f"a stack file may have {MAX_FILE_BYTES} at most",
    "a 5,000-digit !!int": "holds a value tagged !!int that is not one (line 2, column 8)",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return stack_project(tmp_path)


def test_the_limits_are_the_loaders() -> None:
    from gitops_infra.automation._state import stack_files

    assert (stack_files.MAX_FILE_BYTES, stack_files.MAX_DEPTH, stack_files.MAX_NODES) == (
        MAX_FILE_BYTES,
        MAX_DEPTH,
        MAX_NODES,
    )


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_the_loader_refuses_with_the_file_and_the_problem(tmp_path: Path, case: str) -> None:
    from gitops_infra.automation._state.stack_files import load_yaml_file

    path = tmp_path / "Pulumi.dev.yaml"
    path.write_bytes(MALFORMED[case])
    with pytest.raises(ConfigError) as info:
        load_yaml_file(path, stack="dev")
    [problem] = info.value.problems
    assert problem.startswith("Pulumi.dev.yaml: ") and EXPECTED[case] in problem, problem
    assert CANARY not in str(info.value)
    # The YAML error quotes the file's line: it must not ride along as the cause or the context.
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_engine_commands_refuse_a_malformed_stack_file_before_the_engine(project: Path, case: str) -> None:
    (project / "Pulumi.dev.yaml").write_bytes(MALFORMED[case])
    with pytest.raises(ConfigError) as info:
        preview("dev", options=StackOptions(work_dir=project))
    assert EXPECTED[case] in str(info.value)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_the_plan_command_refuses_without_a_traceback_and_in_bounded_time(project: Path, case: str) -> None:
    (project / "Pulumi.dev.yaml").write_bytes(MALFORMED[case])
    # A watchdog, not a benchmark: before the loader had limits, the alias bomb ran for minutes and
    # took gigabytes, and 3,000 nested [ ended in a RecursionError.
    done = plan_in_a_subprocess(project, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("ConfigError: ") and EXPECTED[case] in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and CANARY not in done.stderr


def test_a_repeated_key_is_refused_not_merged(project: Path) -> None:
    (project / "Pulumi.dev.yaml").write_bytes(MALFORMED["repeated key"])
    with pytest.raises(ConfigError, match="repeats the key 'gitops-infra:tags'"):
        offline_plan("dev", options=StackOptions(work_dir=project), config_step=plan_config)


def test_a_deleted_working_directory_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    for operation in (preview, offline_plan):
        with pytest.raises(WorkspaceError, match="the current directory no longer exists"):
            operation("dev")


# What gopkg.in/yaml.v3 v3.0.1 (resolve.go), which the engine reads its files with, makes of a plain scalar:
# YAML 1.2's core schema, where PyYAML reads YAML 1.1. tests/engine/test_stack_settings.py shows the engine
# giving a program the same.
YAML_1_2: list[tuple[str, object]] = [
    ("no", "no"),
    ("yes", "yes"),
    ("on", "on"),
    ("Off", "Off"),
    ("y", "y"),
    ("true", True),
    ("False", False),
    ("tRUE", "tRUE"),
    ("~", None),
    ("NULL", None),
    ("0o17", 15),
    ("017", 15),  # Go's ParseInt(s, 0, 64): a leading 0 is octal
    ("08", 8.0),  # ... and 08 no octal, but a float
    ("0x1F", 31),
    ("0b101", 5),
    ("0b-1", -1),
    ("1_000", 1000),
    ("+12", 12),
    ("1e3", 1000.0),
    ("1.", 1.0),
    (".5", 0.5),
    ("1:20", "1:20"),  # no sexagesimal
    ("1e400", "1e400"),  # past a float's range: text
    ("18446744073709551615", 2**64 - 1),
    ("18446744073709551616", 1.8446744073709552e19),  # past 64 bits: a float
    ("9" * 5000, "9" * 5000),  # past a float's range: text, and never an int() of 5,000 digits
    ("2001-12-14", datetime.date(2001, 12, 14)),
    ("2001-02-30", "2001-02-30"),  # no such day: text
    ("2001-12-14T21:59:43", "2001-12-14T21:59:43"),  # the T layouts end in a zone
    ("2001-12-14 21:59:43.5", datetime.datetime(2001, 12, 14, 21, 59, 43, 500000)),
    ('"no"', "no"),
    ("!!str 12", "12"),
    ("!!float 1", 1.0),
    ("!Ref x", "x"),  # a tag yaml.v3 does not know: the value by its shape
    ("!!binary aGk=", "hi"),
]


@pytest.mark.parametrize(("text", "value"), YAML_1_2, ids=[text[:24] for text, _ in YAML_1_2])
def test_a_stack_file_s_scalars_are_what_they_are_to_the_engine(
    tmp_path: Path, text: str, value: object
) -> None:
    from gitops_infra.automation._state.stack_files import read_mapping

    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(f"config:\n  p:x: {text}\n")
    read = read_mapping(path)["config"]["p:x"]
    assert (type(read), read) == (type(value), value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("!!int abc", "holds a value tagged !!int that is not one (line 2, column 8)"),
        ("!!bool yes", "holds a value tagged !!bool that is not one (line 2, column 8)"),
        ("!!null x", "holds a value tagged !!null that is not one (line 2, column 8)"),
        ("!!timestamp 2001-02-30", "holds a value tagged !!timestamp that is not one (line 2, column 8)"),
        ("!!binary '%%%'", "holds a !!binary value that is not base64 of UTF-8 text (line 2, column 8)"),
        ("{1: a}", "holds a mapping key that is not text, which Pulumi refuses (line 2, column 8)"),
    ],
)
def test_a_value_the_engine_refuses_is_the_file_s_error(tmp_path: Path, text: str, problem: str) -> None:
    from gitops_infra.automation._state.stack_files import read_mapping

    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(f"config:\n  p:x: {text}\n")
    with pytest.raises(ConfigError) as info:
        read_mapping(path)
    assert info.value.problems == (f"Pulumi.dev.yaml: {problem}",)
