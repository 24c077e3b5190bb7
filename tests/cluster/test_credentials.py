"""Credentials over time on the real API server, provider and source-controller.

A rotation is proven before the old key goes: ``up`` returns only once Flux has fetched with the new key
(the fleet server says which key each fetch came with). A rotation to a key the server refuses fails
``up`` with Flux's words and leaves the way back open. A GitHub App's objects are what the API server
and source-controller accept, and a move between a deploy key and an App goes in one ``up``.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import rollback_to_commit, up
from gitops_infra.components.flux import (
    FLUX_SECRET_NAME,
    FLUX_SYNC_NAME,
    GITHUB_APP_SECRET_NAME,
    RECONCILE_REQUEST_ANNOTATION,
    credential_digest,
)
from gitops_infra.errors import OperationFailedError
from gitops_infra.local import DeployKeyPair, FleetServer

from .conftest import LocalStack

pytestmark = pytest.mark.cluster

SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
AUTH_REFUSED = ("unable to authenticate", "handshake failed")
APP = {"appId": 123456, "installationId": 7890123, "privateKey": "fluxAppKey"}


def _repository(stack: LocalStack) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        *SOURCE[:2], stack.flux_namespace, SOURCE[2], FLUX_SYNC_NAME
    )
    return found


def _ready(repository: dict[str, Any]) -> dict[str, Any]:
    conditions = repository.get("status", {}).get("conditions", [])
    return next(c for c in conditions if c["type"] == "Ready")


def _secret(stack: LocalStack, name: str = FLUX_SECRET_NAME) -> client.V1Secret:
    return client.CoreV1Api(stack.api).read_namespaced_secret(name, stack.flux_namespace)


def _data(stack: LocalStack, name: str) -> dict[str, str]:
    """A Secret's data; none for a Secret that is gone."""
    try:
        return _secret(stack, name).data or {}
    except ApiException as exc:
        if exc.status == 404:
            return {}
        raise


def _proven(stack: LocalStack, key: str) -> dict[str, Any]:
    """The GitRepository, checked to have handled the request for ``key`` and to be Ready."""
    repository = _repository(stack)
    request = credential_digest(key)  # the local stack names no public key: the private key's digest
    assert repository["metadata"]["annotations"][RECONCILE_REQUEST_ANNOTATION] == request
    assert repository["status"]["lastHandledReconcileAt"] == request
    assert _ready(repository)["status"] == "True", _ready(repository)
    return repository


