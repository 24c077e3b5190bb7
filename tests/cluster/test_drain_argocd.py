"""The drain before a destroy, when Argo CD is the engine: on the real API server, kube-controller-manager
and Argo CD's controllers, repo server and Redis.

The root ``Application`` (automated, prune, self-heal) applies a LoadBalancer Service and an
``ApplicationSet``, whose ``Application`` (automated too) applies a claim; the Service and the claim carry
a finalizer that :class:`~.test_drain.StandIn` holds, as the AWS controllers hold theirs. The stack makes
its cluster (``drain_fixture``), so ``destroy`` drains it: Argo CD's automated sync off (the root first,
then its child, then what the ApplicationSet makes), then the Service and the claim deleted and gone,
with no self-heal to make them again, then the engine's destroy, whose delete of the root has Argo CD
delete the rest. And a drain that something keeps turning Argo CD's sync back on under runs out of time
saying so, having deleted nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kubernetes import client
from pulumi import automation as auto

from gitops_infra.automation import KubeObject, StackOptions, destroy, refresh, up
from gitops_infra.automation._cluster.drain import drain_clusters
from gitops_infra.automation._cluster.kube import Access
from gitops_infra.cli import main
from gitops_infra.errors import DrainError
from gitops_infra.local import ArgoCd, DeployKeyPair, FleetServer, LocalCluster

from ..support import TOOLCHAIN, unavailable, workspace
from .conftest import drain_stack, gone, wait_until
from .test_drain import FINALIZER, STACK, StandIn, _gateway_api

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

NAME = "drain-argo"
ARGO_NAMESPACE = f"argocd-{NAME}"
APPS = f"apps-{NAME}"
GROUP, VERSION = "argoproj.io", "v1alpha1"
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"


def _documents(*documents: dict[str, Any]) -> str:
    return "---\n".join(json.dumps(d) + "\n" for d in documents)


def _fleet(url: str) -> dict[str, str]:
    """The root's path (a namespace, a load balancer, a ClusterIP Service, an ApplicationSet) and the
    child's (a claim)."""
    held = {"finalizers": [FINALIZER]}
    root = _documents(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": APPS}},
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": APPS, **held},
            "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "internal", "namespace": APPS},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]},
        },
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ApplicationSet",
            "metadata": {"name": "children", "namespace": ARGO_NAMESPACE},
            "spec": {
                "goTemplate": True,
                "generators": [{"list": {"elements": [{"name": "child"}]}}],
                "template": {
                    "metadata": {"name": "{{.name}}", "finalizers": [RESOURCES_FINALIZER]},
                    "spec": {
                        "project": "platform",
                        "source": {
                            "repoURL": url,
                            "targetRevision": "main",
                            "path": f"clusters/{NAME}-child",
                        },
                        "destination": {"server": "https://kubernetes.default.svc", "namespace": APPS},
                        "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
                    },
                },
            },
        },
    )
    child = _documents(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": APPS, **held},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
    )
    return {f"clusters/{NAME}/apps.yaml": root, f"clusters/{NAME}-child/claim.yaml": child}


@pytest.fixture
def argo(cluster: LocalCluster, tmp_path: Path) -> Iterator[ArgoCd]:
    if not (TOOLCHAIN.bin_dir / "argocd").is_file():
        unavailable("Argo CD is not built: run `make setup`")
    argocd = ArgoCd(tmp_path / "argocd", cluster, namespace=ARGO_NAMESPACE).start()
    try:
        yield argocd
    finally:
        argocd.stop()


