"""``destroy`` and a rollback that looks before it leaps, on the real engine and the fixture project."""

from __future__ import annotations

import json
import os
import pty
import select
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from pulumi import automation as auto

from gitops_infra.automation import DestroyPreview, destroy, history, rollback_to_commit, up
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.errors import ConfirmationRequiredError

from ..support import git
from .conftest import FixtureRepo

pytestmark = pytest.mark.engine

FILE_TYPE = "pulumi-python:dynamic:Resource"


def _file_urn(name: str) -> str:
    return f"urn:pulumi:dev::fixture::{FILE_TYPE}::{name}"


def _resources(repo: FixtureRepo) -> list[str]:
    deployment = repo.raw_stack().export_stack().deployment or {}
    return [r["urn"] for r in deployment.get("resources") or []]


def _prod(repo: FixtureRepo) -> None:
    """Make the dev stack a prod one, the way the policy pack would see it: its environment's name."""
    repo.raw_stack().set_config("fixture:environment.name", auto.ConfigValue("production"), path=True)
    repo.commit("the environment is production")


def _cli(repo: FixtureRepo, *args: str) -> tuple[int, str, str]:
    result = CliRunner(env=repo.env).invoke(main, [*args, "--cwd", str(repo.root)])
    return result.exit_code, result.stdout, result.stderr


# -- destroy -------------------------------------------------------------------------------------------


