"""Any result as plain JSON data: what ``--json`` prints and a fleet report reads back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

__all__ = ["to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """A result (or a tuple of them) as plain JSON data: enums by value, times in ISO 8601."""
    if is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value)}
        # Derived flags are part of what a CI script reads, so they are in the document too.
        for name in (
            "has_changes",
            "has_drift",
            "has_errors",
            "valid",
            "clean",
            "name",
            "causes",
            "healthy",
            "problems",
            "lag",
            "healthy_tenants",
            "ready",
        ):
            if hasattr(value, name):
                data[name] = to_jsonable(getattr(value, name))
        return data
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value