@pytest.fixture
def project(
    tmp_path: Path, cluster: LocalCluster, fleet: FleetServer, deploy_key: DeployKeyPair, argo: ArgoCd
) -> Iterator[tuple[Path, dict[str, str]]]:
    """The drain fixture with ``engine: argocd`` as a committed project, its stack configured."""
    root, env = drain_stack(
        tmp_path,
        STACK,
        cluster,
        fleet,
        deploy_key,
        name=NAME,
        engine="argocd",
        namespace=ARGO_NAMESPACE,
        destinations=json.dumps([APPS]),
    )
    _gateway_api(cluster.api())  # the stand-in lists Gateways
    fleet.commit(_fleet(fleet.url), "a load balancer, and an ApplicationSet whose app claims a volume")
    try:
        yield root, env
    finally:
        # Whatever a failed test left, without a drain, while Argo CD runs: the root's finalizer.
        with StandIn(cluster.api(), APPS, "", tmp_path / "teardown.log", delay=0, stopped=lambda: ("", True)):
            auto.Stack.select(STACK, workspace(root, env)).destroy(on_output=None)


def _applications(api: Any, plural: str = "applications") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, ARGO_NAMESPACE, plural
    )["items"]
    return found


def _automated(api: Any) -> list[str]:
    """The Applications of the test's Argo CD that sync on their own."""
    return sorted(
        a["metadata"]["name"]
        for a in _applications(api)
        if (a["spec"].get("syncPolicy") or {}).get("automated")
    )


def test_destroy_turns_argo_cd_s_automated_sync_off_before_it_deletes_what_argo_cd_made(
    project: tuple[Path, dict[str, str]], cluster: LocalCluster, tmp_path: Path
) -> None:
    root, env = project
    options = StackOptions(work_dir=root, env=env)
    api = cluster.api()
    core = client.CoreV1Api(api)
    log = tmp_path / "order.log"

    def stopped() -> tuple[str, bool]:
        return "Argo CD stopped", not _automated(api)

    with StandIn(api, APPS, "", log, stopped=stopped, load_balancer=True):
        # up returns once the root is Synced and Healthy: its load balancer served, as AWS's would be.
        up(STACK, options=options)
        wait_until(
            lambda: not gone(core.read_namespaced_persistent_volume_claim, "data", APPS),
            "the ApplicationSet's Application to apply the claim",
        )
    assert _automated(api) == ["child", "platform"]

    # The plan names Argo CD's objects, the root first, and deletes nothing.
    previewed = CliRunner().invoke(
        main, ["destroy", STACK, "--preview-only", "--cwd", str(root)], env=env, catch_exceptions=False
    )
    assert previewed.exit_code == 0, previewed.output
    would = [line.split() for line in previewed.output.splitlines() if line.startswith("  would ")]
    # Only this test's Argo CD: another test's objects may be left in the cluster, and are stopped too.
    assert [w for w in would if w[3].startswith(f"{ARGO_NAMESPACE}/")] == [
        ["would", "suspend", "Application", f"{ARGO_NAMESPACE}/platform"],
        ["would", "suspend", "Application", f"{ARGO_NAMESPACE}/child"],
        ["would", "suspend", "ApplicationSet", f"{ARGO_NAMESPACE}/children"],
    ], previewed.output
    assert [w for w in would if w[1] == "delete" and w[3].startswith(f"{APPS}/")] == [
        ["would", "delete", "Service", f"{APPS}/web"],
        ["would", "delete", "PersistentVolumeClaim", f"{APPS}/data"],
    ], previewed.output
    assert _automated(api) == ["child", "platform"]

    # Out of time, with nobody to let the Service go: nothing destroyed, Argo CD stopped, and named so.
    failed = CliRunner().invoke(
        main,
        ["destroy", STACK, "--yes", "--drain-timeout", "3s", "--cwd", str(root)],
        env=env,
        catch_exceptions=False,
    )
    assert failed.exit_code == 1, failed.output
    assert "DrainError" in failed.output and "Argo CD's automated sync off" in failed.output, failed.output
    assert _automated(api) == []
    # Kept instead, as the teardown page says: refresh, then up, puts the root's automated sync back from
    # the stack, and the root its ApplicationSet's, whose controller its Application's.
    with StandIn(api, APPS, "", tmp_path / "kept.log", delay=0, stopped=stopped, load_balancer=True):
        refresh(STACK, options=options)
        up(STACK, options=options)
        wait_until(lambda: _automated(api) == ["child", "platform"], "Argo CD's automated sync back")
        wait_until(lambda: not gone(core.read_namespaced_service, "web", APPS), "self-heal to make web again")

    events: list[tuple[str, KubeObject]] = []
    with StandIn(api, APPS, "", log, stopped=stopped, load_balancer=True):
        result = destroy(
            STACK, options=options, drain_timeout=180, on_drain=lambda e, o: events.append((e, o))
        )
    assert result.drain is not None
    mine = [str(o) for o in result.drain.suspended if o.namespace == ARGO_NAMESPACE]
    assert mine == [
        f"Application {ARGO_NAMESPACE}/platform",
        f"Application {ARGO_NAMESPACE}/child",
        f"ApplicationSet {ARGO_NAMESPACE}/children",
    ]
    # Deleted once each: no self-heal made one again.
    deleting = [str(o) for e, o in events if e == "deleting" and o.namespace == APPS]
    assert deleting == [f"Service {APPS}/web", f"PersistentVolumeClaim {APPS}/data"], events
    # What the stand-in saw: Argo CD's automated sync off when each delete began, the cluster last.
    seen = log.read_text().splitlines()
    assert [line for line in seen if line.startswith("deleting ")] == [
        "deleting Service web (Argo CD stopped: True)",
        "deleting PersistentVolumeClaim data (Argo CD stopped: True)",
    ], seen
    assert seen[-1] == "cluster deleted", seen
    # The engine's destroy deleted the root, whose finalizer had Argo CD delete what it applied.
    for plural in ("applications", "applicationsets"):
        assert _applications(api, plural) == [], plural
    assert gone(core.read_namespaced_service, "internal", APPS)
    assert result.changes.get("delete", 0) > 0

    # The second act: up again, and Argo CD syncs on its own again.
    with StandIn(api, APPS, "", log, stopped=stopped, load_balancer=True):
        up(STACK, options=options)
        wait_until(lambda: _automated(api) == ["child", "platform"], "the ApplicationSet's Application again")
    assert not gone(core.read_namespaced_service, "web", APPS)


