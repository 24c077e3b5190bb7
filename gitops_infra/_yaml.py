"""YAML from outside (stack files, a ConfigMap an app team checks), read within limits: one guarded loader.

Such text comes from pull requests and from people, so a reader must survive anything in it, and say
what is wrong without quoting it (it may hold ciphertext or worse):

- it is not UTF-8, or not YAML;
- it nests deeper than ``MAX_DEPTH`` (3,000 ``[`` would otherwise end in a ``RecursionError``);
- its aliases expand to more than ``MAX_NODES`` values (a "billion laughs" file is a few hundred bytes
  and would otherwise take minutes and gigabytes to walk);
- a mapping repeats a key, which Pulumi's and Kubernetes' own readers refuse instead of letting the last
  copy win;
- a value its tag cannot be (``!!int abc``, February 30th, an integer of more than 4,300 digits, which
  Python 3.11 refuses to read: CVE-2020-10735): that file's error, at its line, never a traceback.

Pulumi's own files are read as the engine reads them (``schema="pulumi"``: YAML 1.2, gopkg.in/yaml.v3's
rules, :mod:`gitops_infra._go_yaml`); other text (a ConfigMap) as YAML 1.1, as PyYAML reads it.

It imports no Pulumi: the contract check, which app teams run without any SDK, reads through it too.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Literal

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import _go_yaml

__all__ = ["MAX_DEPTH", "MAX_NODES", "Schema", "YamlRefused", "load_documents", "yaml_problem"]

Schema = Literal["yaml1.1", "pulumi"]
"""How scalars are read: YAML 1.1 as PyYAML reads it, or as the Pulumi engine reads its own files."""

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


_TAG = "tag:yaml.org,2002:"
_MERGE = f"{_TAG}merge"


class _Loader(_SafeLoader):
    """``SafeLoader`` that refuses a repeated mapping key, as the engine's reader does, and a scalar its
    tag cannot be, where PyYAML would raise whatever Python raised (``ValueError``, ``KeyError``...)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:  # ``<<: *base``: the merged keys may be overridden
                continue
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

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        if not isinstance(node, ScalarNode):
            return super().construct_object(node, deep=deep)
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, AttributeError, TypeError, OverflowError) as exc:
            raise _refused(_unreadable(node, exc), node) from None


def _unreadable(node: ScalarNode, exc: Exception) -> str:
    """Why PyYAML could not make a value of ``node``, without quoting it."""
    tag = node.tag.removeprefix(_TAG)
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "holds an integer of more than 4,300 digits, more than Python reads (CVE-2020-10735)"
    return (
        f"holds a value tagged !!{tag} that is not one" if tag in _SCALARS else "holds a value it cannot read"
    )


_SCALARS = ("int", "float", "bool", "null", "timestamp")


class _Refused(yaml.constructor.ConstructorError):
    """A value this reader refuses (its ``problem`` reads after the file's name), at its place."""


def _refused(problem: str, node: Node) -> _Refused:
    return _Refused(None, None, problem, node.start_mark)


class _PulumiLoader(_Loader):
    """The engine's reading of its files: gopkg.in/yaml.v3's (:mod:`gitops_infra._go_yaml`).

    - A plain scalar is what yaml.v3 makes of it (``no`` is text, ``0o17`` is 15), and one with an
      explicit tag must be what it says, as yaml.v3 requires (``!!int abc`` is refused).
    - A tag yaml.v3 does not know (``!Ref``, ``!!set``) is ignored: the value is read by its shape.
      ``!!binary`` is decoded to text, as yaml.v3 does.
    - Mapping keys are text: the engine's ``SimplifyMarshalledValue`` refuses any other key.
    """

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            return _TAG + _go_yaml.resolve(value)[0].removeprefix("!!")
        resolved: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return resolved

    def construct_go_scalar(self, node: ScalarNode) -> Any:
        tag = "!!" + node.tag.removeprefix(_TAG)
        resolved, value = _go_yaml.resolve(node.value, tag)
        if resolved == tag:
            return value
        if tag == _go_yaml.FLOAT and resolved == _go_yaml.INT:
            return float(value)
        raise _refused(f"holds a value tagged {tag} that is not one", node)

    def construct_go_binary(self, node: ScalarNode) -> str:
        # yaml.v3: base64.StdEncoding.DecodeString, which skips line breaks, and the bytes as a Go string.
        text = str(self.construct_scalar(node)).replace("\n", "").replace("\r", "")
        try:
            return base64.b64decode(text, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise _refused("holds a !!binary value that is not base64 of UTF-8 text", node) from None

    def construct_by_shape(self, tag_suffix: str, node: Node) -> Any:
        """A value under a tag yaml.v3 does not know: what its node is, as yaml.v3 reads it."""
        if isinstance(node, ScalarNode):
            return self.construct_scalar(node)
        if isinstance(node, SequenceNode):
            return self.construct_sequence(node, deep=True)
        return self.construct_mapping(node, deep=True)  # type: ignore[arg-type]

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)  # merged keys included
        if not all(isinstance(key, str) for key in mapping):
            raise _refused("holds a mapping key that is not text, which Pulumi refuses", node)
        return mapping


for _scalar in _SCALARS:
    _PulumiLoader.add_constructor(_TAG + _scalar, _PulumiLoader.construct_go_scalar)
_PulumiLoader.add_constructor(f"{_TAG}binary", _PulumiLoader.construct_go_binary)


def _by_shape(loader: _PulumiLoader, node: Node) -> Any:
    return loader.construct_by_shape("", node)


for _shaped in ("set", "omap", "pairs"):  # yaml.v3 reads them as the mapping or list they are
    _PulumiLoader.add_constructor(_TAG + _shaped, _by_shape)
_PulumiLoader.add_multi_constructor("", _PulumiLoader.construct_by_shape)


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
    if isinstance(exc, _Refused) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
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


def load_documents(text: str, *, schema: Schema = "yaml1.1") -> list[Any]:
    """Every document in ``text``, ``None`` for an empty one; ``YamlRefused`` past the limits above.

    ``schema="pulumi"`` reads it as the Pulumi engine reads its own files (YAML 1.2, see above).
    """
    documents: list[Any] = []
    try:
        loader = (_PulumiLoader if schema == "pulumi" else _Loader)(
            text
        )  # reads the first characters already, and may refuse them
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
