"""What a local run of a stack needs besides the cluster: the tools ``make setup`` built, a project's
``Pulumi.yaml``, the engine's environment on a throwaway file backend, and git.

Only the standard library: the test tiers and the benchmarks set their projects up with these same
functions, so that the demo and the tests cannot drift apart, and they must not need the ``local``
extra's packages for it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import MissingExtraError

__all__ = [
    "LOCAL_EXTRA",
    "SSHD",
    "Toolchain",
    "commit_all",
    "engine_env",
    "git",
    "init_repo",
    "python_runtime",
    "require_local_extra",
    "set_identity",
    "set_secrets",
    "write_project",
]

CLUSTER_DIR = Path(".tools/cluster")
"""Where ``make setup`` (``tools/cluster/build.sh``) builds the local cluster, relative to the checkout."""
ENGINE_DIR = Path(".tools/pulumi/bin")
"""Where ``make setup`` builds the engine, relative to the checkout (none when one on PATH will do)."""
BINARIES = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "source-controller",
    "kustomize-controller",
    "pulumi-resource-kubernetes",
)
SSHD = Path("/usr/sbin/sshd")
"""Debian's sshd, which serves the fleet repository (setup installs ``openssh-server`` when it is missing)."""
SETUP_HINT = "run `make setup` to build the local cluster"
LOCAL_EXTRA = ("cryptography",)
"""The packages of the ``local`` extra: the cluster's PKI and deploy key (the Kubernetes client is core)."""


def require_local_extra() -> None:
    """Raise :class:`MissingExtraError` unless the ``local`` extra's packages are installed.

    It only looks for them: the Kubernetes client is slow to import, and is imported where it is used.
    """
    missing = [name for name in LOCAL_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"gitops_infra.local needs {' and '.join(missing)}, from the `local` extra: "
            "pip install 'gitops-infra[local]'",
            extra="local",
        )


@dataclass(frozen=True)
class Toolchain:
    """Where the local cluster's binaries and Flux's CRDs are, and where setup puts the engine.

    ``make setup`` builds them into the checkout, so they are found from a project directory
    (:meth:`of`, :meth:`find`) rather than from where this package is installed.
    """

    bin_dir: Path
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, Flux's six controllers, and the
    Kubernetes provider."""
    crd_dir: Path
    """Flux's CRDs, as the controllers' modules ship them."""
    kwok_stages: Path
    """kwok's node and pod stages, as its module ships them (its binary has none)."""
    engine_dir: Path
    """Where setup builds ``pulumi`` and its language host (nothing there when the one on PATH will do)."""

    @classmethod
    def of(cls, project_dir: Path) -> Toolchain:
        """The tools ``make setup`` built in the checkout ``project_dir``."""
        root = project_dir.resolve()
        return cls(
            bin_dir=root / CLUSTER_DIR / "bin",
            crd_dir=root / CLUSTER_DIR / "crds",
            kwok_stages=root / CLUSTER_DIR / "kwok-stages.yaml",
            engine_dir=root / ENGINE_DIR,
        )

    @classmethod
    def find(cls, start: Path | None = None) -> Toolchain:
        """The tools in the nearest directory at or above ``start`` (the current one) that has them built;
        else those of ``start``, whose missing binaries then fail with how to build them."""
        start = (start or Path.cwd()).resolve()
        for directory in (start, *start.parents):
            if (directory / CLUSTER_DIR / "bin").is_dir():
                return cls.of(directory)
        return cls.of(start)

    @property
    def engine(self) -> Path | None:
        """The ``pulumi`` setup built, or ``None`` when there is none (then the one on PATH is used)."""
        built = self.engine_dir / "pulumi"
        return built if built.is_file() else None

    @property
    def path(self) -> list[Path]:
        """The directories to put first on ``PATH``: the engine finds the Kubernetes provider there, and
        the language host beside the engine."""
        return [self.bin_dir, self.engine_dir]

    def missing(self) -> list[str]:
        """What the local cluster needs that is not there: binaries, the CRDs, kwok's stages, sshd."""
        absent = [str(self.bin_dir / name) for name in BINARIES if not (self.bin_dir / name).is_file()]
        if not any(self.crd_dir.glob("*.yaml")):
            absent.append(f"{self.crd_dir}/*.yaml")
        if not self.kwok_stages.is_file():
            absent.append(str(self.kwok_stages))
        if not SSHD.is_file():
            absent.append(str(SSHD))
        return absent

    def binary(self, name: str) -> str:
        """The path of the binary ``name``; ``FileNotFoundError`` saying how to build it when missing."""
        path = self.bin_dir / name
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: {SETUP_HINT}")
        return str(path)


