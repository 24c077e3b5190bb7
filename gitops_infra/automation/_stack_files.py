"""Reading ``Pulumi.yaml`` and ``Pulumi.<stack>.yaml``: one guarded loader for every reader.

These files come from pull requests and from people, so a reader must survive anything in them. Every
failure is a ``ConfigError`` naming the file and the problem, without quoting the file (it may hold
ciphertext or worse), and never a traceback:

- the file cannot be read, is not UTF-8, or is not YAML;
- it is larger than ``MAX_FILE_BYTES``;
- it nests deeper than ``MAX_DEPTH`` (3,000 ``[`` would otherwise end in a ``RecursionError``);
- its aliases expand to more than ``MAX_NODES`` values (a "billion laughs" file is a few hundred bytes
  and would otherwise take minutes and gigabytes to walk);
- a mapping repeats a key, which Pulumi's own reader refuses instead of letting the last copy win.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from ..errors import ConfigError

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
MAX_DEPTH = 64
"""How deeply values may nest; the stack config nests five levels at most."""
MAX_NODES = 100_000
"""How many values a file may hold once its aliases are expanded."""
PROJECT_FILE = "Pulumi"
"""The project settings' base name: ``Pulumi.yaml`` (or ``.yml``, ``.json``)."""
SETTINGS_EXTENSIONS = (".yaml", ".yml", ".json")
"""The extensions Pulumi accepts for settings files, in the order ``LocalWorkspace`` tries them."""


def find_settings(directory: Path, base: str) -> Path | None:
    """``<base>.yaml``, ``.yml`` or ``.json`` in ``directory``, whichever exists first, else ``None``.

    JSON is YAML, so one loader reads all three.
    """
    for extension in SETTINGS_EXTENSIONS:
        path = directory / f"{base}{extension}"
        if path.is_file():
            return path
    return None


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` that refuses a repeated mapping key, as the engine's reader does."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: SafeLoader reports it below
                repeated = False
            if repeated:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping repeats the key {key!r}", mark
                )
        return super().construct_mapping(node, deep=deep)


def _size_and_depth(root: Node) -> tuple[int, int]:
    """How many values ``root`` expands to, and how deeply it nests, without expanding it.

    An alias is the same node object as its anchor, so sizes are memoised by identity: the walk costs
    one visit per distinct node however often the aliases repeat it. A node that is its own ancestor
    (a recursive alias) counts as infinitely large.
    """
    sizes: dict[int, tuple[int, int]] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            child_sizes = [sizes[id(child)] for child in children]
            size = 1 + sum(size for size, _ in child_sizes)
            depth = 1 + max((depth for _, depth in child_sizes), default=0)
            sizes[key] = (min(size, MAX_NODES + 1), depth)
            continue
        if key in sizes:
            continue
        if key in on_path:
            return MAX_NODES + 1, MAX_DEPTH + 1
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
        if len(on_path) > MAX_DEPTH:
            return 0, MAX_DEPTH + 1
    return sizes[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _problem(exc: Exception) -> str:
    """Why a YAML file cannot be read, saying where but never quoting its content."""
    if isinstance(exc, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {exc.start})"
    if isinstance(exc, RecursionError):
        return f"nests values more than {MAX_DEPTH} levels deep"
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"is not valid YAML: {exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    if isinstance(exc, yaml.reader.ReaderError):
        return f"is not valid YAML: {exc.reason} (character {exc.position})"
    if isinstance(exc, OSError):
        return f"cannot be read: {exc.strerror or type(exc).__name__}"
    return "is not valid YAML"


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
        text = path.read_bytes().decode("utf-8")
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            size, depth = _size_and_depth(node)
            if depth > MAX_DEPTH:
                raise refuse(f"nests values more than {MAX_DEPTH} levels deep")
            if size > MAX_NODES:
                raise refuse(f"expands to more than {MAX_NODES} values through its aliases")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise refuse(_problem(exc)) from None


def read_mapping(path: Path, *, stack: str | None = None, shown_as: str | None = None) -> Mapping[str, Any]:
    """``load_yaml_file``, for a file whose top level must be a mapping (or empty)."""
    loaded = load_yaml_file(path, stack=stack, shown_as=shown_as)
    if loaded is None:
        return {}
    if not isinstance(loaded, Mapping):
        raise ConfigError([f"{shown_as or path.name}: must be a mapping of keys to values"], stack=stack)
    return loaded
