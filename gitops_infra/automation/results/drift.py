"""Drift: how a stack's resources differ from the state Pulumi recorded, and the layers checked.

A drifted property that the engine marks secret is ``SECRET`` here, on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from ...errors import ArgumentError
from .gitops import GitOpsReport

__all__ = ["ALL_LAYERS", "DriftKind", "DriftReport", "DriftedResource", "Layer", "PropertyDiff"]


class DriftKind(StrEnum):
    """How a resource differs from the state Pulumi recorded for it."""

    CHANGED = "changed"
    DELETED = "deleted"


@dataclass(frozen=True)
class PropertyDiff:
    """One property that differs: ``path`` in Pulumi's property-path form, e.g. ``tags.owner``."""

    path: str
    recorded: Any
    """The value in the stack's state (``None`` if it was absent); ``SECRET`` if secret."""
    actual: Any
    """The value the provider reads now (``None`` if absent); ``SECRET`` if secret."""


@dataclass(frozen=True)
class DriftedResource:
    """A resource whose real state differs from the recorded one."""

    urn: str
    type: str
    kind: DriftKind
    diffs: tuple[PropertyDiff, ...] = ()


class Layer(StrEnum):
    """A layer of the platform that drifts: the resources Pulumi manages, and what Flux applies from git."""

    IAC = "iac"
    GITOPS = "gitops"

    @classmethod
    def parse(cls, text: str) -> tuple[Layer, ...]:
        """``iac,gitops`` (either alone, any order) as layers; ``ArgumentError`` naming what is allowed."""
        names = [part.strip() for part in text.split(",")]
        unknown = [name for name in names if name not in {layer.value for layer in cls}]
        if unknown or not any(names):
            shown = ", ".join(repr(name) for name in unknown) if unknown else "nothing"
            raise ArgumentError(
                f"layers got {shown}: give a comma-separated list of iac and gitops, such as iac,gitops"
            )
        return tuple(layer for layer in cls if layer.value in names)


ALL_LAYERS: tuple[Layer, ...] = tuple(Layer)
"""Both layers: what drift checks unless told otherwise."""


@dataclass(frozen=True)
class DriftReport:
    """A stack's drift in each layer checked: every drifted resource (a refresh preview that wrote
    nothing), and what Flux reports of the cluster the stack made."""

    stack: str
    resources: tuple[DriftedResource, ...] = field(default=())
    project: str | None = None
    """The stack's project: a fleet report (``fleet report``) names the stack by both."""
    checked_at: datetime | None = None
    """When the check ended: of two results for one stack (a retried job), the newer one counts."""
    gitops: GitOpsReport | None = None
    """The GitOps layer, when it was checked and the stack bootstraps Flux."""
    layers: tuple[Layer, ...] = (Layer.IAC,)
    """The layers checked: ``has_drift`` says nothing when ``iac`` is not among them."""

    @property
    def has_drift(self) -> bool:
        """True when any resource drifted (the IaC layer)."""
        return bool(self.resources)

    @property
    def healthy(self) -> bool:
        """False when the GitOps layer was read and is not healthy, or could not be read."""
        return self.gitops is None or self.gitops.healthy
