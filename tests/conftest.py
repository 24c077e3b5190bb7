"""Session-wide test configuration."""

from __future__ import annotations

from .support import find_engine


def pytest_report_header() -> str:
    # Only initial conftests may add to the header, so the engine tests' one is reported from here.
    engine = find_engine()
    if engine is None:
        return "pulumi engine: not found (run `make setup`)"
    return f"pulumi engine: {engine.pulumi} ({engine.version})"
