"""Tenants on the real API server, with Flux's real controllers locked down: this repository's stack program
with two tenants in its ``tenants`` config, their syncs, their refusals as the GitOps layer reports them,
their removal and return, and a destroy; and the lockdown itself, on objects made by hand.

The module runs kustomize-controller locked down (``LocalCluster.locked_down``: one controller restarted,
and back after the module), so it shares the session's cluster with the other tests. Flux is installed
outside the local stack, so the harness binds the identity the platform's root Kustomization states
(``bind_flux_reconciler``), as the flux2 chart would.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import destroy, up
from gitops_infra.components.flux import FLUX_SYNC_NAME
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment, parse_environment
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster
from gitops_infra.local._cluster import FLUX_RECONCILER

from .conftest import LocalStack, gone, wait_until

pytestmark = pytest.mark.cluster

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
    def config(self) -> dict[str, Any]:
        """Its entry in ``gitops-infra:tenants``; its source the default, the fleet's ``tenants/<name>``."""
        if self.namespaces == (self.name,):
            return {"name": self.name}
        return {"name": self.name, "namespaces": list(self.namespaces)}


def _create(create: Callable[[], Any]) -> None:
    try:
        create()
    except ApiException as exc:
        if exc.status != 409:
            raise


def _flux_object(kind: tuple[str, str, str], name: str, namespace: str, spec: dict[str, Any]) -> Any:
    group, version, plural = kind
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "GitRepository" if plural == "gitrepositories" else "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _git_sources(api: Any, fleet: FleetServer, key: DeployKeyPair, namespaces: tuple[str, ...]) -> None:
    """A GitRepository ``fleet`` on the fleet server in each of ``namespaces``, with its credential
    ``fleet-git``; once each has fetched."""
    core, objects = client.CoreV1Api(api), client.CustomObjectsApi(api)
    secret = {
        "metadata": {"name": "fleet-git"},
        "stringData": {"identity": key.private_key, "known_hosts": fleet.known_hosts},
    }
    spec = {"interval": "1m", "url": fleet.url, "ref": {"branch": "main"}, "secretRef": {"name": "fleet-git"}}
    group, version, plural = SOURCE
    for namespace in namespaces:
        _create(lambda namespace=namespace: core.create_namespaced_secret(namespace, secret))
        body = _flux_object(SOURCE, "fleet", namespace, spec)
        objects.create_namespaced_custom_object(group, version, namespace, plural, body)
    # Their artifacts first: a Kustomization made before its source's waits a whole retry interval.
    for namespace in namespaces:
        wait_until(
            lambda namespace=namespace: (
                (_ready(api, SOURCE, namespace, "fleet") or {}).get("status") == "True"
            ),
            f"GitRepository {namespace}/fleet to fetch",
        )


def _kustomization(api: Any, namespace: str, name: str, spec: dict[str, Any]) -> None:
    group, version, plural = KUSTOMIZE
    base = {"interval": "1m", "prune": True, "sourceRef": {"kind": "GitRepository", "name": name}}
    body = _flux_object(KUSTOMIZE, name, namespace, {**base, **spec})
    client.CustomObjectsApi(api).create_namespaced_custom_object(group, version, namespace, plural, body)


def _namespace(api: Any, name: str) -> None:
    _create(lambda: client.CoreV1Api(api).create_namespace({"metadata": {"name": name}}))


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
    """Delete the Flux objects in ``names`` and wait until they are gone, then the namespaces: a
    Kustomization left behind, not Ready, would be a problem in every later test's GitOps layer, which
    reads them cluster-wide; the namespaces themselves take seconds more to go, and nothing waits for that."""
    objects = client.CustomObjectsApi(api)

    def none_left(kind: tuple[str, str, str], namespace: str) -> Callable[[], bool]:
        return lambda: not objects.list_namespaced_custom_object(*kind[:2], namespace, kind[2])["items"]

    for kind in (KUSTOMIZE, SOURCE):  # a Kustomization prunes while its source is there
        for namespace in names:
            objects.delete_collection_namespaced_custom_object(*kind[:2], namespace, kind[2])
        for namespace in names:
            wait_until(none_left(kind, namespace), f"the {kind[2]} in {namespace} to be gone")
    core = client.CoreV1Api(api)
    for name in names:
        try:
            core.delete_namespace(name)
        except ApiException as exc:
            if exc.status != 404:
                raise


@pytest.fixture
def tenant_stack(local_stack: LocalStack, locked_down: LocalCluster) -> LocalStack:
    """The local stack on the locked-down cluster, with the identity its root Kustomization states (while
    there are tenants) bound in its Flux namespace, as the flux2 chart binds it."""
    locked_down.bind_flux_reconciler(local_stack.flux_namespace)
    return local_stack


