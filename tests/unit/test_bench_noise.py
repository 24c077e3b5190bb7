"""The bench's noise marks and ``--compare`` (``bench/noise.py``), on results shaped as the suites write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import IO

import pytest

from bench import noise
from bench.__main__ import main as bench_main
from bench.stats import paired_ratio, timed

from ..support import REPO_ROOT

OLD = {
    "started_at": "2026-12-01T10:00:00+00:00",
    "engine": [
        {
            "operation": "preview",
            "resources": 10,
            "ours_s": [1.0, 1.02, 1.01],
            "raw_s": [1.0, 1.0, 1.0],
            "ours_median_s": 1.01,
            "ratio": 1.01,
        },
        {
            "operation": "preview",
            "resources": 100,
            "ours_s": [2.0, 2.6, 2.1],
            "raw_s": [2.0, 2.0, 2.1],
            "ours_median_s": 2.1,
            "ratio": 1.05,
        },
    ],
    "startup": {"help_s": [0.05, 0.05], "help_median_s": 0.05, "help_click_ratio": 1.30, "repeats": 2},
}


def test_every_series_is_read_back_as_min_median_max_and_a_wide_one_is_noisy() -> None:
    found = {(s.row, s.series): s for s in noise.spreads(OLD)}
    assert sorted(found) == [
        ("engine[operation=preview, resources=100]", "ours"),
        ("engine[operation=preview, resources=100]", "raw"),
        ("engine[operation=preview, resources=10]", "ours"),
        ("engine[operation=preview, resources=10]", "raw"),
        ("startup", "help"),
    ]
    wide = found[("engine[operation=preview, resources=100]", "ours")]
    assert (wide.low, wide.middle, wide.high) == (2.0, 2.1, 2.6) and wide.noisy
    assert wide.spread == pytest.approx(0.6 / 2.1)
    narrow = found[("engine[operation=preview, resources=10]", "ours")]
    assert not narrow.noisy and narrow.spread == pytest.approx(0.02 / 1.01)


@pytest.mark.parametrize(
    ("ours", "raw", "pairs"),
    [
        ([1.0, 1.01, 1.02, 1.0, 1.01], [1.0] * 5, 5),  # quiet: five pairs, as asked
        ([1.0, 1.3, 1.0, 1.0, 1.0], [1.0] * 5, 15),  # one side noisy: three times as many
        ([1.0] * 5, [1.0, 1.0, 0.8, 1.0, 1.0], 15),  # the other side, leaning the other way
    ],
    ids=["quiet", "ours-noisy", "raw-noisy"],
)
def test_a_noisy_engine_row_gets_more_pairs_whichever_way_it_leans(
    ours: list[float], raw: list[float], pairs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import engine_overhead

    # Each call's duration, in the order the row makes them: a warm-up pair, then pairs alternating which
    # side goes first; the extra pairs all take 1.0 s.
    durations = {"ours": iter([9.0, *ours, *[1.0] * 10]), "raw": iter([9.0, *raw, *[1.0] * 10])}
    sides: list[str] = []

    class Fixture:
        size = 10

        def pulumi(self, *_args: str) -> None:
            sides.append("raw")

    def timed(call: Callable[[], object]) -> float:
        call()
        return next(durations[sides[-1]])

    monkeypatch.setattr(engine_overhead, "timed", timed)
    pair = engine_overhead.Pair("preview", "pulumi preview", lambda _fx: sides.append("ours"), ("preview",))
    row = engine_overhead._measure(Fixture(), pair, 5)  # type: ignore[arg-type]
    assert sides[:6] == ["ours", "raw", "ours", "raw", "raw", "ours"]  # the warm-up, then alternating
    assert row["repeats"] == pairs == len(row["ours_s"]) == len(row["raw_s"])
    assert row["extended"] is (pairs > 5)
    assert row["ours_s"][:5] == ours and row["raw_s"][:5] == raw
    assert row["ratio"] == paired_ratio(row["ours_s"], row["raw_s"])
    assert row["ratio_of_medians"] == row["ours_median_s"] / row["raw_median_s"]


def test_a_ratio_is_the_median_of_its_pairs_ratios_so_a_slower_machine_between_pairs_cancels() -> None:
    # The machine slowed down between pairs (1 s, then 2 s, then 10 s), each pair equal but the second.
    ours, raw = [1.0, 3.0, 10.0], [1.0, 2.0, 10.0]
    assert paired_ratio(ours, raw) == 1.0
    assert median(ours) / median(raw) == 1.5  # the medians come from different pairs
    with pytest.raises(ValueError):
        paired_ratio([1.0, 2.0], [1.0])  # a pair with one half is no pair


def test_compare_lists_each_figure_in_both_runs_with_its_change() -> None:
    new = json.loads(json.dumps(OLD))
    new["engine"][0]["ratio"] = 1.111
    new["startup"]["help_click_ratio"] = 1.04
    del new["engine"][1]  # a row only the old run has is not compared
    found = {c.figure: c for c in noise.changes(OLD, new)}
    assert sorted(found) == [
        "engine[operation=preview, resources=10].ours_median_s",
        "engine[operation=preview, resources=10].ratio",
        "startup.help_click_ratio",
        "startup.help_median_s",
    ]
    assert found["startup.help_click_ratio"].relative == pytest.approx(-0.2)
    assert found["engine[operation=preview, resources=10].ratio"].relative == pytest.approx(0.1)


def _bench(*args: str, stdout: int | IO[str] = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """``python -m bench ARGS``, as a person runs it, its stderr kept."""
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=REPO_ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
    )


def _compare(old: Path, new: Path) -> subprocess.CompletedProcess[str]:
    """``python -m bench --compare OLD --out NEW``."""
    return _bench("--compare", str(old), "--out", str(new))


def test_the_compare_mode_runs_nothing_and_prints_the_table(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(OLD))
    changed = json.loads(json.dumps(OLD))
    changed["startup"]["help_click_ratio"] = 1.04
    new.write_text(json.dumps(changed))
    done = _compare(old, new)
    assert done.returncode == 0, done.stderr
    assert "| startup.help_click_ratio | 1.3 | 1.04 | -20.0% |  |" in done.stdout, done.stdout
    # Its ours series spreads over 10%: any of its figures may have moved by noise alone.
    noisy = "| engine[operation=preview, resources=100].ratio | 1.05 | 1.05 | +0.0% | NOISY |"
    assert noisy in done.stdout, done.stdout
    assert "| engine[operation=preview, resources=10].ratio | 1.01 | 1.01 | +0.0% |  |" in done.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    refused = _compare(broken, new)
    assert refused.returncode == 1 and f"--compare: {broken} is not JSON" in refused.stderr, refused.stderr


def test_a_closed_stdout_ends_the_tables_not_the_run_whose_results_are_still_written(tmp_path: Path) -> None:
    # `make bench | head` closed the pipe at the first table: a traceback, and half an hour of figures lost.
    out = tmp_path / "results.json"
    args = ["--suite", "scaling", "--ns", "1,2", "--repeats", "1", "--out", str(out)]
    with open("/dev/full", "w") as full:  # ENOSPC on the first flush, as deterministic as stdout fails
        done = _bench(*args, stdout=full)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"bench: stdout failed, so the tables stopped there; all results are in {out}" in done.stderr
    written = json.loads(out.read_text())
    assert [row["dimension"] for row in written["scaling"]] == ["node groups", "flux health checks"]


def test_results_that_cannot_be_written_are_a_clear_error_after_the_tables() -> None:
    done = _bench("--suite", "scaling", "--ns", "1,2", "--repeats", "1", "--out", "/dev/full")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    said = "bench: cannot write /dev/full: No space left on device; the tables above are this run's figures"
    assert said in done.stderr, done.stderr
    assert "| node groups | 2 |" in done.stdout, done.stdout


def test_compare_into_a_closed_pipe_exits_1_without_a_traceback(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps(OLD))
    reader, writer = os.pipe()
    os.close(reader)  # closed before the first write: EPIPE, not a race with a reader
    try:
        done = _bench("--compare", str(old), "--out", str(old), stdout=writer)
    finally:
        os.close(writer)
    assert done.returncode == 1 and done.stderr == "", done.stderr


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--ns", "1"], "argument --ns: expected two values or more, since a line is fitted through them"),
        (
            ["--ns", "1,1"],
            "argument --ns: '1,1': expected distinct positive whole numbers, such as 10,100,500",
        ),
        (["--sizes", ","], "argument --sizes: ',': expected distinct positive whole numbers"),
        (["--repeats", "0"], "argument --repeats: '0' is not a positive whole number"),
        (["--stacks", "-3"], "argument --stacks: '-3' is not a positive whole number"),
        (["--shard-counts", "2,x"], "argument --shard-counts: 'x' is not a positive whole number"),
        (["--out", "."], "argument --out: . is a directory; expected a JSON file's path"),
        (
            ["--out", "/proc/nope/results.json"],
            "argument --out: cannot make its directory /proc/nope: No such file or directory",
        ),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    given: list[str], said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each used to fail only after minutes of timing (a median of nothing, a line through one point).
    def accepted() -> None:
        raise AssertionError(f"{given} was accepted, and the bench was about to run")

    monkeypatch.setattr("bench.__main__.require_engine", accepted)
    with pytest.raises(SystemExit) as refused:
        bench_main(given)
    assert refused.value.code == 2
    assert said in capsys.readouterr().err


def test_an_interrupted_run_says_so_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # no engine runs yet: the signal stops the run at once

    monkeypatch.setattr("bench.__main__.require_engine", interrupted)
    out = tmp_path / "results.json"
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    assert bench_main(["--suite", "scaling", "--out", str(out)]) == 128 + signal.SIGTERM
    assert capsys.readouterr().err == "bench: stopped by SIGTERM; no results were written\n"
    assert not out.exists()
    # The handlers in force before the run (pytest's, xdist's) are put back.
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_a_signal_during_a_timed_call_stops_the_run_before_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def engine_finished_anyway() -> None:
        calls.append(1)
        monkeypatch.setattr("bench.stats.interrupted", lambda: signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        for _ in range(3):
            timed(engine_finished_anyway)
    assert calls == [1]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_compare_refuses_what_is_not_a_regular_file_rather_than_block_or_read_forever(
    tmp_path: Path, kind: str
) -> None:
    # A FIFO blocked the read until a writer came (forever, in CI); /dev/zero was read without end.
    import resource

    new = tmp_path / "new.json"
    new.write_text(json.dumps(OLD))
    given = {"fifo": tmp_path / "old.json", "device": Path("/dev/zero"), "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(given)

    def bounded() -> None:  # were /dev/zero read whole, the read would end here, not in the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run(
        [sys.executable, "-m", "bench", "--compare", str(given), "--out", str(new)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        preexec_fn=bounded,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"--compare: {given}: not a regular file; not a results file\n", done.stderr


def test_compare_refuses_a_file_larger_than_a_results_file_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps(OLD) + " " * 2000)
    monkeypatch.setattr(noise, "MAX_RESULTS_BYTES", 1000)
    with pytest.raises(SystemExit, match=f"--compare: {big}: larger than 1000 bytes; not a results file"):
        bench_main(["--compare", str(big), "--out", str(big)])
    # fleet report reads its inputs through the same reader.
    from gitops_infra import _files
    from gitops_infra.automation.fleet import reports

    assert noise.read_regular_file is reports.read_regular_file is _files.read_regular_file
