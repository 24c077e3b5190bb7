"""Lazy re-exports (PEP 562): a package's public names are imported from their modules on first use.

``gitops_infra`` and ``gitops_infra.automation`` re-export names whose modules import the provider SDKs
and ``pulumi.automation``, seconds of imports. Eager, every ``import gitops_infra.<anything>`` paid for
them: the CLI's ``--help`` did, and the offline plan loaded the engine wrapper it never calls. Each package
keeps its ``import`` block for type checkers (under ``TYPE_CHECKING``) and ``__all__`` as the API.

``sdk`` does the same for a provider SDK inside a component module: a stack on a cluster it did not make
registers no AWS resource, and one with an existing key no GitHub or TLS resource, so its program (every
preview and up) need not import ``pulumi_aws`` and ``pulumi_eks`` (the costliest SDKs to import:
bench/README.md has the figure) or ``pulumi_github``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["exports", "sdk"]


def exports(
    package: str,
    modules: Mapping[str, Sequence[str]],
    computed: Mapping[str, Callable[[], Any]] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which re-exports ``modules[m]`` from each ``m``,
    and whose ``computed`` attributes (``__version__``) are each made by a call, once."""
    where = {name: module for module, names in modules.items() for name in names}
    made = dict(computed or {})

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if name in made:
            value = made[name]()
        elif module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # found once: later lookups are plain attributes
        return value

    def __dir__() -> list[str]:
        return sorted([*where, *made])

    return __getattr__, __dir__


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