def test_a_rotation_returns_only_once_flux_has_fetched_with_the_new_key(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    # No scheduled fetch within the test: a fetch with the new key is the one `up` asked for.
    local_stack.set("flux.gitInterval", "1h")
    up("local", options=local_stack.options)
    _proven(local_stack, deploy_key.private_key)
    uid = _secret(local_stack).metadata.uid

    new = DeployKeyPair.generate()
    fleet.authorize(deploy_key, new)  # the overlap: the repository holds both deploy keys
    try:
        local_stack.set("localDeployKey", new.private_key, secret=True)
        seen = len(fleet.accepted())

        up("local", options=local_stack.options)

        fetched = fleet.accepted()[seen:]  # read as `up` returned
        assert new.fingerprint in fetched, (new.fingerprint, fetched)
        assert deploy_key.fingerprint not in fetched
        _proven(local_stack, new.private_key)
        assert _secret(local_stack).metadata.uid == uid  # the Secret was updated in place
        # The old key goes from the repository (Pulumi deletes a replaced deploy key once the update is
        # done): Flux fetches on with the new one.
        fleet.authorize(new)
        local_stack.set("flux.gitInterval", "1m")
        seen = len(fleet.accepted())
        up("local", options=local_stack.options)
        assert fleet.accepted()[seen:] == [] or set(fleet.accepted()[seen:]) == {new.fingerprint}
        assert _ready(_repository(local_stack))["status"] == "True"
    finally:
        fleet.authorize(deploy_key)


def test_a_rotation_to_a_key_the_server_refuses_fails_up_and_rollback_restores_the_old_key(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    local_stack.set("flux.timeout", "10s")  # the wait must outlast Flux's own
    local_stack.set("flux.readyTimeout", "15s")
    good = local_stack.commit("short waits")
    up("local", options=local_stack.options)
    before = _secret(local_stack)

    refused = DeployKeyPair.generate()  # never registered on the fleet server
    local_stack.set("localDeployKey", refused.private_key, secret=True)
    local_stack.commit("a key the fleet server does not hold")
    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    (reason,) = info.value.not_ready
    assert reason.startswith(f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME} is not Ready")
    assert any(words in reason for words in AUTH_REFUSED), reason
    assert "PRIVATE KEY" not in str(info.value) and refused.private_key not in info.value.engine_message
    # Flux handled the new key's request and refused it; the server trusts the old key alone.
    assert _repository(local_stack)["status"]["lastHandledReconcileAt"] == credential_digest(
        refused.private_key
    )
    assert fleet.authorized_keys.read_text().count("\n") == 1
    assert deploy_key.public_key in fleet.authorized_keys.read_text()

    result = rollback_to_commit("local", "previous", options=local_stack.options)

    assert result.rolled_back_to == good
    after = _secret(local_stack)
    assert after.metadata.uid == before.metadata.uid
    assert after.data["identity"] == before.data["identity"]
    _proven(local_stack, deploy_key.private_key)
    # Neither key shows anywhere: the state, the work tree, the errors, the CLI's reports.
    outputs = {
        what: local_stack.cli(*what.split()) for what in ("history local --json", "drift local --json")
    }
    texts = {what: f"{result.stdout}\n{result.stderr}" for what, result in outputs.items()}
    texts |= {"error": f"{info.value}\n{info.value!r}\n{info.value.engine_message}", "result": repr(result)}
    assert local_stack.secret_leaks([refused.private_key, deploy_key.private_key], texts) == []


def _app_private_key() -> str:
    """A private key in the form GitHub gives an App's: RSA, PKCS#1 PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return pem.decode()


def _as_app(stack: LocalStack, app_key: str) -> None:
    """The deploy key replaced by a GitHub App in the stack file, as a person would edit it."""
    stack.set("fluxAppKey", app_key, secret=True)
    path = stack.root / "Pulumi.local.yaml"
    document = yaml.safe_load(path.read_text())
    git = document["config"]["gitops-infra:git"]
    del git["deployKey"], git["knownHosts"]
    git |= {"url": "https://github.com/acme/fleet", "githubApp": APP}
    path.write_text(yaml.safe_dump(document))


def test_a_move_to_a_github_app_that_flux_cannot_use_keeps_the_key_and_rolls_back(
    local_stack: LocalStack, deploy_key: DeployKeyPair
) -> None:
    local_stack.set("flux.timeout", "10s")
    local_stack.set("flux.readyTimeout", "15s")
    good = local_stack.commit("short waits")
    up("local", options=local_stack.options)
    identity = _secret(local_stack).data["identity"]

    app_key = _app_private_key()  # an App's key, which GitHub (not reachable from here) would not know
    _as_app(local_stack, app_key)
    local_stack.commit("Flux as a GitHub App")
    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    assert info.value.not_ready, str(info.value)
    # The API server took the App's objects, and source-controller read them as an App's.
    repository = _repository(local_stack)
    assert repository["spec"]["provider"] == "github"
    assert repository["spec"]["url"] == "https://github.com/acme/fleet"
    assert repository["spec"]["secretRef"] == {"name": GITHUB_APP_SECRET_NAME}
    app = _secret(local_stack, GITHUB_APP_SECRET_NAME)
    assert set(app.data) == {"githubAppID", "githubAppInstallationID", "githubAppPrivateKey"}
    (reason,) = info.value.not_ready
    assert reason.startswith(f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME} is not Ready")
    # The move failed before its end: the deploy key's Secret is still whole.
    assert _secret(local_stack).data["identity"] == identity

    result = rollback_to_commit("local", "previous", options=local_stack.options)

    assert result.rolled_back_to == good
    repository = _proven(local_stack, deploy_key.private_key)
    assert repository["spec"]["url"].startswith("ssh://")
    assert "provider" not in repository["spec"]
    # The App's Secret, which the rollback no longer declares, gave its fields up at the end.
    assert _data(local_stack, GITHUB_APP_SECRET_NAME) == {}
    outputs = {
        what: local_stack.cli(*what.split()) for what in ("history local --json", "status local --json")
    }
    texts = {what: f"{result.stdout}\n{result.stderr}" for what, result in outputs.items()}
    texts |= {"error": f"{info.value}\n{info.value!r}\n{info.value.engine_message}", "result": repr(result)}
    assert local_stack.secret_leaks([app_key, deploy_key.private_key], texts) == []
