"""The plan as a process of its own: it pauses the collector and skips the interpreter's teardown
(``end_without_teardown``), and neither may cost a byte of output, an exit code or an in-process caller."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from click.testing import CliRunner

from gitops_infra.cli import EXIT_OK, main

from ..support import REPO_ROOT


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    """This interpreter with ``args``, in the repository (whose dev stack the plans read)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)


def test_the_plan_process_prints_what_the_plan_prints_in_process_and_exits_0() -> None:
    args = ["plan", "dev", "--cwd", str(REPO_ROOT), "--json"]
    # The console script's way in: main() reads sys.argv, and the process ends there, so that an exit
    # handler (here one that would print) never runs.
    entry = (
        "import atexit, sys; atexit.register(print, 'torn down', file=sys.stderr)\n"
        "from gitops_infra.cli import main; main()"
    )
    done = _python("-c", entry, *args)
    in_process = CliRunner().invoke(main, args, catch_exceptions=False)

    assert (done.returncode, done.stderr) == (EXIT_OK, "")
    assert in_process.exit_code == EXIT_OK
    assert _unordered(done.stdout) == _unordered(in_process.stdout) and done.stdout.strip()


def _unordered(output: str) -> object:
    """A plan's document without the order its resources registered in (which varies from run to run)."""
    document = json.loads(output)
    return {**document, "resources": sorted(document["resources"], key=lambda r: r["urn"])}


def test_in_process_the_plan_returns_and_leaves_the_collector_as_it_was() -> None:
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            result = CliRunner().invoke(main, ["plan", "dev", "--cwd", str(REPO_ROOT), "--json"])
            assert result.exit_code == EXIT_OK, result.output
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_a_caller_that_passes_arguments_gets_the_usual_exit_and_a_quiet_one() -> None:
    # main(args) is an embedding program's call: the interpreter tears down as usual, and the event loop
    # the mocked runtime ran on is closed before that (left open, it could print "Exception ignored").
    code = (
        "import sys; from gitops_infra.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    print('exit', exc.code)"
    )
    done = _python("-c", code, "plan", "dev", "--cwd", str(REPO_ROOT), "--json")

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith("exit 0\n")


def test_under_a_profiler_the_plan_ends_the_usual_way_so_that_its_report_is_written() -> None:
    done = _python("-m", "cProfile", "-m", "gitops_infra.cli", "plan", "dev", "--json")
    assert done.returncode == EXIT_OK, done.stderr
    assert "function calls" in done.stdout  # cProfile's report, printed after the command returned
