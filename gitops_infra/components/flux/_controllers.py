"""The checks every install mode makes of the controllers it installs and where they run.

The flux2 chart (:class:`.install.InstallOptions`) and the Flux Operator (:class:`.operator.OperatorOptions`)
take the same ``components``, ``components_extra`` and ``tolerations``, and refuse the same mistakes in them;
only which controllers each knows differs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from gitops_infra import checks
from gitops_infra.components._args import Problems

__all__ = ["check_controllers"]


def check_controllers(
    problems: Problems,
    components: Sequence[str],
    components_extra: Sequence[str],
    tolerations: Sequence[Mapping[str, str]],
    known: Collection[str],
) -> None:
    """Add to ``problems`` what is wrong with the controllers (each in ``known``, the sync's there, none
    twice) and the tolerations (as Kubernetes validates them)."""
    for component in (*components, *components_extra):
        problems.check(component in known, "components", f"unknown component {component!r}")
    problems.gate("components", checks.flux_components_problem, components)
    problem = checks.flux_components_extra_problem(components_extra, components)
    if problem is not None:
        problems.add("components_extra", problem)
    for index, toleration in enumerate(tolerations):
        fields = (toleration.get(key) for key in ("key", "operator", "value", "effect"))
        for key, message in checks.toleration_problems(*fields):
            problems.add(f"tolerations[{index}].{key}", message)
