"""The drain before a destroy, with workloads that run: a StatefulSet's claims and Karpenter's nodes.

The local cluster runs pods (kube-scheduler, and kwok's nodes). Flux applies a StatefulSet whose claim
template binds a PersistentVolume, a Deployment that a Kustomization health check waits for, and a
LoadBalancer Service; a NodePool and an EC2NodeClass stand for Karpenter installed from the fleet.
Kubernetes keeps a claim while a pod mounts it, and the StatefulSet controller makes its pod again, so a
drain that only deleted the claims never finished. Stand-ins play the AWS controllers: the EBS CSI
driver's provisioner deletes a released volume, the Load Balancer Controller holds its Service's
finalizer, and Karpenter holds each NodeClaim until it has "terminated its instance".
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pulumi import automation as auto

from gitops_infra.automation import KubeObject, StackOptions, destroy, up
from gitops_infra.errors import DrainError
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster

from ..support import workspace
from .conftest import drain_stack, gone, wait_until

pytestmark = pytest.mark.cluster

STACK = "workloads"
NAMESPACE = "apps-workloads"
LB_FINALIZER = "service.k8s.aws/resources"  # the AWS Load Balancer Controller's, on a Service it serves
PROVISIONER = "ebs.csi.aws.com"
KARPENTER = "karpenter.sh"
NODE_CLAIM_FINALIZER = "karpenter.sh/termination"
NODE_CLASS_FINALIZER = "karpenter.k8s.aws/termination"
NODE_POOLS = (KARPENTER, "v1", "nodepools")
NODE_CLAIMS = (KARPENTER, "v1", "nodeclaims")
NODE_CLASSES = ("karpenter.k8s.aws", "v1", "ec2nodeclasses")
HOLD = "test.gitops-infra.dev/backup"
"""On the StatefulSet's pods: the stand-ins let a pod go only after their backup job has started."""


def _manifests() -> str:
    labels = {"app": "web"}
    documents: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            # Made by the EBS CSI driver on EKS; static here, bound ahead to the StatefulSet's claim.
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": "pv-data-db-0",
                "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
            },
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "ebs",
                "claimRef": {"namespace": NAMESPACE, "name": "data-db-0"},
                "csi": {"driver": PROVISIONER, "volumeHandle": "vol-0123456789abcdef0"},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": NAMESPACE},
            "spec": {
                "serviceName": "db",
                "replicas": 1,
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}, "finalizers": [HOLD]},
                    "spec": {
                        "containers": [
                            {
                                "name": "db",
                                "image": "postgres:17",
                                "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}],
                            }
                        ]
                    },
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "storageClassName": "ebs",
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        },
        {
            # A source-controller kept on a volume of its own: the drain leaves Flux's claim and Flux.
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-flux-storage"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "claimRef": {"namespace": NAMESPACE, "name": "flux-storage"},
                "hostPath": {"path": "/var/lib/flux-storage"},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "flux-storage", "namespace": NAMESPACE},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "volumeName": "pv-flux-storage",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "source-controller", "namespace": NAMESPACE},
            "spec": {
                "selector": {"matchLabels": {"app": "source-controller"}},
                "template": {
                    "metadata": {"labels": {"app": "source-controller"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "manager",
                                "image": "ghcr.io/fluxcd/source-controller:v1.8.2",
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                            }
                        ],
                        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "flux-storage"}}],
                    },
                },
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NAMESPACE},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": NAMESPACE, "finalizers": [LB_FINALIZER]},
            "spec": {"type": "LoadBalancer", "selector": labels, "ports": [{"port": 80}]},
        },
        {
            "apiVersion": f"{KARPENTER}/v1",
            "kind": "NodePool",
            "metadata": {"name": "general"},
            "spec": {"template": {"spec": {"nodeClassRef": {"name": "general"}}}},
        },
        {
            "apiVersion": f"{NODE_CLASSES[0]}/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "general", "finalizers": [NODE_CLASS_FINALIZER]},
            "spec": {"role": "KarpenterNodeRole"},
        },
    ]
    return "---\n".join(json.dumps(d) + "\n" for d in documents)