@pytest.fixture
def tenants(tenant_stack: LocalStack) -> Iterator[tuple[Tenant, Tenant]]:
    """Two tenants of this test: ``a`` with two namespaces (no target namespace), ``b`` with one.

    Afterwards the stack is destroyed here, first, and only then is what a failed test left deleted by
    hand: a namespace deleted under its tenant's Kustomization could take the RoleBinding its finalizer
    prunes with."""
    a = Tenant(f"a-{tenant_stack.name}", (f"a-{tenant_stack.name}", f"a-{tenant_stack.name}-2"))
    b = Tenant(f"b-{tenant_stack.name}", (f"b-{tenant_stack.name}",))
    yield a, b
    tenant_stack.raw_stack().destroy(on_output=None)
    _delete_namespaces(tenant_stack.api, [*a.namespaces, *b.namespaces])


def _wait_ready(api: Any, tenant: Tenant) -> dict[str, Any]:
    """The tenant's Kustomization, once Flux says it is Ready (of its current spec)."""
    wait_until(
        lambda: (_ready(api, KUSTOMIZE, tenant.home, tenant.name) or {}).get("status") == "True",
        f"tenant {tenant.name}'s Kustomization to be Ready",
    )
    return _get(api, KUSTOMIZE, tenant.home, tenant.name)


def _data(api: Any, name: str, namespace: str) -> dict[str, str] | None:
    """The ConfigMap ``name``'s data in ``namespace``, ``None`` when it is not there."""
    try:
        data: dict[str, str] = client.CoreV1Api(api).read_namespaced_config_map(name, namespace).data
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return data


@contextlib.contextmanager
def _flux_events(api: Any, tenant: Tenant) -> Iterator[list[str]]:
    """The messages of the Events recorded on the tenant's Kustomization inside the block (and before it,
    some twice): what kustomize-controller says it pruned, which its namespace's deletion takes away."""
    seen: list[str] = []
    done = threading.Event()
    selector = f"involvedObject.kind=Kustomization,involvedObject.name={tenant.name}"

    def record() -> None:
        # Watches of a second each, so that the block's end stops it within one.
        while not done.is_set():
            for event in watch.Watch().stream(
                client.CoreV1Api(api).list_namespaced_event,
                tenant.home,
                field_selector=selector,
                timeout_seconds=1,
            ):
                seen.append(str(event["object"].message))

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join(timeout=10)


def _pruned(events: list[str], namespaces: tuple[str, ...]) -> bool:
    """Whether kustomize-controller said it deleted the ConfigMap ``app`` in each of ``namespaces``."""
    said = "\n".join(events)
    return all(f"ConfigMap/{namespace}/app deleted" in said for namespace in namespaces)


def _config_map(name: str, namespace: str | None = None) -> str:
    where = f"  namespace: {namespace}\n" if namespace else ""
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{where}data:\n  team: yes-it-is\n"


CLUSTER_ROLE = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\n"
    "rules:\n- apiGroups: ['']\n  resources: ['secrets']\n  verbs: ['get']\n"
)


ROLE = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
    "metadata:\n  name: reader\n  namespace: {namespace}\n"
    "rules:\n- apiGroups: ['']\n  resources: ['configmaps']\n  verbs: ['get']\n"
)


