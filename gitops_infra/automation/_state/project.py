"""The Pulumi project on disk: where it is, what its ``Pulumi.yaml`` says, and each stack's settings,
read without the engine but exactly where and how the engine reads them.

A stack's settings are read in one place, :meth:`Project.read_stack_settings`, by every reader that
decides something with them: destroy's prod guard, rollback's and promote's "the commit predates the
stack file", the secrets provider check, and the fleet's inventory. They follow pulumi v3.274's
``sdk/go/common/workspace`` (cited where each rule is applied):

- the project file is the first of ``Pulumi.json``, ``Pulumi.yaml``, ``Pulumi.yml`` (``findProjectInDir``);
- the stack's file is ``<stackConfigDir>/Pulumi.<stack><the project file's extension>``
  (``ProjectStackPath``), ``stackConfigDir`` also spelled as a text ``config:`` (the form before it);
- its config keys are the project's when bare (``stackConfigNamespacedWithProject``), ``<ns>:<name>`` or
  ``<ns>:config:<name>`` (``config.ParseKey``), and the project's ``config:`` fills in the keys the stack
  does not set, in its long form (``value``/``default``) and its short form (``proj:key: value``;
  ``RewriteShorthandConfigValues``, then ``mergeConfig`` in pkg/workspace/config.go).

What cannot be told from the files is said so (an ESC environment the stack imports may set any key; a
key spelled twice in the stack file is one of the two, as Go's map order falls), for each guard to refuse.

No Pulumi import here: ``fleet list`` and ``fleet matrix`` read hundreds of projects' files and never run
the engine, so they must not pay for loading it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError, StackNameError, WorkspaceError
from ..stack_name import StackName, parse_stack_name
from .stack_files import PROJECT_FILE, find_settings, read_mapping

__all__ = [
    "DEPLOYMENT_SUFFIX",
    "STACK_KEYS",
    "Project",
    "Setting",
    "StackSettings",
    "current_directory",
    "find_project_dir",
]

DEPLOYMENT_SUFFIX = ".deploy"
"""``Pulumi.<stack>.deploy.yaml`` beside the stack files holds Pulumi Deployments' settings of ``<stack>``
(``DetectProjectStackDeploymentPath``, ``DeploymentSuffix`` in pulumi's sdk/go/common/workspace up to
v3.2xx): Pulumi reads it as that, though a stack named ``<stack>.deploy`` would have the same file name."""
STACK_KEYS = ("config", "secretsprovider", "encryptionsalt", "encryptedkey", "environment")
"""The top-level keys of a stack's settings file (``ProjectStack`` in project.go)."""


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

    @property
    def stack_config_dir(self) -> Path:
        """Where the engine keeps the stack files: ``stackConfigDir`` (or a text ``config:``, its old
        spelling, moved there by ``RewriteConfigPathIntoStackConfigDir``) under the project, else the
        project itself. ``ConfigError`` when the project file spells it in a way the engine refuses."""
        where = self.settings_file.name
        directory, legacy = self.settings.get("stackConfigDir"), self.settings.get("config")
        if directory is not None and not isinstance(directory, str):
            raise ConfigError([f"{where}.stackConfigDir: must be a directory's path (text)"])
        if isinstance(legacy, str):
            if directory is not None:
                raise ConfigError(
                    [
                        f"{where}: config names the stack files' directory, and so does stackConfigDir: "
                        "keep stackConfigDir only (Pulumi refuses both)"
                    ]
                )
            directory = legacy
        # filepath.Join(filepath.Dir(projPath), proj.StackConfigDir, fileName): Go joins and cleans, so
        # an absolute stackConfigDir is under the project too, and ".." is resolved on the text.
        return Path(posixpath.normpath(f"{self.path}/{directory or '.'}"))

    def stack_settings_path(self, stack: StackName) -> Path:
        """``<stackConfigDir>/Pulumi.<stack><ext>``, ``<ext>`` the project file's own (``ProjectStackPath``
        in pulumi's sdk/go/common/workspace/paths.go): where the engine reads the stack's settings,
        whether or not the file is there. A ``Pulumi.<stack>.yaml`` beside a ``Pulumi.yml`` is not read."""
        return self.stack_config_dir / f"{stack.settings_base}{self.settings_file.suffix}"

    def stack_settings(self, stack: StackName) -> Path | None:
        """The stack's settings file where the engine reads it (:meth:`stack_settings_path`), or ``None``
        when there is none there."""
        path = self.stack_settings_path(stack)
        return path if path.is_file() else None

    def stack_files(self) -> dict[str, Path]:
        """Every ``Pulumi.<name><ext>`` where the engine reads stack files, by ``<name>``: the stacks' files,
        and Pulumi Deployments' settings (``<stack>.deploy``: ``DEPLOYMENT_SUFFIX``), for the caller to
        tell apart by what they hold."""
        directory, extension = self.stack_config_dir, self.settings_file.suffix
        if not directory.is_dir():
            return {}
        prefix = f"{PROJECT_FILE}."
        return {
            name: path
            for path in sorted(directory.iterdir())
            if path.name.startswith(prefix)
            and path.name.endswith(extension)
            and (name := path.name[len(prefix) : -len(extension)])
            and path.is_file()
        }

    def read_stack_settings(self, stack: StackName, *, shown_as: str | None = None) -> StackSettings:
        """The stack's settings as the engine reads them: the one reader for every guard and the inventory.

        ``ConfigError`` names the file and what the engine would refuse in it (or in ``Pulumi.yaml``'s
        ``config:``). ``shown_as`` names the stack file in errors (a commit's copy, say).
        """
        path = self.stack_settings_path(stack)
        shown = shown_as or path.name
        if path.exists() and not path.is_file():
            raise ConfigError([f"{shown}: is not a file"], stack=str(stack))
        top = read_mapping(path, stack=str(stack), shown_as=shown) if path.exists() else {}
        config: dict[str, list[Setting]] = {}
        for key, value in _mapping(top.get("config"), f"{shown}: config", stack).items():
            full = _config_key(self.name, key, f"{shown}: config")
            spelled = config.setdefault(full, [])
            if all(value != other.value for other in spelled):
                spelled.append(Setting(value, shown))  # a second spelling, with another value: either
        # mergeConfig: the project's keys in sorted order, each for the keys the stack does not set yet.
        project_config = self.settings.get("config")
        declared = {} if isinstance(project_config, str) else project_config
        where = f"{self.settings_file.name}: config"
        for key, declaration in sorted(_mapping(declared, where, stack).items()):
            full = _config_key(self.name, key, where)
            value = _declared_value(declaration, f"{where}.{key}", stack)
            if full not in config and value is not None:
                config[full] = [Setting(value, f"{self.settings_file.name} (the project's {key})")]
        provider = top.get("secretsprovider")
        return StackSettings(
            stack=stack,
            path=path,
            exists=path.is_file(),
            secrets_provider=provider if isinstance(provider, str) and provider else None,
            imports=top.get("environment") not in (None, "", [], {}),
            config={key: tuple(values) for key, values in config.items()},
        )

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


