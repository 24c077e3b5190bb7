"""StackTarget defaults: where the project, the engine, the backend and the secrets come from.

The defaults work with no account and no login:

- **Project**: ``work_dir``, or the nearest directory at or above the current one that holds a
  ``Pulumi.yaml``; its settings are read once, into :class:`Project`, and passed on from there.
- **Engine**: ``<project>/.tools/pulumi/bin/pulumi`` when setup built one there, otherwise ``pulumi``
  on ``PATH``.
- **Backend**: as Pulumi chooses it (:mod:`.backend`): ``PULUMI_BACKEND_URL`` when set, otherwise the
  project's own ``backend.url`` in ``Pulumi.yaml``, otherwise the backend ``pulumi login`` stored, and
  only with none of them a local file backend at ``<project>/.pulumi-state`` (an absolute path,
  git-ignored).
- **Python**: programs and policy packs whose settings name no virtualenv run on this interpreter
  (``PULUMI_PYTHON_CMD``).
- **Secrets**: the passphrase provider unless ``Pulumi.<stack>.yaml`` names another
  (``secretsprovider:``); then ``PULUMI_CONFIG_PASSPHRASE`` or ``PULUMI_CONFIG_PASSPHRASE_FILE`` must be
  set, which is checked before anything runs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from ...errors import EngineNotFoundError, WorkspaceError
from ...redaction import SECRET, masked_values, safe_url
from .._engine.compat import run_pulumi_cmd
from ..options import EventCallback, StackOptions
from ..stack_name import StackName, parse_stack_name
from .backend import BACKEND_VAR, DEFAULT_STATE_DIR, Backend, choose_backend
from .file_backend import FileBackendStack
from .project import Project, current_directory, find_project_dir
from .stack_files import read_mapping

__all__ = [
    "DEFAULT_STATE_DIR",
    "ENGINE_BIN_DIR",
    "Project",
    "StackTarget",
    "current_directory",
    "find_project_dir",
]

ENGINE_BIN_DIR = Path(".tools/pulumi/bin")
"""Where ``make setup`` puts the engine it builds, relative to the project."""

PASSPHRASE_VARS = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE")
FALLBACK_VAR = "PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER"
INSTALL_HINT = (
    "run `make setup` in a gitops-infra checkout to build the pinned engine, "
    "or install Pulumi the official way: https://www.pulumi.com/docs/install/"
)


# One PulumiCommand per engine binary, made once per process: making one runs `pulumi version`, a
# subprocess that would otherwise come with every operation (bench/ measures it).
# `PulumiCommand(skip_version_check=True)` does not avoid it: it skips only the comparison, and still
# runs `pulumi version` in its constructor (pulumi/automation/_cmd.py, 3.261 to 3.272). Keyed on the
# binary's path, size and mtime, so a rebuilt or replaced engine is checked again.
_COMMANDS: dict[tuple[Path, int, int], auto.PulumiCommand] = {}


def _pulumi_command(engine: Path) -> auto.PulumiCommand:
    stat = engine.stat()
    key = (engine, stat.st_size, stat.st_mtime_ns)
    command = _COMMANDS.get(key)
    if command is None:
        # PulumiCommand finds the CLI at <root>/bin/pulumi and puts that directory first on the engine's
        # PATH, which is how the language host and the dynamic-provider plugin beside it are found.
        command = (
            auto.PulumiCommand(root=str(engine.parent.parent))
            if engine.parent.name == "bin"
            else auto.PulumiCommand()
        )
        _COMMANDS[key] = command
    return command


class _LocalWorkspace(auto.LocalWorkspace):
    """``LocalWorkspace`` minus engine calls whose results our operations never use.

    - With ``select=False``, selecting a stack runs nothing: every stack command names the stack with
      ``--stack`` and fails on a missing one with the same ``StackNotFoundError`` that
      ``pulumi stack select`` would raise, so that extra engine call only persisted the selection, at a
      cost that is a sizeable share of the smallest operation (bench/ measures it).
    - Stack outputs come from one masked ``pulumi stack output --json``: our results mask every secret
      output, so the second, decrypting call the base class makes only produced plaintext to discard.
    """

    def __init__(self, *, select: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._select = select

    def select_stack(self, stack_name: str) -> None:
        if self._select:
            super().select_stack(stack_name)

    def stack_outputs(self, stack_name: str) -> auto.OutputMap:
        result = run_pulumi_cmd(self, ["stack", "output", "--json", "--stack", stack_name])
        masked: dict[str, Any] = json.loads(result.stdout)
        return {key: auto.OutputValue(value=v, secret=v == SECRET) for key, v in masked.items()}


def _find_engine(project: Path) -> Path:
    """The engine ``make setup`` built in ``project``, else ``pulumi`` on ``PATH``."""
    built = project / ENGINE_BIN_DIR / "pulumi"
    if built.is_file():
        return built
    if ambient := shutil.which("pulumi"):
        return Path(ambient)
    raise EngineNotFoundError(f"no Pulumi CLI found in {project / ENGINE_BIN_DIR} or on PATH; {INSTALL_HINT}")


def _secrets_provider(project: Project, stack: StackName) -> str:
    settings = project.stack_settings(stack)
    if settings is None:
        return "passphrase"
    provider = read_mapping(settings, stack=str(stack)).get("secretsprovider")
    return str(provider) if provider else "passphrase"


@dataclass(frozen=True)
class StackTarget:
    """The resolved defaults for one stack: project, engine, backend and environment."""

    stack: str
    stack_name: StackName
    project: Project
    engine: Path
    backend: Backend
    """The backend's URL, and where it came from (an error about a missing stack names it)."""
    env: Mapping[str, str]
    on_event: EventCallback | None
    lock_wait: float

    @classmethod
    def resolve(cls, stack: str, options: StackOptions | None = None) -> StackTarget:
        """Resolve ``options`` for ``stack``; raise before touching anything if a default cannot hold."""
        options = options or StackOptions()
        # The name first: an empty one must never reach an engine command as "the selected stack".
        parse_stack_name(stack)
        project = Project.find(options.work_dir)
        stack_name = project.checked_stack_name(stack)
        # The user's files before the machine's tools: a malformed stack file is the error to report.
        secrets_provider = _secrets_provider(project, stack_name)
        env = {**options.env}
        backend = choose_backend(project, env, options.backend_url)
        engine = _find_engine(project.path)
        if secrets_provider == "passphrase" and not any(
            env.get(name) is not None or os.environ.get(name) is not None for name in PASSPHRASE_VARS
        ):
            raise WorkspaceError(
                f"PULUMI_CONFIG_PASSPHRASE is not set: stack {stack!r} uses the passphrase secrets "
                "provider, so set it (or PULUMI_CONFIG_PASSPHRASE_FILE)",
                stack=stack,
            )
        # The engine must not stop to ask the update service for a newer version in CI.
        env.setdefault("PULUMI_SKIP_UPDATE_CHECK", "true")
        # Programs and policy packs that name no virtualenv run on this interpreter, which has
        # gitops-infra and the Pulumi SDKs installed, rather than on whatever `python3` PATH offers.
        env.setdefault("PULUMI_PYTHON_CMD", sys.executable)
        # With the secrets provider's salt missing from the stack's file, the engine makes up a new one,
        # which cannot decrypt the file's `secure:` values, and writes it into the file; this makes it take
        # the salt the state holds instead (Pulumi's own advice: pulumi/pulumi#16412, `env.go` v3.274.1).
        if FALLBACK_VAR not in os.environ:
            env.setdefault(FALLBACK_VAR, "true")
        env[BACKEND_VAR] = backend.url
        return cls(
            stack=stack,
            stack_name=stack_name,
            project=project,
            engine=engine,
            backend=backend,
            env=env,
            on_event=options.on_event,
            lock_wait=options.lock_wait,
        )

    @property
    def backend_url(self) -> str:
        """The URL of the stack's backend (exported to the engine as ``PULUMI_BACKEND_URL``)."""
        return self.backend.url

    def running(self, project: Project) -> StackTarget:
        """The same engine, backend and stack, running ``project`` (a commit's checkout of this one)."""
        return replace(self, project=project)

    def __repr__(self) -> str:
        return (
            f"StackTarget(stack={self.stack!r}, project={str(self.project.path)!r}, "
            f"engine={str(self.engine)!r}, backend_url={safe_url(self.backend_url)!r}, "
            f"env={masked_values(self.env)!r}, lock_wait={self.lock_wait!r})"
        )

    def file_backend(self) -> FileBackendStack | None:
        """The stack's lock and checkpoint files, or ``None`` when the backend is not a local file one."""
        name = self.stack_name
        project = name.project or self.project.name
        return FileBackendStack.of(self.backend_url, org=name.org, project=project, name=name.name)

    def local_workspace(self, *, select: bool = True, temp_dir: Path | None = None) -> auto.LocalWorkspace:
        """A ``pulumi.automation`` workspace on this project, engine and backend.

        ``select=False`` skips ``pulumi stack select`` (see :class:`_LocalWorkspace`); creating a stack
        needs it, since a missing stack is found that way. ``temp_dir`` becomes the engine's ``TMPDIR``.
        """
        env = dict(self.env)
        if temp_dir is not None:
            env["TMPDIR"] = str(temp_dir)
        return _LocalWorkspace(
            select=select,
            work_dir=str(self.project.path),
            pulumi_command=_pulumi_command(self.engine),
            env_vars=env,
        )