def _tenant(gitops: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [t for t in gitops["tenants"] if t["name"] == name]
    return found


def _set_tenants(stack: LocalStack, *tenants: Tenant) -> None:
    stack.set("tenants", [tenant.config for tenant in tenants])
    stack.commit(f"tenants: {', '.join(tenant.name for tenant in tenants) or 'none'}")


def _contract(api: Any, namespace: str) -> Environment:
    """The environment contract in ``namespace``, read typed as ``read_environment`` reads it."""
    return parse_environment(_data(api, ENVIRONMENT_CONFIGMAP, namespace) or {})


def _may_read_contract(api: Any, tenant: Tenant, namespace: str) -> bool:
    """Whether the API server lets the tenant's reconciler read the contract ConfigMap in ``namespace``."""
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{tenant.home}", "system:authenticated"]
    attributes = {
        "verb": "get",
        "resource": "configmaps",
        "name": ENVIRONMENT_CONFIGMAP,
        "namespace": namespace,
    }
    review = {"spec": {"user": tenant.user, "groups": groups, "resourceAttributes": attributes}}
    return bool(client.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed)


def _platform_ready(stack: LocalStack, contract: Environment) -> None:
    """The platform's root Kustomization Ready, as its own identity, and ``contract`` where it was."""
    root = _get(stack.api, KUSTOMIZE, stack.flux_namespace, FLUX_SYNC_NAME)
    assert root["spec"]["serviceAccountName"] == FLUX_RECONCILER, root["spec"]
    ready = _ready(stack.api, KUSTOMIZE, stack.flux_namespace, FLUX_SYNC_NAME)
    assert ready is not None and ready["status"] == "True", ready
    assert _contract(stack.api, stack.service_namespace) == contract


def test_two_tenants_apply_into_their_own_namespaces_only_and_go_and_come_back_with_the_config(
    tenant_stack: LocalStack,
    tenants: tuple[Tenant, Tenant],
    second_stack: str,
    fleet: FleetServer,
    no_credentials: Callable[[str], None],
) -> None:
    a, b = tenants
    api = tenant_stack.api
    fleet.commit(
        {
            f"tenants/{a.name}/app.yaml": _config_map("app", a.home)
            + "---\n"
            + _config_map("app", a.namespaces[1]),
            f"tenants/{b.name}/app.yaml": _config_map("app"),
        },
        "the tenants' first commits",
    )
    _set_tenants(tenant_stack, a, b)
    up("local", options=tenant_stack.options)

    # Each tenant's commit, applied as its reconciler into its own namespaces (b's, which names none, into
    # its one namespace), from its default path; the contract there, read typed, the platform's own.
    for tenant in (a, b):
        kustomization = _wait_ready(api, tenant)
        assert kustomization["metadata"]["labels"][TENANT_LABEL] == tenant.name, kustomization["metadata"]
        for namespace in tenant.namespaces:
            labels = client.CoreV1Api(api).read_namespace(namespace).metadata.labels
            assert labels[TENANT_LABEL] == labels["toolkit.fluxcd.io/tenant"] == tenant.name, labels
        spec = kustomization["spec"]
        assert spec["serviceAccountName"] == tenant.reconciler, spec
        assert spec["path"] == f"./tenants/{tenant.name}", spec
        assert spec.get("targetNamespace") == (b.home if tenant is b else None), spec
    assert {ns: _data(api, "app", ns) for ns in (*a.namespaces, b.home)} == {
        ns: {"team": "yes-it-is"} for ns in (*a.namespaces, b.home)
    }
    contract = _contract(api, tenant_stack.service_namespace)
    assert contract.name == "local" and contract.ingress_enabled is False, contract
    for namespace in (*a.namespaces, b.home):
        assert _contract(api, namespace) == contract
    # Readable there by the team's identity too, and not in another team's namespace.
    assert [_may_read_contract(api, a, ns) for ns in (*a.namespaces, b.home)] == [True, True, False]
    _platform_ready(tenant_stack, contract)

    healthy = tenant_stack.cli("drift", "local", "--json")
    assert healthy.exit_code == 0, healthy.output
    gitops = json.loads(healthy.stdout)["gitops"]
    assert gitops["healthy"] is True and gitops["healthy_tenants"] == 2, gitops
    # The tenants' syncs are theirs, not the platform's.
    assert gitops["failing"] == [] and len(gitops["syncs"]) == 1
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
    assert _data(api, "not-yours", b.home) is None
    assert gone(client.RbacAuthorizationV1Api(api).read_cluster_role, a.name)
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
    no_credentials("".join([healthy.output, text.output, markdown.output, promotion.output, *outputs]))

    # a, refused as it is, leaves the config: what its Kustomization applied is pruned, then its
    # namespaces go; b and the platform stay as they were.
    kept = client.CoreV1Api(api).read_namespaced_config_map("app", b.home).metadata.uid
    _set_tenants(tenant_stack, b)
    with _flux_events(api, a) as events:
        up("local", options=tenant_stack.options)
    # Pruned by Flux, as a's reconciler, before its namespaces went: its RoleBindings were still there.
    assert _pruned(events, a.namespaces), events
    core = client.CoreV1Api(api)
    for namespace in a.namespaces:
        assert gone(core.read_namespace, namespace), namespace
    assert _ready(api, KUSTOMIZE, b.home, b.name)["status"] == "True"  # type: ignore[index]
    assert core.read_namespaced_config_map("app", b.home).metadata.uid == kept
    _platform_ready(tenant_stack, contract)
    after = tenant_stack.cli("drift", "local", "--json")
    assert after.exit_code == 0, after.output
    gitops = json.loads(after.stdout)["gitops"]
    assert [t["name"] for t in gitops["tenants"]] == [b.name] and gitops["healthy_tenants"] == 1, gitops

    # The second act: a, back in its namespaces, comes up again with what it commits now.
    fleet.commit(
        {
            f"tenants/{a.name}/b.yaml": _config_map("second", a.namespaces[1]),
            f"tenants/{a.name}/role.yaml": ROLE.format(namespace=a.home),
        },
        "tenant a keeps to its namespaces",
    )
    _set_tenants(tenant_stack, a, b)
    up("local", options=tenant_stack.options)
    _wait_ready(api, a)
    assert _data(api, "app", a.home) == _data(api, "second", a.namespaces[1]) == {"team": "yes-it-is"}
    client.RbacAuthorizationV1Api(api).read_namespaced_role("reader", a.home)

    # A destroy with both tenants finishes, and leaves none of their namespaces; an up builds it all again.
    with _flux_events(api, a) as a_events, _flux_events(api, b) as b_events:
        destroyed = destroy("local", options=tenant_stack.options)
    assert destroyed.clean
    assert _pruned(a_events, a.namespaces) and _pruned(b_events, b.namespaces), (a_events, b_events)
    left = {n.metadata.name for n in core.list_namespace().items}
    assert left.isdisjoint({*a.namespaces, *b.namespaces}), left
    up("local", options=tenant_stack.options)
    for tenant in (a, b):
        _wait_ready(api, tenant)
    assert _data(api, "app", b.home) == {"team": "yes-it-is"}
    _platform_ready(tenant_stack, contract)


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
        _git_sources(api, fleet, deploy_key, (team, other, flux))
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
