"""Tenants on the real API server, with Flux's real controllers locked down: the local cluster's lockdown,
and the GitOps layer's read of each tenant's sync, by name, in drift, status and promotion.

The module runs kustomize-controller locked down (``LocalCluster.locked_down``: one controller restarted,
and back after the module), so it shares the session's cluster with the other tests. The stack is this
repository's program with the ``tenants`` output and the root Kustomization's identity stood in for by
config (``tenants_fixture``); each tenant's namespaces, ServiceAccount, RoleBindings, git credential,
GitRepository and Kustomization are made here with the API client, as the brief of issue 47 names them.
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pulumi import automation as auto

from gitops_infra.automation import up
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster
from gitops_infra.local._cluster import FLUX_RECONCILER

from ..support import REPO_ROOT, workspace, write_project
from .conftest import STACK, LocalStack, gone, wait_until

pytestmark = pytest.mark.cluster

TENANTS_FIXTURE = REPO_ROOT / "tests" / "cluster" / "tenants_fixture"
TENANT_LABEL = "gitops-infra.io/tenant"
SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")


@pytest.fixture(scope="module")
def locked_down(cluster: LocalCluster) -> Iterator[LocalCluster]:
    with cluster.locked_down():
        yield cluster


@dataclass(frozen=True)
class Tenant:
    name: str
    namespaces: tuple[str, ...]

    @property
    def home(self) -> str:
        return self.namespaces[0]

    @property
    def reconciler(self) -> str:
        return f"{self.name}-reconciler"

    @property
    def user(self) -> str:
        """Whom kustomize-controller impersonates for this tenant."""
        return f"system:serviceaccount:{self.home}:{self.reconciler}"

    @property
    def output(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.home,
            "namespaces": list(self.namespaces),
            "kustomization": self.name,
        }


def _create(create: Callable[[], Any]) -> None:
    try:
        create()
    except ApiException as exc:
        if exc.status != 409:
            raise


def _flux_object(
    kind: tuple[str, str, str], name: str, namespace: str, spec: dict[str, Any], **labels: str
) -> Any:
    group, version, plural = kind
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "GitRepository" if plural == "gitrepositories" else "Kustomization",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def _git_source(
    api: Any, fleet: FleetServer, key: DeployKeyPair, namespace: str, name: str, **labels: str
) -> None:
    """A GitRepository ``name`` in ``namespace`` on the fleet server, with its credential ``<name>-git``."""
    core, objects = client.CoreV1Api(api), client.CustomObjectsApi(api)
    secret = {
        "metadata": {"name": f"{name}-git"},
        "stringData": {"identity": key.private_key, "known_hosts": fleet.known_hosts},
    }
    _create(lambda: core.create_namespaced_secret(namespace, secret))
    spec = {
        "interval": "1m",
        "url": fleet.url,
        "ref": {"branch": "main"},
        "secretRef": {"name": f"{name}-git"},
    }
    group, version, plural = SOURCE
    body = _flux_object(SOURCE, name, namespace, spec, **labels)
    objects.create_namespaced_custom_object(group, version, namespace, plural, body)
    # Its artifact first: a Kustomization made before it waits a whole retry interval.
    wait_until(
        lambda: (_ready(api, SOURCE, namespace, name) or {}).get("status") == "True",
        f"GitRepository {namespace}/{name} to fetch",
    )


def _kustomization(api: Any, namespace: str, name: str, spec: dict[str, Any], **labels: str) -> None:
    group, version, plural = KUSTOMIZE
    base = {"interval": "1m", "prune": True, "sourceRef": {"kind": "GitRepository", "name": name}}
    body = _flux_object(KUSTOMIZE, name, namespace, {**base, **spec}, **labels)
    client.CustomObjectsApi(api).create_namespaced_custom_object(group, version, namespace, plural, body)


def _namespace(api: Any, name: str, **labels: str) -> None:
    _create(lambda: client.CoreV1Api(api).create_namespace({"metadata": {"name": name, "labels": labels}}))


def make_tenant(api: Any, tenant: Tenant, fleet: FleetServer, key: DeployKeyPair) -> None:
    """A tenant's objects as the platform makes them (the brief's interface): labelled namespaces, its
    reconciler bound to ``admin`` in each, its credential, GitRepository and Kustomization at home."""
    labels = {TENANT_LABEL: tenant.name}
    for namespace in tenant.namespaces:
        _namespace(api, namespace, **labels, **{"toolkit.fluxcd.io/tenant": tenant.name})
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    _create(
        lambda: core.create_namespaced_service_account(tenant.home, {"metadata": {"name": tenant.reconciler}})
    )
    for namespace in tenant.namespaces:
        binding = {
            "metadata": {"name": tenant.reconciler, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"kind": "ServiceAccount", "name": tenant.reconciler, "namespace": tenant.home}],
        }
        _create(
            lambda namespace=namespace, binding=binding: rbac.create_namespaced_role_binding(
                namespace, binding
            )
        )
    _git_source(api, fleet, key, tenant.home, tenant.name, **labels)
    spec: dict[str, Any] = {"path": f"./tenants/{tenant.name}", "serviceAccountName": tenant.reconciler}
    if len(tenant.namespaces) == 1:
        spec["targetNamespace"] = tenant.home
    _kustomization(api, tenant.home, tenant.name, spec, **labels)


def _get(api: Any, kind: tuple[str, str, str], namespace: str, name: str) -> dict[str, Any]:
    group, version, plural = kind
    found: dict[str, Any] = client.CustomObjectsApi(api).get_namespaced_custom_object(
        group, version, namespace, plural, name
    )
    return found


def _ready(api: Any, kind: tuple[str, str, str], namespace: str, name: str) -> dict[str, Any] | None:
    """The Ready condition once it speaks of the object's current spec."""
    try:
        obj = _get(api, kind, namespace, name)
    except ApiException:
        return None
    ready = next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "Ready"), None)
    if ready is None or ready.get("observedGeneration") != obj["metadata"]["generation"]:
        return None
    return ready


