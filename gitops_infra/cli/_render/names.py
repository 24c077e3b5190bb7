"""How a rendering of many stacks names each one: by its name alone, or ``project/stack`` when the
stacks are of several projects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

__all__ = ["namer"]


class _Stack(Protocol):
    @property
    def stack(self) -> str: ...
    @property
    def project(self) -> str | None: ...


_Named = TypeVar("_Named", bound=_Stack)


def namer(stacks: Sequence[_Named]) -> Callable[[_Named], str]:
    """How a rendering names each stack: alone when all are of one project, else ``project/stack``."""
    if len({s.project for s in stacks}) <= 1:
        return lambda s: s.stack
    return lambda s: f"{s.project}/{s.stack}" if s.project else s.stack
