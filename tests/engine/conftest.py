"""Fixtures for tests that drive the real Pulumi engine.

The engine is the ``pulumi`` CLI plus the Python language host. ``tools/setup.sh`` builds them into
``.tools/pulumi/bin`` (or accepts a suitable ``pulumi`` on PATH). With ``CI`` set, a missing engine fails
the run instead of skipping it, so CI can never pass without exercising the engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, UpResult, up

from ..gitrepo import git

REPO_ROOT = Path(__file__).resolve().parents[2]
PASSPHRASE = "engine-test-passphrase"
BUILT_BIN = REPO_ROOT / ".tools" / "pulumi" / "bin"


@dataclass(frozen=True)
class Engine:
    """The Pulumi CLI the engine tests run, and the directory it lives in."""

    bin_dir: Path
    version: str

    @property
    def command(self) -> auto.PulumiCommand:
        return auto.PulumiCommand(root=str(self.bin_dir.parent))


def _find_engine() -> Engine | None:
    if (BUILT_BIN / "pulumi").is_file():
        bin_dir = BUILT_BIN
    elif ambient := shutil.which("pulumi"):
        bin_dir = Path(ambient).resolve().parent
    else:
        return None
    version = subprocess.run(
        [str(bin_dir / "pulumi"), "version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return Engine(bin_dir=bin_dir, version=version)


ENGINE = _find_engine()
if ENGINE is not None:
    # The automation layer finds the engine on PATH, as a CI job would after `make setup`.
    os.environ["PATH"] = f"{ENGINE.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture(scope="session")
def engine() -> Engine:
    if ENGINE is None:
        message = "no Pulumi engine: run `make setup` to build it into .tools/pulumi/bin"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return ENGINE


@pytest.fixture
def engine_env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    """Environment for one engine run: a file backend, passphrase secrets, no plugin downloads."""
    backend = tmp_path / "backend"
    backend.mkdir()
    return {
        "PULUMI_BACKEND_URL": backend.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        # Plugin hosts cannot be reached here; the language host still reports the provider packages
        # installed in the venv, so the engine must not try to fetch them.
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_HOME": str(tmp_path / "pulumi-home"),
        # The language host and the dynamic-provider plugin are found beside the CLI.
        "PATH": f"{engine.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }


FIXTURE_PROJECT = Path(__file__).parent / "fixture_project"
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
        workspace = auto.LocalWorkspace(work_dir=str(self.root), env_vars=self.env)
        return auto.Stack.select(STACK, workspace)

    def configure(self, files: dict[str, str], **extra: str) -> None:
        """Write the stack config (Pulumi.dev.yaml) as a commit would carry it."""
        stack = self.raw_stack()
        stack.set_config("fixture:files", auto.ConfigValue(json.dumps(files)))
        for key, value in extra.items():
            stack.set_config(f"fixture:{key}", auto.ConfigValue(value))

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

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
    root = tmp_path / "repo"
    files_dir = tmp_path / "files"
    files_dir.mkdir()
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "engine-tests@example.invalid")
    git(root, "config", "user.name", "engine tests")
    (root / "README").write_text("fixture repository\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "before the project existed")

    shutil.copy(FIXTURE_PROJECT / "__main__.py", root / "__main__.py")
    (root / "Pulumi.yaml").write_text(
        f"name: fixture\nruntime:\n  name: python\n  options:\n    virtualenv: {sys.prefix}\n"
    )
    (root / ".gitignore").write_text("__pycache__/\n")
    env = {key: value for key, value in engine_env.items() if key != "PATH"}
    fixture = FixtureRepo(root=root, files_dir=files_dir, env=env)
    auto.Stack.create(STACK, auto.LocalWorkspace(work_dir=str(root), env_vars=env))
    stack = fixture.raw_stack()
    stack.set_config("fixture:directory", auto.ConfigValue(str(files_dir)))
    stack.set_config("fixture:token", auto.ConfigValue(SECRET_TOKEN, secret=True))
    fixture.configure({"a": "one", "b": "two"})
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
