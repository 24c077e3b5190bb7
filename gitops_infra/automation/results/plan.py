"""The offline plan: what the stack program would create, recorded under mocks without an engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...redaction import SECRET

__all__ = ["COMPUTED", "NOTE", "Plan", "PlannedResource"]

COMPUTED = "<computed>"
"""What the plan shows for a value only the cloud can compute (an ID, an ARN, an endpoint)."""

NOTE = (
    "Offline plan: the program ran under mocks, so nothing was created and values only the cloud can "
    f"compute (IDs, ARNs, endpoints, generated keys) are unknown, shown as {COMPUTED}. "
    f"Secrets are shown as {SECRET}."
)


@dataclass(frozen=True)
class PlannedResource:
    """A resource the program would register; ``inputs`` have secrets redacted."""

    type: str
    name: str
    urn: str
    parent: str | None
    """The parent's URN, or ``None`` for a resource directly under the stack."""
    custom: bool
    inputs: Mapping[str, Any]
    depends_on: tuple[str, ...]
    """Every URN this resource waits for on create (and that waits for it on delete): its explicit
    ``depends_on`` and the resources its inputs come from, as the engine records ``dependencies``."""
    property_dependencies: Mapping[str, tuple[str, ...]]
    """For each input, the URNs of the resources its value comes from."""


@dataclass(frozen=True)
class Plan:
    """What the stack program would create, recorded without an engine."""

    stack: str
    project: str
    resources: tuple[PlannedResource, ...]
    outputs: Mapping[str, Any]
    placeholders: tuple[str, ...]
    """Secret config keys planned with a placeholder: ``secure:`` ones, and required ones not set."""
    note: str = NOTE
