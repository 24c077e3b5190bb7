"""The installed distribution's version, read from its metadata (``pyproject.toml``'s, once installed)."""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "package_version"]

DISTRIBUTION = "gitops-infra"


def package_version() -> str:
    """``gitops-infra``'s version; ``0+unknown`` when run from a checkout that was never installed."""
    from importlib import metadata  # not at import: ``gitops-infra --help`` does not need it

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"
