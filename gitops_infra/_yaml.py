"""YAML from outside (stack files, a ConfigMap an app team checks), read within limits: one guarded loader.

Such text comes from pull requests and from people, so a reader must survive anything in it, and say
what is wrong without quoting it (it may hold ciphertext or worse):

- it is not UTF-8, or not YAML;
- it nests deeper than ``MAX_DEPTH`` (3,000 ``[`` would otherwise end in a ``RecursionError``);
- its aliases expand to more than ``MAX_NODES`` values (a "billion laughs" file is a few hundred bytes
  and would otherwise take minutes and gigabytes to walk);
- a mapping repeats a key, which Pulumi's and Kubernetes' own readers refuse instead of letting the last
  copy win.

It imports no Pulumi: the contract check, which app teams run without any SDK, reads through it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["MAX_DEPTH", "MAX_NODES", "YamlRefused", "load_documents", "yaml_problem"]

MAX_DEPTH = 64
"""How deeply values may nest; the stack config nests five levels at most, a ConfigMap three."""
MAX_NODES = 100_000
"""How many values a document may hold once its aliases are expanded."""


class YamlRefused(ValueError):
    """The text is not YAML this reader takes; ``str()`` says why, never quoting it."""


# libyaml's parser when PyYAML was built with it (the wheels are): a fleet of 500 stack files is read in a
# fraction of the pure-Python parser's time. The constructor, and so every rule below, is the same.
if TYPE_CHECKING or not yaml.__with_libyaml__:  # noqa: SIM108  # mypy takes a class only from a statement
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = yaml.CSafeLoader


class _Loader(_SafeLoader):
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


def yaml_problem(exc: Exception) -> str:
    """Why a YAML file cannot be read, saying where but never quoting its content."""
    if isinstance(exc, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {exc.start})"
    if isinstance(exc, RecursionError):
        return f"nests values more than {MAX_DEPTH} levels deep"
    if isinstance(exc, yaml.MarkedYAMLError) and "maximum nesting depth" in str(exc.problem):
        return f"nests values more than {MAX_DEPTH} levels deep"  # libyaml's own limit, deeper than ours
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"is not valid YAML: {exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    if isinstance(exc, yaml.reader.ReaderError):
        return f"is not valid YAML: {exc.reason} (character {exc.position})"
    if isinstance(exc, OSError):
        return f"cannot be read: {exc.strerror or type(exc).__name__}"
    return "is not valid YAML"


def load_documents(text: str) -> list[Any]:
    """Every document in ``text``, ``None`` for an empty one; ``YamlRefused`` past the limits above."""
    documents: list[Any] = []
    try:
        loader = _Loader(text)  # reads the first characters already, and may refuse them
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    break
                size, depth = _size_and_depth(node)
                if depth > MAX_DEPTH:
                    raise YamlRefused(f"nests values more than {MAX_DEPTH} levels deep")
                if size > MAX_NODES:
                    raise YamlRefused(f"expands to more than {MAX_NODES} values through its aliases")
                documents.append(loader.construct_document(node))
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError) as exc:
        raise YamlRefused(yaml_problem(exc)) from None
    return documents
