"""A check of the environment contract (``contract check``): a line a problem, and a line a document that
holds the contract."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._output import echo

if TYPE_CHECKING:
    from ... import contract

__all__ = ["print_contract_check"]


def print_contract_check(result: contract.ContractCheck) -> None:
    lines = [f"{result.source}: {problem}" for problem in result.problems]
    for checked in result.checked:
        if checked.environment is not None:
            env = checked.environment
            lines.append(
                f"{result.source}: {checked.where}: holds contract {result.contract_version} "
                f"(environment {env.name}, baseDomain {env.base_domain})"
            )
        lines.extend(f"{result.source}: {checked.where}: {problem}" for problem in checked.problems)
    if lines:
        echo("\n".join(lines))
