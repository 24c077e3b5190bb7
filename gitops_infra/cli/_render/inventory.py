"""The fleet's stacks (``fleet list``): a line a stack, with its wave, labels and role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation

__all__ = ["print_fleet_list"]


def print_fleet_list(out: Console, stacks: Sequence[automation.FleetStack]) -> None:
    for s in stacks:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        role = f" role={s.role}" if s.role else ""
        out.print(f"{s.name}  wave={s.wave}  labels={labels or '-'}{role}  ({s.project_dir.as_posix()})")
