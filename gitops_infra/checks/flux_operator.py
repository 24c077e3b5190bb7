"""The Flux Operator's rules: which Flux releases a ``FluxInstance`` may ask for."""

from __future__ import annotations

from gitops_infra.defaults import FLUX_OPERATOR_BUNDLED, FLUX_OPERATOR_FLUX_VERSION, FLUX_OPERATOR_VERSION

__all__ = ["flux_operator_version_problem"]


def flux_operator_version_problem(value: object) -> str | None:
    """``None`` for a Flux release the pinned Flux Operator bundles (``2.9.4``): it installs from its own
    copy of Flux's manifests, with no network, and has none for another."""
    if isinstance(value, str) and value in FLUX_OPERATOR_BUNDLED:
        return None
    return (
        f"must be a Flux release the Flux Operator {FLUX_OPERATOR_VERSION} bundles "
        f"({FLUX_OPERATOR_BUNDLED[0]} to {FLUX_OPERATOR_BUNDLED[-1]}, such as {FLUX_OPERATOR_FLUX_VERSION})"
    )
