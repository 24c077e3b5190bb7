"""Fixtures for tests that drive the real Pulumi engine.

The engine is the ``pulumi`` CLI plus the Python language host. ``tools/setup.sh`` builds them into
``.tools/pulumi/bin`` (or accepts a suitable ``pulumi`` on PATH). With ``CI`` set, a missing engine fails
the run instead of skipping it, so CI can never pass without exercising the engine.
"""

from __future__ import annotations

import json
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, UpResult, up

from .. import support
from ..support import (
    NO_ENGINE,
    Engine,
    commit_all,
    fixture_project,
    git,
    init_repo,
    put_engine_on_path,
    unavailable,
)

ENGINE = put_engine_on_path()


@pytest.fixture(scope="session")
def engine() -> Engine:
    if ENGINE is None:
        unavailable(NO_ENGINE)
    return ENGINE


@pytest.fixture(autouse=True)
def own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's temporary directories (a rollback's worktree, the automation API's event logs) in one
    of its own: a test that checks that none is left behind must not see those of the test running
    beside it on the other process (make test runs this tier on two)."""
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    monkeypatch.setenv("TMPDIR", str(own))
    return own


@pytest.fixture
def engine_env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    """Environment for one engine run: a file backend, passphrase secrets, no plugin downloads."""
    # The language host and the dynamic-provider plugin are found beside the CLI.
    return support.engine_env(tmp_path, path=[engine.bin_dir])


STACK = "dev"


@dataclass
class FixtureRepo:
    """A git repository holding the fixture Pulumi project, its stack and the files it manages."""

    root: Path
    files_dir: Path
    env: dict[str, str]

    @property
    def options(self) -> StackOptions:
        return StackOptions(work_dir=self.root, env=self.env)

    def raw_stack(self) -> auto.Stack:
        """The stack through pulumi.automation itself, for test setup and independent checks."""
        return auto.Stack.select(STACK, support.workspace(self.root, self.env))

    def configure(self, files: dict[str, str], **extra: str) -> None:
        """Write the stack config (Pulumi.dev.yaml) as a commit would carry it."""
        config = {"fixture:files": json.dumps(files)} | {f"fixture:{k}": v for k, v in extra.items()}
        support.workspace(self.root, self.env).set_all_config(
            STACK, {key: auto.ConfigValue(value) for key, value in config.items()}
        )

    def commit(self, message: str) -> str:
        return commit_all(self.root, message)

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD")

    def on_disk(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in sorted(self.files_dir.iterdir())}

    @property
    def backend(self) -> Path:
        """The file backend's root directory."""
        return Path(self.env["PULUMI_BACKEND_URL"].removeprefix("file://"))

    def checkpoint(self) -> Path:
        """The stack's checkpoint file."""
        (checkpoint,) = self.backend.glob(f".pulumi/stacks/*/{STACK}.json")
        return checkpoint

    def state_bytes(self) -> bytes:
        """The stack's checkpoint, byte for byte (the file backend keeps it as JSON)."""
        return self.checkpoint().read_bytes()

    def locks(self) -> list[Path]:
        """The lock files the backend holds for any stack."""
        return list(self.backend.glob(".pulumi/locks/**/*.json"))

    def worktrees(self) -> list[str]:
        return [
            line
            for line in git(self.root, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")
        ]


@pytest.fixture
def repo(engine_env: dict[str, str], tmp_path: Path) -> FixtureRepo:
    """Commit A of the fixture: files a and b, a secret token; the stack exists but was never updated."""
    root = init_repo(tmp_path / "repo", "engine tests")
    files_dir = tmp_path / "files"
    files_dir.mkdir()
    (root / "README").write_text("fixture repository\n")
    commit_all(root, "before the project existed")

    fixture_project(root)
    env = {key: value for key, value in engine_env.items() if key != "PATH"}
    fixture = FixtureRepo(root=root, files_dir=files_dir, env=env)
    created = auto.Stack.create(STACK, support.workspace(root, env))
    created.set_all_config(
        {
            "fixture:directory": auto.ConfigValue(str(files_dir)),
            "fixture:token": auto.ConfigValue(SECRET_TOKEN, secret=True),
            "fixture:files": auto.ConfigValue(json.dumps({"a": "one", "b": "two"})),
        }
    )
    fixture.commit("A: files a and b")
    return fixture


SECRET_TOKEN = "tok-3c1f0e9a-never-print-me"


def concurrent_ups(count: int, options: StackOptions) -> list[UpResult | Exception]:
    """``count`` simultaneous ``up`` calls on the dev stack, each one's result or exception."""
    outcomes: list[UpResult | Exception] = []
    guard = threading.Lock()

    def run() -> None:
        try:
            outcome: UpResult | Exception = up(STACK, options=options)
        except Exception as exc:  # collected for the test to assert on
            outcome = exc
        with guard:
            outcomes.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
