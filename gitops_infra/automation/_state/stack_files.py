"""Reading ``Pulumi.yaml`` and ``Pulumi.<stack>.yaml``: one guarded loader for every reader.

These files come from pull requests and from people, so a reader must survive anything in them. Every
failure is a ``ConfigError`` naming the file and the problem, without quoting the file (it may hold
ciphertext or worse), and never a traceback: the file cannot be read, is larger than
``MAX_FILE_BYTES``, holds more than one document, or breaks one of the limits of the guarded loader
(:mod:`gitops_infra._yaml`: UTF-8 YAML, ``MAX_DEPTH``, ``MAX_NODES``, no repeated key, no value its tag
cannot be).

They are read as the engine reads them: YAML 1.2 by gopkg.in/yaml.v3's rules (``public: no`` is the text
"no"), whatever the file's extension (JSON is YAML 1.2 too).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._files import FileRefused, read_regular_file
from ..._yaml import MAX_DEPTH, MAX_NODES, YamlRefused, load_documents, yaml_problem
from ...errors import ConfigError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "PROJECT_FILE",
    "SETTINGS_EXTENSIONS",
    "find_settings",
    "load_yaml_file",
    "read_mapping",
]

MAX_FILE_BYTES = 1024 * 1024
"""Stack files are config: a megabyte is far beyond any real one."""
PROJECT_FILE = "Pulumi"
"""The project settings' base name: ``Pulumi.yaml`` (or ``.yml``, ``.json``)."""
SETTINGS_EXTENSIONS = (".json", ".yaml", ".yml")
"""The extensions Pulumi accepts for settings files, in the order the engine tries them for the project
file (``encoding.Exts`` in pulumi's sdk/go/common/encoding, read by ``findProjectInDir``): a
``Pulumi.json`` beside a ``Pulumi.yaml`` is the project."""


def find_settings(directory: Path, base: str) -> Path | None:
    """``<base>.json``, ``.yaml`` or ``.yml`` in ``directory``, whichever exists first, else ``None``.

    JSON is YAML, so one loader reads all three.
    """
    for extension in SETTINGS_EXTENSIONS:
        path = directory / f"{base}{extension}"
        if path.is_file():
            return path
    return None


def load_yaml_file(path: Path, *, stack: str | None = None, shown_as: str | None = None) -> Any:
    """The data in the YAML file at ``path`` (``None`` for an empty file), within the limits above.

    Raises ``ConfigError`` with one problem, ``"<file name>: <what is wrong>"`` (``shown_as`` replaces
    the file's name there); ``stack`` is carried on it.
    """

    def refuse(problem: str) -> ConfigError:
        return ConfigError([f"{shown_as or path.name}: {problem}"], stack=stack)

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise refuse(f"is {size} bytes; a stack file may have {MAX_FILE_BYTES} at most")
        # A FIFO (or a link to a device, which git keeps) in a pull request must not hang the fleet.
        documents = load_documents(read_regular_file(path, MAX_FILE_BYTES).decode("utf-8"), schema="pulumi")
    except FileRefused as exc:
        raise refuse(f"cannot be read: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise refuse(yaml_problem(exc)) from None
    except YamlRefused as exc:
        raise refuse(str(exc)) from None
    if len(documents) > 1:
        raise refuse("holds more than one YAML document")
    return documents[0] if documents else None


def read_mapping(path: Path, *, stack: str | None = None, shown_as: str | None = None) -> Mapping[str, Any]:
    """``load_yaml_file``, for a file whose top level must be a mapping (or empty)."""
    loaded = load_yaml_file(path, stack=stack, shown_as=shown_as)
    if loaded is None:
        return {}
    if not isinstance(loaded, Mapping):
        raise ConfigError([f"{shown_as or path.name}: must be a mapping of keys to values"], stack=stack)
    return loaded
