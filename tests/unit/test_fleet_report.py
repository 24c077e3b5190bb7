"""``fleet report`` on hostile but decodable input (issue 44).

Its inputs are artifacts and pod logs, which anyone who can write one controls. Every bad input is
named in ``unread`` (never a traceback), in every output format; a result is weighed by its time, and
one without a time is never silently outweighed; and what it prints is safe in a CI log and as JSON.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gitops_infra.automation.fleet import FleetDrift, StackDrift
from gitops_infra.automation.fleet.reports import MAX_DEPTH, merge_drift_reports
from gitops_infra.automation.results import DriftedResource, DriftKind, DriftReport, PropertyDiff, to_jsonable
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, EXIT_PENDING, main

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FORMATS = [(), ("--json",), ("--format", "markdown")]
PLACEHOLDER = "__VALUE__"


def _stack(stack: str, actual: Any = None, at: datetime | None = T0) -> StackDrift:
    """A stack of project ``p``: drifted to ``actual``, or clean when it is None."""
    resources = ()
    if actual is not None:
        diff = PropertyDiff(path="tags.owner", recorded="platform", actual=actual)
        resources = (
            DriftedResource(
                urn=f"urn:pulumi:{stack}::p::aws:s3/bucket:Bucket::b",
                type="aws:s3/bucket:Bucket",
                kind=DriftKind.CHANGED,
                diffs=(diff,),
            ),
        )
    report = DriftReport(stack=stack, resources=resources, project="p", checked_at=at)
    return StackDrift(stack=stack, report=report, project="p", checked_at=at)


def _write(path: Path, *documents: Any, value: str | None = None) -> Path:
    """The documents as a job prints them; ``value`` is written raw where ``PLACEHOLDER`` stands."""
    text = "\n".join(json.dumps(to_jsonable(d), indent=2) for d in documents)
    path.write_text(text.replace(json.dumps(PLACEHOLDER), value) if value is not None else text)
    return path


def _fleet(*stacks: StackDrift) -> FleetDrift:
    return FleetDrift(stacks=stacks)


def _report(*args: str) -> Result:
    """``fleet report ARGS``, which must end with an exit code, never a traceback."""
    result = CliRunner().invoke(main, ["fleet", "report", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output, result.output
    return result


def _in_every_format(files: list[Path], exit_code: int) -> None:
    for given in FORMATS:
        result = _report(*map(str, files), *given)
        assert result.exit_code == exit_code, (given, result.output)


def _error(stack: str, kind: str, message: str, at: datetime | None = None) -> dict[str, Any]:
    """An error document, as ``drift STACK --json`` writes one (an older version: without its time)."""
    document: dict[str, Any] = {"error": {"type": kind, "message": message}, "stack": stack, "project": "p"}
    if at is not None:
        document["checked_at"] = at.isoformat()
    return document


# -- item 5: decodable but hostile input is named, in every format -------------------------------------


def test_a_time_without_a_time_zone_is_named_beside_one_with_and_beside_an_error(tmp_path: Path) -> None:
    # Comparing the two ended in "can't compare offset-naive and offset-aware datetimes".
    aware = _write(tmp_path / "aware.json", _fleet(_stack("dev")))
    naive = tmp_path / "naive.json"
    naive.write_text(aware.read_text().replace("+00:00", ""))
    error = _write(tmp_path / "error.json", _error("dev", "StackLockedError", "locked"))
    naive_error = _write(
        tmp_path / "naive-error.json", {**_error("dev", "X", "y"), "checked_at": "2026-12-01"}
    )
    for files in ([aware, naive], [naive, aware], [naive, error], [error, naive], [aware, naive_error]):
        _in_every_format(files, EXIT_ERROR)
        unread = merge_drift_reports(files).unread
        refused = naive if naive in files else naive_error
        assert any(
            u.startswith(f"{refused}: not a drift report (") and "a time without a time zone" in u
            for u in unread
        ), unread


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_nested_past_the_limit_is_named_and_one_within_it_renders_in_every_format(
    tmp_path: Path,
) -> None:
    # 600 levels decode, then failed --json's encoder with a RecursionError.
    deep = _write(
        tmp_path / "deep.json", _fleet(_stack("deep", PLACEHOLDER)), value="[" * 600 + "1" + "]" * 600
    )
    # The drifted value sits 8 levels down a `drift --all --json` document.
    within = _write(tmp_path / "within.json", _fleet(_stack("within", _nested(MAX_DEPTH - 9))))
    _in_every_format([deep], EXIT_ERROR)
    _in_every_format([within], EXIT_PENDING)
    merged = merge_drift_reports([deep, within])
    assert merged.unread == (f"{deep}: not a drift report (values nested deeper than {MAX_DEPTH} levels)",)
    assert [s.stack for s in merged.stacks] == ["within"]
    document = json.loads(_report(str(within), "--json").stdout)
    assert document["stacks"][0]["report"]["resources"][0]["diffs"][0]["actual"] == _nested(MAX_DEPTH - 9)


def test_a_string_that_is_not_unicode_text_is_named(tmp_path: Path) -> None:
    # JSON's \ud800 decodes to a lone surrogate, which no output encodes.
    lone = _write(tmp_path / "lone.json", _fleet(_stack("dev", PLACEHOLDER)), value='"\\ud800"')
    _in_every_format([lone], EXIT_ERROR)
    assert merge_drift_reports([lone]).unread == (
        f"{lone}: not a drift report (a string that is not Unicode text (a lone surrogate))",
    )
    # A pair is one character, as json.dumps writes an emoji.
    pair = _write(tmp_path / "pair.json", _fleet(_stack("dev", PLACEHOLDER)), value='"\\ud83d\\ude00"')
    assert merge_drift_reports([pair]).stacks[0].has_drift


# -- item 6: an integer Python will not read is that file's error ----------------------------------------


def test_an_integer_past_pythons_digit_limit_is_that_files_error_and_the_rest_is_merged(
    tmp_path: Path,
) -> None:
    digits = sys.get_int_max_str_digits() + 700
    huge = _write(tmp_path / "huge.json", _fleet(_stack("dev", PLACEHOLDER)), value="9" * digits)
    fine = _write(tmp_path / "fine.json", _fleet(_stack("prod")))
    _in_every_format([huge, fine], EXIT_ERROR)
    merged = merge_drift_reports([huge, fine])
    assert merged.unread == (
        f"{huge}: not a drift report (an integer of {digits} digits; at most "
        f"{sys.get_int_max_str_digits()} are read)",
    )
    assert [s.stack for s in merged.stacks] == ["prod"]
    # One Python reads is kept whole.
    big = _write(tmp_path / "big.json", _fleet(_stack("dev", PLACEHOLDER)), value="9" * 4000)
    report = merge_drift_reports([big]).stacks[0].report
    assert report is not None and report.resources[0].diffs[0].actual == int("9" * 4000)


# -- item 7: an error carries its time; one without is never silently outweighed -------------------------


def test_a_failed_jobs_error_document_has_its_time_and_outweighs_an_older_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    monkeypatch.chdir(project)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    failed = CliRunner().invoke(main, ["drift", "dev", "--json"])
    assert failed.exit_code == EXIT_ERROR
    document = json.loads(failed.stdout)
    at = datetime.fromisoformat(document["checked_at"])
    assert at.utcoffset() == timedelta(0) and abs(datetime.now(UTC) - at) < timedelta(minutes=5)
    error = tmp_path / "retry.json"
    error.write_text(failed.stdout)
    older = _write(tmp_path / "first-try.json", _fleet(_stack("dev", at=at - timedelta(hours=1))))
    for order in ([older, error], [error, older]):
        merged = merge_drift_reports(order)
        assert merged.stacks[0].error is not None and merged.unread == ()
        _in_every_format(order, EXIT_ERROR)
    # A success after the failure (the job retried) is the stack's result.
    newer = _write(tmp_path / "second-try.json", _fleet(_stack("dev", at=at + timedelta(minutes=5))))
    for order in ([newer, error], [error, newer]):
        assert merge_drift_reports(order).stacks[0].error is None
        _in_every_format(order, EXIT_OK)


def test_a_result_without_a_time_is_never_outweighed_by_a_timed_success(tmp_path: Path) -> None:
    untimed = _write(tmp_path / "untimed.json", _error("dev", "StackLockedError", "locked by ci"))
    success = _write(tmp_path / "success.json", _fleet(_stack("dev")))
    doubt = (
        "organization/p/dev: 2 results, and 1 without a time (checked_at): which is newest is unknown, "
        "so the worst is shown"
    )
    for order in ([untimed, success], [success, untimed]):
        merged = merge_drift_reports(order)
        assert merged.stacks[0].error is not None and merged.stacks[0].error.type == "StackLockedError"
        assert merged.unread == (doubt,)
        _in_every_format(order, EXIT_ERROR)
    # Alone, or the same document twice (an artifact given twice), it is simply the stack's result.
    assert merge_drift_reports([untimed, untimed]).unread == ()


# -- item 14: the text output is a line an input, and no workflow command -----------------------------


HOSTILE_LINES = "boom\n::error file=x.py::forged\n  ::add-mask::hidden\r\n##[set-output name=deploy]yes"


def test_fleet_report_text_prints_each_input_on_one_line_and_forges_no_workflow_command(
    tmp_path: Path,
) -> None:
    files = [
        _write(tmp_path / "error.json", _error("dev", f"Kind{HOSTILE_LINES}", HOSTILE_LINES, T0)),
        _write(tmp_path / "drifted.json", _fleet(_stack("prod", HOSTILE_LINES))),
        _write(tmp_path / "failed.json", {"error": {"type": "X", "message": HOSTILE_LINES}}),
        # A name is printed first on its line: one Pulumi would refuse is not a report.
        _write(tmp_path / "named.json", _fleet(_stack("::error::forged"))),
    ]
    text = _report(*map(str, files)).stdout
    lines = text.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")], text
    assert "##[" not in text and "\r" not in text, text
    # One line each: the two missing results, the two stacks, and the drift's cause.
    assert len(lines) == 5, text
    assert [line.split(":")[0] for line in lines] == ["missing", "missing", "dev", "prod", "cause"], text
    assert f"{tmp_path}/named.json: not a drift report (stack '::error::forged' of project 'p'" in text
    # As JSON the same text reads back whole, and the log still sees no command.
    raw = _report(*map(str, files), "--json").stdout
    assert "##[" not in raw and not [line for line in raw.splitlines() if line.lstrip().startswith("::")]
    dev = next(s for s in json.loads(raw)["stacks"] if s["stack"] == "dev")
    assert dev["error"]["message"] == HOSTILE_LINES


# -- item 15: NaN and the infinities are not JSON --------------------------------------------------------


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_nan_and_infinities_in_a_report_are_named_and_never_written_as_json(
    tmp_path: Path, token: str
) -> None:
    bad = _write(tmp_path / "bad.json", _fleet(_stack("dev", PLACEHOLDER)), value=token)
    fine = _write(tmp_path / "fine.json", _fleet(_stack("prod", 1.5)))
    result = _report(str(bad), str(fine), "--json")
    assert result.exit_code == EXIT_PENDING, result.output

    def refused(name: str) -> None:
        raise AssertionError(f"{name} is not JSON, and was written")

    document = json.loads(result.stdout, parse_constant=refused)
    why = f"the number {token} is out of range" if token[-1].isdigit() else f"{token} is not JSON"
    assert document["unread"] == [f"{bad}: not a drift report ({why})"]
    assert [s["stack"] for s in document["stacks"]] == ["prod"]