def engine_env(
    backend: Path,
    passphrase: str,
    *,
    home: Path | None = None,
    path: Sequence[Path] = (),
) -> dict[str, str]:
    """The environment of an engine run that needs no account and no network.

    A local file backend at ``backend`` (made if missing) and passphrase secrets. Plugins are never
    downloaded: the language host reports every provider package installed beside the program, so the
    engine would try to fetch their plugins, and no plugin host can be reached from a laptop offline or a
    CI sandbox; the provider binaries it needs are found on ``PATH``. ``home`` becomes ``PULUMI_HOME``
    when given, so that a throwaway run leaves the user's own ``~/.pulumi`` alone. ``path`` goes first on
    ``PATH`` when given; otherwise the result sets no ``PATH`` and the caller's stays.
    """
    backend.mkdir(parents=True, exist_ok=True)
    env = {
        "PULUMI_BACKEND_URL": backend.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": passphrase,
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }
    if home is not None:
        env["PULUMI_HOME"] = str(home)
    if path:
        env["PATH"] = os.pathsep.join([*(str(directory) for directory in path), os.environ.get("PATH", "")])
    return env


def set_secrets(
    project: Path,
    stack: str,
    secrets: Mapping[str, str],
    *,
    env: Mapping[str, str],
    engine: Path | None = None,
) -> None:
    """Set each of ``secrets`` (``<namespace>:<path>``: value) in ``stack``'s config as a secret, its value
    handed to the engine on stdin, never on its command line.

    ``pulumi.automation`` (3.272) passes a config value as an argument of ``pulumi config set-all
    --secret key=value`` or ``pulumi config set key --secret -- value``, which ``ps`` shows every user of
    the machine while it runs, and its command runner has no stdin to give. ``pulumi config set KEY`` reads
    the value from stdin when stdin is not a terminal, and ``--raw`` keeps it whole (a PEM key's last
    newline). ``engine`` is the ``pulumi`` to run (default: the one on ``PATH``); ``env`` adds to this
    process's environment for it, as a workspace's ``env_vars`` do (the backend and the passphrase).
    ``RuntimeError`` with the engine's message, which holds the key and never the value, when one is
    refused.
    """
    command = [str(engine or "pulumi"), "config", "set", "--secret", "--raw", "--path", "--non-interactive"]
    for key, value in secrets.items():
        done = subprocess.run(
            [*command, "--stack", stack, "--", key],
            input=value,
            text=True,
            capture_output=True,
            cwd=project,
            env={**os.environ, **env},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pulumi config set --secret {key} failed: {done.stderr.strip()}")


def python_runtime(virtualenv: Path | str | None = None) -> str:
    """The ``runtime:`` block of a Python project or policy pack, on ``virtualenv`` when given.

    ``virtualenv`` points the language host at an interpreter that has pulumi and gitops-infra (usually
    ``sys.prefix``); without it the host runs ``PULUMI_PYTHON_CMD``, or ``python3`` from ``PATH``.
    """
    options = f"  options:\n    virtualenv: {virtualenv}\n" if virtualenv is not None else ""
    return f"runtime:\n  name: python\n{options}"


def write_project(
    root: Path, name: str, *, main: Path | None = None, virtualenv: Path | str | None = None
) -> Path:
    """Write ``root/Pulumi.yaml`` for a Python program named ``name`` (``root`` made if missing).

    ``main`` is the program's directory when it is not ``root`` (a copy of a stack runs the checkout's
    ``stacks/``); ``virtualenv`` is as in :func:`python_runtime`. Returns ``root``.
    """
    root.mkdir(parents=True, exist_ok=True)
    where = f"main: {main}\n" if main is not None else ""
    (root / "Pulumi.yaml").write_text(f"name: {name}\n{python_runtime(virtualenv)}{where}")
    return root


def git(repo: Path, *args: str) -> str:
    """``git -C repo args``, failing loudly; its stripped stdout."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Commit everything in the work tree of ``repo``; the new commit's sha."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def set_identity(repo: Path, who: str) -> None:
    """Commit as ``who`` in ``repo``, whatever the machine's git config holds (a CI runner has none)."""
    git(repo, "config", "user.email", f"{who.replace(' ', '-')}@example.invalid")
    git(repo, "config", "user.name", who)


def init_repo(root: Path, who: str) -> Path:
    """A new git repository at ``root`` (made if missing) on branch ``main``, committing as ``who``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    set_identity(root, who)
    return root
