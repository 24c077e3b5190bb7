"""A hangup mid-drain (the terminal of ``gitops-infra destroy`` closed while the drain waits) stops it as
SIGTERM does: exit 129, one JSON document, nothing destroyed, no process and no client key left; and the
next destroy goes on from there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from kubernetes import client
from pulumi import automation as auto

from gitops_infra.automation import StackOptions, destroy, history, up
from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster

from ..support import workspace
from .conftest import drain_stack, gone, wait_until
from .test_drain import STACK, StandIn, _gateway_api, _manifests

pytestmark = pytest.mark.cluster

NAME = "hangup"
NAMESPACE = f"apps-{NAME}"


@pytest.fixture
def project(
    tmp_path: Path, cluster: LocalCluster, fleet: FleetServer, deploy_key: DeployKeyPair
) -> Iterator[tuple[Path, dict[str, str]]]:
    """The drain fixture as a committed project with its stack configured, its fleet path holding
    objects whose finalizer only :class:`StandIn` lets go."""
    root, env = drain_stack(tmp_path, STACK, cluster, fleet, deploy_key, name=NAME)
    stack = auto.Stack.select(STACK, workspace(root, env))
    _gateway_api(cluster.api())
    fleet.commit({f"clusters/{NAME}/apps.yaml": _manifests(NAMESPACE)}, "objects a drain waits for")
    try:
        yield root, env
    finally:
        with StandIn(cluster.api(), NAMESPACE, f"flux-{NAME}", tmp_path / "teardown.log", delay=0):
            stack.destroy(on_output=None)


def _locks(env: dict[str, str]) -> list[Path]:
    backend = Path(env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    return list(backend.glob(".pulumi/locks/**/*.json"))


def test_a_hangup_mid_drain_stops_it_as_sigterm_does_and_destroys_nothing(
    project: tuple[Path, dict[str, str]], cluster: LocalCluster, tmp_path: Path
) -> None:
    # The hangup ended the CLI on the spot: no document, exit by signal, and the directory with the
    # cluster's client key and kubeconfig left in the temp dir.
    root, env = project
    options = StackOptions(work_dir=root, env=env)
    networking = client.NetworkingV1Api(cluster.api())
    up(STACK, options=options)
    wait_until(
        lambda: not gone(networking.read_namespaced_ingress, "web", NAMESPACE),
        "Flux to apply the fleet's objects",
    )
    before = auto.Stack.select(STACK, workspace(root, env)).export_stack()
    versions = [d.version for d in history(STACK, options=options)]
    temp = Path(env["TMPDIR"])
    temp_before = sorted(temp.iterdir())

    command = ["destroy", STACK, "--yes", "--json", "--drain-timeout", "5m", "--cwd", str(root)]
    process = subprocess.Popen(
        [sys.executable, "-m", "gitops_infra.cli", *command],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell's job is
    )
    # The drain has deleted the first group and waits for its finalizers, which nobody lets go.
    wait_until(
        lambda: networking.read_namespaced_ingress("web", NAMESPACE).metadata.deletion_timestamp,
        "the drain to delete the Ingress",
        timeout=120,
    )
    assert [d.name for d in temp.iterdir() if d.name.startswith("gitops-infra-kube-")], "no client files"
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]

    os.killpg(process.pid, signal.SIGHUP)  # the terminal closed: the shell passes it to the whole job
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 128 + signal.SIGHUP, stderr
    document = json.loads(stdout)  # exactly one document
    assert document["error"] == {"type": "Interrupted", "message": "stopped by SIGHUP before it finished"}
    assert "Traceback" not in stderr
    _, alive = psutil.wait_procs(tree, timeout=30)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == [], "a process outlived the hangup"
    assert sorted(temp.iterdir()) == temp_before, "the client key and kubeconfig outlived the hangup"
    assert not _locks(env)
    after = auto.Stack.select(STACK, workspace(root, env)).export_stack()
    assert [r["urn"] for r in after.deployment["resources"]] == [
        r["urn"] for r in before.deployment["resources"]
    ]
    assert [d.version for d in history(STACK, options=options)] == versions

    # The second act: the next destroy goes on from where the drain was, then destroys the stack.
    with StandIn(cluster.api(), NAMESPACE, f"flux-{NAME}", tmp_path / "order.log"):
        result = destroy(STACK, options=options, drain_timeout=120)
    assert result.drain is not None
    assert f"PersistentVolumeClaim {NAMESPACE}/data" in [str(o) for o in result.drain.deleted]
    assert result.changes.get("delete", 0) > 0
