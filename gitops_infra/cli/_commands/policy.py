"""``gitops-infra policy``: where the bundled CrossGuard policy pack is, for the raw CLI."""

from __future__ import annotations

from ...errors import GitOpsInfraError
from .._main import CliError, main
from .._output import echo

__all__: list[str] = []


@main.group(name="policy")
def policy_group() -> None:
    """The bundled CrossGuard policy pack (--policy-pack gitops-infra)."""


@policy_group.command(name="path")
def policy_path() -> None:
    """Print a directory holding the bundled pack, set to run on this gitops-infra's Python.

    For the raw CLI: pulumi preview --policy-pack "$(gitops-infra policy path)".
    """
    from ...policy import pack_dir

    try:
        found = pack_dir()
    except GitOpsInfraError as exc:
        raise CliError(type(exc).__name__, str(exc)) from exc
    echo(str(found))
