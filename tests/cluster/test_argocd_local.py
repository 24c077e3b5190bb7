"""Argo CD on the local cluster (:class:`~gitops_infra.local.ArgoCd`), on its own, before any stack uses it.

Its application controller, repo server, ApplicationSet controller and Redis run as processes against the
session's cluster, and fetch from the session's SSH fleet server with the deploy key, as a stack with
``gitops.engine: argocd`` will: a repository Secret, the server's host key in
``argocd-ssh-known-hosts-cm`` (written to the repo server's path by the dev-mounter), an ``AppProject`` and
an ``Application`` with automated sync.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from gitops_infra.local import ArgoCd, DeployKeyPair, FleetServer, LocalCluster

from ..support import TOOLCHAIN, unavailable
from .conftest import gone, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

NAMESPACE = "argocd"
GROUP, VERSION = "argoproj.io", "v1alpha1"
TARGET = "argo-harness"
"""The namespace the Applications here deploy to."""


@pytest.fixture(scope="module")
def argocd(
    cluster: LocalCluster,
    fleet: FleetServer,
    deploy_key: DeployKeyPair,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ArgoCd]:
    if not (TOOLCHAIN.bin_dir / "argocd").is_file():
        unavailable("Argo CD is not built: run `make setup`")
    argo = ArgoCd(tmp_path_factory.mktemp("argocd"), cluster).start()
    core = client.CoreV1Api(cluster.api())
    try:
        core.patch_namespaced_config_map(
            "argocd-ssh-known-hosts-cm", NAMESPACE, {"data": {"ssh_known_hosts": fleet.known_hosts + "\n"}}
        )
        core.create_namespaced_secret(
            NAMESPACE,
            client.V1Secret(
                metadata=client.V1ObjectMeta(
                    name="fleet-repository", labels={"argocd.argoproj.io/secret-type": "repository"}
                ),
                string_data={"type": "git", "url": fleet.url, "sshPrivateKey": deploy_key.private_key},
            ),
        )
        _create(cluster, "appprojects", _project([fleet.url], TARGET))
        yield argo
    finally:
        argo.stop()


def _project(repositories: list[str], namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AppProject",
        "metadata": {"name": "fleet", "namespace": NAMESPACE},
        "spec": {
            "sourceRepos": repositories,
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": namespace}],
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
        },
    }


def _application(name: str, url: str, path: str, namespace: str = TARGET) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Application",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "project": "fleet",
            "source": {"repoURL": url, "targetRevision": "main", "path": path},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["CreateNamespace=true"],
            },
        },
    }


def _create(cluster: LocalCluster, plural: str, body: dict[str, Any]) -> None:
    client.CustomObjectsApi(cluster.api()).create_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, plural, body
    )


def _read(cluster: LocalCluster, plural: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(cluster.api()).get_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, plural, name
    )
    return found


def _maybe_read(cluster: LocalCluster, plural: str, name: str) -> dict[str, Any] | None:
    from kubernetes.client.exceptions import ApiException

    try:
        return _read(cluster, plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _synced_at(cluster: LocalCluster, name: str, revision: str) -> Any:
    status = _read(cluster, "applications", name).get("status", {})
    sync, health = status.get("sync", {}), status.get("health", {})
    done = (
        sync.get("status") == "Synced"
        and sync.get("revision") == revision
        and health.get("status") == "Healthy"
    )
    return status if done else None


def _config_map(name: str, value: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: {value}\n"


def test_an_application_syncs_the_fleet_over_ssh_and_heals_an_out_of_band_delete(
    argocd: ArgoCd, cluster: LocalCluster, fleet: FleetServer
) -> None:
    revision = fleet.commit(
        {
            "argo/plain/kustomization.yaml": "resources: [config.yaml]\n",
            "argo/plain/config.yaml": _config_map("from-argo", "one"),
        },
        "a kustomization for Argo CD",
    )
    _create(cluster, "applications", _application("plain", fleet.url, "argo/plain"))
    wait_until(lambda: _synced_at(cluster, "plain", revision), "the Application Synced and Healthy")
    core = client.CoreV1Api(cluster.api())
    assert core.read_namespaced_config_map("from-argo", TARGET).data == {"value": "one"}

    core.delete_namespaced_config_map("from-argo", TARGET)
    healed = wait_until(
        lambda: not gone(core.read_namespaced_config_map, "from-argo", TARGET), "self-heal to recreate it", 60
    )
    assert healed

    changed = fleet.commit({"argo/plain/config.yaml": _config_map("from-argo", "two")}, "a change")
    # A hard refresh, as a webhook would ask: the controller's own resync period is minutes.
    client.CustomObjectsApi(cluster.api()).patch_namespaced_custom_object(
        GROUP,
        VERSION,
        NAMESPACE,
        "applications",
        "plain",
        {"metadata": {"annotations": {"argocd.argoproj.io/refresh": "hard"}}},
    )
    wait_until(lambda: _synced_at(cluster, "plain", changed), "the change synced")
    assert core.read_namespaced_config_map("from-argo", TARGET).data == {"value": "two"}


def test_a_destination_outside_the_project_is_refused_with_argo_cd_s_condition(
    argocd: ArgoCd, cluster: LocalCluster, fleet: FleetServer
) -> None:
    _create(
        cluster, "applications", _application("outside", fleet.url, "argo/plain", namespace="kube-system")
    )

    def condition() -> Any:
        conditions = _read(cluster, "applications", "outside").get("status", {}).get("conditions", [])
        return next((c for c in conditions if c["type"] == "InvalidSpecError"), None)

    found = wait_until(condition, "InvalidSpecError")
    assert "kube-system" in found["message"]
    assert gone(client.CoreV1Api(cluster.api()).read_namespaced_config_map, "from-argo", "kube-system")


def test_an_application_set_renders_an_application_per_labelled_cluster(
    argocd: ArgoCd, cluster: LocalCluster, fleet: FleetServer
) -> None:
    core = client.CoreV1Api(cluster.api())
    core.create_namespaced_secret(
        NAMESPACE,
        client.V1Secret(
            metadata=client.V1ObjectMeta(
                name="in-cluster",
                labels={"argocd.argoproj.io/secret-type": "cluster", "environment": "local"},
                annotations={"base-domain": "local.example.com"},
            ),
            string_data={"name": "in-cluster", "server": "https://kubernetes.default.svc", "config": "{}"},
        ),
    )
    _create(
        cluster,
        "applicationsets",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ApplicationSet",
            "metadata": {"name": "per-cluster", "namespace": NAMESPACE},
            "spec": {
                "goTemplate": True,
                "generators": [{"clusters": {"selector": {"matchLabels": {"environment": "local"}}}}],
                "template": {
                    "metadata": {"name": "app-{{.metadata.labels.environment}}"},
                    "spec": {
                        **_application("unused", fleet.url, "argo/plain")["spec"],
                        "destination": {"server": "{{.server}}", "namespace": TARGET},
                        "info": [
                            {"name": "baseDomain", "value": '{{index .metadata.annotations "base-domain"}}'}
                        ],
                    },
                },
            },
        },
    )
    rendered = wait_until(
        lambda: (
            not gone(_read, cluster, "applications", "app-local")
            and _read(cluster, "applications", "app-local")
        ),
        "the ApplicationSet's Application",
    )
    assert rendered["spec"]["info"] == [{"name": "baseDomain", "value": "local.example.com"}]
