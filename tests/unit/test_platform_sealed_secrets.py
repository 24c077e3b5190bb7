"""The platform with ``secrets.sealedSecrets``: the component on the cluster, its cert a stack output."""

from __future__ import annotations

import copy
from typing import Any

import pulumi

from gitops_infra import build_platform, load_config
from gitops_infra.platform import Platform

from .conftest import MINIMAL
from .harness import Run, run

COMPONENT = "gitops-infra:index:SealedSecrets"
RELEASE = "kubernetes:helm.sh/v3:Release"
KEY_SECRET = "kubernetes:core/v1:Secret"


def platform(secrets: dict[str, Any] | None, **flux: Any) -> Run[Platform]:
    raw = copy.deepcopy(MINIMAL)
    raw["flux"] |= flux
    if secrets is not None:
        raw["secrets"] = secrets
    return run(
        lambda: build_platform(load_config(raw, stack="test")),
        outputs=lambda p: {key: pulumi.Output.from_input(value) for key, value in p.outputs().items()},
        stack="test",
    )


def test_off_by_default_nothing_is_made_and_nothing_exported() -> None:
    for secrets in (None, {"sealedSecrets": {"enabled": False}}):
        result = platform(secrets)
        assert result.graph.of_type(COMPONENT) == [] and result.result.sealed_secrets is None
        assert "sealedSecretsCert" not in result.values


def test_on_the_keys_and_the_controller_go_through_the_cluster_s_provider_and_the_cert_is_an_output() -> None:
    result = platform({"sealedSecrets": {"enabled": True, "rotations": ["", "2027-01"]}})
    component = result.graph.one(COMPONENT, "gitops-test-sealed-secrets")
    releases = [r for r in result.graph.of_type(RELEASE) if r.parent == component.urn]
    (flux_release,) = [r for r in result.graph.of_type(RELEASE) if r.parent != component.urn]
    assert len(releases) == 1 and releases[0].provider == flux_release.provider
    assert len([s for s in result.graph.of_type(KEY_SECRET) if s.parent == component.urn]) == 2
    cert = result.values["sealedSecretsCert"]
    assert cert.secret is False and cert.value.startswith("mock-cert-pem-")
    assert result.result.sealed_secrets is not None


def test_with_flux_installed_elsewhere_only_the_keys_are_made() -> None:
    result = platform({"sealedSecrets": {"enabled": True}}, install="external")
    component = result.graph.one(COMPONENT)
    assert [r for r in result.graph.of_type(RELEASE) if r.parent == component.urn] == []
    assert [s for s in result.graph.of_type(KEY_SECRET) if s.parent == component.urn] != []
