"""Values the library's functions and the CLI's arguments share, importable without the engine.

The CLI builds its options (and their help) when it starts; reading these from ``fleet`` or ``rollback``
would import ``pulumi.automation`` and the rest of the layer for ``gitops-infra --help``.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PARALLEL", "PREVIOUS"]

DEFAULT_PARALLEL = 4
"""How many stacks ``detect_drift_all`` and ``status_all`` check at once, each in its own engine."""

PREVIOUS = "previous"
"""Rollback target meaning: the commit of the last successful update before the current one."""
