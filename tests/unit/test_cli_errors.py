"""Every way the CLI fails writes one JSON document with ``--json``; and an interrupt is just that."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitops_infra.cli import EXIT_ERROR, main

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
    assert set(document) == {"error"}
    assert document["error"]["type"] == kind
    assert document["error"]["message"]
    assert result.stderr.startswith(f"{kind}: ")


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
