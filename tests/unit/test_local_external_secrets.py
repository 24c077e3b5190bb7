"""The local cluster's External Secrets, before anything starts: what is missing is named, with how to get
it, and nothing is left running."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gitops_infra.errors import MissingExtraError
from gitops_infra.local import ExternalSecretsController, Toolchain


def _controller(tmp_path: Path) -> ExternalSecretsController:
    cluster: Any = SimpleNamespace(toolchain=Toolchain.of(tmp_path / "checkout"))
    return ExternalSecretsController(tmp_path / "eso", cluster)


def test_it_runs_what_setup_built_beside_the_cluster(tmp_path: Path) -> None:
    controller = _controller(tmp_path)
    built = tmp_path / "checkout" / ".tools" / "cluster" / "external-secrets"
    assert (controller.binary, controller.crds) == (built / "external-secrets", built / "crds.yaml")


def test_without_the_build_it_says_to_run_setup_and_starts_nothing(tmp_path: Path) -> None:
    controller = _controller(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"external-secrets is missing: run `make setup`"):
        controller.start()
    assert controller.processes.running == []


def test_without_moto_s_server_it_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    controller = _controller(tmp_path)
    controller.binary.parent.mkdir(parents=True)
    controller.binary.touch()
    controller.crds.touch()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "flask" else real(name))
    with pytest.raises(MissingExtraError, match=r"pip install 'moto\[server\]'"):
        controller.start()
    assert controller.processes.running == []
