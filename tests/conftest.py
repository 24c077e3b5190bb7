"""Session-wide test configuration."""

from __future__ import annotations

from .engine.conftest import ENGINE


def pytest_report_header() -> str:
    # Only initial conftests may add to the header, so the engine tests' one is reported from here.
    if ENGINE is None:
        return "pulumi engine: not found (run `make setup`)"
    return f"pulumi engine: {ENGINE.bin_dir / 'pulumi'} ({ENGINE.version})"
