"""Flux notifications on the real API server, against the Provider and Alert CRDs `make setup` copies from
notification-controller v1.9.3's module (Flux 2.9.4's): prod's Slack shape as `up` writes it, and the
config's provider types against the CRD's enum. That the alerts arrive is ``test_alerts.py``'s.
"""

from __future__ import annotations

import base64
import secrets
import typing
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pydantic import ValidationError

from gitops_infra.automation import up
from gitops_infra.components.flux import FLUX_SYNC_NAME, NOTIFICATION_ADDRESS_KEY, NOTIFICATION_API_VERSION
from gitops_infra.config import NotificationsSpec
from gitops_infra.local import LocalCluster

from ..support import REPO_ROOT
from .conftest import LocalStack

pytestmark = pytest.mark.cluster

GROUP, VERSION = NOTIFICATION_API_VERSION.split("/")
# Prod's own (Pulumi.prod.yaml): Slack, the webhook in a Secret of its own, an Alert on failures.
PROD_NOTIFICATIONS: dict[str, str] = yaml.safe_load((REPO_ROOT / "Pulumi.prod.yaml").read_text())["config"][
    "gitops-infra:flux"
]["notifications"]


def _webhook() -> str:
    # Made here, so that no credential-shaped value sits in the repository.
    return f"https://hooks.slack.com/services/T{secrets.token_hex(4)}/B{secrets.token_hex(4)}/{secrets.token_hex(12)}"


def _notification(stack: LocalStack, plural: str) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(stack.api).get_namespaced_custom_object(
        GROUP, VERSION, stack.flux_namespace, plural, FLUX_SYNC_NAME
    )
    return found


def _webhook_secret(stack: LocalStack) -> Any:
    """The Secret prod's Provider reads its address from (the API's ``V1Secret``)."""
    name = PROD_NOTIFICATIONS["secretName"]
    return client.CoreV1Api(stack.api).read_namespaced_secret(name, stack.flux_namespace)


def _address(secret: Any) -> str:
    return base64.b64decode(secret.data[NOTIFICATION_ADDRESS_KEY]).decode()


def test_prods_notifications_are_made_on_the_api_server_and_the_webhook_stays_secret(
    local_stack: LocalStack,
) -> None:
    webhook = _webhook()
    for key, value in PROD_NOTIFICATIONS.items():
        local_stack.set(f"flux.notifications.{key}", value)
    local_stack.set("notificationWebhook", webhook, secret=True)
    local_stack.commit("Slack notifications")

    first = local_stack.cli("up", "local", "--yes")
    assert first.exit_code == 0, first.output

    assert PROD_NOTIFICATIONS == {
        "providerType": "slack",
        "channel": "platform-alerts",
        "secretName": "slack-webhook",
    }
    provider = _notification(local_stack, "providers")
    assert provider["spec"] == {
        "type": "slack",
        "channel": "platform-alerts",
        "secretRef": {"name": "slack-webhook"},
    }
    alert = _notification(local_stack, "alerts")
    assert alert["spec"]["providerRef"] == {"name": FLUX_SYNC_NAME}
    assert alert["spec"]["eventSeverity"] == "error"
    assert alert["spec"]["eventSources"] == [
        {"kind": "GitRepository", "name": "*"},
        {"kind": "Kustomization", "name": "*"},
    ]
    before = _webhook_secret(local_stack)
    assert _address(before) == webhook

    # The second act: the webhook is rotated. The Secret is updated in place (the Provider keeps reading
    # the same name), and nothing else changes.
    rotated = _webhook()
    local_stack.set("notificationWebhook", rotated, secret=True)
    local_stack.commit("a new Slack webhook")
    second = up("local", options=local_stack.options)
    after = _webhook_secret(local_stack)
    assert _address(after) == rotated
    assert after.metadata.uid == before.metadata.uid
    assert _notification(local_stack, "providers")["metadata"]["uid"] == provider["metadata"]["uid"]
    assert _notification(local_stack, "alerts")["metadata"]["uid"] == alert["metadata"]["uid"]

    texts = {
        "up": f"{first.stdout}\n{first.stderr}",
        "second up": repr(second),
        "status": local_stack.cli("status", "local", "--json").stdout,
        "history": local_stack.cli("history", "local", "--json").stdout,
    }
    assert local_stack.secret_leaks([webhook, rotated], texts) == []


def _config_types() -> tuple[str, ...]:
    annotation = NotificationsSpec.model_fields["provider_type"].annotation
    return typing.get_args(annotation)


def _server_accepts(cluster: LocalCluster, provider_type: str) -> bool:
    body = {
        "apiVersion": NOTIFICATION_API_VERSION,
        "kind": "Provider",
        "metadata": {"name": "type-check", "namespace": "default"},
        "spec": {"type": provider_type, "secretRef": {"name": "webhook"}},
    }
    try:
        client.CustomObjectsApi(cluster.api()).create_namespaced_custom_object(
            GROUP, VERSION, "default", "providers", body, dry_run="All"
        )
    except ApiException as exc:
        assert exc.status == 422, exc
        return False
    return True


def _config_accepts(provider_type: str) -> bool:
    try:
        NotificationsSpec.model_validate({"providerType": provider_type})
    except ValidationError:
        return False
    return True


@pytest.fixture(scope="module")
def crd_types(cluster: LocalCluster) -> list[str]:
    """The Provider CRD's ``spec.type`` enum, as the API server serves it (read once)."""
    crd = client.ApiextensionsV1Api(cluster.api()).read_custom_resource_definition(f"providers.{GROUP}")
    (served,) = [v for v in crd.spec.versions if v.name == VERSION]
    enum: list[str] = served.schema.open_apiv3_schema.properties["spec"].properties["type"].enum
    return enum


PROVIDER_TYPES = [
    # Every type the config takes (a change to the config's list must show here too).
    ("slack", True),
    ("msteams", True),
    ("discord", True),
    ("googlechat", True),
    ("github", True),
    ("generic", True),
    ("generic-hmac", True),
    # The CRD takes these, the config does not offer them (NotificationsSpec): a narrower list is a
    # choice to revisit, never a stack that plans and is then refused by the cluster.
    ("gitlab", False),
    ("azureeventhub", False),
    ("googlepubsub", False),
    ("opsgenie", False),
    ("rocket", False),
    # Neither takes these.
    ("Slack", False),
    ("not-a-provider", False),
    ("", False),
    ("slack ", False),
]


@pytest.mark.parametrize(("provider_type", "config_accepts"), PROVIDER_TYPES)
def test_the_provider_crd_and_the_config_agree_on_a_provider_type(
    cluster: LocalCluster, crd_types: list[str], provider_type: str, config_accepts: bool
) -> None:
    assert _config_accepts(provider_type) is config_accepts
    server_accepts = _server_accepts(cluster, provider_type)
    # What the config takes, the API server takes: no stack passes the plan and fails on the cluster.
    if config_accepts:
        assert server_accepts, f"the config takes {provider_type!r}, the Provider CRD refuses it"
    # And the table's rows match the CRD's own list.
    assert server_accepts is (provider_type in crd_types)


def test_every_provider_type_the_config_takes_is_in_the_table_and_in_the_crds_enum(
    crd_types: list[str],
) -> None:
    # The table's accepted rows are exactly the config's list, so a type added to the config is checked
    # against the server above before it ships.
    assert {t for t, accepted in PROVIDER_TYPES if accepted} == set(_config_types())
    assert sorted(set(_config_types()) - set(crd_types)) == []
