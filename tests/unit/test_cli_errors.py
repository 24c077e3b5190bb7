"""Every way the CLI fails writes one JSON document with ``--json``; and an interrupt is just that."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitops_infra.cli import EXIT_ERROR, main

from ..support import REPO_ROOT
from .conftest import plan_in_a_subprocess

FAILURES = [
    # (arguments, the error type in the JSON document)
    (["up", "dev", "--json"], "UsageError"),  # no --yes and no terminal to ask on
    (["rollback", "dev", "--json"], "UsageError"),
    (["recover", "dev", "--json"], "UsageError"),
    (["up", "dev", "--yes", "--lock-wait", "-1", "--json"], "UsageError"),
    (["up", "dev", "--yes", "--lock-wait", "nan", "--json"], "UsageError"),  # it retried forever
    (["drift", "dev", "--lock-wait", "inf", "--json"], "UsageError"),
    (["up", "--json"], "UsageError"),  # STACK missing
    (["preview", "dev", "--no-such-option", "--json"], "UsageError"),
    (["preview", "dev", "--json", "--cwd", "/no/such/directory"], "UsageError"),
    (["plan", "", "--json"], "UsageError"),
    (["plan", "dev", "--json"], "WorkspaceError"),  # no Pulumi.yaml in the working directory
]


@pytest.mark.parametrize(("args", "kind"), FAILURES, ids=[" ".join(a) for a, _ in FAILURES])
def test_every_json_failure_is_one_json_document(
    args: list[str], kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == EXIT_ERROR, result.output
    document = json.loads(result.stdout)  # exactly one document: json.loads refuses trailing text
    # Beside the error, only the stack it was about (a fleet report files a failed job's error there)
    # and its time, in UTC (a fleet report weighs it against the stack's other results).
    assert set(document) - {"stack", "project"} == {"error", "checked_at"}
    assert datetime.fromisoformat(document["checked_at"]).utcoffset() == timedelta(0)
    assert document.get("stack", "dev") == "dev"
    assert document["error"]["type"] == kind
    assert document["error"]["message"]
    assert result.stderr == ""  # the document says it all: a merged log stays one document


def test_without_json_a_failure_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["up", "dev", "--cwd", str(tmp_path)])
    assert result.exit_code == EXIT_ERROR
    assert result.stdout == ""
    assert result.stderr.startswith("UsageError: Apply the program to stack 'dev'? Pass --yes")


def test_an_interrupted_plan_reports_the_interrupt_not_a_broken_module(tmp_path: Path) -> None:
    # SIGINT arrives while the program runs; a registration it already queued then fails the way one
    # does when the interrupt cut an import short. That failure used to be reported in place of it.
    (tmp_path / "Pulumi.yaml").write_text("name: interrupted\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(
        "import os, signal, time\n"
        "import pulumi\n"
        "async def half_imported() -> str:\n"
        "    raise AttributeError(\"module 'pulumi_kubernetes.helm.v3' has no attribute 'Release'\")\n"
        "value = pulumi.Output.from_input(half_imported())\n"
        "pulumi.CustomResource('test:index:Thing', 'thing', {'v': value})\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(5)\n"
    )
    done = plan_in_a_subprocess(tmp_path, timeout=120)
    assert done.returncode == 128 + signal.SIGINT, done.stderr
    assert done.stderr.startswith("Interrupted: ")
    assert "has no attribute" not in done.stderr and "OperationFailedError" not in done.stderr


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), -1.0])
def test_the_library_refuses_a_lock_wait_that_never_ends(seconds: float) -> None:
    from gitops_infra.automation import StackOptions
    from gitops_infra.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"lock_wait: .* must be a finite number of seconds"):
        StackOptions(lock_wait=seconds)


def test_a_signal_that_breaks_a_child_mid_command_is_an_interrupt_not_a_traceback(tmp_path: Path) -> None:
    # What happened in the first half-second: the engine lookup runs `pulumi version`; the Ctrl-C passed on
    # to it (it is a `pulumi` child) killed it, and its CalledProcessError escaped as a traceback, exit 1.
    import os
    import shutil
    import subprocess

    import click

    from gitops_infra.cli._invocation import Invocation, command
    from gitops_infra.cli._main import _Cli

    engine = tmp_path / "pulumi"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", engine)

    @click.group(cls=_Cli)
    def cli() -> None:
        """A group with one command, as main has many."""

    @cli.command()
    @command
    def probe(invocation: Invocation) -> int:
        child = subprocess.Popen([str(engine), "30"])
        os.kill(os.getpid(), signal.SIGINT)  # passed on to the child, which is named pulumi
        child.wait()
        raise subprocess.CalledProcessError(child.returncode, ["pulumi", "version"])

    result = CliRunner().invoke(cli, ["probe", "dev", "--json"])
    assert result.exit_code == 128 + signal.SIGINT, result.output
    document = json.loads(result.stdout)
    assert document["error"] == {"type": "Interrupted", "message": "stopped by SIGINT before it finished"}
    assert set(document) == {"error", "checked_at"}
    assert "Traceback" not in result.stderr and "CalledProcessError" not in result.output


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_outside_a_command_is_128_plus_n_and_one_document(signum: int) -> None:
    import os

    import click

    from gitops_infra.cli._main import _Cli

    @click.group(cls=_Cli)
    def cli() -> None:
        """A group whose command is stopped before any engine runs (argument checks, say)."""

    @cli.command()
    @click.option("--json", "as_json", is_flag=True)
    def early(as_json: bool) -> None:
        os.kill(os.getpid(), signum)

    previous = signal.getsignal(signal.SIGTERM)
    result = CliRunner().invoke(cli, ["early", "--json"])
    assert result.exit_code == 128 + signum, result.output
    name = signal.Signals(signum).name
    assert json.loads(result.stdout)["error"] == {
        "type": "Interrupted",
        "message": f"stopped by {name} before it finished",
    }
    assert signal.getsignal(signal.SIGTERM) is previous  # the CLI's handlers do not outlive it


@pytest.mark.parametrize(
    "redirect",
    [pytest.param("> /dev/full", id="a full disk"), pytest.param(">&-", id="fd 1 closed before start")],
)
@pytest.mark.parametrize(
    "args",
    [
        pytest.param("contract schema", id="plain output"),
        pytest.param("--help", id="click's own help"),
        pytest.param("--version", id="click's own version"),
        pytest.param(f"plan dev --cwd {REPO_ROOT}", id="the plan, which ends without a teardown"),
    ],
)
def test_an_output_that_cannot_be_written_is_output_closed_never_a_traceback_or_0(
    args: str, redirect: str, tmp_path: Path
) -> None:
    # Only a closed pipe was handled: ENOSPC was a traceback, and with fd 1 closed nothing was written and
    # the command exited 0.
    done = subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m gitops_infra.cli {args} {redirect}'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == EXIT_ERROR
    assert done.stderr.startswith("OutputClosed: "), done.stderr
    assert "Traceback" not in done.stderr


def test_the_console_takes_any_write_failure_as_the_end_of_output() -> None:
    import errno
    import io

    from gitops_infra.cli._console import CliConsole

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    console = CliConsole(file=Full(), highlight=False, markup=False)
    console.print("a step line")  # rich let anything but a closed pipe through
    assert console.closed
    console.print("and the next one is a no-op")


def test_the_cli_runs_in_a_thread_other_than_the_main_one_leaving_signals_alone() -> None:
    """Python delivers signals only to the main thread, and refuses a handler set elsewhere: a CLI run from
    a worker thread (a service embedding it) runs without its own handlers instead of failing."""
    import threading

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    results = []

    def run() -> None:
        results.append(CliRunner().invoke(main, ["--help"]))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=60)
    (result,) = results
    assert result.exit_code == 0, result.output
    assert "Commands:" in result.output
    assert {signum: signal.getsignal(signum) for signum in before} == before


# -- --json in a log that merges stdout and stderr (kubectl logs) -----------------------------------------

_WARNING_PROGRAM = """\
import logging, os, warnings
import pulumi
warnings.warn("an input is deprecated", UserWarning)
logging.getLogger("a.library").warning("retrying after a reset connection")
pulumi.export("ok", 1)
if os.environ.get("FAIL"):
    raise ValueError("the program cannot run")
