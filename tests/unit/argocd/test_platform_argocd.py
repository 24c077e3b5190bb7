"""Both engines plan for dev and prod under mocks: the same platform, with Argo CD in Flux's place."""

from __future__ import annotations

import pulumi
import pytest

from gitops_infra import build_platform
from gitops_infra.config import load_config
from gitops_infra.policy import rules

from ..conftest import stack_config
from ..harness import run
from ..test_config_engine import _argo

ARGO = "gitops-infra:index:ArgoCdBootstrap"
FLUX = "gitops-infra:index:FluxBootstrap"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_engine_plans_the_same_platform_but_the_engine(stack: str) -> None:
    def plan(raw: dict[str, object]) -> tuple[set[str], dict[str, object]]:
        done = run(
            lambda: build_platform(load_config(raw, stack=stack)),
            outputs=lambda p: {k: pulumi.Output.from_input(v) for k, v in p.outputs().items()},
            stack=stack,
        )
        return {r.type for r in done.graph}, {k: v.value for k, v in done.values.items()}

    flux_types, flux_outputs = plan(stack_config(stack))
    argo_types, argo_outputs = plan(_argo(stack))

    assert FLUX in flux_types and ARGO not in flux_types
    assert ARGO in argo_types and FLUX not in argo_types
    assert not any("toolkit.fluxcd.io" in t for t in argo_types)
    # Everything but the engine (and what only Flux makes: prod's Receiver webhook) is planned alike.
    engine_only = {t for t in flux_types ^ argo_types if t.startswith(("kubernetes:", "gitops-infra:index:"))}
    assert flux_types - engine_only - {
        "github:index/repositoryWebhook:RepositoryWebhook",
        "pulumi:index:Stash",
    } == (argo_types - engine_only)
    assert argo_outputs["gitopsEngine"] == "argocd" and flux_outputs["gitopsEngine"] == "flux"
    assert argo_outputs["argoCdNamespace"] == "argocd" and "fluxNamespace" not in argo_outputs
    assert argo_outputs["environment"] == flux_outputs["environment"]


def test_prod_with_argo_cd_prunes_and_self_heals_as_its_policy_requires() -> None:
    done = run(lambda: build_platform(load_config(_argo("prod"), stack="prod")), stack="prod")
    resources = [(r.type, r.urn, r.inputs) for r in done.graph]
    assert rules.stack_prod_sync_violations(resources) == []
    (key,) = [r for r in done.graph if r.type == "github:index/repositoryDeployKey:RepositoryDeployKey"]
    assert key.inputs["readOnly"] is True  # no image automation without Flux: the key is read-only
