"""Up-front validation of component Args: collect every problem, then raise one ``ConfigError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pulumi

from gitops_infra.errors import ConfigError


def is_known(value: Any) -> bool:
    """True for a plain value; an ``Output`` or awaitable is checked by the provider, not by us."""
    return not isinstance(value, pulumi.Output) and not hasattr(value, "__await__")


_Value = TypeVar("_Value")


class Problems:
    """Collects ``"<Args>.<field>: <message>"`` lines for one Args object."""

    def __init__(self, args_name: str) -> None:
        self._args_name = args_name
        self._problems: list[str] = []

    def add(self, field: str, message: str) -> None:
        self._problems.append(f"{self._args_name}.{field}: {message}")

    def check(self, condition: bool, field: str, message: str) -> None:
        if not condition:
            self.add(field, message)

    def gate(self, field: str, check: Callable[[_Value], str | None], value: _Value) -> None:
        """Run one of :mod:`gitops_infra.checks` on ``value``, as the stack config does on its own key.

        What the check expected, if it refused the value, is a problem. A value not known yet (an
        ``Output``) is not checked: see ``is_known``.
        """
        problem = check(value) if is_known(value) else None
        if problem is not None:
            self.add(field, problem)

    def raise_if_any(self) -> None:
        if self._problems:
            raise ConfigError(self._problems)
