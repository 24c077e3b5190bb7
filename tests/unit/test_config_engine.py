"""``gitops.engine`` and the ``argocd`` section: each engine's settings only with that engine, named by
``gitops.engine``, and what the platform does only through Flux refused with Argo CD."""

from __future__ import annotations

from typing import Any

import pytest

from gitops_infra.config import ArgoCdSpec, load_config
from gitops_infra.defaults import GitOpsEngine
from gitops_infra.errors import ConfigError

from .conftest import stack_config


def _argo(stack: str, **argocd: Any) -> dict[str, Any]:
    raw = stack_config(stack)
    raw.pop("gitops-infra:flux", None)
    raw.pop("gitops-infra:notificationWebhook", None)
    raw["gitops-infra:gitops"] = {"engine": "argocd"}
    if argocd:
        raw["gitops-infra:argocd"] = argocd
    return raw


def problems_of(raw: dict[str, Any], stack: str = "test") -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack=stack)
    return info.value.problems


def test_the_committed_stacks_run_flux_and_dev_argocd_runs_argo_cd() -> None:
    for stack in ("dev", "prod", "local"):
        assert load_config(stack_config(stack), stack=stack).gitops.engine is GitOpsEngine.FLUX
    config = load_config(stack_config("dev-argocd"), stack="dev-argocd")
    assert config.argo_cd and config.argocd.ready_timeout == "10m"
    assert config.argocd == ArgoCdSpec(ready_timeout="10m")


def test_prod_with_argo_cd_loads() -> None:
    config = load_config(_argo("prod"), stack="prod")
    assert config.argo_cd and config.argocd.prune and config.argocd.self_heal


def test_a_flux_section_with_argo_cd_is_named_by_gitops_engine() -> None:
    raw = _argo("dev")
    raw["gitops-infra:flux"] = {"interval": "5m"}
    (problem,) = problems_of(raw)
    assert problem.startswith("gitops-infra:flux: Flux's settings, and this stack's gitops.engine is argocd")


def test_an_argocd_section_with_flux_is_named_by_gitops_engine() -> None:
    raw = stack_config("dev")
    raw["gitops-infra:argocd"] = {"selfHeal": False}
    (problem,) = problems_of(raw)
    assert problem.startswith("gitops-infra:argocd: Argo CD's settings, used only with gitops.engine: argocd")


def test_tenants_with_argo_cd_are_refused_naming_gitops_engine() -> None:
    raw = _argo("dev")
    raw["gitops-infra:tenants"] = [{"name": "shop"}]
    assert any(p.startswith("gitops-infra:tenants: with gitops.engine: argocd") for p in problems_of(raw))


@pytest.mark.parametrize(
    ("argocd", "where"),
    [
        ({"destinations": ["*"]}, "gitops-infra:argocd.destinations[0]: must name one namespace"),
        ({"retry": {"limit": -1}}, "gitops-infra:argocd.retry.limit: must be a whole number from 0 to 100"),
        ({"retry": {"factor": 0}}, "gitops-infra:argocd.retry.factor: must be a whole number from 1 to 10"),
        (
            {"version": "latest"},
            "gitops-infra:argocd.version: must be a version major.minor.patch, such as 10.1.1",
        ),
        ({"install": "external", "version": "10.1.1"}, "gitops-infra:argocd: version: not used with install"),
        ({"namespace": "apps"}, "gitops-infra:environment.serviceNamespace: 'apps' is also argocd.namespace"),
        ({"readyTimeout": "forever"}, "gitops-infra:argocd.readyTimeout: must be a Go duration"),
        ({"prune": "yes"}, "gitops-infra:argocd.prune: "),
    ],
)
def test_a_bad_argocd_key_is_named_by_its_path(argocd: dict[str, Any], where: str) -> None:
    assert any(p.startswith(where) for p in problems_of(_argo("dev", **argocd))), problems_of(
        _argo("dev", **argocd)
    )


def test_an_unknown_engine_is_named() -> None:
    raw = stack_config("dev")
    raw["gitops-infra:gitops"] = {"engine": "argo"}
    assert problems_of(raw) == ("gitops-infra:gitops.engine: Input should be 'flux' or 'argocd'",)
