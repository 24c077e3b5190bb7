"""The Sealed Secrets controller runs on the local cluster, out of cluster, when a test asks for it.

A Secret sealed offline (``kubeseal --cert``) against the controller's cert opens into a Secret with its
value; one sealed for another key does not. The controller also takes a key made outside it (a
``kubernetes.io/tls`` Secret labelled active): the way the platform hands it the key Pulumi holds. A second
key added beside the first seals from the next start on, and what the first sealed still opens. Every
value is made when the test runs.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation.sealing_keys import new_sealing_key_pair
from gitops_infra.local import LocalCluster
from gitops_infra.local._kubeseal import seal
from gitops_infra.local._sealed_secrets import CONTROLLER, KEY_LABEL, SealedSecretsController

from ..support import TOOLCHAIN, unavailable
from .conftest import wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.extra]

GROUP, VERSION, PLURAL = "bitnami.com", "v1alpha1", "sealedsecrets"


def _key_pair() -> tuple[str, str]:
    """A key and its cert, PEM, as `gitops-infra sealed-secrets keygen` makes them (the component's shape)."""
    cert, key = new_sealing_key_pair()
    return key, cert


def _key_secret(name: str, key_pem: str, cert_pem: str) -> client.V1Secret:
    return client.V1Secret(
        metadata=client.V1ObjectMeta(name=name, labels={KEY_LABEL: "active"}),
        type="kubernetes.io/tls",
        string_data={"tls.key": key_pem, "tls.crt": cert_pem},
    )


def _apply_sealed(api: Any, sealed: dict[str, Any]) -> None:
    client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, sealed["metadata"]["namespace"], PLURAL, sealed
    )


def _secret_value(api: Any, namespace: str, name: str, key: str) -> str | None:
    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return base64.b64decode(secret.data[key]).decode() if secret.data and key in secret.data else None


def _synced(api: Any, namespace: str, name: str) -> tuple[str, str] | None:
    """The SealedSecret's ``Synced`` condition: (status, message), once the controller has set it."""
    sealed = client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, name
    )
    for condition in sealed.get("status", {}).get("conditions", []):
        if condition["type"] == "Synced":
            return condition["status"], condition.get("message", "")
    return None


@pytest.fixture
def app_namespace(cluster: LocalCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"sealed-{request.node.name.removeprefix('test_')[:20].replace('_', '-')}".rstrip("-")
    core = client.CoreV1Api(cluster.api())
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    core.delete_namespace(name)


def _controller(cluster: LocalCluster, workdir: Path, namespace: str) -> SealedSecretsController:
    if not (TOOLCHAIN.bin_dir / CONTROLLER).is_file():
        unavailable("the Sealed Secrets controller is not built: run `make setup`")
    return SealedSecretsController(cluster, workdir, namespace=namespace)


def test_a_secret_sealed_offline_against_the_controller_s_own_key_opens(
    cluster: LocalCluster, tmp_path: Path, app_namespace: str
) -> None:
    api = cluster.api()
    controller = _controller(cluster, tmp_path / "controller", "sealed-own").start()
    try:
        value = secrets.token_hex(16)
        sealed = seal(TOOLCHAIN, controller.cert_pem(), "db", app_namespace, {"password": value})
        assert value not in str(sealed)
        _apply_sealed(api, sealed)
        got = wait_until(lambda: _secret_value(api, app_namespace, "db", "password"), "the unsealed Secret")
        assert got == value
        assert wait_until(lambda: _synced(api, app_namespace, "db"), "Synced") == ("True", "")

        # Sealed for a key the controller does not hold: refused, and no Secret.
        _, other_cert = _key_pair()
        _apply_sealed(api, seal(TOOLCHAIN, other_cert, "other", app_namespace, {"password": value}))
        status, message = wait_until(lambda: _synced(api, app_namespace, "other"), "Synced on the other")
        assert status == "False" and "no key could decrypt secret" in message
        assert _secret_value(api, app_namespace, "other", "password") is None
        # Neither the value nor the controller's token reaches its log.
        log = (tmp_path / "controller" / "logs" / f"{CONTROLLER}.log").read_text()
        token = (tmp_path / "controller" / "serviceaccount" / "token").read_text()
        assert "registered private key" in log or "New key written" in log
        assert value not in log and token not in log
    finally:
        controller.stop()


def test_the_controller_seals_with_a_key_given_to_it_and_keeps_the_old_one_for_decryption(
    cluster: LocalCluster, tmp_path: Path, app_namespace: str
) -> None:
    api, namespace = cluster.api(), "sealed-given"
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    first_key, first_cert = _key_pair()
    core.create_namespaced_secret(namespace, _key_secret("platform-key-1", first_key, first_cert))
    controller = _controller(cluster, tmp_path / "controller", namespace).start()
    try:
        # It registered the given key and made none of its own.
        assert controller.cert_pem() == first_cert
        keys = core.list_namespaced_secret(namespace, label_selector=KEY_LABEL).items
        assert [secret.metadata.name for secret in keys] == ["platform-key-1"]
        old_value = secrets.token_hex(16)
        _apply_sealed(api, seal(TOOLCHAIN, first_cert, "before", app_namespace, {"token": old_value}))
        assert wait_until(lambda: _secret_value(api, app_namespace, "before", "token"), "before") == old_value

        # A rotation: a second key beside the first. The controller reads its keys when it starts.
        second_key, second_cert = _key_pair()
        core.create_namespaced_secret(namespace, _key_secret("platform-key-2", second_key, second_cert))
        controller.restart()
        assert controller.cert_pem() == second_cert
        new_value = secrets.token_hex(16)
        _apply_sealed(api, seal(TOOLCHAIN, second_cert, "after", app_namespace, {"token": new_value}))
        assert wait_until(lambda: _secret_value(api, app_namespace, "after", "token"), "after") == new_value
        # What the first key sealed still opens: delete its Secret, and the controller makes it again.
        core.delete_namespaced_secret("before", app_namespace)
        assert wait_until(lambda: _secret_value(api, app_namespace, "before", "token"), "again") == old_value
    finally:
        controller.stop()
        core.delete_namespace(namespace)
