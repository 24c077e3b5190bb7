"""A throwaway copy of the engine tests' fixture project, at a chosen number of resources.

Like ``tests/engine/conftest.py``: a temp git repository holding the fixture program, a local file
backend, passphrase secrets, no plugin downloads, and the engine from ``.tools/pulumi/bin``. The stack is
created and brought up once with the raw CLI, so that every measured operation afterwards is a no-op.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURE_PROGRAM = REPO_ROOT / "tests" / "engine" / "fixture_project" / "__main__.py"
ENGINE_BIN = REPO_ROOT / ".tools" / "pulumi" / "bin"
STACK = "dev"
PASSPHRASE = "bench-passphrase"

# dill pickles the fixture's dynamic provider into every resource, and its recursion goes deeper as the
# program's resources pile up: past ~300 resources the default limit of 1000 raises RecursionError in
# the program. The bench runs the engine tests' fixture unchanged apart from this line.
PRELUDE = "import sys\n\nsys.setrecursionlimit(20_000)  # bench: see bench/fixture.py\n"


def engine_path() -> Path:
    """The directory holding the ``pulumi`` CLI: the one setup built, else the one on ``PATH``."""
    if (ENGINE_BIN / "pulumi").is_file():
        return ENGINE_BIN
    if found := shutil.which("pulumi"):
        return Path(found).resolve().parent
    raise SystemExit("no Pulumi engine: run `make setup` to build it into .tools/pulumi/bin")


def put_engine_on_path() -> Path:
    """Put the engine first on this process's ``PATH``, as a CI job would after ``make setup``."""
    bin_dir = engine_path()
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return bin_dir


@dataclass(frozen=True)
class Fixture:
    """A fixture project with ``size`` file resources, already up."""

    size: int
    root: Path
    env: dict[str, str]
    """The engine environment, given to our layer (``StackOptions.env``) and the raw CLI alike."""

    def pulumi(self, *args: str, check: bool = True, stack: str = STACK) -> subprocess.CompletedProcess[str]:
        """Run the raw CLI in the project, the way a person would in a shell (non-interactive)."""
        result = subprocess.run(
            ["pulumi", *args, "--stack", stack, "--non-interactive"],
            cwd=self.root,
            env={**os.environ, **self.env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if check and result.returncode != 0:
            command = " ".join(args)
            raise RuntimeError(f"pulumi {command} failed ({result.returncode}): {result.stderr[-2000:]}")
        return result

    def add_stack(self, stack: str, files_dir: Path) -> None:
        """Create ``stack`` in the project, its ``size`` files in ``files_dir``, committed and up."""
        files_dir.mkdir(exist_ok=True)
        subprocess.run(
            ["pulumi", "stack", "init", stack, "--non-interactive"],
            cwd=self.root,
            env={**os.environ, **self.env},
            check=True,
            capture_output=True,
        )
        self.pulumi("config", "set", "fixture:directory", str(files_dir), stack=stack)
        self.pulumi("config", "set", "--secret", "fixture:token", "bench-token", stack=stack)
        self.pulumi("config", "set", "fixture:files", json.dumps(_files(self.size)), stack=stack)
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-q", "-m", f"stack {stack} with {self.size} files")
        self.pulumi("up", "--yes", "--skip-preview", "--message", "bench: initial up", stack=stack)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _files(size: int) -> dict[str, str]:
    return {f"file-{index:04d}": f"content {index}" for index in range(size)}


@contextmanager
def fixture(size: int) -> Iterator[Fixture]:
    """A fixture with ``size`` resources, up once; its temp directory is removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix=f"gitops-infra-bench-{size}-"))
    try:
        root, files_dir, backend, home = (tmp / name for name in ("repo", "files", "backend", "home"))
        for directory in (root, files_dir, backend, home):
            directory.mkdir()
        env = {
            "PULUMI_BACKEND_URL": backend.as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_HOME": str(home),
            # Our layer defaults to this interpreter; the raw CLI gets the same one.
            "PULUMI_PYTHON_CMD": sys.executable,
        }
        _git(root, "init", "-q", "-b", "main")
        _git(root, "config", "user.email", "bench@example.invalid")
        _git(root, "config", "user.name", "bench")
        (root / "__main__.py").write_text(PRELUDE + FIXTURE_PROGRAM.read_text())
        (root / "Pulumi.yaml").write_text(
            f"name: fixture\nruntime:\n  name: python\n  options:\n    virtualenv: {sys.prefix}\n"
        )
        (root / ".gitignore").write_text("__pycache__/\n")
        fx = Fixture(size=size, root=root, env=env)
        fx.add_stack(STACK, files_dir)
        yield fx
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