def _reconcile_now(api: Any, namespace: str, name: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    body = {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": stamp}}}
    for kind in (SOURCE, KUSTOMIZE):
        group, version, plural = kind
        client.CustomObjectsApi(api).patch_namespaced_custom_object(
            group, version, namespace, plural, name, body
        )


def _delete_namespaces(api: Any, names: list[str]) -> None:
    """Delete ``names`` and wait until they are gone: a Kustomization left behind, not Ready, would be a
    problem in every later test's GitOps layer."""
    core = client.CoreV1Api(api)
    for name in names:
        try:
            core.delete_namespace(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
    for name in names:
        wait_until(lambda name=name: gone(core.read_namespace, name), f"namespace {name} to be gone")


def _fixture_config(stack: LocalStack, key: str, value: Any) -> None:
    """Set ``fixture:<key>`` (the tenants fixture's own config) in the stack's file, and commit it."""
    text = value if isinstance(value, str) else json.dumps(value)
    workspace(stack.root, stack.env).set_config(STACK, f"fixture:{key}", auto.ConfigValue(text))
    stack.commit(f"fixture:{key}")


@pytest.fixture
def tenant_stack(local_stack: LocalStack, locked_down: LocalCluster) -> LocalStack:
    """The local stack under the tenants fixture program, its root Kustomization stating its identity,
    which the harness binds in the stack's Flux namespace, as the flux2 chart would."""
    write_project(local_stack.root, "gitops-infra", main=TENANTS_FIXTURE, virtualenv=sys.prefix)
    _fixture_config(local_stack, "lockdown", "true")
    locked_down.bind_flux_reconciler(local_stack.flux_namespace)
    return local_stack


@pytest.fixture
def tenants(tenant_stack: LocalStack) -> Iterator[tuple[Tenant, Tenant]]:
    """Two tenants of this test: ``a`` with two namespaces (no target namespace), ``b`` with one; their
    namespaces deleted afterwards."""
    a = Tenant(f"a-{tenant_stack.name}", (f"a-{tenant_stack.name}", f"a-{tenant_stack.name}-2"))
    b = Tenant(f"b-{tenant_stack.name}", (f"b-{tenant_stack.name}",))
    yield a, b
    _delete_namespaces(tenant_stack.api, [*a.namespaces, *b.namespaces])


def _config_map(name: str, namespace: str | None = None) -> str:
    where = f"  namespace: {namespace}\n" if namespace else ""
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{where}data:\n  team: yes-it-is\n"


CLUSTER_ROLE = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\n"
    "rules:\n- apiGroups: ['']\n  resources: ['secrets']\n  verbs: ['get']\n"
)


def _tenant(gitops: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [t for t in gitops["tenants"] if t["name"] == name]
    return found


def test_each_tenant_s_sync_is_reported_by_name_and_a_refused_one_blocks_promotion(
    tenant_stack: LocalStack,
    tenants: tuple[Tenant, Tenant],
    second_stack: str,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    no_credentials: Callable[[str], None],
) -> None:
    a, b = tenants
    api = tenant_stack.api
    _fixture_config(tenant_stack, "tenants", [a.output, b.output])
    fleet.commit(
        {
            f"tenants/{a.name}/app.yaml": _config_map("app", a.home)
            + "---\n"
            + _config_map("app", a.namespaces[1]),
            f"tenants/{b.name}/app.yaml": _config_map("app"),
        },
        "the tenants' first commits",
    )
    up("local", options=tenant_stack.options)  # the root Kustomization, locked down, as kustomize-controller

    # Named in the output, not in the cluster yet: a problem each, by tenant.
    missing = tenant_stack.cli("drift", "local", "--layers", "gitops", "--json")
    assert missing.exit_code == 2, missing.output
    gitops = json.loads(missing.stdout)["gitops"]
    assert [t["name"] for t in gitops["tenants"]] == [a.name, b.name]
    for tenant in (a, b):
        said = f"tenant {tenant.name}: Kustomization {tenant.home}/{tenant.name} is not Ready yet (NotFound)"
        assert any(p.startswith(said) for p in gitops["problems"]), gitops["problems"]
    assert gitops["syncs"][0]["ready"] is True and gitops["failing"] == []

    for tenant in (a, b):
        make_tenant(api, tenant, fleet, deploy_key)
    for tenant in (a, b):
        wait_until(
            lambda tenant=tenant: (
                (_ready(api, KUSTOMIZE, tenant.home, tenant.name) or {}).get("status") == "True"
            ),
            f"tenant {tenant.name}'s Kustomization to be Ready",
        )
    core = client.CoreV1Api(api)
    assert {ns: core.read_namespaced_config_map("app", ns).data for ns in (*a.namespaces, b.home)} == {
        ns: {"team": "yes-it-is"} for ns in (*a.namespaces, b.home)
    }

    healthy = tenant_stack.cli("drift", "local", "--json")
    assert healthy.exit_code == 0, healthy.output
    gitops = json.loads(healthy.stdout)["gitops"]
    assert gitops["healthy"] is True and gitops["healthy_tenants"] == 2, gitops
    assert (
        gitops["failing"] == [] and len(gitops["syncs"]) == 1
    )  # the tenants' are theirs, not the platform's
    for tenant in (a, b):
        found = _tenant(gitops, tenant.name)
        assert found["healthy"] is True and found["namespace"] == tenant.home
        assert found["namespaces"] == list(tenant.namespaces)
        assert found["sync"]["applied_revision"] == found["source"]["revision"] is not None
    text = tenant_stack.cli("status", "local")
    assert text.exit_code == 0 and "tenants: 2 of 2 healthy" in text.output, text.output
    assert f"tenant {a.name} ({a.home}): healthy, applied main@sha1:" in text.output, text.output
    markdown = tenant_stack.cli("drift", "local", "--format", "markdown")
    row = f"| `{b.name}` | `{b.home}` | `{b.home}/{b.name}` | yes |"
    assert markdown.exit_code == 0 and row in markdown.output, markdown.output

    # Tenant a writes into b's namespace and makes a ClusterRole: refused, as a's reconciler.
    fleet.commit(
        {
            f"tenants/{a.name}/b.yaml": _config_map("not-yours", b.home),
            f"tenants/{a.name}/role.yaml": CLUSTER_ROLE.format(name=a.name),
        },
        "tenant a reaches out of its namespaces",
    )
    _reconcile_now(api, a.home, a.name)
    refused = wait_until(
        lambda: (r := _ready(api, KUSTOMIZE, a.home, a.name)) and r["status"] == "False" and r,
        "tenant a's Kustomization to be refused",
    )
    assert a.user in refused["message"], refused
    assert (_ready(api, KUSTOMIZE, b.home, b.name) or {}).get("status") == "True"
    for forbidden in ((core.read_namespaced_config_map, "not-yours", b.home),):
        assert gone(*forbidden)
    name = f"Kustomization {a.home}/{a.name}"
    said = f"tenant {a.name}: {name} is not Ready ({refused['reason']}): {refused['message']}"

    drift = tenant_stack.cli("drift", "local", "--json")
    status = tenant_stack.cli("status", "local", "--json")
    assert drift.exit_code == 2, drift.output
    assert status.exit_code == 0, status.output
    for result in (drift, status):
        gitops = json.loads(result.stdout)["gitops"]
        # a's problems only, by name: refused, and so behind its source; b's sync is healthy.
        assert said in gitops["problems"], gitops["problems"]
        assert all(p.startswith(f"tenant {a.name}: ") for p in gitops["problems"]), gitops["problems"]
        assert gitops["healthy_tenants"] == 1 and _tenant(gitops, b.name)["healthy"] is True
        assert _tenant(gitops, a.name)["sync"]["message"] == refused["message"]
    outputs = [drift.output, status.output]
    for args in (("drift", "local"), ("status", "local")):
        for output_format in ("text", "markdown"):
            result = tenant_stack.cli(*args, "--format", output_format)
            assert " ".join(said.split()) in " ".join(result.output.split()), result.output
            assert "tenants: 1 of 2 healthy" in result.output, result.output
            outputs.append(result.output)

    promotion = tenant_stack.cli("promote", "local", second_stack, "--require-healthy", "--yes", "--json")
    assert promotion.exit_code == 1, promotion.output
    error = json.loads(promotion.stdout)["error"]
    assert error["type"] == "PromotionError", error
    assert f"--require-healthy: {' '.join(said.split())}" in error["message"], error
    assert "(1 of 2 tenants healthy)" in error["message"], error
    no_credentials(
        "".join([missing.output, healthy.output, text.output, markdown.output, promotion.output, *outputs])
    )


def test_locked_down_flux_refuses_no_identity_and_other_namespaces_sources_and_lets_its_own_apply(
    locked_down: LocalCluster, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    api = locked_down.api()
    team, other, flux = "lock-team", "lock-other", "lock-flux"
    try:
        for namespace in (team, other, flux):
            _namespace(api, namespace)
        locked_down.bind_flux_reconciler(flux)
        fleet.commit(
            {
                "lockdown/team/app.yaml": _config_map("app"),
                "lockdown/platform/role.yaml": CLUSTER_ROLE.format(name="lockdown-platform"),
            },
            "the lockdown test's paths",
        )
        for namespace in (team, other, flux):
            _git_source(api, fleet, deploy_key, namespace, "fleet")
        # No serviceAccountName: kustomize-controller impersonates the namespace's `default`, which may
        # do nothing.
        _kustomization(
            api,
            team,
            "no-identity",
            {
                "path": "./lockdown/team",
                "targetNamespace": team,
                "sourceRef": {"kind": "GitRepository", "name": "fleet"},
            },
        )
        # Another namespace's source: refused before anything is built.
        _kustomization(
            api,
            team,
            "cross",
            {
                "path": "./lockdown/team",
                "targetNamespace": team,
                "sourceRef": {"kind": "GitRepository", "name": "fleet", "namespace": other},
            },
        )
        # The platform's own identity: the chart's reconciler, cluster-admin, may make a ClusterRole.
        _kustomization(
            api,
            flux,
            "platform",
            {
                "path": "./lockdown/platform",
                "serviceAccountName": FLUX_RECONCILER,
                "sourceRef": {"kind": "GitRepository", "name": "fleet"},
            },
        )

        def settled(namespace: str, name: str) -> Callable[[], dict[str, Any] | None]:
            return lambda: (r := _ready(api, KUSTOMIZE, namespace, name)) and r["status"] != "Unknown" and r

        no_identity = wait_until(settled(team, "no-identity"), "the Kustomization without identity to settle")
        assert no_identity["status"] == "False", no_identity
        assert f"system:serviceaccount:{team}:default" in no_identity["message"], no_identity
        cross = wait_until(settled(team, "cross"), "the cross-namespace Kustomization to settle")
        assert cross["status"] == "False" and "cross-namespace" in cross["message"], cross
        platform = wait_until(settled(flux, "platform"), "the platform's Kustomization to settle")
        assert platform["status"] == "True", platform
        client.RbacAuthorizationV1Api(api).read_cluster_role("lockdown-platform")
    finally:
        _delete_namespaces(api, [team, other, flux])
