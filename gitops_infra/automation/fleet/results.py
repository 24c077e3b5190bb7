"""Frozen, typed results of the fleet's operations: many stacks' drift and previews, and CI matrices.

Each stack's own result is one of :mod:`gitops_infra.automation.results`; a stack that could not be
checked carries its :class:`~gitops_infra.automation.results.status.StackError` instead.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..results.deployments import PreviewResult
from ..results.drift import DriftKind, DriftReport, PropertyDiff
from ..results.status import StackError
from .inventory import qualified_name

__all__ = [
    "DriftCause",
    "FleetDrift",
    "FleetPreview",
    "Matrix",
    "MatrixEntry",
    "Operation",
    "StackDrift",
    "StackError",
    "StackPreview",
]


@dataclass(frozen=True)
class StackDrift:
    """One stack's drift check: its report, or the error that stopped it."""

    stack: str
    report: DriftReport | None
    error: StackError | None = None
    project: str | None = None
    """The stack's project: with ``stack``, its fully qualified ``name``."""
    checked_at: datetime | None = None
    """When the check ended: of two results for one stack (a retried job), the newer one counts."""

    @property
    def has_drift(self) -> bool:
        """True when the check ran and found drift."""
        return self.report is not None and self.report.has_drift

    @property
    def healthy(self) -> bool:
        """False when the check ran and its GitOps layer is not healthy (or its cluster could not be read)."""
        return self.report is None or self.report.healthy

    @property
    def name(self) -> str:
        """``organization/<project>/<stack>``, or the stack alone when the project is unknown."""
        return qualified_name(self.project, self.stack) if self.project else self.stack


@dataclass(frozen=True)
class DriftCause:
    """One difference many stacks share: a property of a resource type, from one value to another.

    A provider upgrade that drifted 40 stacks the same way is one cause with 40 stacks, not 40 rows.
    """

    type: str
    kind: DriftKind
    path: str
    """The property path; empty for a resource deleted out of band."""
    recorded: Any
    actual: Any
    stacks: tuple[str, ...]
    """The fully qualified names of the stacks where it happened, sorted."""


@dataclass(frozen=True)
class FleetDrift:
    """Drift across stacks: one ``StackDrift`` each, by fully qualified name.

    ``shard`` is ``I/N`` when the stacks are one shard of the fleet. ``unread`` names each input a merged
    report (``fleet report``) could not read: a shard or job whose result is missing.
    """

    stacks: tuple[StackDrift, ...]
    shard: str | None = None
    unread: tuple[str, ...] = ()

    @property
    def has_drift(self) -> bool:
        """True when any stack drifted."""
        return any(s.has_drift for s in self.stacks)

    @property
    def healthy(self) -> bool:
        """False when any stack's GitOps layer is not healthy."""
        return all(s.healthy for s in self.stacks)

    @property
    def has_errors(self) -> bool:
        """True when any stack could not be checked, or a result is missing."""
        return bool(self.unread) or any(s.error is not None for s in self.stacks)

    @property
    def causes(self) -> tuple[DriftCause, ...]:
        """The drift grouped by cause: most stacks first, then by type and path."""
        first: dict[tuple[str, ...], DriftCause] = {}
        names: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for checked in self.stacks:
            for resource in checked.report.resources if checked.report is not None else ():
                for diff in resource.diffs or (PropertyDiff("", None, None),):
                    cause = DriftCause(
                        resource.type, resource.kind, diff.path, diff.recorded, diff.actual, ()
                    )
                    key = (
                        cause.type,
                        cause.path,
                        cause.kind.value,
                        _canonical(cause.recorded),
                        _canonical(cause.actual),
                    )
                    first.setdefault(key, cause)
                    names[key].add(checked.name)
        ordered = sorted(names, key=lambda key: (-len(names[key]), key))
        return tuple(replace(first[key], stacks=tuple(sorted(names[key]))) for key in ordered)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class StackPreview:
    """One stack's preview: what ``up`` would change, or the error that stopped it."""

    stack: str
    result: PreviewResult | None
    error: StackError | None = None
    project: str | None = None

    @property
    def has_changes(self) -> bool:
        """True when the preview ran and ``up`` would change something."""
        return self.result is not None and self.result.has_changes


@dataclass(frozen=True)
class FleetPreview:
    """Previews across stacks, by fully qualified name; ``shard`` as in :class:`FleetDrift`."""

    stacks: tuple[StackPreview, ...]
    shard: str | None = None

    @property
    def has_changes(self) -> bool:
        """True when ``up`` would change any stack."""
        return any(s.has_changes for s in self.stacks)

    @property
    def has_errors(self) -> bool:
        """True when any stack could not be previewed."""
        return any(s.error is not None for s in self.stacks)


class Operation(StrEnum):
    """What the jobs of a matrix run."""

    DRIFT = "drift"
    PREVIEW = "preview"
    UP = "up"


@dataclass(frozen=True)
class MatrixEntry:
    """One job: a stack (``stack``, ``project``, ``role``), or a shard of the selection (``shard``)."""

    shard: str | None = None
    """``I/N``: the job runs ``<op> --all --shard I/N`` with the selection the matrix was made with."""
    stack: str | None = None
    name: str | None = None
    """The stack's fully qualified name: the key of a concurrency group."""
    project: str | None = None
    """The stack's project directory, as given (``--cwd`` for the job)."""
    wave: int | None = None
    """The stack's wave; a shard's, when all its stacks share one."""
    role: str | None = None
    """The IAM role to assume; a shard's, when all its stacks share one."""


@dataclass(frozen=True)
class Matrix:
    """The jobs that cover a selection of the fleet, each stack exactly once."""

    op: Operation
    entries: tuple[MatrixEntry, ...]
    stacks: int
    """How many stacks the entries cover together."""

    def github(self) -> dict[str, Any]:
        """``{"include": [...]}``, for ``strategy.matrix: ${{ fromJSON(...) }}``."""
        return {"include": [asdict(e) for e in self.entries]}

    def gitlab(self) -> list[dict[str, str]]:
        """A ``parallel:matrix`` list: upper-case variables, strings only, none unset."""
        return [
            {key.upper(): str(value) for key, value in asdict(e).items() if value is not None}
            for e in self.entries
        ]
