"""The local cluster's Flux Operator, before anything starts: what setup builds is where it looks, and
what is missing is named, with how to get it, and nothing is left running."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gitops_infra.local import FluxOperator, Toolchain


def _operator(tmp_path: Path) -> FluxOperator:
    cluster: Any = SimpleNamespace(toolchain=Toolchain.of(tmp_path / "checkout"))
    return FluxOperator(tmp_path / "operator", cluster)


def test_it_runs_with_what_setup_copied_beside_the_cluster(tmp_path: Path) -> None:
    operator = _operator(tmp_path)
    built = tmp_path / "checkout" / ".tools" / "cluster"
    assert (operator.data, operator.crds) == (built / "flux-operator-data", built / "crds" / "flux-operator")
    assert operator.namespace == "flux-system"


def test_without_the_build_it_says_to_run_setup_and_starts_nothing(tmp_path: Path) -> None:
    operator = _operator(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"flux-operator is missing: run `make setup`"):
        operator.start()
    operator.cluster.toolchain.bin_dir.mkdir(parents=True)
    (operator.cluster.toolchain.bin_dir / "flux-operator").touch()
    with pytest.raises(FileNotFoundError, match=r"flux-operator-data/flux is missing: run `make setup`"):
        operator.start()
    assert operator.processes.running == []