"""


def _cli_merged(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI with stderr on stdout, as ``kubectl logs`` shows a pod's output."""
    environ = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    return subprocess.run(
        [sys.executable, "-m", "gitops_infra.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env={**environ, **env},
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "env", "kind"),
    [
        pytest.param(["up", "dev", "--json"], {}, "UsageError", id="a refusal in the command"),
        pytest.param(["preview", "dev", "--bogus", "--json"], {}, "UsageError", id="a usage error"),
        pytest.param(["contract", "check", "no-such-file", "--json"], {}, "UsageError", id="a bad argument"),
        pytest.param(["plan", "dev", "--json"], {"FAIL": "1"}, "OperationFailedError", id="a failed program"),
        pytest.param(["plan", "dev", "--json"], {}, None, id="a success"),
    ],
)
def test_with_json_a_log_that_merges_stdout_and_stderr_is_one_document_with_the_warnings_in_it(
    args: list[str], env: dict[str, str], kind: str | None, tmp_path: Path
) -> None:
    # Every failure was also a `Kind: message` line on stderr, and a warning a line of its own there: in
    # a pod's log the document could not be read, and the stack's error was lost with it.
    (tmp_path / "Pulumi.yaml").write_text("name: warned\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(_WARNING_PROGRAM)

    done = _cli_merged(args, tmp_path, **env)

    document = json.loads(done.stdout)  # the whole log is one document: json.loads refuses any more
    assert done.returncode == (EXIT_ERROR if kind else 0), done.stdout
    if kind is None:
        assert document["outputs"] == {"ok": 1}
    else:
        assert document["error"]["type"] == kind
    if args[0] == "plan":  # the program ran: what it warned of is in the document, not lost
        assert document["warnings"] == [
            "UserWarning: an input is deprecated",
            "a.library: retrying after a reset connection",
        ]
        assert "Traceback" not in done.stdout


def test_without_json_warnings_stay_on_stderr_and_stdout_is_the_text(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: warned\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(_WARNING_PROGRAM)
    done = subprocess.run(
        [sys.executable, "-m", "gitops_infra.cli", "plan", "dev"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "UserWarning: an input is deprecated" in done.stderr
    assert "retrying after a reset connection" in done.stderr
    assert "warnings" not in done.stdout and "Offline plan of stack dev" in done.stdout


def test_with_json_and_stdout_closed_the_failure_still_says_itself_on_stderr(tmp_path: Path) -> None:
    # The one case where the document cannot be written: stderr is then the only place left to say it.
    done = subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m gitops_infra.cli up dev --json >&-'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == EXIT_ERROR
    assert done.stderr.startswith("UsageError: Apply the program to stack 'dev'?"), done.stderr


def test_the_cli_in_process_leaves_the_caller_s_warnings_and_logging_as_they_were(tmp_path: Path) -> None:
    import logging
    import warnings

    before = (warnings.showwarning, logging.lastResort, list(warnings.filters))
    result = CliRunner().invoke(main, ["up", "dev", "--json", "--cwd", str(tmp_path)])
    assert result.exit_code == EXIT_ERROR
    assert (warnings.showwarning, logging.lastResort, list(warnings.filters)) == before


# -- a stdout that cannot encode every character -----------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "name"),
    [
        pytest.param("ascii", "caf\u00e9\u2192", id="ASCII"),
        pytest.param("latin-1", "caf\u00e9\u2192", id="Latin-1"),
        pytest.param("utf-8", "raw\udcff", id="UTF-8 and a name that is no UTF-8"),
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["fleet", "list", "--project", "{project}"], id="text (the console)"),
        pytest.param(["fleet", "report", "{report}"], id="text with an input's name"),
        pytest.param(["fleet", "report", "{report}", "--format", "markdown"], id="markdown (click.echo)"),
    ],
)
def test_text_on_a_stdout_that_cannot_encode_a_character_is_escaped_never_a_traceback(
    encoding: str, name: str, args: list[str], tmp_path: Path
) -> None:
    # PYTHONIOENCODING=ascii (or a Latin-1 LANG) and one name from outside ended the output in a
    # UnicodeEncodeError traceback; so did a file name that is not UTF-8 on a UTF-8 stdout.
    root = os.fsencode(tmp_path)
    project = root + b"/" + os.fsencode(name)
    os.mkdir(project)
    with open(project + b"/Pulumi.yaml", "w") as f:
        f.write("name: named\nruntime: python\n")
    with open(project + b"/Pulumi.dev.yaml", "w") as f:
        f.write("config: {}\n")
    report = root + b"/" + os.fsencode(name) + b".json"
    with open(report, "w") as f:
        f.write("[1")  # unreadable: its name is printed with what is missing
    argv = [a.format(project=os.fsdecode(project), report=os.fsdecode(report)) for a in args]

    done = subprocess.run(
        [sys.executable, "-m", "gitops_infra.cli", *argv],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": encoding},
        timeout=60,
    )

    stderr = done.stderr.decode(encoding, "replace")
    assert "Traceback" not in stderr and "UnicodeEncodeError" not in stderr, stderr
    assert done.returncode == (0 if args[0:2] == ["fleet", "list"] else EXIT_ERROR), stderr
    shown = done.stdout.decode("utf-8", "replace")  # click writes UTF-8 to a stream that claims ASCII
    assert "caf" in shown or "raw" in shown, shown
