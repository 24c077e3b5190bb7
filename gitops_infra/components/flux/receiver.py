"""Instant sync (optional): a notification-controller ``Receiver`` of GitHub's push events, and the webhook.

The fifth piece of the bootstrap: ``receiver_manifest`` is the ``Receiver`` (type ``github``, events
``push`` and ``ping``) that asks source-controller to fetch the root ``GitRepository`` at once, and
``build_receiver`` registers it with its token Secret. ``build_repository_webhook`` registers the GitHub
repository webhook that posts to it, signed with the same token (GitHub's HMAC secret). ``flux create
receiver`` makes the same object; Flux's ``pkg/manifestgen`` has no such piece.

The token is made once and kept: a ``pulumi.Stash`` holds the first value generated, so a later ``up``
changes neither the Secret, nor the Receiver's path (``/hook/sha256(token + name + namespace)``), nor the
webhook. ``pulumi up --replace <the stash's URN>`` makes a new one. No provider plugin is needed for it
(the Stash is the engine's own), so it runs wherever the Kubernetes provider does.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource, custom_resource, fixed_secret
from gitops_infra.components.flux._names import FLUX_SYNC_NAME
from gitops_infra.components.flux.sync import GIT_REPOSITORY_API_VERSION

if TYPE_CHECKING:
    import pulumi_github as github
else:
    github = sdk("pulumi_github")

__all__ = [
    "RECEIVER_API_VERSION",
    "RECEIVER_EVENTS",
    "RECEIVER_SECRET_NAME",
    "RECEIVER_SERVICE",
    "RECEIVER_TOKEN_KEY",
    "WEBHOOK_EVENTS",
    "Receiver",
    "build_receiver",
    "build_repository_webhook",
    "receiver_manifest",
]

RECEIVER_API_VERSION = "notification.toolkit.fluxcd.io/v1"
RECEIVER_SECRET_NAME = "receiver-token"
RECEIVER_TOKEN_KEY = "token"
"""The key notification-controller reads the token from in the Receiver's Secret."""
RECEIVER_EVENTS = ("push", "ping")
"""What the Receiver accepts: a push asks for a fetch; GitHub's ``ping`` (sent when the webhook is made)
is accepted too, so the webhook shows a green first delivery."""
WEBHOOK_EVENTS = ("push",)
RECEIVER_SERVICE = "webhook-receiver"
"""notification-controller's Service for the Receivers, in Flux's namespace (port 80): what an Ingress or a
LoadBalancer exposes to GitHub."""
_TOKEN_BYTES = 32


def _new_token() -> str:
    """A token for a Receiver made now: 256 random bits, in hex."""
    return secrets.token_hex(_TOKEN_BYTES)


@dataclass(frozen=True)
class Receiver:
    """What ``build_receiver`` made: the token, its Secret, the ``Receiver``, and the path it serves.

    ``token`` and ``webhook_path`` are secret: the path is derived from the token.
    """

    token: pulumi.Output[str]
    secret: k8s.core.v1.SecretPatch
    receiver: k8s.apiextensions.CustomResource
    webhook_path: pulumi.Output[str]


def receiver_manifest(namespace: pulumi.Input[str]) -> dict[str, Any]:
    """The ``Receiver`` of GitHub's push events, which asks for a fetch of the root ``GitRepository``."""
    return {
        "apiVersion": RECEIVER_API_VERSION,
        "kind": "Receiver",
        "metadata": {"name": FLUX_SYNC_NAME, "namespace": namespace},
        "spec": {
            "type": "github",
            "events": list(RECEIVER_EVENTS),
            "secretRef": {"name": RECEIVER_SECRET_NAME},
            "resources": [
                {"apiVersion": GIT_REPOSITORY_API_VERSION, "kind": "GitRepository", "name": FLUX_SYNC_NAME}
            ],
        },
    }


def build_receiver(
    name: str,
    namespace: NamespaceResource,
    controllers: pulumi.Resource | None,
    git_repository: pulumi.Resource,
    parent: pulumi.Resource,
) -> Receiver:
    """The token (made once), its Secret and the ``Receiver``, after the GitRepository it points at."""
    stash = pulumi.Stash(
        f"{name}-receiver-token",
        # A fresh value on every run, but the Stash keeps the first it was given (and, with its input
        # ignored, shows no change either).
        input=pulumi.Output.secret(_new_token()),
        opts=pulumi.ResourceOptions(
            parent=parent, ignore_changes=["input"], additional_secret_outputs=["input", "output"]
        ),
    )
    token: pulumi.Output[str] = pulumi.Output.secret(stash.output).apply(str)
    secret = fixed_secret(
        f"{name}-receiver-token", RECEIVER_SECRET_NAME, {RECEIVER_TOKEN_KEY: token}, namespace, parent
    )
    installed: list[pulumi.Resource] = [controllers] if controllers is not None else []
    receiver = custom_resource(
        f"{name}-receiver",
        receiver_manifest(namespace.metadata.name),
        pulumi.ResourceOptions(parent=parent, depends_on=[*installed, secret, git_repository]),
    )
    webhook_path = pulumi.Output.all(token, namespace.metadata.name).apply(
        lambda values: checks.receiver_webhook_path(values[0], FLUX_SYNC_NAME, values[1])
    )
    return Receiver(token=token, secret=secret, receiver=receiver, webhook_path=webhook_path)


def build_repository_webhook(
    name: str,
    repository: pulumi.Input[str],
    public_url: str,
    receiver: Receiver,
    opts: pulumi.ResourceOptions,
) -> github.RepositoryWebhook:
    """The GitHub webhook of ``repository``'s pushes, to ``public_url`` plus the Receiver's path, signed
    with its token. ``opts`` carry the GitHub provider."""
    problems = Problems("build_repository_webhook")
    problems.gate("public_url", checks.receiver_url_problem, public_url)
    problems.raise_if_any()
    url = receiver.webhook_path.apply(lambda path: public_url.rstrip("/") + path)
    return github.RepositoryWebhook(
        f"{name}-receiver-webhook",
        repository=repository,
        events=list(WEBHOOK_EVENTS),
        active=True,
        configuration=github.RepositoryWebhookConfigurationArgs(
            url=pulumi.Output.secret(url),
            content_type="json",
            secret=receiver.token,
            insecure_ssl=False,
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[receiver.receiver])),
    )
