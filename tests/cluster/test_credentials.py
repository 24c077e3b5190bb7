"""Credentials over time on the real API server, provider and source-controller.

A rotation is proven before the old key goes: ``up`` returns only once Flux has fetched with the new key
(the fleet server says which key each fetch came with). A rotation to a key the server refuses fails
``up`` with Flux's words and leaves the way back open. A GitHub App's objects are what the API server
and source-controller accept, and a move between a deploy key and an App goes in one ``up``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gitops_infra.automation import Layer, detect_drift, rollback_to_commit, up
from gitops_infra.components.flux import (
    FLUX_SECRET_NAME,
    FLUX_SYNC_NAME,
    GITHUB_APP_SECRET_NAME,
    RECONCILE_REQUEST_ANNOTATION,
    credential_digest,
)
from gitops_infra.errors import OperationFailedError
from gitops_infra.local import DeployKeyPair, FleetServer, GitHubApp, GitHubAppServer, LocalCluster

from .conftest import LocalStack, wait_until

pytestmark = pytest.mark.cluster

SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
AUTH_REFUSED = ("unable to authenticate", "handshake failed")


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
        # `flux reconcile source git` by hand, as on any day: a request to fetch, not drift.
        custom = client.CustomObjectsApi(local_stack.api)
        now = "2026-12-02T10:00:00Z"
        asked = {"metadata": {"annotations": {RECONCILE_REQUEST_ANNOTATION: now}}}
        custom.patch_namespaced_custom_object(
            *SOURCE[:2], local_stack.flux_namespace, SOURCE[2], FLUX_SYNC_NAME, asked
        )
        wait_until(
            lambda: (
                _repository(local_stack)["status"].get("lastHandledReconcileAt") == "2026-12-02T10:00:00Z"
            ),
            "Flux to handle the request by hand",
        )
        report = detect_drift("local", options=local_stack.options, layers=[Layer.IAC])
        assert not report.has_drift, report.resources
        # The old key goes from the repository (Pulumi deletes a replaced deploy key once the update is
        # done): Flux fetches on with the new one.
        fleet.authorize(new)
        local_stack.set("flux.gitInterval", "1m")
        seen = len(fleet.accepted())
        up("local", options=local_stack.options)
        # The interval's change is a new generation, which `up` waits for Flux to fetch at.
        assert set(fleet.accepted()[seen:]) == {new.fingerprint}
        assert _ready(_repository(local_stack))["status"] == "True"
    finally:
        fleet.authorize(deploy_key)


def test_a_rotation_to_a_key_the_server_refuses_fails_up_and_rollback_restores_the_old_key(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    # `up`'s wait (readyTimeout) must outlast Flux's own (timeout)
    local_stack.set_all({"flux.timeout": "10s", "flux.readyTimeout": "15s"})
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
    # Flux has the refused key already (the Secret is patched in place): the error says so, and the way back.
    assert "Flux already fetches with the credential this update wrote" in reason, reason
    assert "`gitops-infra rollback local previous`" in reason, reason
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
    secrets = [refused.private_key, deploy_key.private_key]
    assert local_stack.secret_leaks(secrets, _reports(local_stack, info.value, result)) == []


def test_a_rotation_while_flux_is_suspended_fails_up_saying_so_and_the_next_up_proves_it(
    local_stack: LocalStack, fleet: FleetServer, deploy_key: DeployKeyPair
) -> None:
    local_stack.set_all({"flux.timeout": "10s", "flux.readyTimeout": "15s"})
    local_stack.commit("short waits")
    up("local", options=local_stack.options)
    custom = client.CustomObjectsApi(local_stack.api)

    def suspend(suspended: bool) -> None:  # what `flux suspend|resume source git` does
        body = {"spec": {"suspend": suspended}}
        custom.patch_namespaced_custom_object(
            *SOURCE[:2], local_stack.flux_namespace, SOURCE[2], FLUX_SYNC_NAME, body
        )

    suspend(True)  # someone paused Flux during an incident
    new = DeployKeyPair.generate()
    fleet.authorize(deploy_key, new)
    try:
        local_stack.set("localDeployKey", new.private_key, secret=True)
        local_stack.commit("a new key")
        with pytest.raises(OperationFailedError) as info:
            up("local", options=local_stack.options)

        # Suspended, Flux records the request as handled and fetches nothing: its old Ready stands and
        # says nothing of the new key. The wait does not take it, and the reason names the suspend.
        assert new.fingerprint not in fleet.accepted()
        namespace = local_stack.flux_namespace
        assert info.value.not_ready == (
            f"GitRepository {namespace}/{FLUX_SYNC_NAME} is suspended (spec.suspend: true), so Flux "
            "fetched nothing with the new credential: resume it (flux resume source git "
            f"{FLUX_SYNC_NAME} -n {namespace}) and run up again",
        )

        suspend(False)
        seen = len(fleet.accepted())
        up("local", options=local_stack.options)  # the failed wait is waited for again, and holds

        assert new.fingerprint in fleet.accepted()[seen:]
        _proven(local_stack, new.private_key)
    finally:
        fleet.authorize(deploy_key)


def _as_app(stack: LocalStack, app: GitHubApp, github: GitHubAppServer) -> None:
    """The deploy key replaced by a GitHub App in the stack file, as a person would edit it; the App's
    API is the loopback GitHub's, as a GitHub Enterprise Server's would be."""
    stack.set("fluxAppKey", app.private_key, secret=True)
    path = stack.root / "Pulumi.local.yaml"
    document = yaml.safe_load(path.read_text())
    git = document["config"]["gitops-infra:git"]
    del git["deployKey"], git["knownHosts"]
    git["url"] = github.url
    git["githubApp"] = {
        "appId": app.app_id,
        "installationId": app.installation_id,
        "privateKey": "fluxAppKey",
        "baseUrl": github.api_url,
    }
    path.write_text(yaml.safe_dump(document))


@pytest.fixture
def github(cluster: LocalCluster, fleet: FleetServer, tmp_path: Path) -> Iterator[GitHubAppServer]:
    """GitHub on loopback, for one App, serving the fleet repository over HTTPS."""
    where = tmp_path / "github"
    certificate = cluster.server_certificate(where, "github")
    server = GitHubAppServer(where, GitHubApp.generate(), fleet.repository, certificate).start()
    try:
        yield server
    finally:
        server.stop()


def _bounded_waits(stack: LocalStack, timeout: str = "20s", ready_timeout: str = "40s") -> str:
    # `up`'s wait (readyTimeout) must outlast Flux's own (timeout). A move to an App waits for a token
    # and a fetch over HTTPS, so it gets the longer pair; a refusal needs only time to be seen.
    stack.set_all({"flux.timeout": timeout, "flux.readyTimeout": ready_timeout})
    return stack.commit("bounded waits")


def _reports(stack: LocalStack, error: BaseException | None, *results: object) -> dict[str, str]:
    """What a person sees of the stack: the CLI's history and status, the error, the results."""
    reports = ("history local --json", "status local --json", "drift local --json")
    outputs = {what: stack.cli(*what.split()) for what in reports}
    texts = {what: f"{result.stdout}\n{result.stderr}" for what, result in outputs.items()}
    if error is not None:
        texts["error"] = f"{error}\n{error!r}\n{getattr(error, 'engine_message', '')}"
    return texts | {f"result {i}": repr(result) for i, result in enumerate(results)}


