"""Instant sync on the real API server and Flux's real notification- and source-controller (v1.9.3 and
v1.8.5, Flux 2.9.4's): the local stack's Receiver, posted to as GitHub would post.

The stack polls once an hour (``gitInterval: 1h``), so no fetch within seconds of a commit can be
polling's. GitHub cannot reach the local cluster: ``webhook: false``, and the test plays GitHub, signing
each event with the token the platform made.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from kubernetes import client

from gitops_infra import checks
from gitops_infra.components.flux import (
    FLUX_SYNC_NAME,
    RECEIVER_API_VERSION,
    RECEIVER_SECRET_NAME,
    RECEIVER_TOKEN_KEY,
)
from gitops_infra.local import FleetServer, LocalCluster
from gitops_infra.local._github_webhook import deliver_github_event

from .conftest import LocalStack, wait_until

pytestmark = pytest.mark.cluster

RECEIVER_GROUP, RECEIVER_VERSION = RECEIVER_API_VERSION.split("/")
SOURCE_GROUP, SOURCE_VERSION = "source.toolkit.fluxcd.io", "v1"
FETCHED_WITHIN = 10.0
"""Seconds a signed push may take to become a fetched artifact (the Receiver's target median is 5)."""
QUIET_FOR = 6.0
"""Seconds a refused request is watched for a fetch that must not come."""


def _git_repository(stack: LocalStack) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        SOURCE_GROUP, SOURCE_VERSION, stack.flux_namespace, "gitrepositories", FLUX_SYNC_NAME
    )
    return found


def _revision(stack: LocalStack) -> str:
    return str(_git_repository(stack).get("status", {}).get("artifact", {}).get("revision", ""))


def _requested_at(stack: LocalStack) -> str | None:
    annotations = _git_repository(stack)["metadata"].get("annotations") or {}
    return annotations.get(checks.RECONCILE_REQUEST_ANNOTATION)


def _receiver(stack: LocalStack) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        RECEIVER_GROUP, RECEIVER_VERSION, stack.flux_namespace, "receivers", FLUX_SYNC_NAME
    )
    return found


def _ready_path(stack: LocalStack) -> str | None:
    status = _receiver(stack).get("status", {})
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))
    return status.get("webhookPath") if ready else None


def _token(stack: LocalStack) -> str:
    secret = client.CoreV1Api(stack.api).read_namespaced_secret(RECEIVER_SECRET_NAME, stack.flux_namespace)
    return base64.b64decode(secret.data[RECEIVER_TOKEN_KEY]).decode()


def post_github_event(
    cluster: LocalCluster, path: str, token: str, event: str, payload: dict[str, Any], *, sign_with: str = ""
) -> int:
    """POST ``payload`` to the Receiver at ``path`` as GitHub delivers ``event``, signed with ``sign_with``
    if given, else ``token``; the HTTP status."""
    return deliver_github_event(cluster.receiver_url + path, sign_with or token, event, payload)


def _push(sha: str) -> dict[str, Any]:
    return {"ref": "refs/heads/main", "after": sha, "repository": {"full_name": "example-org/fleet"}}


def test_a_signed_push_makes_source_controller_fetch_at_once_and_a_bad_signature_fetches_nothing(
    local_stack: LocalStack, cluster: LocalCluster, fleet: FleetServer
) -> None:
    local_stack.set_all({"flux.receiver.webhook": "false", "flux.gitInterval": "1h"})
    local_stack.commit("instant sync, and polling once an hour")
    first = local_stack.cli("up", "local", "--yes")
    assert first.exit_code == 0, first.output

    token = _token(local_stack)
    assert len(token) == 64
    path = wait_until(lambda: _ready_path(local_stack), "the Receiver to be Ready with its webhook path")
    # Our path is the controller's: the GitHub webhook's URL is made from it. (Each assert names no
    # token, so that a failure's report shows none.)
    ours = checks.receiver_webhook_path(token, FLUX_SYNC_NAME, local_stack.flux_namespace)
    assert path == ours
    receiver = _receiver(local_stack)
    assert receiver["spec"]["type"] == "github" and receiver["spec"]["events"] == ["push", "ping"]
    before, requested = _revision(local_stack), _requested_at(local_stack)
    assert before.startswith("main@sha1:")

    # A push signed with another key is refused, and nothing is asked of source-controller.
    sha = fleet.commit({f"{local_stack.fleet_path}/next.txt": "a pushed commit\n"}, "a pushed commit")
    status = post_github_event(cluster, path, token, "push", _push(sha), sign_with="not-the-token")
    assert status == 400
    time.sleep(QUIET_FOR)
    assert _revision(local_stack) == before
    assert _requested_at(local_stack) == requested

    # Signed with the token, the same push is fetched within seconds: an hour's interval cannot explain it.
    posted = time.monotonic()
    status = post_github_event(cluster, path, token, "push", _push(sha))
    assert status == 200
    fetched = wait_until(
        lambda: _revision(local_stack) == f"main@sha1:{sha}", "the pushed commit", timeout=FETCHED_WITHIN
    )
    took = time.monotonic() - posted
    assert fetched and took < FETCHED_WITHIN
    assert _requested_at(local_stack) != requested

    # GitHub's ping, which it sends when the webhook is made, is accepted.
    status = post_github_event(cluster, path, token, "ping", {"zen": "Keep it logically awesome."})
    assert status == 200
    # An event the Receiver does not list is refused, even signed.
    status = post_github_event(cluster, path, token, "issues", {"action": "opened"})
    assert status == 400

    # The second act: another `up` keeps the token, so the path (and GitHub's webhook URL) stays.
    secret_uid = (
        client.CoreV1Api(local_stack.api)
        .read_namespaced_secret(RECEIVER_SECRET_NAME, local_stack.flux_namespace)
        .metadata.uid
    )
    second = local_stack.cli("up", "local", "--yes")
    assert second.exit_code == 0, second.output
    kept = _token(local_stack) == token
    assert kept, "the second up changed the token"
    assert _ready_path(local_stack) == path
    assert _receiver(local_stack)["metadata"]["uid"] == receiver["metadata"]["uid"]
    assert (
        client.CoreV1Api(local_stack.api)
        .read_namespaced_secret(RECEIVER_SECRET_NAME, local_stack.flux_namespace)
        .metadata.uid
        == secret_uid
    )

    # The pushes' reconcile requests on the GitRepository are not drift, and the token's Stash refreshes.
    drift = local_stack.cli("drift", "local", "--layers", "iac")
    assert drift.exit_code == 0, drift.output

    texts = {
        "up": f"{first.stdout}\n{first.stderr}",
        "second up": f"{second.stdout}\n{second.stderr}",
        "drift": f"{drift.stdout}\n{drift.stderr}",
        "status": local_stack.cli("status", "local", "--json").stdout,
        "history": local_stack.cli("history", "local", "--json").stdout,
    }
    digest = path.removeprefix(checks.RECEIVER_WEBHOOK_PATH_PREFIX)
    assert local_stack.secret_leaks([token, digest], texts) == []
