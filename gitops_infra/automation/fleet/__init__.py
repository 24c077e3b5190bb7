"""The fleet: many stacks of one or more projects, checked together, split into jobs, reported as one.

- ``inventory``: which stacks there are (the stack files' ``gitops-infra:fleet`` section), selected by
  labels and wave, split into shards;
- ``operations``: drift, previews and status of many stacks at once, a few at a time;
- ``runners``: the jobs of a CI matrix, or a Kubernetes Indexed Job, that cover the fleet;
- ``reports``: one report merged from what those jobs printed;
- ``results``: what the fleet's operations return.

``__all__`` below is the fleet's API; :mod:`gitops_infra.automation` exports all of it too.

Example::

    from pathlib import Path

    from gitops_infra.automation.fleet import Shard, detect_drift_all, fleet_stacks

    fleet = detect_drift_all(fleet_stacks([Path("infra"), Path("tenants")]), shard=Shard(0, 4))
    print([s.name for s in fleet.stacks if s.has_drift])
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports

if TYPE_CHECKING:
    from .inventory import FleetSpec, FleetStack, Shard, fleet_stacks, parse_selector
    from .operations import detect_drift_all, preview_all, project_stacks, status_all
    from .reports import merge_drift_reports
    from .results import (
        DriftCause,
        FleetDrift,
        FleetPreview,
        Matrix,
        MatrixEntry,
        Operation,
        StackDrift,
        StackError,
        StackPreview,
    )
    from .runners import changed_since, fleet_matrix, indexed_job

__all__ = [
    "DriftCause",
    "FleetDrift",
    "FleetPreview",
    "FleetSpec",
    "FleetStack",
    "Matrix",
    "MatrixEntry",
    "Operation",
    "Shard",
    "StackDrift",
    "StackError",
    "StackPreview",
    "changed_since",
    "detect_drift_all",
    "fleet_matrix",
    "fleet_stacks",
    "indexed_job",
    "merge_drift_reports",
    "parse_selector",
    "preview_all",
    "project_stacks",
    "status_all",
]

__getattr__, __dir__ = exports(__name__)
