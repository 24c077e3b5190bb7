"""Notifications (optional): a notification-controller ``Provider`` and an ``Alert`` on the sync's events.

The fourth piece of the bootstrap: ``notification_manifests`` turns ``NotificationArgs`` into the two
objects, and ``build_notifications`` registers them, with the Secret that holds a webhook's address when
one is given. Flux's ``pkg/manifestgen`` has no such piece; ``flux create alert-provider`` and ``flux
create alert`` make the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.components._kubernetes import NamespaceResource, custom_resource, fixed_secret
from gitops_infra.components.flux._names import FLUX_SYNC_NAME

__all__ = [
    "NOTIFICATION_ADDRESS_KEY",
    "NOTIFICATION_API_VERSION",
    "NOTIFICATION_WEBHOOK_SECRET_NAME",
    "NotificationArgs",
    "Notifications",
    "build_notifications",
    "notification_manifests",
]

NOTIFICATION_WEBHOOK_SECRET_NAME = "notification-webhook"
NOTIFICATION_ADDRESS_KEY = "address"  # notification-controller prefers it over spec.address
NOTIFICATION_API_VERSION = "notification.toolkit.fluxcd.io/v1beta3"


@dataclass(frozen=True)
class NotificationArgs:
    """A notification Provider and an Alert on the sync objects' events (``error``: failures only).

    ``webhook`` (kept secret) is written into the Secret ``secret_name`` (default
    ``NOTIFICATION_WEBHOOK_SECRET_NAME``) as its ``address``, where notification-controller reads it.
    Without it, ``secret_name`` names a Secret made elsewhere (for a token), and ``address`` is plain.
    """

    provider_type: str
    channel: str | None = None
    address: str | None = None
    secret_name: str | None = None
    event_severity: str = "error"
    webhook: pulumi.Input[str] | None = None

    @property
    def secret_ref(self) -> str | None:
        """The Secret the Provider reads: the webhook's, or one made elsewhere, or none."""
        if self.webhook is not None:
            return self.secret_name or NOTIFICATION_WEBHOOK_SECRET_NAME
        return self.secret_name


@dataclass(frozen=True)
class Notifications:
    """What ``build_notifications`` made: the webhook Secret (if any), the Provider and the Alert."""

    secret: k8s.core.v1.SecretPatch | None
    provider: k8s.apiextensions.CustomResource
    alert: k8s.apiextensions.CustomResource


def notification_manifests(
    args: NotificationArgs, namespace: pulumi.Input[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The notification ``Provider`` and the ``Alert`` on the sync objects' events."""
    provider_spec: dict[str, Any] = {"type": args.provider_type}
    if args.channel is not None:
        provider_spec["channel"] = args.channel
    if args.address is not None:
        provider_spec["address"] = args.address
    if args.secret_ref is not None:
        provider_spec["secretRef"] = {"name": args.secret_ref}
    metadata = {"name": FLUX_SYNC_NAME, "namespace": namespace}
    provider = {"apiVersion": NOTIFICATION_API_VERSION, "kind": "Provider", "metadata": metadata}
    alert = {"apiVersion": NOTIFICATION_API_VERSION, "kind": "Alert", "metadata": metadata}
    return {**provider, "spec": provider_spec}, {
        **alert,
        "spec": {
            "providerRef": {"name": FLUX_SYNC_NAME},
            "eventSeverity": args.event_severity,
            "eventSources": [
                {"kind": "GitRepository", "name": "*"},
                {"kind": "Kustomization", "name": "*"},
            ],
        },
    }


def build_notifications(
    name: str,
    args: NotificationArgs,
    namespace: NamespaceResource,
    controllers: pulumi.Resource | None,
    parent: pulumi.Resource,
) -> Notifications:
    """The webhook Secret, the notification ``Provider`` and the ``Alert`` that uses it."""
    secret = None
    if args.webhook is not None and args.secret_ref is not None:
        data = {NOTIFICATION_ADDRESS_KEY: pulumi.Output.secret(args.webhook)}
        secret = fixed_secret(f"{name}-notification-webhook", args.secret_ref, data, namespace, parent)
    provider_manifest, alert_manifest = notification_manifests(args, namespace.metadata.name)
    installed: list[pulumi.Resource] = [controllers] if controllers is not None else []
    depends_on = [*installed, *([secret] if secret is not None else [])]
    notifier = custom_resource(
        f"{name}-notification-provider",
        provider_manifest,
        pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )
    alert = custom_resource(
        f"{name}-alert",
        alert_manifest,
        pulumi.ResourceOptions(parent=parent, depends_on=[*installed, notifier]),
    )
    return Notifications(secret=secret, provider=notifier, alert=alert)
