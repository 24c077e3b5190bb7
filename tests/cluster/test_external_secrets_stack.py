"""External Secrets from the stack: the local stack with ``secrets.externalSecrets`` on makes the store and
names it in the environment contract; an app team's ``ExternalSecret``, committed to the fleet against the
name the contract gives, becomes a Secret with the value moto holds as AWS Secrets Manager, and follows a
new value. A key outside the stack's prefix is refused by the store: it reads every key under the prefix,
so the ExternalSecret names no secret outside it (moto holds one there), reports the error, and makes no
Secret. The second act: a second ``up`` changes nothing, and the Secret stays.

The local stack runs on a cluster outside AWS (``cluster.existing``, ``flux.install: external``): the harness
runs the controller (:class:`~gitops_infra.local.ExternalSecretsController`, against moto), and the stack
makes no IAM role (``iamRole: false``; the role and its scope are the unit tests' and the offline plan's).
"""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import up
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, parse_environment
from gitops_infra.local import ExternalSecretsController, FleetServer, LocalCluster

from ..support import unavailable
from .conftest import LocalStack, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

GROUP, VERSION = "external-secrets.io", "v1"
REGION = "eu-central-1"
REFRESH_SECONDS = 2


@pytest.fixture
def eso(cluster: LocalCluster, tmp_path: Path) -> Iterator[ExternalSecretsController]:
    controller = ExternalSecretsController(tmp_path / "eso", cluster, region=REGION)
    if not controller.binary.is_file():
        unavailable("External Secrets is not built: run `make setup`")
    controller.start()
    try:
        yield controller
    finally:
        controller.stop()


def _contract_store(api: Any, namespace: str) -> str | None:
    """The store's name as an app team reads it: the contract ConfigMap in its namespace, typed."""
    data = client.CoreV1Api(api).read_namespaced_config_map(ENVIRONMENT_CONFIGMAP, namespace).data
    return parse_environment(data or {}).cluster_secret_store


def _secret(api: Any, name: str, namespace: str) -> Any:
    try:
        return client.CoreV1Api(api).read_namespaced_secret(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _value(api: Any, name: str, namespace: str) -> str | None:
    secret = _secret(api, name, namespace)
    if secret is None:
        return None
    return base64.b64decode((secret.data or {}).get("password", "")).decode()


def _external_secret(name: str, namespace: str, store: str, key: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ExternalSecret",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "refreshInterval": f"{REFRESH_SECONDS}s",
                "secretStoreRef": {"kind": "ClusterSecretStore", "name": store},
                "target": {"name": name},
                "data": [{"secretKey": "password", "remoteRef": {"key": key, "property": "password"}}],
            },
        }
    )


def _fleet_history(fleet: FleetServer) -> str:
    """Every commit of the fleet repository, with its diff: what anyone with read access sees."""
    return subprocess.run(
        ["git", "-C", str(fleet.checkout), "log", "-p", "--all"], capture_output=True, text=True, check=True
    ).stdout


def test_an_external_secret_against_the_contract_s_store_gets_moto_s_value_and_a_second_up_changes_nothing(
    eso: ExternalSecretsController, local_stack: LocalStack, fleet: FleetServer, cluster: LocalCluster
) -> None:
    # `eso` first: set up before the stack, it stops after the stack's destroy. That destroy prunes the
    # ExternalSecret, whose finalizer only the running controller removes.
    api, namespace = local_stack.api, local_stack.service_namespace
    store = f"store-{local_stack.name}"[:63]
    local_stack.set(
        "secrets",
        {
            "externalSecrets": {
                "enabled": True,
                "region": REGION,
                "iamRole": False,
                "clusterSecretStore": store,
            }
        },
    )
    local_stack.commit("External Secrets on, reading moto")
    first, second = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    key = f"{local_stack.name}/db"  # after the stack's prefix, `<environment>/`: the store puts it first
    outside, kept = f"other/{local_stack.name}/db", secrets.token_urlsafe(16)
    manager = eso.secrets_manager()
    manager.create_secret(Name=f"local/{key}", SecretString=json.dumps({"password": first}))
    manager.create_secret(Name=outside, SecretString=json.dumps({"password": kept}))

    made = up("local", options=local_stack.options)

    # The store the stack made is Ready, and the contract names it: an app team asks nobody.
    objects = client.CustomObjectsApi(api)
    wait_until(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in objects.get_cluster_custom_object(GROUP, VERSION, "clustersecretstores", store)
            .get("status", {})
            .get("conditions", [])
        ),
        "the store Ready",
    )
    named = _contract_store(api, namespace)
    assert named == store
    fleet.commit(
        {
            f"{local_stack.fleet_path}/db.yaml": _external_secret("db", namespace, named, key),
            f"{local_stack.fleet_path}/outside.yaml": _external_secret("outside", namespace, named, outside),
        },
        "the shop's database password, from Secrets Manager; and a name outside the stack's prefix",
    )
    wait_until(lambda: _value(api, "db", namespace) == first, "the Secret with moto's value")
    # Outside the prefix: moto holds that name, but the store reads local/other/...: refused, no Secret.
    wait_until(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "False" and c.get("reason") == "SecretSyncedError"
            for c in objects.get_namespaced_custom_object(
                GROUP, VERSION, namespace, "externalsecrets", "outside"
            )
            .get("status", {})
            .get("conditions", [])
        ),
        "the ExternalSecret outside the prefix refused",
    )
    assert _secret(api, "outside", namespace) is None

    # A new version in Secrets Manager reaches the Secret within its refresh interval (and the poll's).
    manager.put_secret_value(SecretId=f"local/{key}", SecretString=json.dumps({"password": second}))
    wait_until(lambda: _value(api, "db", namespace) == second, "the new value", timeout=10 * REFRESH_SECONDS)
    uid = _secret(api, "db", namespace).metadata.uid

    # The second act: nothing to change, and the Secret is still the same object, with the same value.
    again = up("local", options=local_stack.options)
    assert set(again.changes) == {"same"}, again.changes
    assert _secret(api, "db", namespace).metadata.uid == uid
    assert _value(api, "db", namespace) == second

    # Neither value in the state, the project, the fleet's history, what `up` said, or any log.
    logs = {
        str(path): path.read_text(errors="replace")
        for root in (eso.workdir, cluster.workdir)
        for path in Path(root).rglob("*.log")
    }
    status = local_stack.cli("status", "local", "--json")
    texts = {
        "first up": repr(made),
        "second up": repr(again),
        "status": f"{status.stdout}\n{status.stderr}",
        "fleet history": _fleet_history(fleet),
        **logs,
    }
    assert local_stack.secret_leaks([first, second, kept], texts) == []
