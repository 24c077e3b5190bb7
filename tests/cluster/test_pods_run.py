"""Pods run on the local cluster: kube-scheduler binds them to kwok's node, and kwok reports them Running.

No container runs (kwok plays the kubelet), but every controller sees what it would on a real cluster: a
Deployment becomes Available, a StatefulSet Ready once the PersistentVolume binder has bound its claim, a
Job's pod Succeeded, and a namespace that holds running pods can be deleted.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import up
from gitops_infra.local import FleetServer, LocalCluster

from .conftest import LocalStack, wait_until

pytestmark = pytest.mark.cluster

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
POD_RANGE = ipaddress.ip_network("10.244.0.0/16")


def _deployment(name: str, namespace: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                # The image is never pulled: kwok only reports the container running.
                "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]},
            },
        },
    }


def _pods(api: Any, namespace: str, selector: str) -> list[Any]:
    return list(client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector).items)


def _running_on_a_node(pods: list[Any]) -> bool:
    return bool(pods) and all(
        pod.status.phase == "Running"
        and pod.spec.node_name
        and pod.status.pod_ip
        and ipaddress.ip_address(pod.status.pod_ip) in POD_RANGE
        for pod in pods
    )


@pytest.fixture
def namespace(cluster: LocalCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, deleted afterwards (with whatever pods run in it)."""
    name = request.node.name.removeprefix("test_")[:40].rstrip("_").replace("_", "-")
    core = client.CoreV1Api(cluster.api())
    core.create_namespace({"metadata": {"name": name}})
    try:
        yield name
    finally:
        if not _gone(core, name):
            core.delete_namespace(name)


def test_the_nodes_are_ready_schedulable_and_kwoks(cluster: LocalCluster) -> None:
    nodes = client.CoreV1Api(cluster.api()).list_node().items
    assert nodes, "the local cluster has no node"
    for node in nodes:
        name = node.metadata.name
        assert node.metadata.annotations[KWOK_ANNOTATION] == "fake"
        labels = node.metadata.labels
        assert (labels["kubernetes.io/os"], labels["kubernetes.io/arch"]) == ("linux", "amd64")
        assert labels["kubernetes.io/hostname"] == name
        conditions = {c.type: c.status for c in node.status.conditions}
        assert conditions["Ready"] == "True", conditions
        # The API server's not-ready taint is gone, and the node-lifecycle controller (off) put none back.
        assert not node.spec.taints, node.spec.taints
        assert node.status.allocatable["pods"] == "500"
        assert node.status.node_info.kubelet_version.startswith("kwok-")


def test_a_deployment_flux_applies_becomes_available_through_its_health_check(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    namespace = f"web-{local_stack.name}"
    manifests = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        _deployment("web", namespace),
    ]
    fleet.commit(
        {f"{local_stack.fleet_path}/web.yaml": yaml.safe_dump_all(manifests)}, f"a Deployment for {namespace}"
    )
    check = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": namespace}
    # Flux's timeout bounds its health check; `up` waits a little longer for the Kustomization's verdict.
    settings = {f"flux.healthChecks[0].{key}": value for key, value in check.items()}
    local_stack.set_all({**settings, "flux.timeout": "60s", "flux.readyTimeout": "75s"})

    up("local", options=local_stack.options)  # Ready only once the health check passed: the pods run

    deployment = client.AppsV1Api(local_stack.api).read_namespaced_deployment("web", namespace)
    available = {c.type: c.status for c in deployment.status.conditions}
    assert available["Available"] == "True", deployment.status
    assert deployment.status.available_replicas == 2
    pods = _pods(local_stack.api, namespace, "app=web")
    assert len(pods) == 2 and _running_on_a_node(pods), [(p.spec.node_name, p.status.phase) for p in pods]
    assert all(p.status.container_statuses[0].state.running is not None for p in pods)


def test_a_statefulset_claim_binds_a_static_volume_and_its_pod_runs(
    cluster: LocalCluster, namespace: str
) -> None:
    api = cluster.api()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    volume = f"data-{namespace}"[:63]
    # A static volume of no StorageClass, reserved for the claim the StatefulSet will make for its pod db-0
    # (so no other test's claim binds it). Retain: the hostPath plugin deletes nothing without a provisioner.
    core.create_persistent_volume(
        {
            "metadata": {"name": volume},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": f"/tmp/{volume}"},  # never mounted: no kubelet runs
                "claimRef": {"namespace": namespace, "name": "data-db-0"},
            },
        }
    )
    labels = {"app": "db"}
    statefulset = {
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {
            "serviceName": "db",
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "db",
                            "image": "registry.example.com/db:1",
                            "volumeMounts": [{"name": "data", "mountPath": "/var/lib/db"}],
                        }
                    ]
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "",
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    try:
        apps.create_namespaced_stateful_set(namespace, statefulset)

        def ready() -> bool:
            status = apps.read_namespaced_stateful_set("db", namespace).status
            return status.ready_replicas == 1 and status.available_replicas == 1

        wait_until(ready, "the StatefulSet's pod to be Ready")
        claim = core.read_namespaced_persistent_volume_claim("data-db-0", namespace)
        assert (claim.status.phase, claim.spec.volume_name) == ("Bound", volume)
        (pod,) = _pods(api, namespace, "app=db")
        assert _running_on_a_node([pod]), (pod.spec.node_name, pod.status.phase)
        assert pod.spec.volumes[0].persistent_volume_claim.claim_name == "data-db-0"

        # The second act: the pod goes, and the StatefulSet's new one runs on the same claim.
        core.delete_namespaced_pod("db-0", namespace)
        old = pod.metadata.uid
        wait_until(
            lambda: (
                (pods := _pods(api, namespace, "app=db"))
                and pods[0].metadata.uid != old
                and _running_on_a_node(pods)
            ),
            "the StatefulSet's pod to run again",
        )
        assert core.read_namespaced_persistent_volume_claim("data-db-0", namespace).status.phase == "Bound"

        # A namespace with a running pod and a bound claim is deleted: kwok finishes the pod's deletion,
        # then PVC protection lets the claim go, and the volume is released.
        core.delete_namespace(namespace)
        wait_until(lambda: _gone(core, namespace), f"namespace {namespace} to be gone")
        wait_until(
            lambda: core.read_persistent_volume(volume).status.phase == "Released", "the volume released"
        )
    finally:
        core.delete_persistent_volume(volume)


def test_a_job_pod_runs_and_succeeds(cluster: LocalCluster, namespace: str) -> None:
    batch = client.BatchV1Api(cluster.api())
    job = {
        "metadata": {"name": "once", "namespace": namespace},
        "spec": {
            "completions": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "once", "image": "registry.example.com/once:1"}],
                }
            },
        },
    }
    batch.create_namespaced_job(namespace, job)

    def complete() -> dict[str, str] | None:
        status = batch.read_namespaced_job("once", namespace).status
        conditions = {c.type: c.status for c in status.conditions or []}
        return conditions if conditions.get("Complete") == "True" else None

    wait_until(complete, "the Job to complete")
    assert batch.read_namespaced_job("once", namespace).status.succeeded == 2


def _gone(core: Any, namespace: str) -> bool:
    try:
        core.read_namespace(namespace)
    except ApiException as exc:
        return exc.status == 404
    return False
