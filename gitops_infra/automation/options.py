"""What every operation takes: :class:`StackOptions`, and the defaults the CLI shows in its help.

Importable without the engine: the CLI builds its options (and their help) when it starts, and
``gitops-infra --help`` must not load ``pulumi.automation``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ArgumentError
from ..redaction import masked_values, safe_url

if TYPE_CHECKING:
    from pulumi.automation import EngineEvent

__all__ = ["DEFAULT_PARALLEL", "PREVIOUS", "EventCallback", "StackOptions"]

DEFAULT_PARALLEL = 4
"""How many stacks ``detect_drift_all`` and ``status_all`` check at once, each in its own engine."""

PREVIOUS = "previous"
"""Rollback target meaning: the commit of the last successful update before the current one."""

EventCallback = Callable[["EngineEvent"], None]
"""Called with each engine event as it streams."""


@dataclass(frozen=True)
class StackOptions:
    """Where and how an operation runs. Every field has a default that works with no account."""

    work_dir: Path | None = None
    """The Pulumi project directory (holding ``Pulumi.yaml``); found from the current directory if unset."""
    backend_url: str | None = None
    """Overrides ``PULUMI_BACKEND_URL``, the project's own ``backend.url``, the stored ``pulumi login`` and
    the local default."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for the engine, on top of this process's environment."""
    on_event: EventCallback | None = None
    """Called with each engine event as it streams, for progress displays."""
    lock_wait: float = 0.0
    """Seconds to keep retrying while another update holds the stack's lock; 0 fails at once."""

    def __post_init__(self) -> None:
        # NaN compares false with every deadline, so it meant "retry forever"; so did infinity.
        if not (
            isinstance(self.lock_wait, int | float) and math.isfinite(self.lock_wait) and self.lock_wait >= 0
        ):
            raise ArgumentError(
                f"lock_wait: {self.lock_wait!r} must be a finite number of seconds, 0 or more"
            )

    def __repr__(self) -> str:
        return (
            f"StackOptions(work_dir={self.work_dir!r}, backend_url={safe_url(self.backend_url)!r}, "
            f"env={masked_values(self.env)!r}, on_event={self.on_event!r}, lock_wait={self.lock_wait!r})"
        )