def test_a_move_to_a_github_app_is_one_up_proven_by_a_fetch_as_the_app_and_back(
    local_stack: LocalStack, github: GitHubAppServer, deploy_key: DeployKeyPair
) -> None:
    keyed = _bounded_waits(local_stack)
    up("local", options=local_stack.options)
    _as_app(local_stack, github.app, github)
    local_stack.commit("Flux as a GitHub App")

    moved = up("local", options=local_stack.options)

    # `up` returned once Flux had fetched as the App: a token the App's JWT earned, then git with it.
    assert github.issued and github.fetches, github.refused
    assert set(github.fetches) <= set(github.issued)
    repository = _repository(local_stack)
    assert repository["spec"]["provider"] == "github"
    assert repository["spec"]["url"] == github.url
    assert repository["spec"]["secretRef"] == {"name": GITHUB_APP_SECRET_NAME}
    request = credential_digest(
        str(github.app.app_id), str(github.app.installation_id), github.app.private_key
    )
    assert repository["status"]["lastHandledReconcileAt"] == request
    assert _ready(repository)["status"] == "True", _ready(repository)
    assert set(_data(local_stack, GITHUB_APP_SECRET_NAME)) == {
        "githubAppID",
        "githubAppInstallationID",
        "githubAppPrivateKey",
        "githubAppBaseURL",
    }
    # The deploy key's Secret gave its fields up at the end of the update, after the proof.
    assert "identity" not in _data(local_stack, FLUX_SECRET_NAME)

    # Going back is the same path: the key's Secret first, the proof, then the App's Secret goes.
    result = rollback_to_commit("local", "previous", options=local_stack.options)

    assert result.rolled_back_to == keyed
    repository = _proven(local_stack, deploy_key.private_key)
    assert repository["spec"]["url"].startswith("ssh://") and "provider" not in repository["spec"]
    assert _data(local_stack, GITHUB_APP_SECRET_NAME) == {}
    secrets = [github.app.private_key, deploy_key.private_key, *github.issued]
    assert local_stack.secret_leaks(secrets, _reports(local_stack, None, moved, result)) == []


def test_a_move_to_an_app_github_refuses_fails_up_and_keeps_the_key(
    local_stack: LocalStack, github: GitHubAppServer, deploy_key: DeployKeyPair
) -> None:
    keyed = _bounded_waits(local_stack, "10s", "15s")  # `up` waits out readyTimeout on the refusal
    up("local", options=local_stack.options)
    identity = _data(local_stack, FLUX_SECRET_NAME)["identity"]
    unknown = GitHubApp.generate()  # the App's IDs, with a key GitHub does not hold for it
    _as_app(local_stack, unknown, github)
    local_stack.commit("Flux as a GitHub App, with a key GitHub does not know")

    with pytest.raises(OperationFailedError) as info:
        up("local", options=local_stack.options)

    (reason,) = info.value.not_ready
    assert reason.startswith(f"GitRepository {local_stack.flux_namespace}/{FLUX_SYNC_NAME} is not Ready")
    assert "401" in reason and "A JSON web token could not be decoded" in reason, reason
    assert github.refused and not github.issued and not github.fetches
    # The move failed before its end: the deploy key's Secret is still whole.
    assert _data(local_stack, FLUX_SECRET_NAME)["identity"] == identity

    result = rollback_to_commit("local", "previous", options=local_stack.options)

    assert result.rolled_back_to == keyed
    _proven(local_stack, deploy_key.private_key)
    assert _data(local_stack, GITHUB_APP_SECRET_NAME) == {}
    secrets = [unknown.private_key, deploy_key.private_key]
    assert local_stack.secret_leaks(secrets, _reports(local_stack, info.value, result)) == []
