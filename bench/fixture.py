"""A throwaway copy of the engine tests' fixture project, at a chosen number of resources.

Set up as the engine tests set theirs up (``tests/support.py``): a temp git repository holding the
fixture program, a local file backend, passphrase secrets, no plugin downloads, and the engine from
``.tools/pulumi/bin``. The stack is created and brought up once with the raw CLI, so that every measured
operation afterwards is a no-op.
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

from tests.support import NO_ENGINE, commit_all, engine_env, fixture_project, init_repo, put_engine_on_path

STACK = "dev"

# dill pickles the fixture's dynamic provider into every resource, and its recursion goes deeper as the
# program's resources pile up: past ~300 resources the default limit of 1000 raises RecursionError in
# the program. The bench runs the engine tests' fixture unchanged apart from this line.
PRELUDE = "import sys\n\nsys.setrecursionlimit(20_000)  # bench: see bench/fixture.py\n"


def require_engine() -> Path:
    """Put the engine first on this process's ``PATH``, as a CI job would after ``make setup``; its
    directory. Exits saying how to build one when there is none."""
    engine = put_engine_on_path()
    if engine is None:
        raise SystemExit(NO_ENGINE)
    return engine.bin_dir


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
        commit_all(self.root, f"stack {stack} with {self.size} files")
        self.pulumi("up", "--yes", "--skip-preview", "--message", "bench: initial up", stack=stack)


def _files(size: int) -> dict[str, str]:
    return {f"file-{index:04d}": f"content {index}" for index in range(size)}


@contextmanager
def fixture(size: int) -> Iterator[Fixture]:
    """A fixture with ``size`` resources, up once; its temp directory is removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix=f"gitops-infra-bench-{size}-"))
    try:
        # Our layer defaults to this interpreter; the raw CLI gets the same one.
        env = {**engine_env(tmp), "PULUMI_PYTHON_CMD": sys.executable}
        root = fixture_project(init_repo(tmp / "repo", "bench"), prelude=PRELUDE)
        files_dir = tmp / "files"
        fx = Fixture(size=size, root=root, env=env)
        fx.add_stack(STACK, files_dir)
        yield fx
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
