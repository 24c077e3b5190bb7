"""What the engine ran and recorded: previews, updates, refreshes, promotions, and the stack's history.

Stack outputs that the engine marks secret are ``SECRET`` here (see :mod:`gitops_infra.automation.results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from .gitops import GitOpsReport

__all__ = [
    "Deployment",
    "DeploymentKind",
    "DeploymentResult",
    "PreviewResult",
    "PromotionEvidence",
    "PromotionResult",
    "RecordedResult",
    "RefreshResult",
    "Step",
    "UpResult",
    "changes_of",
]


def changes_of(summary: Mapping[Any, int]) -> dict[str, int]:
    """An engine change summary keyed by plain operation names (the engine may key it by ``OpType``)."""
    return {getattr(op, "value", op): count for op, count in summary.items()}


def _has_changes(changes: Mapping[str, int]) -> bool:
    return any(count for op, count in changes.items() if op != "same")


@dataclass(frozen=True)
class Step:
    """One resource operation the engine plans or performs."""

    urn: str
    op: str
    """The engine's operation name: ``create``, ``update``, ``replace``, ``delete``, ..."""
    type: str
    keys: tuple[str, ...] = ()
    """Top-level properties whose change causes the step (empty for creates and deletes)."""


@dataclass(frozen=True)
class PreviewResult:
    """What ``up`` would do: the change summary and each step that is not a no-op."""

    stack: str
    changes: Mapping[str, int]
    steps: tuple[Step, ...]

    @property
    def has_changes(self) -> bool:
        """True when applying would change anything."""
        return _has_changes(self.changes)


@dataclass(frozen=True)
class RecordedResult:
    """An operation the stack's history records: its changes, its version, and the commit it ran from."""

    stack: str
    changes: Mapping[str, int]
    version: int
    """The operation's position in the stack's history (1 for the first)."""
    commit: str | None
    """The git commit the program ran from (``git.head``), when the project is in a git repository."""


@dataclass(frozen=True)
class UpResult(RecordedResult):
    """An applied update."""

    outputs: Mapping[str, Any]
    """Stack outputs; secret ones are ``SECRET``."""
    rolled_back_to: str | None = None
    """For ``rollback_to_commit``: the full sha the stack was rolled back to."""

    @property
    def has_changes(self) -> bool:
        """True when the update changed anything."""
        return _has_changes(self.changes)


@dataclass(frozen=True)
class RefreshResult(RecordedResult):
    """A refresh that wrote what the cloud reports into the stack's state."""


class _Open(StrEnum):
    """A mode read from the engine's history: a value this version does not list is kept, not refused.

    The history is written by whichever engine ran the update, which may know a mode we do not.
    """

    @classmethod
    def _missing_(cls, value: object) -> _Open | None:
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper().replace("-", "_")
        member._value_ = value
        return member


class DeploymentKind(_Open):
    """What a deployment did, as the engine's history names it (``apitype.UpdateKind``)."""

    UPDATE = "update"
    PREVIEW = "preview"
    REFRESH = "refresh"
    RENAME = "rename"
    DESTROY = "destroy"
    IMPORT = "import"
    RESOURCE_IMPORT = "resource-import"


class DeploymentResult(_Open):
    """How a deployment ended, as the engine's history names it (``apitype.UpdateResult``)."""

    NOT_STARTED = "not-started"
    IN_PROGRESS = "in-progress"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class Deployment:
    """One entry of a stack's history."""

    version: int
    kind: DeploymentKind
    result: DeploymentResult
    start_time: datetime
    end_time: datetime | None
    message: str
    commit: str | None
    dirty: bool = False
    """The engine recorded uncommitted changes in the work tree (``git.dirty``): ``commit`` is not all
    that ran, so the deployment proves nothing about it."""


@dataclass(frozen=True)
class PromotionEvidence:
    """What a promotion checked on the source stack before it deployed, as it found it."""

    source: str
    commit: str
    """The commit of the source's last successful update: what was promoted."""
    version: int
    updated_at: datetime | None
    """When that update ended."""
    age_seconds: float | None
    """How long before the check that was."""
    max_age_seconds: float | None = None
    """``max_age``, when it was required."""
    drift: bool | None = None
    """The source's IaC drift, when ``require_no_drift`` asked for it (``None``: not checked)."""
    gitops: GitOpsReport | None = None
    """The source's GitOps layer, when ``require_healthy`` asked for it: Flux's revisions and Ready states."""


@dataclass(frozen=True)
class PromotionResult(UpResult):
    """A promotion's update, with the evidence it was allowed on."""

    evidence: PromotionEvidence | None = None
