"""Set-up shared by every test tier (unit, engine, cluster, install) and by ``bench/``.

- **The engine**: :func:`find_engine` (the ``pulumi`` setup built into ``.tools/pulumi/bin``, else the
  one on ``PATH``, with its version) and :func:`put_engine_on_path`.
- **Its environment**: :func:`engine_env`, a file backend and a ``PULUMI_HOME`` in a temp directory,
  passphrase secrets, no plugin downloads, no update check.
- **Projects**: :func:`write_project` (a ``Pulumi.yaml``), :func:`stack_project` (this checkout's stack
  program), :func:`fixture_project` (the engine tier's dynamic-provider program), :func:`fake_engine`
  (a ``pulumi`` that is found but never runs), and :func:`python_runtime` for a policy pack's settings.
- **git**: :func:`git`, :func:`init_repo` and :func:`commit_all`.
- :func:`workspace`: a ``pulumi.automation`` workspace on that engine, whose version is read once.
- :func:`unavailable`: a tier whose tools are not built skips, except under ``CI``, where it fails.
- :func:`without_times`: a ``--json`` document without its ``checked_at`` times, to compare two runs.
- The secret scan: :func:`files_under`, :func:`secret_leaks_in_files` and :func:`secret_leaks_in_texts`
  look for secrets in their plaintext forms (UTF-8, UTF-16 and base64).

The project writer, the engine environment and git are the ones ``make demo`` runs on
(:mod:`gitops_infra.local`), so that the demo and the tests set a local stack up the same way.
"""

from __future__ import annotations

import base64
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from gitops_infra.local import Toolchain
from gitops_infra.local._project import commit_all, git, init_repo, python_runtime, set_secrets, write_project
from gitops_infra.local._project import engine_env as _engine_env

if TYPE_CHECKING:
    from pulumi import automation as auto