def _karpenter_crds(api: Any) -> None:
    """Karpenter's three CRDs (cluster-scoped, v1), schemas left open: the drain reads their names only."""
    extensions = client.ApiextensionsV1Api(api)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    for group, version, plural in (NODE_POOLS, NODE_CLAIMS, NODE_CLASSES):
        kind = {"nodepools": "NodePool", "nodeclaims": "NodeClaim", "ec2nodeclasses": "EC2NodeClass"}[plural]
        name = f"{plural}.{group}"
        try:
            extensions.create_custom_resource_definition(
                {
                    "metadata": {"name": name},
                    "spec": {
                        "group": group,
                        "scope": "Cluster",
                        "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                        "versions": [{"name": version, "served": True, "storage": True, "schema": schema}],
                    },
                }
            )
        except ApiException as exc:
            if exc.status != 409:
                raise

        def established(name: str = name) -> bool:
            conditions = extensions.read_custom_resource_definition(name).status.conditions or []
            return any(c.type == "Established" and c.status == "True" for c in conditions)

        wait_until(established, f"the {kind} CRD to be served")


class StandIns:
    """The AWS side's controllers, as far as the drain meets them, on one thread; each step logged.

    - the EBS CSI driver's provisioner deletes a volume it provisioned once its claim has released it;
    - the AWS Load Balancer Controller lets its Service go a second after its delete;
    - Karpenter makes a NodeClaim for the NodePool (owned by it, as Karpenter's are), holds it until it is
      deleted and has "terminated its instance", and lets an EC2NodeClass go once no NodeClaim is left;
    - a StatefulSet pod being deleted is let go (``HOLD``); with ``backup``, only once a backup pod that
      mounts its claim runs on its node, made by something the drain cannot see (an operator elsewhere).
    """

    def __init__(self, api: Any, log: Path, *, backup: bool = False) -> None:
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.log, self.backup = log, backup
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._seen: dict[str, float] = {}

    def __enter__(self) -> StandIns:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _write(self, line: str) -> None:
        with self.log.open("a") as out:
            out.write(line + "\n")

    def _after_a_second(self, what: str) -> bool:
        first = self._seen.setdefault(what, time.monotonic())
        return time.monotonic() - first >= 1.0

    def _volumes(self) -> None:
        for volume in self.core.list_persistent_volume().items:
            annotations = volume.metadata.annotations or {}
            if annotations.get("pv.kubernetes.io/provisioned-by") == PROVISIONER and volume.status.phase in {
                "Released",
                "Failed",  # the in-tree controller finds no deleter for the CSI volume, and says so
            }:
                self.core.delete_persistent_volume(volume.metadata.name)
                self._write(f"deleted volume {volume.metadata.name}")

    def _services(self) -> None:
        for service in self.core.list_namespaced_service(NAMESPACE).items:
            finalizers = service.metadata.finalizers or []
            deleting = service.metadata.deletion_timestamp and LB_FINALIZER in finalizers
            if deleting and self._after_a_second(f"service {service.metadata.name}"):
                index = finalizers.index(LB_FINALIZER)
                self.core.patch_namespaced_service(
                    service.metadata.name,
                    NAMESPACE,
                    [{"op": "remove", "path": f"/metadata/finalizers/{index}"}],
                )
                pods = self.core.list_namespaced_pod(NAMESPACE, label_selector="app=db").items
                self._write(f"released service {service.metadata.name} (db pods: {len(pods)})")

    def _pods(self) -> None:
        for pod in self.core.list_namespaced_pod(NAMESPACE, label_selector="app=db").items:
            finalizers = pod.metadata.finalizers or []
            if not pod.metadata.deletion_timestamp or HOLD not in finalizers:
                continue
            if self.backup and gone(self.core.read_namespaced_pod, "backup", NAMESPACE):
                claim = f"data-{pod.metadata.name}"
                self.core.create_namespaced_pod(
                    NAMESPACE,
                    {
                        "metadata": {"name": "backup"},
                        "spec": {
                            "nodeName": pod.spec.node_name,
                            "containers": [{"name": "backup", "image": "busybox"}],
                            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
                        },
                    },
                )
                self._write(f"started backup of {claim}")
            index = finalizers.index(HOLD)
            self.core.patch_namespaced_pod(
                pod.metadata.name, NAMESPACE, [{"op": "remove", "path": f"/metadata/finalizers/{index}"}]
            )
            self._write(f"released pod {pod.metadata.name}")

    def _release(self, group: str, version: str, plural: str, name: str, finalizer: str, what: str) -> None:
        self.custom.patch_cluster_custom_object(
            group, version, plural, name, {"metadata": {"finalizers": []}}
        )
        self._write(f"released {what} {name}")

    def _nodes(self) -> None:
        pools = self.custom.list_cluster_custom_object(*NODE_POOLS)["items"]
        claims = self.custom.list_cluster_custom_object(*NODE_CLAIMS)["items"]
        for pool in pools:
            name = pool["metadata"]["name"]
            if not pool["metadata"].get("deletionTimestamp") and not any(
                c["metadata"]["name"].startswith(f"{name}-") for c in claims
            ):
                owner = {
                    "apiVersion": f"{KARPENTER}/v1",
                    "kind": "NodePool",
                    "name": name,
                    "uid": pool["metadata"]["uid"],
                    "blockOwnerDeletion": True,
                }
                self.custom.create_cluster_custom_object(
                    *NODE_CLAIMS,
                    {
                        "apiVersion": f"{KARPENTER}/v1",
                        "kind": "NodeClaim",
                        "metadata": {
                            "name": f"{name}-abcde",
                            "finalizers": [NODE_CLAIM_FINALIZER],
                            "ownerReferences": [owner],
                        },
                        "spec": {"nodeClassRef": {"name": "general"}},
                    },
                )
                self._write(f"launched nodeclaim {name}-abcde")
        for claim in claims:
            metadata = claim["metadata"]
            if (
                metadata.get("deletionTimestamp")
                and NODE_CLAIM_FINALIZER in (metadata.get("finalizers") or [])
                and self._after_a_second(f"nodeclaim {metadata['name']}")
            ):
                self._release(*NODE_CLAIMS, metadata["name"], NODE_CLAIM_FINALIZER, "nodeclaim")
        for node_class in self.custom.list_cluster_custom_object(*NODE_CLASSES)["items"]:
            metadata = node_class["metadata"]
            if (
                metadata.get("deletionTimestamp")
                and NODE_CLASS_FINALIZER in (metadata.get("finalizers") or [])
                and not self.custom.list_cluster_custom_object(*NODE_CLAIMS)["items"]
            ):
                self._release(*NODE_CLASSES, metadata["name"], NODE_CLASS_FINALIZER, "ec2nodeclass")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._volumes()
                self._services()
                self._pods()
                self._nodes()
            except ApiException as exc:
                if exc.status not in {404, 409}:  # raced a delete or another write: next round
                    self._write(f"error {exc.status}: {exc.reason}")
            self._stop.wait(0.2)


