"""Pods that run on the local cluster: kube-scheduler binds them to nodes that kwok plays the kubelet of.

kwok (``sigs.k8s.io/kwok`` v0.8.0) manages each Node annotated ``kwok.x-k8s.io/node: fake`` the way a
kubelet would, without running anything. Its stages, the module's ``kustomize/stage/{node,pod}/fast``
that ``tools/cluster/build.sh`` copies beside the binaries (kwok 0.8.0 ships none and exits "no stages
found" without them), mark such a node Ready, and move each pod bound to it to Running, a Job's pod on to
Succeeded, and a deleted pod out of the API. No image is pulled, no volume mounted and no probe run, so a
Deployment becomes Available, a StatefulSet Ready once its claims are bound, and a namespace that holds
pods can still be deleted. Without ``--node-lease-duration-seconds`` kwok renews no node Lease, and it
writes the node's Ready condition once: nothing here watches for a heartbeat (no node-lifecycle
controller; see :class:`~._cluster.LocalCluster`). The docs' upstream notes (``docs/upstream-notes.md``,
"Running it on loopback") have the recipe.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._processes import READY_SECONDS, Process, Processes, component_flags, free_port, says_ok, tail
from ._project import SETUP_HINT, Toolchain

__all__ = ["ALLOCATABLE", "KWOK_ANNOTATION", "NODE_NAMES", "start_nodes"]

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
"""kwok manages the nodes annotated ``kwok.x-k8s.io/node: fake`` (its annotation selector)."""
NODE_NAMES = ("local-node-1",)
ALLOCATABLE = {"cpu": "64", "memory": "256Gi", "pods": "500"}
"""What each node offers the scheduler: more than the tests ask for."""
NOT_READY = "node.kubernetes.io/not-ready"
POD_RANGE = "10.244.0.0/16"
"""Where kwok gives pods their IPs (nodes have no ``podCIDR``: the controller manager runs no nodeipam)."""
NODE_IP = "10.1.0.2"
"""The nodes' InternalIP (and a hostNetwork pod's): outside the service and pod ranges."""


def start_nodes(
    processes: Processes,
    toolchain: Toolchain,
    kubeconfig: Path,
    workdir: Path,
    api: Any,
    names: Sequence[str] = NODE_NAMES,
) -> None:
    """Start kube-scheduler and kwok, each ready before it returns; then register the nodes ``names``
    and wait until each is Ready and schedulable."""
    scheduler, scheduler_port = _start_scheduler(processes, toolchain, kubeconfig)
    kwok, kwok_port = _start_kwok(processes, toolchain, kubeconfig, workdir)
    # Both start at once: each waits on its own informers, not on the other.
    unverified = ssl._create_unverified_context()  # its serving certificate is self-signed
    processes.wait_until(
        scheduler, lambda: says_ok(f"https://127.0.0.1:{scheduler_port}/readyz", unverified), "/readyz"
    )
    # kwok serves this only once its controllers have started: after it, a new node is seen.
    processes.wait_until(kwok, lambda: says_ok(f"http://127.0.0.1:{kwok_port}/readyz"), "/readyz")
    _register(api, names, kwok)


def _start_scheduler(processes: Processes, toolchain: Toolchain, kubeconfig: Path) -> tuple[Process, int]:
    port = free_port()
    scheduler = processes.start(
        "kube-scheduler",
        [
            toolchain.binary("kube-scheduler"),
            *component_flags(kubeconfig, port),
        ],
    )
    return scheduler, port


def _start_kwok(
    processes: Processes, toolchain: Toolchain, kubeconfig: Path, workdir: Path
) -> tuple[Process, int]:
    if not toolchain.kwok_stages.is_file():
        raise FileNotFoundError(f"{toolchain.kwok_stages} is missing: {SETUP_HINT}")
    port = free_port()
    kwok = processes.start(
        "kwok",
        [
            toolchain.binary("kwok"),
            f"--kubeconfig={kubeconfig}",
            f"--config={toolchain.kwok_stages}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            f"--cidr={POD_RANGE}",
            f"--node-ip={NODE_IP}",
            f"--server-address=127.0.0.1:{port}",
        ],
        # kwok also loads ~/.kwok/kwok.yaml when it exists: a user's own stages must not change ours.
        {"KWOK_WORKDIR": str(workdir / "kwok")},
    )
    return kwok, port


def _register(api: Any, names: Sequence[str], kwok: Process) -> None:
    """Create the nodes, and wait until kwok has made each Ready and nothing keeps pods off it."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    for name in names:
        labels = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name}
        core.create_node(
            client.V1Node(
                metadata=client.V1ObjectMeta(name=name, annotations={KWOK_ANNOTATION: "fake"}, labels=labels),
                status=client.V1NodeStatus(allocatable=ALLOCATABLE, capacity=ALLOCATABLE),
            )
        )
    deadline = time.monotonic() + READY_SECONDS
    for name in names:
        while not (seen := _schedulable(core, name))[0]:
            if not kwok.alive() or time.monotonic() > deadline:
                raise RuntimeError(
                    f"node {name} was not Ready and untainted within {READY_SECONDS:.0f} s ({seen[1]}); "
                    f"kwok:\n{tail(kwok.log)}"
                )
            time.sleep(0.1)


def _schedulable(core: Any, name: str) -> tuple[bool, str]:
    """Whether the node ``name`` is Ready without the not-ready taint, and what was seen; takes the taint
    off when it is there."""
    from kubernetes.client.exceptions import ApiException

    node = core.read_node(name)
    taints = [taint.key for taint in node.spec.taints or []]
    conditions = {condition.type: condition.status for condition in node.status.conditions or []}
    seen = f"conditions {conditions}, taints {taints}"
    if NOT_READY in taints:
        # The API server taints every new node not-ready (admission plugin TaintNodesByCondition, on create
        # only), and only the node-lifecycle controller takes it off: the controller manager here runs
        # without it (see LocalCluster). Only that taint, and only while it is where it was read.
        index = taints.index(NOT_READY)
        patch = [
            {"op": "test", "path": f"/spec/taints/{index}/key", "value": NOT_READY},
            {"op": "remove", "path": f"/spec/taints/{index}"},
        ]
        try:
            core.patch_node(name, patch)
        except ApiException as exc:
            if exc.status not in (409, 422):  # the node changed meanwhile: read it again
                raise
        return False, seen
    return conditions.get("Ready") == "True", seen
