"""The tenant policies: no tenant's reconciler writes cluster-wide, and every tenant Kustomization names
the ServiceAccount it runs as (``gitops_infra.policy.rules._tenants``)."""

from __future__ import annotations

from typing import Any

import pytest

from gitops_infra.policy import rules

KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
NAMESPACE = "kubernetes:core/v1:Namespace"
CRB, RB = rules.CLUSTER_ROLE_BINDING_TYPES[0], rules.ROLE_BINDING_TYPES[0]
CLUSTER_ROLE = rules.CLUSTER_ROLE_TYPES[0]
LABEL = {rules.TENANT_LABEL: "team-a"}


def _stack(*resources: tuple[str, dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(kind, f"urn:{i}", props) for i, (kind, props) in enumerate(resources)]


def _kustomization(namespace: str, account: str | None = None, labels: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {"prune": True}
    if account is not None:
        spec["serviceAccountName"] = account
    return (
        KUSTOMIZATION,
        {"metadata": {"name": "k", "namespace": namespace, "labels": labels or {}}, "spec": spec},
    )


def _binding(kind: str, role_kind: str, role: str, namespace: str | None = "team-a") -> Any:
    metadata: dict[str, Any] = {"name": "b"}
    if kind == RB:
        metadata["namespace"] = namespace
    subject = {"kind": "ServiceAccount", "name": "team-a-reconciler", "namespace": "team-a"}
    return (kind, {"metadata": metadata, "roleRef": {"kind": role_kind, "name": role}, "subjects": [subject]})


TENANT = (
    (NAMESPACE, {"metadata": {"name": "team-a", "labels": LABEL}}),
    (SERVICE_ACCOUNT, {"metadata": {"name": "team-a-reconciler", "namespace": "team-a", "labels": LABEL}}),
    _kustomization("team-a", "team-a-reconciler", LABEL),
)


# --- tenant-kustomization-identity -------------------------------------------------------------------


@pytest.mark.parametrize(
    "kustomization",
    [
        pytest.param(_kustomization("team-a", labels=LABEL), id="labelled"),
        pytest.param(_kustomization("team-a"), id="outside Flux's namespace"),
        pytest.param(_kustomization("team-a", "", LABEL), id="empty"),
        pytest.param(_kustomization("flux-system", labels=LABEL), id="labelled, in Flux's namespace"),
    ],
)
def test_a_tenant_kustomization_without_a_service_account_is_a_violation(kustomization: Any) -> None:
    ((urn, message),) = rules.stack_tenant_identity_violations(_stack(kustomization))
    assert urn == "urn:0"
    assert (
        "sets no spec.serviceAccountName" in message and "team-a/k" in message
    ) or "flux-system/k" in message


@pytest.mark.parametrize(
    "stack",
    [
        pytest.param([_kustomization("flux-system")], id="the platform's, in flux-system"),
        pytest.param(
            [
                (
                    "kubernetes:core/v1:NamespacePatch",
                    {"metadata": {"name": "flux-x", "labels": {"app.kubernetes.io/part-of": "flux"}}},
                ),
                _kustomization("flux-x"),
            ],
            id="the platform's, in a namespace the stack labels Flux's",
        ),
        pytest.param(
            [
                ("kubernetes:helm.sh/v3:Release", {"chart": "flux2", "namespace": "gitops"}),
                _kustomization("gitops"),
            ],
            id="the platform's, in the flux2 release's namespace",
        ),
        pytest.param([_kustomization("team-a", "team-a-reconciler", LABEL)], id="a tenant's, with its own"),
    ],
)
def test_flux_s_own_kustomizations_and_tenants_naming_their_identity_pass(stack: list[Any]) -> None:
    assert rules.stack_tenant_identity_violations(_stack(*stack)) == []


def test_the_flux_namespaces_setting_adds_to_the_namespaces_flux_s_own_kustomizations_live_in() -> None:
    settings = rules.TenantSettings.from_config({"fluxNamespaces": ["platform"]})
    assert rules.stack_tenant_identity_violations(_stack(_kustomization("platform")), settings) == []
    assert rules.stack_tenant_identity_violations(_stack(_kustomization("flux-system")), settings) != []


# --- tenant-no-cluster-wide-write --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("binding", "said"),
    [
        pytest.param(
            _binding(CRB, "ClusterRole", "cluster-admin"),
            "in every namespace and cluster-wide",
            id="CRB cluster-admin",
        ),
        pytest.param(_binding(CRB, "ClusterRole", "edit"), "ClusterRole edit, which writes", id="CRB edit"),
        pytest.param(
            _binding(CRB, "ClusterRole", "someone-elses"), "ClusterRole someone-elses", id="CRB unknown role"
        ),
        pytest.param(
            _binding(RB, "ClusterRole", "cluster-admin"),
            "every verb on every resource",
            id="RB cluster-admin",
        ),
        pytest.param(
            _binding(RB, "ClusterRole", "admin", namespace="team-b"),
            "which is tenant team-b's",
            id="RB in another tenant's namespace",
        ),
    ],
)
def test_a_binding_that_lets_a_tenant_write_cluster_wide_is_a_violation(binding: Any, said: str) -> None:
    other = (NAMESPACE, {"metadata": {"name": "team-b", "labels": {rules.TENANT_LABEL: "team-b"}}})
    found = rules.stack_tenant_binding_violations(_stack(*TENANT, other, binding))
    ((urn, message),) = found
    assert urn == "urn:4" and said in message and "team-a/team-a-reconciler" in message, message


def test_a_cluster_role_in_the_stack_is_judged_by_its_rules() -> None:
    writes = (
        CLUSTER_ROLE,
        {"metadata": {"name": "mine"}, "rules": [{"verbs": ["get", "patch"], "resources": ["pods"]}]},
    )
    reads = (
        CLUSTER_ROLE,
        {"metadata": {"name": "mine"}, "rules": [{"verbs": ["get", "list"], "resources": ["pods"]}]},
    )
    everything = (
        CLUSTER_ROLE,
        {"metadata": {"name": "mine"}, "rules": [{"verbs": ["*"], "resources": ["*"], "apiGroups": ["*"]}]},
    )
    assert (
        len(
            rules.stack_tenant_binding_violations(
                _stack(*TENANT, writes, _binding(CRB, "ClusterRole", "mine"))
            )
        )
        == 1
    )
    assert (
        rules.stack_tenant_binding_violations(_stack(*TENANT, reads, _binding(CRB, "ClusterRole", "mine")))
        == []
    )
    assert (
        rules.stack_tenant_binding_violations(_stack(*TENANT, reads, _binding(RB, "ClusterRole", "mine")))
        == []
    )
    assert (
        len(
            rules.stack_tenant_binding_violations(
                _stack(*TENANT, everything, _binding(RB, "ClusterRole", "mine"))
            )
        )
        == 1
    )


@pytest.mark.parametrize(
    "binding",
    [
        pytest.param(_binding(RB, "ClusterRole", "admin"), id="RB admin at home (the default)"),
        pytest.param(_binding(RB, "ClusterRole", "edit"), id="RB edit at home"),
        pytest.param(_binding(CRB, "ClusterRole", "view"), id="CRB view: reads only"),
    ],
)
def test_a_tenant_s_own_namespace_role_or_a_cluster_wide_read_passes(binding: Any) -> None:
    assert rules.stack_tenant_binding_violations(_stack(*TENANT, binding)) == []


def test_a_reconciler_known_only_from_its_kustomization_counts_and_other_accounts_do_not() -> None:
    unlabelled = _kustomization("team-a", "team-a-reconciler")  # outside Flux's namespace: a tenant's
    assert (
        len(
            rules.stack_tenant_binding_violations(
                _stack(unlabelled, _binding(CRB, "ClusterRole", "cluster-admin"))
            )
        )
        == 1
    )
    # The platform's own reconciler, bound cluster-admin as the flux2 chart binds it, is no tenant.
    platform = _kustomization("flux-system", "kustomize-controller")
    crb = (
        CRB,
        {
            "metadata": {"name": "flux"},
            "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "kustomize-controller", "namespace": "flux-system"}
            ],
        },
    )
    assert rules.stack_tenant_binding_violations(_stack(*TENANT, platform, crb)) == []
