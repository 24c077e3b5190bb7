"""Lazy re-exports (PEP 562): a package's public names are imported from their modules on first use.

``gitops_infra`` and ``gitops_infra.automation`` re-export names whose modules import the provider SDKs
and ``pulumi.automation``, seconds of imports. Eager, every ``import gitops_infra.<anything>`` paid for
them: the CLI's ``--help`` did, and the offline plan loaded the engine wrapper it never calls. Each package
keeps its ``import`` block for type checkers (under ``TYPE_CHECKING``), which ``exports`` reads as the table
of where each name lives, and ``__all__`` as the API.

``sdk`` does the same for a provider SDK inside a component module: a stack on a cluster it did not make
registers no AWS resource, and one with an existing key no GitHub or TLS resource, so its program (every
preview and up) need not import ``pulumi_aws`` and ``pulumi_eks`` (the costliest SDKs to import:
bench/README.md has the figure) or ``pulumi_github``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["exports", "sdk"]


def exports(
    package: str, computed: Mapping[str, Callable[[], Any]] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which re-exports each name its ``TYPE_CHECKING``
    block imports, from the module it names there; its ``computed`` attributes (``__version__``) are
    each made by a call, once.

    The block type checkers read is the one table of where a name lives: it is read from the package's
    source on the first name looked up, not when the package is imported.
    """
    made = dict(computed or {})
    tables: list[dict[str, tuple[str, str]]] = []  # read once, even when it is empty

    def where() -> dict[str, tuple[str, str]]:
        if not tables:
            tables.append(_type_checking_imports(sys.modules[package]))
        return tables[0]

    def __getattr__(name: str) -> Any:
        if name in made:
            value = made[name]()
        elif name.startswith("__") or (found := where().get(name)) is None:
            # Dunders are the import system's and tools' questions: no export answers them.
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            module, original = found
            value = getattr(importlib.import_module(module), original)
        setattr(sys.modules[package], name, value)  # found once: later lookups are plain attributes
        return value

    def __dir__() -> list[str]:
        # The API: what is imported lazily and what the package defines or imports itself.
        return sorted({*where(), *made, *getattr(sys.modules[package], "__all__", ())})

    return __getattr__, __dir__


def _type_checking_imports(package: ModuleType) -> dict[str, tuple[str, str]]:
    """Each name that ``from <module> import <name> [as <bound>]`` binds under ``package``'s
    ``if TYPE_CHECKING:``, mapped to the absolute name of ``<module>`` and ``<name>``."""
    get_source = getattr(package.__loader__, "get_source", None)
    source = get_source(package.__name__) if get_source else None
    if source is None:
        name = package.__name__
        raise ImportError(f"{name}'s source is needed to find its re-exports", name=name)
    blocks = [
        node.body
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    names: dict[str, tuple[str, str]] = {}
    for statement in (statement for block in blocks for statement in block):
        if isinstance(statement, ast.ImportFrom):
            relative = "." * statement.level + (statement.module or "")
            module = importlib.util.resolve_name(relative, package.__name__)
            names.update((alias.asname or alias.name, (module, alias.name)) for alias in statement.names)
    return names


class _Sdk:
    """Stands for a module until an attribute of it is used; then the module is imported as usual."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            # Not an SDK's: what copy and pickle look up (before __init__ has run, for pickle).
            raise AttributeError(attribute)
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


def sdk(name: str) -> Any:
    """The module ``name``, imported on the first use of one of its attributes (not when this is called).

    A plain ``import`` stays under ``TYPE_CHECKING`` beside it, for type checkers. The module is imported
    by the import system itself, so a package that imports it too gets the same, whole module.
    """
    return sys.modules.get(name) or _Sdk(name)
