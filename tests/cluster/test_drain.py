"""The drain before a destroy, on the real API server, kube-controller-manager and Flux's controllers.

Flux applies a LoadBalancer Service, an Ingress and a PersistentVolumeClaim from the fleet repository,
each with a finalizer that a stand-in controller holds, as the AWS Load Balancer Controller and the EBS
CSI driver hold theirs while they delete what they made in AWS. The stack (``drain_fixture``) makes its
cluster, so ``destroy`` drains it: Flux suspended, then each group deleted and gone in order, then the
engine's destroy. With the stand-in stopped the drain runs out of time, names what is left, and the
stack is untouched; run again with it running, the destroy completes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pulumi import automation as auto

from gitops_infra.automation import KubeObject, StackOptions, destroy, history, up
from gitops_infra.cli import main
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster

from ..support import secret_leaks_in_texts, workspace
from .conftest import drain_stack, gone, wait_until

pytestmark = pytest.mark.cluster

FINALIZER = "test.gitops-infra.dev/aws"
STACK = "review"
KUSTOMIZATIONS = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")
GATEWAYS = ("gateway.networking.k8s.io", "v1beta1", "gateways")
"""Gateway API before 1.0 served only v1beta1: the drain finds what the cluster serves."""


def _manifests(namespace: str) -> str:
    held = {"finalizers": [FINALIZER]}
    documents: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "web", "namespace": namespace, **held},
            "spec": {
                "ingressClassName": "alb",
                "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}},
            },
        },
        {
            "apiVersion": f"{GATEWAYS[0]}/{GATEWAYS[1]}",
            "kind": "Gateway",
            "metadata": {"name": "web", "namespace": namespace, **held},
            "spec": {
                "gatewayClassName": "alb",
                "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace, **held},
            "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
        {  # not a load balancer: the drain leaves it
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "internal", "namespace": namespace},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": namespace, **held},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    ]
    return "---\n".join(json.dumps(d) + "\n" for d in documents)


class StandIn:
    """Holds ``FINALIZER`` as the AWS controllers hold theirs: it lets an object go ``delay`` seconds
    after the object is marked for deletion, and logs what it saw, in order, to ``log``.

    With ``asked`` (``(kind, name)`` pairs a drain adds to as it says "deleting"), it also waits for the
    drain to have asked: an object an earlier drain marked is then let go only once this one has listed
    it, however long this one takes to start (it raced the stand-in's ``delay`` on a busy machine).

    Each "deleting" line says whether Flux's Kustomizations in ``flux_namespace`` were suspended then; or,
    with ``stopped``, what that says (``(name, whether the engine was stopped)``). With ``load_balancer``
    it also writes a hostname into each LoadBalancer Service's status, as the AWS controller does, which
    Argo CD's health check of a Service waits for."""

    def __init__(
        self,
        api: Any,
        namespace: str,
        flux_namespace: str,
        log: Path,
        delay: float = 1.0,
        asked: Collection[tuple[str, str]] | None = None,
        *,
        stopped: Callable[[], tuple[str, bool]] | None = None,
        load_balancer: bool = False,
    ) -> None:
        self.core = client.CoreV1Api(api)
        self.networking = client.NetworkingV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.namespace, self.flux_namespace, self.log, self.delay = namespace, flux_namespace, log, delay
        self.asked = asked
        self.stopped = stopped or (lambda: ("Flux suspended", self._suspended()))
        self.load_balancer = load_balancer
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: dict[tuple[str, str], float] = {}

    def __enter__(self) -> StandIn:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=10)

    def _write(self, line: str) -> None:
        with self.log.open("a") as out:
            out.write(line + "\n")

    def _held(self) -> Iterator[tuple[str, str, bool, list[str], Callable[[list[str]], object]]]:
        """Each object of the namespace: kind, name, whether it is being deleted, its finalizers, and how
        to set them."""
        ns = self.namespace

        def typed(kind: str, items: list[Any], patch: Any) -> Iterator[Any]:
            for obj in items:
                name, finalizers = obj.metadata.name, obj.metadata.finalizers or []

                def release(keep: list[str], name: str = name, finalizers: list[str] = finalizers) -> object:
                    index = finalizers.index(FINALIZER)
                    return patch(
                        name,
                        ns,
                        [
                            {"op": "test", "path": f"/metadata/finalizers/{index}", "value": FINALIZER},
                            {"op": "remove", "path": f"/metadata/finalizers/{index}"},
                        ],
                    )

                yield kind, name, obj.metadata.deletion_timestamp is not None, finalizers, release

        yield from typed(
            "Ingress",
            self.networking.list_namespaced_ingress(ns).items,
            self.networking.patch_namespaced_ingress,
        )
        for gateway in self.custom.list_namespaced_custom_object(*GATEWAYS[:2], ns, GATEWAYS[2])["items"]:
            metadata = gateway["metadata"]

            def release(keep: list[str], name: str = metadata["name"]) -> object:
                # A merge patch (the client's only kind for custom objects) replaces the list whole.
                body = {"metadata": {"finalizers": keep}}
                return self.custom.patch_namespaced_custom_object(*GATEWAYS[:2], ns, GATEWAYS[2], name, body)

            deleting = bool(metadata.get("deletionTimestamp"))
            yield "Gateway", metadata["name"], deleting, list(metadata.get("finalizers") or []), release
        yield from typed(
            "Service", self.core.list_namespaced_service(ns).items, self.core.patch_namespaced_service
        )
        yield from typed(
            "PersistentVolumeClaim",
            self.core.list_namespaced_persistent_volume_claim(ns).items,
            self.core.patch_namespaced_persistent_volume_claim,
        )

    def _suspended(self) -> bool:
        found = self.custom.list_namespaced_custom_object(
            *KUSTOMIZATIONS[:2], self.flux_namespace, "kustomizations"
        )
        return all(k.get("spec", {}).get("suspend") is True for k in found["items"])

    def _serve_load_balancers(self) -> None:
        for service in self.core.list_namespaced_service(self.namespace).items:
            served = service.status.load_balancer if service.status else None
            if service.spec.type == "LoadBalancer" and not (served and served.ingress):
                status = {"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}
                self.core.patch_namespaced_service_status(service.metadata.name, self.namespace, status)

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.load_balancer:
                self._serve_load_balancers()
            for kind, name, deleting, finalizers, release in self._held():
                if not deleting or FINALIZER not in finalizers:
                    continue
                key = (kind, name)
                if key not in self._seen:
                    self._seen[key] = time.monotonic()
                    engine, stopped = self.stopped()
                    self._write(f"deleting {kind} {name} ({engine}: {stopped})")
                elif time.monotonic() - self._seen[key] >= self.delay and (
                    self.asked is None or key in self.asked
                ):
                    release([f for f in finalizers if f != FINALIZER])
                    self._write(f"released {kind} {name}")
            self._stop.wait(0.2)


def _suspended(api: Any) -> bool:
    """Whether any Kustomization in the test's Flux namespace is suspended."""
    found = client.CustomObjectsApi(api).list_namespaced_custom_object(
        *KUSTOMIZATIONS[:2], "flux-drain", KUSTOMIZATIONS[2]
    )
    return any(k.get("spec", {}).get("suspend") for k in found["items"])


def _gateway_api(api: Any) -> None:
    """The Gateway CRD, in the one version Gateway API served before 1.0, once per cluster."""
    group, version, plural = GATEWAYS
    extensions = client.ApiextensionsV1Api(api)
    name = f"{plural}.{group}"
    try:
        extensions.read_custom_resource_definition(name)
    except ApiException as exc:
        if exc.status != 404:
            raise
        schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
        extensions.create_custom_resource_definition(
            {
                # A *.k8s.io group needs this annotation; Gateway API's own CRDs carry this one.
                "metadata": {
                    "name": name,
                    "annotations": {
                        "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/2466"
                    },
                },
                "spec": {
                    "group": group,
                    "scope": "Namespaced",
                    "names": {"plural": plural, "singular": "gateway", "kind": "Gateway"},
                    "versions": [{"name": version, "served": True, "storage": True, "schema": schema}],
                },
            }
        )

    def established() -> bool:
        conditions = extensions.read_custom_resource_definition(name).status.conditions or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    wait_until(established, "the Gateway CRD to be served")


@pytest.fixture
def project(
    tmp_path: Path, cluster: LocalCluster, fleet: FleetServer, deploy_key: DeployKeyPair
) -> Iterator[tuple[Path, dict[str, str], str]]:
    """The drain fixture as a committed project with its stack configured; its apps' namespace."""
    root, env = drain_stack(tmp_path, STACK, cluster, fleet, deploy_key, name="drain")
    stack = auto.Stack.select(STACK, workspace(root, env))
    _gateway_api(cluster.api())
    namespace = "apps-drain"
    fleet.commit({"clusters/drain/apps.yaml": _manifests(namespace)}, "a load balancer, an ingress, a volume")
    try:
        yield root, env, namespace
    finally:
        # Whatever a failed test left, without a drain: Flux prunes what it applied, and waits for it.
        with StandIn(cluster.api(), namespace, "flux-drain", tmp_path / "teardown.log", delay=0):
            stack.destroy(on_output=None)


def test_destroy_drains_what_flux_made_in_order_and_a_drain_out_of_time_destroys_nothing(
    project: tuple[Path, dict[str, str], str], cluster: LocalCluster, tmp_path: Path
) -> None:
    root, env, namespace = project
    options = StackOptions(work_dir=root, env=env)
    api = cluster.api()
    core, networking = client.CoreV1Api(api), client.NetworkingV1Api(api)
    log = tmp_path / "order.log"
    up(STACK, options=options)
    wait_until(
        lambda: not gone(core.read_namespaced_persistent_volume_claim, "data", namespace),
        "Flux to apply the fleet's objects",
    )

    def cli(*args: str) -> Any:
        return CliRunner().invoke(main, [*args, "--cwd", str(root)], env=env, catch_exceptions=False)

    # The plan: what would be suspended and deleted, in order; nothing done.
    previewed = cli("destroy", STACK, "--preview-only")
    assert previewed.exit_code == 0, previewed.output
    would = [line.split() for line in previewed.output.splitlines() if line.startswith("  would ")]
    assert would == [
        ["would", "suspend", "Kustomization", "flux-drain/flux-system"],
        ["would", "delete", "Gateway", f"{namespace}/web"],
        ["would", "delete", "Ingress", f"{namespace}/web"],
        ["would", "delete", "Service", f"{namespace}/web"],
        ["would", "delete", "PersistentVolumeClaim", f"{namespace}/data"],
    ], previewed.output
    markdown = cli("destroy", STACK, "--preview-only", "--format", "markdown")
    assert "#### Drain (would): 1 suspended, 4 deleted" in markdown.output, markdown.output
    document = json.loads(cli("destroy", STACK, "--preview-only", "--json").output)
    assert [o["kind"] for o in document["drain"]["deleted"]] == [
        "Gateway",
        "Ingress",
        "Service",
        "PersistentVolumeClaim",
    ]
    assert document["drain"]["planned"] is True
    assert networking.read_namespaced_ingress("web", namespace).metadata.deletion_timestamp is None

    # Another update holds the stack: it may be deploying what the drain would delete, so nothing is.
    backend = Path(env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    lock = backend / ".pulumi" / "locks" / "organization" / "drain" / STACK / "held.json"
    lock.parent.mkdir(parents=True, exist_ok=True)  # the engine keeps the directory
    lock.write_text(json.dumps({"username": "colleague", "hostname": "runner", "pid": 1, "timestamp": ""}))
    locked = cli("destroy", STACK, "--yes")
    assert locked.exit_code == 1 and "StackLockedError" in locked.output, locked.output
    assert (
        not _suspended(api)
        and networking.read_namespaced_ingress("web", namespace).metadata.deletion_timestamp is None
    )
    lock.unlink()

    # Out of time, with nobody to release the finalizers: named, and the stack untouched.
    before = auto.Stack.select(STACK, workspace(root, env)).export_stack()
    versions = [d.version for d in history(STACK, options=options)]
    failed = cli("destroy", STACK, "--yes", "--drain-timeout", "3s")
    assert failed.exit_code == 1, failed.output
    assert "DrainError" in failed.output and "ran out of its 3s" in failed.output, failed.output
    for kind in ("Gateway", "Ingress"):
        assert f"{kind} {namespace}/web (finalizers: {FINALIZER})" in failed.output, failed.output
    assert "Nothing was destroyed" in failed.output
    # Step by step, as it went: the suspend, then each delete of the first group.
    steps = [line.split() for line in failed.output.splitlines() if line.startswith("  drain: ")]
    assert steps == [
        ["drain:", "suspended", "Kustomization", "flux-drain/flux-system"],
        ["drain:", "deleting", "Gateway", f"{namespace}/web"],
        ["drain:", "deleting", "Ingress", f"{namespace}/web"],
    ], failed.output
    after = auto.Stack.select(STACK, workspace(root, env)).export_stack()
    assert [r["urn"] for r in after.deployment["resources"]] == [
        r["urn"] for r in before.deployment["resources"]
    ]
    assert [d.version for d in history(STACK, options=options)] == versions
    assert not log.exists() or "cluster deleted" not in log.read_text()
    # Flux stays suspended; the next group was not begun.
    assert core.read_namespaced_service("web", namespace).metadata.deletion_timestamp is None

    # Run again with the controllers at work: the drain goes on, then the engine destroys the cluster.
    events: list[tuple[str, KubeObject]] = []
    asked: set[tuple[str, str]] = set()

    def on_drain(event: str, obj: KubeObject) -> None:
        events.append((event, obj))
        if event == "deleting":
            asked.add((obj.kind, obj.name))

    with StandIn(api, namespace, "flux-drain", log, asked=asked):
        result = destroy(STACK, options=options, drain_timeout=120, on_drain=on_drain)
    assert result.drain is not None
    assert [str(o) for o in result.drain.deleted] == [
        f"Gateway {namespace}/web",
        f"Ingress {namespace}/web",
        f"Service {namespace}/web",
        f"PersistentVolumeClaim {namespace}/data",
    ]
    assert result.drain.suspended == ()  # the run that ran out of time had suspended it
    assert result.sweeps == () and result.clean
    # What the stand-in saw: each group deleted only once the one before was let go, Flux suspended
    # throughout, the cluster last. Within a group the order is the stand-in's polling, not the drain's.
    seen = log.read_text().splitlines()
    group = {"Gateway": 1, "Ingress": 1, "Service": 2, "PersistentVolumeClaim": 3, "deleted": 4}
    assert [group[line.split()[1]] for line in seen] == sorted(group[line.split()[1]] for line in seen), seen
    assert sorted(seen) == sorted(
        [
            *(f"deleting {kind} web (Flux suspended: True)" for kind in ("Gateway", "Ingress", "Service")),
            *(f"released {kind} web" for kind in ("Gateway", "Ingress", "Service")),
            "deleting PersistentVolumeClaim data (Flux suspended: True)",
            "released PersistentVolumeClaim data",
            "cluster deleted",
        ]
    ), seen
    went = [str(o) for e, o in events if e == "gone"]
    assert sorted(went[:2]) == [f"Gateway {namespace}/web", f"Ingress {namespace}/web"], went
    assert went[2:] == [f"Service {namespace}/web", f"PersistentVolumeClaim {namespace}/data"], went
    # Only load balancers, ingresses and claims went; the stack is empty; nothing was made again.
    assert core.read_namespaced_service("internal", namespace).spec.type == "ClusterIP"
    assert gone(core.read_namespaced_service, "web", namespace)
    assert result.changes.get("delete", 0) > 0

    # The second act: up again makes a Kustomization of its own, not suspended, and Flux applies again.
    up(STACK, options=options)
    assert not _suspended(api)
    wait_until(
        lambda: not gone(core.read_namespaced_service, "web", namespace), "Flux to apply the Service again"
    )
    texts = {
        "preview": previewed.output,
        "markdown": markdown.output,
        "failed": failed.output,
        "result": repr(result),
    }
    key_data = json.loads(cluster.kubeconfig)["users"][0]["user"]["client-key-data"]
    assert secret_leaks_in_texts(texts, [key_data]) == []