@dataclass(frozen=True)
class Setting:
    """One config value as written (a mapping, text, ``{"secure": ...}`` ciphertext), and where."""

    value: Any
    where: str
    """The stack file's name, or the project file's for one of its defaults."""


@dataclass(frozen=True)
class StackSettings:
    """A stack's settings, as :meth:`Project.read_stack_settings` reads them the engine's way."""

    stack: StackName
    path: Path
    """Where the engine reads them (``ProjectStackPath``), whether or not the file is there."""
    exists: bool
    secrets_provider: str | None
    imports: bool
    """The stack imports ESC environments (``environment:``), whose ``pulumiConfig`` the engine merges into
    the config: any key may then hold what the files do not say."""
    config: Mapping[str, tuple[Setting, ...]] = field(default_factory=dict)
    """Each key (``<namespace>:<name>``) the engine gives the program from the files: the stack's own, else
    the project's default. Two values where the stack file spells one key twice (``env`` and
    ``proj:env``) with different values: Go's map order picks one, so either may be what runs."""

    def values(self, key: str) -> tuple[Setting, ...]:
        """The values the engine may give the program for ``key`` (``<namespace>:<name>``): none when
        the files do not set it, more than one when which one cannot be told (see ``config``)."""
        return self.config.get(key, ())


def _mapping(value: object, where: str, stack: StackName) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError([f"{where}: must be a mapping of keys to values"], stack=str(stack))
    return value


def _config_key(project: str, key: str, where: str) -> str:
    """``key`` as the engine reads it: bare keys are the project's (``parseConfigKey``), and
    ``<ns>:config:<name>`` is ``<ns>:<name>`` (``config.ParseKey``, the form of Pulumi before 1.0)."""
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}"
    if len(parts) == 2 or (len(parts) == 3 and parts[1] == "config"):
        return f"{parts[0]}:{parts[-1]}"
    raise ConfigError([f"{where}: {key[:80]!r} is not a config key; keys are <namespace>:<name>"])


_DECLARATION_KEYS = {"type", "items", "description", "secret", "default", "value"}


def _declared_value(declaration: object, where: str, stack: StackName) -> object:
    """The value a project's ``config:`` entry gives a stack that does not set it, or ``None``.

    The short form (text, a whole number, true/false, a list) is the value itself
    (``RewriteShorthandConfigValues``); the long form's ``default`` is, else its ``value``
    (``mergeConfig``). Anything else fails the engine's schema (project.json), so it is refused here.
    """
    if isinstance(declaration, str | int | list):
        return declaration  # bool is an int
    if isinstance(declaration, Mapping) and set(declaration) <= _DECLARATION_KEYS:
        default = declaration.get("default")  # a null one is none: hasDefault is Default != nil
        return default if default is not None else declaration.get("value")
    raise ConfigError(
        [
            f"{where}: must be a value (text, a whole number, true or false, a list) or a declaration "
            "(type, default, value...), as Pulumi requires"
        ],
        stack=str(stack),
    )