def test_destroy_empties_the_stack_and_is_recorded_like_an_update(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    assert repo.on_disk() == {"a": "one", "b": "two"}

    result = destroy("dev", options=repo.options, message="tear down")

    assert result.changes == {"delete": 3}  # a, b and the stack
    assert (result.drain, result.sweeps, result.clean) == (None, (), True)  # no cluster: nothing to drain
    assert repo.on_disk() == {}
    assert _resources(repo) == []
    latest = history("dev", options=repo.options)[0]
    assert (latest.kind, latest.result, latest.message) == ("destroy", "succeeded", "tear down")
    assert latest.commit == result.commit == repo.head()
    assert result.version == latest.version == 2
    assert up("dev", options=repo.options).changes == {"create": 3}  # the stack and its config stay


def test_destroy_keeps_what_is_protected_says_so_and_the_next_up_finds_it(repo: FixtureRepo) -> None:
    """The Sealed Secrets keys are protected so that a rebuilt cluster opens what was sealed before: a
    destroy deletes the rest, lists what it kept, and the up after it makes only what was deleted."""
    repo.raw_stack().set_config("fixture:protected", auto.ConfigValue('["a"]'))
    repo.commit("a is protected")
    up("dev", options=repo.options)

    assert destroy("dev", options=repo.options, preview_only=True).changes == {"delete": 1, "same": 2}
    result = destroy("dev", options=repo.options)

    assert result.changes == {"delete": 1, "same": 2}  # b; a and the stack stay
    assert result.kept == (_file_urn("a"),)
    assert repo.on_disk() == {"a": "one"}
    assert _file_urn("a") in _resources(repo)
    assert up("dev", options=repo.options).changes == {"create": 1, "same": 2}  # b again; a as it was
    assert repo.on_disk() == {"a": "one", "b": "two"}

    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes")
    assert code == EXIT_OK
    assert (
        f"Kept 1 protected (pulumi state unprotect to let a destroy delete it):\n  {_file_urn('a')}" in stdout
    )
    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--json")
    assert code == EXIT_OK and json.loads(stdout)["kept"] == [_file_urn("a")]
    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--format", "markdown")
    assert code == EXIT_OK and f"Kept 1 protected:\n\n- `{_file_urn('a')}`" in stdout


def test_a_destroy_with_only_protected_resources_left_changes_nothing_and_says_so(repo: FixtureRepo) -> None:
    """The second run of a teardown (CI retrying it): the engine has nothing to delete and records nothing;
    the result must not pass the last update off as this destroy."""
    repo.raw_stack().set_config("fixture:protected", auto.ConfigValue('["a", "b"]'))
    repo.commit("a and b are protected")
    up("dev", options=repo.options)
    before = len(history("dev", options=repo.options))

    preview = destroy("dev", options=repo.options, preview_only=True)
    assert (preview.changes, preview.steps) == ({}, ())
    result = destroy("dev", options=repo.options)
    assert result.changes == {} and set(result.kept) == {_file_urn("a"), _file_urn("b")}
    assert len(history("dev", options=repo.options)) == before and repo.on_disk() == {"a": "one", "b": "two"}

    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes")
    assert code == EXIT_OK and "Nothing to destroy on dev: only protected resources are left" in stdout
    assert "Destroyed" not in stdout
    code, stdout, _ = _cli(repo, "destroy", "dev", "--preview-only")
    assert code == EXIT_OK, stdout
    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--json")
    document = json.loads(stdout)
    assert code == EXIT_OK and document["changes"] == {} and len(document["kept"]) == 2


def test_a_confirm_that_names_another_stack_destroys_nothing(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    with pytest.raises(ConfirmationRequiredError, match="confirm names 'prod', but the stack to destroy"):
        destroy("dev", options=repo.options, confirm="prod")  # dev is not prod, yet the name is wrong
    assert repo.on_disk() == {"a": "one", "b": "two"}


def test_destroy_preview_only_shows_the_deletes_and_changes_nothing(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    before = repo.state_bytes()

    result = destroy("dev", options=repo.options, preview_only=True)

    assert {(s.op, s.urn) for s in result.steps} >= {("delete", _file_urn("a")), ("delete", _file_urn("b"))}
    assert result.changes == {"delete": 3}
    assert isinstance(result, DestroyPreview) and result.drain is None
    assert repo.on_disk() == {"a": "one", "b": "two"}
    assert repo.state_bytes() == before
    assert len(history("dev", options=repo.options)) == 1


def test_a_prod_stack_is_destroyed_only_when_named(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    _prod(repo)
    before = repo.state_bytes()

    with pytest.raises(ConfirmationRequiredError) as info:
        destroy("dev", options=repo.options)
    assert "stack 'dev' is prod (environment 'production')" in str(info.value)
    with pytest.raises(ConfirmationRequiredError):
        destroy("dev", options=repo.options, confirm="prod")  # the name, not any name
    assert repo.state_bytes() == before and repo.on_disk() == {"a": "one", "b": "two"}
    # Looking is always allowed.
    assert destroy("dev", options=repo.options, preview_only=True).changes == {"delete": 3}

    destroy("dev", options=repo.options, confirm="dev")
    assert repo.on_disk() == {}


def test_cli_destroy_refuses_without_yes_and_a_prod_stack_without_confirm(repo: FixtureRepo) -> None:
    up("dev", options=repo.options)
    before = repo.state_bytes()

    code, stdout, stderr = _cli(repo, "destroy", "dev", "--json")
    assert code == EXIT_ERROR
    assert json.loads(stdout)["error"]["type"] == "UsageError"
    assert "Pass --yes" in json.loads(stdout)["error"]["message"] and stderr == ""

    _prod(repo)
    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--json")
    assert code == EXIT_ERROR
    assert json.loads(stdout)["error"]["type"] == "ConfirmationRequiredError"
    assert repo.state_bytes() == before and repo.on_disk() == {"a": "one", "b": "two"}

    code, stdout, _ = _cli(repo, "destroy", "dev", "--preview-only", "--json")
    assert code == EXIT_OK and json.loads(stdout)["changes"] == {"delete": 3}

    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--confirm", "dev", "--json")
    assert code == EXIT_OK
    document = json.loads(stdout)
    assert document["changes"] == {"delete": 3} and document["commit"] == repo.head()
    assert repo.on_disk() == {}


# -- rollback preview ----------------------------------------------------------------------------------


def _two_commits(repo: FixtureRepo) -> tuple[str, str]:
    commit_a = repo.head()
    up("dev", options=repo.options)
    repo.configure({"a": "uno", "b": "two", "c": "three"})
    commit_b = repo.commit("B: change a, add c")
    up("dev", options=repo.options)
    return commit_a, commit_b


def _rollback_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("gitops-infra-rollback-*"))


def test_rollback_preview_only_changes_nothing_in_the_world_the_state_or_the_work_tree(
    repo: FixtureRepo,
) -> None:
    _, commit_b = _two_commits(repo)
    before, leftovers = repo.state_bytes(), _rollback_dirs()

    result = rollback_to_commit("dev", "previous", options=repo.options, preview_only=True)

    # What applying A again would do: a back to "one", c deleted.
    assert ("update", _file_urn("a")) in {(s.op, s.urn) for s in result.steps}
    assert ("delete", _file_urn("c")) in {(s.op, s.urn) for s in result.steps}
    assert result.changes.get("update") == 1 and result.changes.get("delete") == 1
    assert repo.on_disk() == {"a": "uno", "b": "two", "c": "three"}
    assert repo.state_bytes() == before
    assert len(history("dev", options=repo.options)) == 2
    assert len(repo.worktrees()) == 1 and _rollback_dirs() == leftovers
    assert repo.head() == commit_b and git(repo.root, "status", "--porcelain") == ""


def test_cli_rollback_preview_only_prints_one_json_document(repo: FixtureRepo) -> None:
    commit_a, _ = _two_commits(repo)
    before = repo.state_bytes()

    code, stdout, _ = _cli(repo, "rollback", "dev", commit_a, "--preview-only", "--json")

    assert code == EXIT_OK
    document = json.loads(stdout)
    assert document["has_changes"] is True and document["changes"]["delete"] == 1
    assert repo.state_bytes() == before

    # Without --yes and without a terminal to show the preview on and ask, nothing runs at all.
    code, stdout, _ = _cli(repo, "rollback", "dev", commit_a, "--json")
    assert code == EXIT_ERROR and json.loads(stdout)["error"]["type"] == "UsageError"
    assert repo.state_bytes() == before


def _on_a_terminal(
    repo: FixtureRepo, args: list[str], answer: str, timeout: float = 120.0
) -> tuple[int, str]:
    """Run the installed CLI on a pseudo-terminal, answer its question, and return (exit code, output)."""
    script = Path(sys.executable).with_name("gitops-infra")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, with the pty as its terminal
        os.execvpe(str(script), [str(script), *args], {**os.environ, **repo.env, "COLUMNS": "200"})
    output, answered = b"", False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        if not answered and b"[y/N]" in output:
            os.write(fd, answer.encode() + b"\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


def test_interactive_rollback_shows_the_preview_and_asks_first(repo: FixtureRepo) -> None:
    commit_a, _ = _two_commits(repo)
    before = repo.state_bytes()
    args = ["rollback", "dev", commit_a, "--cwd", str(repo.root)]

    code, output = _on_a_terminal(repo, args, "n")

    assert code == EXIT_ERROR, output
    assert f"Rollback of dev to {commit_a} would do: " in output
    assert output.index(f"delete   {_file_urn('c')}") < output.index("[y/N]")  # the preview came first
    assert "Aborted: nothing was changed" in output
    assert repo.state_bytes() == before and repo.on_disk() == {"a": "uno", "b": "two", "c": "three"}

    code, output = _on_a_terminal(repo, args, "y")

    assert code == EXIT_OK, output
    assert repo.on_disk() == {"a": "one", "b": "two"}


def _bare_key(repo: FixtureRepo) -> None:
    stack_file = repo.root / "Pulumi.dev.yaml"
    stack_file.write_text(stack_file.read_text() + "  environment:\n    name: prod\n")


@pytest.mark.parametrize(
    "written",
    [
        # `pulumi config set environment '{"name": "prod"}'` (no --path) writes JSON text.
        pytest.param(
            lambda repo: repo.raw_stack().set_config("environment", auto.ConfigValue('{"name": "prod"}')),
            id="JSON text",
        ),
        pytest.param(_bare_key, id="a bare key"),  # Pulumi reads it in the project's namespace
        pytest.param(
            lambda repo: repo.raw_stack().set_config("environment", auto.ConfigValue("prod")), id="unreadable"
        ),
    ],
)
def test_prod_written_the_other_ways_pulumi_takes_is_still_prod(
    repo: FixtureRepo, written: Callable[[FixtureRepo], None]
) -> None:
    # The guard read only the namespaced mapping, so `--yes` alone destroyed such a stack.
    up("dev", options=repo.options)
    written(repo)
    repo.commit("prod, written another way Pulumi takes")
    before = repo.state_bytes()

    code, stdout, _ = _cli(repo, "destroy", "dev", "--yes", "--json")

    assert code == EXIT_ERROR
    assert json.loads(stdout)["error"]["type"] == "ConfirmationRequiredError"
    assert repo.state_bytes() == before and repo.on_disk() == {"a": "one", "b": "two"}
