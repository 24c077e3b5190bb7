"""External Secrets Operator on the local cluster, against moto's server as AWS Secrets Manager: the store
the platform makes (``store_manifest``) is Ready, an ``ExternalSecret`` becomes a Secret with moto's value,
and a new value in Secrets Manager reaches the Secret within its refresh interval. Made by hand, not by a
stack: the controller alone, with a key it does not find (``test_external_secrets_stack.py`` is the same
through the stack config, the contract and the fleet)."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from gitops_infra.components.external_secrets import store_manifest
from gitops_infra.local import ExternalSecretsController, LocalCluster

from ..support import unavailable
from .conftest import wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

GROUP, VERSION = "external-secrets.io", "v1"
NAMESPACE = "eso-test"
STORE = "eso-test-store"
REFRESH_SECONDS = 2


@pytest.fixture(scope="module")
def eso(
    cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExternalSecretsController]:
    controller = ExternalSecretsController(tmp_path_factory.mktemp("eso"), cluster)
    if not controller.binary.is_file():
        unavailable("External Secrets is not built: run `make setup`")
    controller.start()
    try:
        yield controller
    finally:
        controller.stop()


def _conditions(api: Any, plural: str, name: str, namespace: str | None = None) -> dict[str, str]:
    objects = client.CustomObjectsApi(api)
    if namespace is None:
        found = objects.get_cluster_custom_object(GROUP, VERSION, plural, name)
    else:
        found = objects.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
    return {
        c["type"]: f"{c['status']} {c.get('reason', '')}"
        for c in found.get("status", {}).get("conditions", [])
    }


def _secret_value(api: Any, name: str) -> str | None:
    from kubernetes.client.exceptions import ApiException

    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(name, NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return base64.b64decode((secret.data or {}).get("password", "")).decode()


def _external_secret(name: str, key: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ExternalSecret",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "refreshInterval": f"{REFRESH_SECONDS}s",
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": STORE},
            "target": {"name": name},
            "data": [{"secretKey": "password", "remoteRef": {"key": key, "property": "password"}}],
        },
    }


def test_an_external_secret_becomes_a_secret_with_the_value_from_secrets_manager(
    cluster: LocalCluster, eso: ExternalSecretsController
) -> None:
    api = cluster.api()
    objects = client.CustomObjectsApi(api)
    manager = eso.secrets_manager()
    first, second = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    manager.create_secret(Name="dev/shop/db", SecretString=json.dumps({"password": first}))

    objects.create_cluster_custom_object(
        GROUP, VERSION, "clustersecretstores", store_manifest(STORE, eso.region, "dev/")
    )
    wait_until(
        lambda: _conditions(api, "clustersecretstores", STORE).get("Ready", "").startswith("True"), "store"
    )

    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    objects.create_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, "externalsecrets", _external_secret("db", "shop/db")
    )
    wait_until(lambda: _secret_value(api, "db") == first, "the Secret with the value in Secrets Manager")

    # The second act: a new version in Secrets Manager reaches the Secret at the next refresh.
    manager.put_secret_value(SecretId="dev/shop/db", SecretString=json.dumps({"password": second}))
    wait_until(lambda: _secret_value(api, "db") == second, "the new value", timeout=10 * REFRESH_SECONDS)

    # A key Secrets Manager does not hold: the ExternalSecret says so, and no Secret is made.
    objects.create_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, "externalsecrets", _external_secret("missing", "shop/none")
    )
    wait_until(
        lambda: (
            _conditions(api, "externalsecrets", "missing", NAMESPACE).get("Ready", "").startswith("False")
        ),
        "the missing key reported",
    )
    assert _secret_value(api, "missing") is None

    logs = [path.read_text(errors="replace") for path in Path(eso.workdir, "logs").glob("*.log")]
    assert logs and not any(value in log for log in logs for value in (first, second))
