"""An update that would switch a stack's GitOps engine is refused before the engine starts.

The stack's state (a file backend's checkpoint, as the engine writes it) says which engine runs; its
stack file says which one the next update asks for."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gitops_infra.automation._state.engine_switch import engine_switch_problem, refuse_engine_switch
from gitops_infra.automation._state.file_backend import FileBackendStack
from gitops_infra.automation._state.project import Project
from gitops_infra.automation.stack_name import StackName, parse_stack_name
from gitops_infra.errors import ConfigError

FLUX = "gitops-infra:index:FluxBootstrap"
ARGO = "gitops-infra:index:ArgoCdBootstrap"


@dataclass(frozen=True)
class _Target:
    """What the check reads of a ``StackTarget``: the project, the stack's name and its file backend."""

    stack: str
    stack_name: StackName
    project: Project
    backend: Path

    def file_backend(self) -> FileBackendStack | None:
        return FileBackendStack.of(self.backend.as_uri(), org=None, project="gitops-infra", name=self.stack)


def _target(tmp_path: Path, engine: str | None, state: list[str] | None) -> _Target:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: gitops-infra\nruntime: python\n")
    config = {"gitops-infra:gitops": {"engine": engine}} if engine is not None else {}
    config["gitops-infra:environment"] = {"name": "dev"}  # the program's config: gitops-infra's program
    (project / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    backend = tmp_path / "backend"
    if state is not None:
        stacks = backend / ".pulumi" / "stacks" / "gitops-infra"
        stacks.mkdir(parents=True)
        resources = [{"type": "pulumi:pulumi:Stack", "urn": "s"}, *({"type": t, "urn": t} for t in state)]
        checkpoint = {"version": 3, "checkpoint": {"latest": {"resources": resources}}}
        (stacks / "dev.json").write_text(json.dumps(checkpoint))
    return _Target("dev", parse_stack_name("dev"), Project.find(project), backend)


@pytest.mark.parametrize(
    ("engine", "state", "running", "way"),
    [
        (
            "argocd",
            [FLUX],
            "Flux",
            "Set gitops.engine back to flux; or hand the fleet over: gitops-infra switch-engine dev",
        ),
        # switch-engine does not make this move: the error must not send the user there.
        (
            None,
            [ARGO],
            "Argo CD",
            "Set gitops.engine back to argocd; a move from Argo CD to Flux is not made",
        ),
        (
            "flux",
            [ARGO],
            "Argo CD",
            "Set gitops.engine back to argocd; a move from Argo CD to Flux is not made",
        ),
    ],
)
def test_a_switch_in_one_update_is_refused_naming_gitops_engine(
    tmp_path: Path, engine: str | None, state: list[str], running: str, way: str
) -> None:
    target = _target(tmp_path, engine, state)
    with pytest.raises(ConfigError) as raised:
        refuse_engine_switch(target)  # type: ignore[arg-type]
    said = str(raised.value)
    assert "gitops-infra:gitops.engine: " in said and f"runs {running}" in said
    assert way in said and ("switch-engine" in said) is (running == "Flux")


@pytest.mark.parametrize(
    ("engine", "state"),
    [
        ("argocd", [ARGO]),
        (None, [FLUX]),
        ("flux", [FLUX]),
        ("argocd", []),  # a stack that ran neither: its first engine
        ("argocd", None),  # no state yet
        ("not-an-engine", [FLUX]),  # config validation says what is wrong with it
    ],
)
def test_the_same_engine_a_first_one_or_an_unreadable_config_is_not_refused(
    tmp_path: Path, engine: str | None, state: list[str] | None
) -> None:
    assert engine_switch_problem(_target(tmp_path, engine, state)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("state", [[ARGO], [FLUX]])
def test_a_team_s_own_program_that_composes_a_bootstrap_itself_is_not_refused(
    tmp_path: Path, state: list[str]
) -> None:
    # Its config is its own (here, none under gitops-infra:): its code, not gitops.engine, picks the engine.
    target = _target(tmp_path, None, state)
    settings = target.project.stack_settings_path(target.stack_name)
    settings.write_text(yaml.safe_dump({"config": {"drain:url": "ssh://git@example.com/fleet.git"}}))
    assert engine_switch_problem(target) is None  # type: ignore[arg-type]


def test_the_namespace_it_reads_is_the_config_s() -> None:
    from gitops_infra.automation._state import engine_switch
    from gitops_infra.config import PROJECT

    assert engine_switch.PROJECT == PROJECT
