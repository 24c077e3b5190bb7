"""Notifications: the Provider, the Alert and the webhook's Secret."""

from __future__ import annotations

from gitops_infra.components.flux.notifications import NotificationArgs

from .support import ALERT, NAMESPACE, NOTIFY_PROVIDER, RELEASE, SECRET, assert_after, bootstrap


def test_notifications_provider_and_alert_after_the_controllers() -> None:
    graph = bootstrap(
        notifications=NotificationArgs(provider_type="slack", channel="alerts", secret_name="hook")
    ).graph
    notifier = graph.one(NOTIFY_PROVIDER)
    assert notifier.inputs["spec"] == {"type": "slack", "channel": "alerts", "secretRef": {"name": "hook"}}
    alert = graph.one(ALERT)
    assert alert.inputs["spec"]["providerRef"] == {"name": "flux-system"}
    assert alert.inputs["spec"]["eventSeverity"] == "error"
    assert {s["kind"] for s in alert.inputs["spec"]["eventSources"]} == {"GitRepository", "Kustomization"}
    assert_after(graph, NOTIFY_PROVIDER, RELEASE)
    assert_after(graph, ALERT, NOTIFY_PROVIDER)


def test_the_webhook_becomes_the_secret_the_notification_provider_reads() -> None:
    graph = bootstrap(
        notifications=NotificationArgs(
            provider_type="slack", channel="alerts", webhook="https://hooks.example.invalid/testonly"
        )
    ).graph
    webhook = graph.one(SECRET, "flux-notification-webhook")
    assert webhook.input("metadata.name") == "notification-webhook"
    assert webhook.is_secret("stringData")
    assert webhook.inputs["stringData"] == {"address": "https://hooks.example.invalid/testonly"}
    notifier = graph.one(NOTIFY_PROVIDER)
    assert notifier.inputs["spec"] == {
        "type": "slack",
        "channel": "alerts",
        "secretRef": {"name": "notification-webhook"},
    }
    assert webhook.urn in notifier.dependencies
    assert graph.one(NAMESPACE).urn in webhook.dependencies
