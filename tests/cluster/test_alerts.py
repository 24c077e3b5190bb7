"""Alerts that arrive: the platform's ``flux.notifications`` Provider and Alert, on the real
notification-controller (v1.9.3, Flux 2.9.4's), deliver Flux's event on a failing commit to an HTTP sink
the test runs on loopback: first as a ``generic`` Provider (its address the secret the platform writes
into its own Secret), then, on a second ``up``, as ``generic-hmac`` (the address in config, the HMAC key
in the user's own Secret), whose post carries notification-controller's ``X-Signature``.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import secrets
from typing import Any

import pytest
from kubernetes import client

from gitops_infra.automation import up
from gitops_infra.components.flux import FLUX_SYNC_NAME
from gitops_infra.local import FleetServer

from ..support import workspace
from ._loopback import Loopback, Request, loopback
from .conftest import STACK, LocalStack, wait_until

pytestmark = pytest.mark.cluster

SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")
NOTIFICATION = ("notification.toolkit.fluxcd.io", "v1beta3")
HMAC_SECRET = "alert-hmac"


def _broken(name: str) -> str:
    """A ConfigMap the API server refuses (its name is not a DNS label): the root Kustomization fails."""
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  a: b\n"
    )


def _patch(stack: LocalStack, kind: tuple[str, str, str], body: dict[str, Any]) -> None:
    group, version, plural = kind
    client.CustomObjectsApi(stack.api).patch_namespaced_custom_object(
        group, version, stack.flux_namespace, plural, FLUX_SYNC_NAME, body
    )


def _reconcile_now(stack: LocalStack) -> None:
    """``flux reconcile source git``: a fetch now, rather than at the next interval."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    _patch(stack, SOURCE, {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": stamp}}})


def _failure_event(sink: Loopback, path: str, stack: LocalStack, revision: str) -> Request | None:
    """The first post to ``path`` of Flux's error event on the stack's root Kustomization at ``revision``."""
    for request in sink.requests("POST", path):
        event = json.loads(request.body)
        involved = event.get("involvedObject", {})
        if (
            involved.get("kind") == "Kustomization"
            and involved.get("name") == FLUX_SYNC_NAME
            and involved.get("namespace") == stack.flux_namespace
            and event.get("severity") == "error"
            and (event.get("metadata") or {}).get("revision") == revision
        ):
            return request
    return None


def _fail_with(stack: LocalStack, fleet: FleetServer, bad_name: str) -> str:
    """Push a commit the root Kustomization cannot apply; Flux's revision of it."""
    sha = fleet.commit({f"{stack.fleet_path}/broken.yaml": _broken(bad_name)}, f"a bad commit: {bad_name}")
    _reconcile_now(stack)
    return f"main@sha1:{sha}"


def _signature(key: bytes, body: bytes) -> str:
    # notification-controller's Forwarder: "sha256=" and the hex HMAC-SHA256 of the posted JSON.
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def test_a_failing_commit_is_delivered_to_a_generic_then_a_generic_hmac_provider(
    local_stack: LocalStack, fleet: FleetServer
) -> None:
    with loopback() as sink:
        # Act 1: generic. The sink's URL is the secret notificationWebhook, which the platform writes into
        # its own Secret (key address).
        local_stack.set("flux.notifications.providerType", "generic")
        local_stack.set("notificationWebhook", f"{sink.url}/generic", secret=True)
        local_stack.commit("alerts to the sink, generic")
        up("local", options=local_stack.options)
        # (v1beta3's Provider and Alert have no status: notification-controller reads them when an event
        # comes.)

        revision = _fail_with(local_stack, fleet, "Not_A_Valid_Name")
        delivered = wait_until(
            lambda: _failure_event(sink, "/generic", local_stack, revision),
            f"the generic Provider to post the failure at {revision}",
        )
        event = json.loads(delivered.body)
        assert event["reportingController"] == "kustomize-controller", event
        assert event["reason"] and event["reason"] != "ReconciliationSucceeded", event
        assert "Not_A_Valid_Name" in event["message"], event
        assert delivered.headers["gotk-component"] == "kustomize-controller"
        assert "x-signature" not in delivered.headers  # generic signs nothing

        # The fleet is fixed (`up` waits for Flux to be Ready again).
        fleet.commit({f"{local_stack.fleet_path}/broken.yaml": _broken("fixed")}, "the bad commit fixed")
        _reconcile_now(local_stack)

        # Act 2: generic-hmac. Its key is a token in the user's own Secret, named by secretName; the address
        # is plain config. The platform's own webhook Secret goes with the secret it was made from.
        core = client.CoreV1Api(local_stack.api)
        key = secrets.token_hex(32)
        core.create_namespaced_secret(
            local_stack.flux_namespace,
            client.V1Secret(
                metadata=client.V1ObjectMeta(name=HMAC_SECRET),
                string_data={"token": key},
            ),
        )
        workspace(local_stack.root, local_stack.env).remove_config(STACK, "gitops-infra:notificationWebhook")
        local_stack.set_all(
            {
                "flux.notifications.providerType": "generic-hmac",
                "flux.notifications.address": f"{sink.url}/hmac",
                "flux.notifications.secretName": HMAC_SECRET,
            }
        )
        local_stack.commit("alerts to the sink, generic-hmac")
        second = up("local", options=local_stack.options)
        group, version = NOTIFICATION
        provider = client.CustomObjectsApi(local_stack.api).get_namespaced_custom_object(
            group, version, local_stack.flux_namespace, "providers", FLUX_SYNC_NAME
        )
        assert provider["spec"] == {
            "type": "generic-hmac",
            "address": f"{sink.url}/hmac",
            "secretRef": {"name": HMAC_SECRET},
        }

        revision = _fail_with(local_stack, fleet, "Still_Not_Valid")
        signed = wait_until(
            lambda: _failure_event(sink, "/hmac", local_stack, revision),
            f"the generic-hmac Provider to post the failure at {revision}",
        )
        event = json.loads(signed.body)
        assert "Still_Not_Valid" in event["message"] and event["reason"], event
        assert signed.headers["x-signature"] == _signature(key.encode(), signed.body)
        wrong = secrets.token_hex(32).encode()
        assert not hmac.compare_digest(signed.headers["x-signature"], _signature(wrong, signed.body))
        # A body changed in transit does not verify with the right key either.
        tampered = signed.body.replace(b"Still_Not_Valid", b"Still_Not_Vaiid")
        assert not hmac.compare_digest(signed.headers["x-signature"], _signature(key.encode(), tampered))
        # Nothing went to the generic address after the switch.
        assert _failure_event(sink, "/generic", local_stack, revision) is None

    texts = {"second up": repr(second), "status": local_stack.cli("status", "local", "--json").stdout}
    assert local_stack.secret_leaks([key], texts) == []  # in its plaintext, base64 and UTF-16 forms