def test_a_drain_that_argo_cd_s_sync_keeps_coming_back_on_names_it_and_deletes_nothing(
    argo: ArgoCd, cluster: LocalCluster
) -> None:
    # A tool that keeps applying an automated Application (a CI job, another engine), in a namespace no
    # Argo CD watches, so that only it and the drain touch the object.
    api = cluster.api()
    core, objects = client.CoreV1Api(api), client.CustomObjectsApi(api)
    namespace = "elsewhere-drain-argo"
    core.create_namespace({"metadata": {"name": namespace}})
    automated = {"spec": {"syncPolicy": {"automated": {"prune": True}}}}
    application = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Application",
        "metadata": {"name": "kept-on", "namespace": namespace},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://example.com/fleet.git", "path": "."},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            **automated["spec"],
        },
    }
    objects.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", application)
    stop = threading.Event()

    def keep_on() -> None:
        while not stop.is_set():
            objects.patch_namespaced_custom_object(
                GROUP, VERSION, namespace, "applications", "kept-on", automated
            )
            stop.wait(0.05)

    applier = threading.Thread(target=keep_on, daemon=True)
    applier.start()
    try:
        with pytest.raises(DrainError) as raised:
            drain_clusters((Access(cluster.kubeconfig, None),), stack="dev", timeout=3)
    finally:
        stop.set()
        applier.join(timeout=10)
        core.delete_namespace(namespace)
    message = str(raised.value)
    assert "ran out of its 3s turning off Argo CD's automated sync" in message, message
    assert f"Application {namespace}/kept-on" in message and "Nothing was destroyed" in message, message
    assert [str(o) for o in raised.value.remaining] == [f"Application {namespace}/kept-on"]
    key_data = json.loads(cluster.kubeconfig)["users"][0]["user"]["client-key-data"]
    assert key_data not in message
