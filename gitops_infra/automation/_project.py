"""The Pulumi project on disk: where it is and what its ``Pulumi.yaml`` says, read without the engine.

No Pulumi import here: ``fleet list`` and ``fleet matrix`` read hundreds of projects' files and never run
the engine, so they must not pay for loading it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, StackNameError, WorkspaceError
from ._stack_files import PROJECT_FILE, find_settings, read_mapping
from ._stack_name import StackName, parse_stack_name

__all__ = ["Project", "current_directory", "find_project_dir"]


def current_directory() -> Path:
    """The working directory, or a clear error when it was deleted from under this process."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise WorkspaceError(
            "the current directory no longer exists; cd into the project, or pass --cwd (work_dir)"
        ) from None


def find_project_dir(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (the current one by default) holding a ``Pulumi.yaml``.

    Its settings are not read: :meth:`Project.find` reads them.
    """
    start = (start or current_directory()).resolve()
    for directory in (start, *start.parents):
        if find_settings(directory, PROJECT_FILE) is not None:
            return directory
    raise WorkspaceError(f"no Pulumi.yaml in {start} or any directory above it (pass --cwd, or work_dir)")


@dataclass(frozen=True)
class Project:
    """A Pulumi project: its directory and its settings (``Pulumi.yaml``), read once.

    Every reader of the project's settings (its name, its program, its runtime) reads them from here.
    """

    path: Path
    settings_file: Path
    """``Pulumi.yaml`` (or ``.yml``, ``.json``)."""
    settings: Mapping[str, Any]

    @classmethod
    def load(cls, path: Path, *, shown_as: str | None = None) -> Project:
        """The project whose settings are in ``path``, read through the guarded loader.

        ``shown_as`` names the settings file in an error (a commit's copy, say).
        """
        settings_file = find_settings(path, PROJECT_FILE) or path / f"{PROJECT_FILE}.yaml"
        settings = read_mapping(settings_file, shown_as=shown_as)
        return cls(path=path, settings_file=settings_file, settings=settings)

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The nearest project at or above ``start`` (the current directory by default)."""
        return cls.load(find_project_dir(start))

    @property
    def name(self) -> str:
        """The ``name:`` in the settings; ``ConfigError`` when there is none (the engine needs one)."""
        name = self.settings.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError([f"{self.settings_file.name}.name: required (the project's name)"])
        return name

    def stack_settings(self, stack: StackName) -> Path | None:
        """``Pulumi.<stack>.yaml`` (or ``.yml``, ``.json``) in the project, or ``None``."""
        return find_settings(self.path, stack.settings_base)

    def checked_stack_name(self, stack: str) -> StackName:
        """``stack`` parsed; refused if it names another project's stack (this program would run on it)."""
        name = parse_stack_name(stack)
        if name.project is not None and name.project != self.name:
            raise StackNameError(
                f"stack {stack!r} belongs to project {name.project!r}, but {self.path} is project "
                f"{self.name!r}",
                stack=stack,
            )
        return name