__all__ = [
    "FIXTURE_PROGRAM",
    "NO_ENGINE",
    "PASSPHRASE",
    "REPO_ROOT",
    "STACKS",
    "TOOLCHAIN",
    "Engine",
    "commit_all",
    "engine_env",
    "fake_engine",
    "files_under",
    "find_engine",
    "fixture_project",
    "git",
    "init_repo",
    "put_engine_on_path",
    "python_runtime",
    "secret_leaks_in_files",
    "secret_leaks_in_texts",
    "stack_project",
    "unavailable",
    "without_times",
    "workspace",
    "write_project",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
STACKS = REPO_ROOT / "stacks"
"""This checkout's stack program, which ``Pulumi.yaml`` points at."""
TOOLCHAIN = Toolchain.of(REPO_ROOT)
"""What ``make setup`` built in this checkout: the engine and the local cluster's binaries."""
FIXTURE_PROGRAM = REPO_ROOT / "tests" / "engine" / "fixture_project" / "__main__.py"
PASSPHRASE = "test-passphrase"
NO_ENGINE = "no Pulumi engine: run `make setup` to build it into .tools/pulumi/bin"


@dataclass(frozen=True)
class Engine:
    """A Pulumi CLI, the directory it lives in (with its language host), and its version."""

    bin_dir: Path
    version: str

    @property
    def pulumi(self) -> Path:
        return self.bin_dir / "pulumi"

    @functools.cached_property
    def command(self) -> auto.PulumiCommand:
        """This engine for ``pulumi.automation``. Made once: each ``PulumiCommand`` runs ``pulumi version``,
        as does each ``LocalWorkspace`` made without one."""
        from pulumi import automation as auto

        return auto.PulumiCommand(root=str(self.bin_dir.parent))


@functools.cache
def find_engine() -> Engine | None:
    """The engine setup built, else the ``pulumi`` on ``PATH`` (setup builds none when a suitable one is
    there); ``None`` when there is neither."""
    if (built := TOOLCHAIN.engine) is not None:
        bin_dir = built.parent
    elif ambient := shutil.which("pulumi"):
        bin_dir = Path(ambient).resolve().parent
    else:
        return None
    version = subprocess.run(
        [str(bin_dir / "pulumi"), "version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return Engine(bin_dir=bin_dir, version=version)


def put_engine_on_path() -> Engine | None:
    """Put the engine first on this process's ``PATH``, as a CI job would after ``make setup``: the
    automation layer, and ``pulumi.automation`` itself, find it there."""
    engine = find_engine()
    path = os.environ.get("PATH", "")
    if engine is not None and path.split(os.pathsep)[0] != str(engine.bin_dir):
        os.environ["PATH"] = f"{engine.bin_dir}{os.pathsep}{path}"
    return engine


def workspace(root: Path, env: Mapping[str, str]) -> auto.LocalWorkspace:
    """A ``pulumi.automation`` workspace on the project in ``root`` with the engine environment ``env``,
    for a test's set-up and its independent checks; on the engine :func:`find_engine` found."""
    from pulumi import automation as auto

    engine = find_engine()
    if engine is None:
        unavailable(NO_ENGINE)
    return auto.LocalWorkspace(work_dir=str(root), env_vars=dict(env), pulumi_command=engine.command)


def unavailable(message: str) -> NoReturn:
    """Skip a test whose tools are not built; under ``CI`` fail it, so CI never passes without them."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


ENGINE_TMP = "engine-tmp"
"""Under a test's ``tmp``, the engine's ``TMPDIR`` (:func:`engine_env`)."""


def engine_env(tmp: Path, *, passphrase: str = PASSPHRASE, path: Sequence[Path] = ()) -> dict[str, str]:
    """The engine's environment for one run, kept in ``tmp``: the file backend in ``tmp/backend``,
    ``PULUMI_HOME`` in ``tmp/pulumi-home`` and ``TMPDIR`` in ``tmp/engine-tmp`` (where a test can look for
    what an operation left; a raw ``pulumi.automation`` run's leftovers stay there, not in ``/tmp``).
    ``path`` goes first on ``PATH`` (no ``PATH`` without it)."""
    (tmp / ENGINE_TMP).mkdir(exist_ok=True)
    env = _engine_env(tmp / "backend", passphrase, home=tmp / "pulumi-home", path=path)
    return {**env, "TMPDIR": str(tmp / ENGINE_TMP)}


def stack_project(root: Path, *, virtualenv: Path | str | None = None) -> Path:
    """A project in ``root`` whose program is this checkout's stack program; ``root``."""
    return write_project(root, "gitops-infra", main=STACKS, virtualenv=virtualenv)


DRAIN_FIXTURE = REPO_ROOT / "tests" / "cluster" / "drain_fixture" / "__main__.py"


def drain_project(
    tmp: Path,
    stack: str,
    *,
    path: Sequence[Path],
    kubeconfig: str,
    private_key: str,
    settings: Mapping[str, str],
) -> tuple[Path, dict[str, str]]:
    """The drain tests' program (a stack that owns its cluster) as a committed project in ``tmp``, with
    ``stack`` created and configured: the cluster's ``kubeconfig`` and the deploy key's ``private_key`` as
    secrets, and ``settings`` (``log``, ``url``, ``knownHosts``, ``path``, ``namespace``, ...) as they
    are. Its root and the engine environment (``path`` first on ``PATH``)."""
    from pulumi import automation as auto

    root = init_repo(write_project(tmp / "project", "drain", virtualenv=sys.prefix), "drain tests")
    shutil.copy(DRAIN_FIXTURE, root / "__main__.py")
    (root / ".gitignore").write_text("__pycache__/\n")
    env = engine_env(tmp, path=path)
    created = auto.Stack.create(stack, workspace(root, env))
    created.set_all_config({key: auto.ConfigValue(value) for key, value in settings.items()})
    # The secrets on the engine's stdin, as the demo sets its own: a command line is in `ps` for all to see.
    secrets = {"drain:kubeconfig": kubeconfig, "drain:deployKey": private_key}
    set_secrets(root, stack, secrets, env=env, engine=(find_engine() or unavailable(NO_ENGINE)).pulumi)
    commit_all(root, "a program that makes its cluster")
    return root, env


def fixture_project(root: Path, *, prelude: str = "") -> Path:
    """The engine tier's fixture program (files managed by a dynamic provider) as a project in ``root``,
    run on this interpreter, which has pulumi; ``prelude`` goes before the program. Returns ``root``."""
    write_project(root, "fixture", virtualenv=sys.prefix)
    (root / "__main__.py").write_text(prelude + FIXTURE_PROGRAM.read_text())
    (root / ".gitignore").write_text("__pycache__/\n")
    return root


def fake_engine(project: Path) -> Path:
    """A ``pulumi`` where setup would build one in ``project``: found by the automation layer, never run."""
    engine = project / ".tools" / "pulumi" / "bin" / "pulumi"
    engine.parent.mkdir(parents=True, exist_ok=True)
    engine.write_text("#!/bin/sh\n")
    return engine


def without_times(document: Any) -> Any:
    """A ``--json`` document without its ``checked_at`` times: two runs of one check differ only there."""
    if isinstance(document, dict):
        return {key: without_times(value) for key, value in document.items() if key != "checked_at"}
    if isinstance(document, list):
        return [without_times(value) for value in document]
    return document


# -- the secret scan -----------------------------------------------------------------------------------


def _needles(secret: str) -> list[bytes]:
    """The secret as plain UTF-8 and UTF-16, and base64-encoded (the state's JSON, or a Kubernetes
    Secret's data, would carry it so). A multi-line key is also sought by its middle line, which is
    key material (its first lines are a header every key of its kind shares): a message may quote one
    line of it."""
    lines = secret.strip().splitlines()
    forms = [secret, *([lines[len(lines) // 2]] if len(lines) > 2 else [])]
    needles = []
    for form in forms:
        needles += [form.encode(), form.encode("utf-16-le"), base64.b64encode(form.encode())]
    return needles


def files_under(*roots: Path, skip: Iterable[Path] = ()) -> list[Path]:
    """Every file under ``roots``, except those under ``skip``."""
    skipped = [s.resolve() for s in skip]
    found = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            resolved = path.resolve()
            if path.is_file() and not any(resolved.is_relative_to(s) for s in skipped):
                found.append(path)
    return found


def secret_leaks_in_files(paths: Iterable[Path], secrets: Sequence[str]) -> list[str]:
    """``"<path>: <secret>"`` for each file holding one of ``secrets`` in any of its plaintext forms."""
    found = []
    for path in paths:
        data = path.read_bytes()
        found += [f"{path}: {s}" for s in secrets if any(needle in data for needle in _needles(s))]
    return found


def secret_leaks_in_texts(texts: Mapping[str, str], secrets: Sequence[str]) -> list[str]:
    """``"<what>: <secret>"`` for each text holding one of ``secrets``."""
    found = []
    for what, text in texts.items():
        data = text.encode("utf-8", errors="replace")
        found += [f"{what}: {s}" for s in secrets if any(needle in data for needle in _needles(s))]
    return found
