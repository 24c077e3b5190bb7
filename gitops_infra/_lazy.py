"""Lazy re-exports (PEP 562): a package's public names are imported from their modules on first use.

``gitops_infra`` and ``gitops_infra.automation`` re-export names whose modules import the provider SDKs
and ``pulumi.automation``, seconds of imports. Eager, every ``import gitops_infra.<anything>`` paid for
them: the CLI's ``--help`` did, and the offline plan loaded the engine wrapper it never calls. Each package
keeps its ``import`` block for type checkers (under ``TYPE_CHECKING``) and ``__all__`` as the API.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["exports"]


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