@pytest.fixture
def project(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
) -> Iterator[tuple[Path, dict[str, str]]]:
    """The drain fixture, syncing the workloads' path, with a health check on the Deployment."""
    root, env = drain_stack(
        tmp_path,
        STACK,
        cluster,
        fleet,
        deploy_key,
        name="workloads",
        healthChecks=json.dumps(
            [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": NAMESPACE}]
        ),
    )
    api = cluster.api()
    _karpenter_crds(api)
    fleet.commit(
        {"clusters/workloads/apps.yaml": f"# {request.node.name}\n{_manifests()}"},
        "a database, a web app, Karpenter's pool",
    )
    try:
        yield root, env
    finally:
        # Whatever a failed test left: the stack, then the objects Flux applied (a drained Kustomization,
        # suspended, prunes nothing when it goes).
        with StandIns(api, tmp_path / "teardown.log"):
            auto.Stack.select(STACK, workspace(root, env)).destroy(on_output=None)
            core = client.CoreV1Api(api)
            custom = client.CustomObjectsApi(api)
            for plural in (NODE_POOLS, NODE_CLAIMS, NODE_CLASSES):
                for obj in custom.list_cluster_custom_object(*plural)["items"]:
                    name = obj["metadata"]["name"]
                    unheld = {"metadata": {"finalizers": []}}
                    for call in (custom.patch_cluster_custom_object, custom.delete_cluster_custom_object):
                        try:
                            call(
                                *plural,
                                name,
                                *([unheld] if call == custom.patch_cluster_custom_object else []),
                            )
                        except ApiException as exc:
                            if exc.status != 404:  # gone meanwhile, with its owner
                                raise
            if not gone(core.read_namespace, NAMESPACE):
                core.delete_namespace(NAMESPACE)
            wait_until(lambda: gone(core.read_namespace, NAMESPACE), "the workloads' namespace to go")
            wait_until(
                lambda: gone(core.read_persistent_volume, "pv-data-db-0"), "the workloads' volume to go"
            )
            if not gone(core.read_persistent_volume, "pv-flux-storage"):  # Retain: nobody deletes it
                core.delete_persistent_volume("pv-flux-storage")


def test_a_drain_removes_what_mounts_the_claims_then_the_claims_then_karpenter_s_nodes(
    project: tuple[Path, dict[str, str]], cluster: LocalCluster, tmp_path: Path
) -> None:
    root, env = project
    options = StackOptions(work_dir=root, env=env)
    api = cluster.api()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    custom = client.CustomObjectsApi(api)
    log = tmp_path / "order.log"

    with StandIns(api, log):
        # `up` waits for the Kustomization to be Ready, which its health check on the Deployment holds
        # back until the Deployment is available: its pods run.
        up(STACK, options=options)
        deployment = apps.read_namespaced_deployment("web", NAMESPACE)
        assert deployment.status.available_replicas == 2, deployment.status
        # The StatefulSet's pod runs, on the claim its template made, bound to the volume.
        wait_until(
            lambda: (apps.read_namespaced_stateful_set("db", NAMESPACE).status.ready_replicas or 0) == 1,
            "the StatefulSet's pod to be ready",
        )
        claim = core.read_namespaced_persistent_volume_claim("data-db-0", NAMESPACE)
        assert claim.status.phase == "Bound" and claim.spec.volume_name == "pv-data-db-0"
        assert "kubernetes.io/pvc-protection" in claim.metadata.finalizers
        pod = core.read_namespaced_pod("db-0", NAMESPACE)
        assert pod.status.phase == "Running" and pod.spec.node_name
        wait_until(lambda: custom.list_cluster_custom_object(*NODE_CLAIMS)["items"], "Karpenter's NodeClaim")
        flux_uid = apps.read_namespaced_deployment("source-controller", NAMESPACE).metadata.uid

        # The plan names what mounts the claim before the claim, and Karpenter's objects last.
        planned = destroy(STACK, options=options, preview_only=True).drain
        assert planned is not None
        assert [str(o) for o in planned.deleted] == [
            f"Service {NAMESPACE}/web",
            f"StatefulSet {NAMESPACE}/db",
            f"PersistentVolumeClaim {NAMESPACE}/data-db-0",
            "NodeClaim general-abcde",
            "NodePool general",
            "EC2NodeClass general",
        ]

        events: list[tuple[str, KubeObject]] = []
        result = destroy(
            STACK, options=options, drain_timeout=120, on_drain=lambda e, o: events.append((e, o))
        )

    assert result.drain is not None
    assert [str(o) for o in result.drain.deleted] == [
        f"Service {NAMESPACE}/web",
        f"StatefulSet {NAMESPACE}/db",
        f"PersistentVolumeClaim {NAMESPACE}/data-db-0",
        "PersistentVolume pv-data-db-0",
        "NodeClaim general-abcde",
        "NodePool general",
        "EC2NodeClass general",
    ]
    said = [(event, str(obj)) for event, obj in events]
    # The StatefulSet's pod is waited for before its claim is deleted, and the claim's volume after.
    assert said.index(("gone", f"Pod {NAMESPACE}/db-0")) < said.index(
        ("deleting", f"PersistentVolumeClaim {NAMESPACE}/data-db-0")
    ), said
    assert said.index(("gone", "PersistentVolume pv-data-db-0")) < said.index(
        ("deleting", "NodePool general")
    )
    assert said.index(("gone", "NodeClaim general-abcde")) < said.index(("deleting", "EC2NodeClass general"))
    # Nothing that made or holds an AWS resource is left, and the stack is empty.
    assert gone(core.read_namespaced_persistent_volume_claim, "data-db-0", NAMESPACE)
    assert gone(core.read_persistent_volume, "pv-data-db-0")
    assert gone(apps.read_namespaced_stateful_set, "db", NAMESPACE)
    assert gone(core.read_namespaced_service, "web", NAMESPACE)
    for plural in (NODE_POOLS, NODE_CLAIMS, NODE_CLASSES):
        assert custom.list_cluster_custom_object(*plural)["items"] == [], plural
    assert "cluster deleted" in log.read_text()
    assert auto.Stack.select(STACK, workspace(root, env)).export_stack().deployment.get("resources") in (
        None,
        [],
    )
    # The Deployment mounts no claim and made nothing in AWS: it is left to go with the cluster. Flux's
    # own controller and its claim are left too: Pulumi's destroy needs Flux, and uninstalls it after.
    assert apps.read_namespaced_deployment("web", NAMESPACE).status.available_replicas == 2

    # Its pod may still be starting on a loaded machine (no health check waits for it): waited for, the
    # same Deployment, never deleted and made again.
    def flux() -> Any:
        return apps.read_namespaced_deployment("source-controller", NAMESPACE)

    wait_until(lambda: flux().status.available_replicas == 1, "the stand-in source-controller to run")
    assert flux().metadata.uid == flux_uid
    assert not core.read_namespaced_persistent_volume_claim(
        "flux-storage", NAMESPACE
    ).metadata.deletion_timestamp
    steps = log.read_text().splitlines()
    assert steps.index("released service web (db pods: 1)") < steps.index("deleted volume pv-data-db-0")
    assert steps.index("deleted volume pv-data-db-0") < steps.index("released nodeclaim general-abcde")


def test_a_claim_a_pod_still_mounts_is_named_with_the_pod_when_the_drain_runs_out_of_time(
    project: tuple[Path, dict[str, str]], cluster: LocalCluster, tmp_path: Path
) -> None:
    root, env = project
    options = StackOptions(work_dir=root, env=env)
    core = client.CoreV1Api(cluster.api())
    apps = client.AppsV1Api(cluster.api())
    log = tmp_path / "stand-ins.log"
    with StandIns(cluster.api(), log):
        up(STACK, options=options)
        # `up` waits for the Deployment's health check only; on a loaded machine the StatefulSet's pod
        # and claim can come later, and a drain before them has nothing to hold it.
        wait_until(
            lambda: (apps.read_namespaced_stateful_set("db", NAMESPACE).status.ready_replicas or 0) == 1,
            "the StatefulSet's pod to be ready",
        )

    # A backup pod, which the drain could not see when it looked, mounts the claim by the time it goes:
    # Kubernetes keeps the claim, and the drain runs out of time naming the pod.
    with StandIns(cluster.api(), log, backup=True), pytest.raises(DrainError) as info:
        destroy(STACK, options=options, drain_timeout=15)
    message = str(info.value)
    assert (
        f"PersistentVolumeClaim {NAMESPACE}/data-db-0 (finalizers: kubernetes.io/pvc-protection; "
        f"mounted by Pod {NAMESPACE}/backup)" in message
    ), message
    assert "Kubernetes keeps a claim while a pod mounts it" in message, message
    assert "EBS CSI" not in message and "Nothing was destroyed" in message, message
    assert "started backup of data-db-0" in log.read_text()

    # Run again, the drain finds the pod that mounts the claim now, deletes it, and finishes.
    with StandIns(cluster.api(), log):
        result = destroy(STACK, options=options, drain_timeout=120)
    assert result.drain is not None
    assert [str(o) for o in result.drain.deleted][:2] == [
        f"Pod {NAMESPACE}/backup",
        f"PersistentVolumeClaim {NAMESPACE}/data-db-0",
    ]
    assert gone(core.read_namespaced_persistent_volume_claim, "data-db-0", NAMESPACE)
    assert gone(core.read_persistent_volume, "pv-data-db-0")
