"""Instant sync: the Receiver, its token Secret, the path it serves and the GitHub webhook."""

from __future__ import annotations

import hashlib

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra import ConfigError, checks
from gitops_infra.components.fleet_repository import scaffold_files
from gitops_infra.components.flux import (
    RECEIVER_SECRET_NAME,
    FluxBootstrap,
    build_repository_webhook,
)

from ..harness import MOCK_KUBECONFIG, run
from .support import GIT_REPOSITORY, RELEASE, SECRET, assert_after, bootstrap, bootstrap_args

RECEIVER = "kubernetes:notification.toolkit.fluxcd.io/v1:Receiver"
STASH = "pulumi:index:Stash"
WEBHOOK = "github:index/repositoryWebhook:RepositoryWebhook"


def test_the_receiver_asks_for_a_fetch_of_the_root_git_repository_on_githubs_push_and_ping() -> None:
    graph = bootstrap(receiver=True).graph

    receiver = graph.one(RECEIVER)
    assert receiver.input("metadata.name") == "flux-system"
    assert receiver.input("metadata.namespace") == "flux-system"
    assert receiver.inputs["spec"] == {
        "type": "github",
        "events": ["push", "ping"],
        "secretRef": {"name": RECEIVER_SECRET_NAME},
        "resources": [
            {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "name": "flux-system"}
        ],
    }
    assert_after(graph, RECEIVER, RELEASE)
    assert_after(graph, RECEIVER, GIT_REPOSITORY)
    assert graph.one(SECRET, "flux-receiver-token").urn in receiver.dependencies


def test_the_token_is_a_secret_the_stash_keeps_and_the_secret_holds() -> None:
    graph = bootstrap(receiver=True).graph

    stash = graph.one(STASH)
    assert stash.is_secret("input")
    token = stash.inputs["input"]
    assert len(token) == 64 and int(token, 16) >= 0  # 256 bits, in hex
    secret = graph.one(SECRET, "flux-receiver-token")
    assert secret.input("metadata.name") == RECEIVER_SECRET_NAME
    assert secret.is_secret("stringData")
    assert secret.inputs["stringData"] == {"token": token}


def test_no_receiver_unless_asked_for() -> None:
    graph = bootstrap().graph
    assert graph.of_type(RECEIVER) == [] and graph.of_type(STASH) == []


def test_the_receiver_needs_notification_controller() -> None:
    with pytest.raises(ConfigError) as raised:
        bootstrap_args(receiver=True, components=["source-controller", "kustomize-controller"])
    assert str(raised.value).splitlines()[-1].strip(" -") == (
        "FluxBootstrapArgs.receiver: needs notification-controller in install.components"
    )


def test_the_webhook_path_is_notification_controllers() -> None:
    # Receiver.GetWebhookPath (notification-controller api/v1): sha256 of token + name + namespace, in hex.
    digest = hashlib.sha256(b"tok" + b"flux-system" + b"flux").hexdigest()
    assert checks.receiver_webhook_path("tok", "flux-system", "flux") == f"/hook/{digest}"


def _with_webhook(public_url: str) -> tuple[FluxBootstrap, pulumi.Resource]:
    provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
    flux = FluxBootstrap(
        "flux", bootstrap_args(receiver=True), opts=pulumi.ResourceOptions(providers=[provider])
    )
    assert flux.receiver is not None
    webhook = build_repository_webhook("dev", "fleet", public_url, flux.receiver, pulumi.ResourceOptions())
    return flux, webhook


def test_the_github_webhook_posts_pushes_to_the_public_url_and_the_receivers_path_signed_with_its_token() -> (
    None
):
    result = run(
        lambda: _with_webhook("https://flux-webhook.example.com/"),
        outputs=lambda made: {"path": made[0].receiver.webhook_path},  # type: ignore[union-attr]
    )
    graph = result.graph
    token = graph.one(STASH).inputs["input"]
    path = checks.receiver_webhook_path(token, "flux-system", "flux-system")
    assert result.values["path"].value == path and result.values["path"].secret

    webhook = graph.one(WEBHOOK)
    assert webhook.inputs["repository"] == "fleet"
    assert webhook.inputs["events"] == ["push"]
    assert webhook.inputs["active"] is True
    assert webhook.inputs["configuration"] == {
        "url": f"https://flux-webhook.example.com{path}",
        "contentType": "json",
        "secret": token,
        "insecureSsl": False,
    }
    assert webhook.is_secret("configuration.secret") and webhook.is_secret("configuration.url")
    assert graph.one(RECEIVER).urn in webhook.dependencies


def test_the_webhook_refuses_a_url_github_would_post_to_in_the_clear() -> None:
    with pytest.raises(ConfigError) as raised:
        run(lambda: _with_webhook("http://flux-webhook.example.com"))
    assert "build_repository_webhook.public_url: must be an https:// URL" in str(raised.value)


def test_the_scaffolded_readme_says_how_to_expose_the_receiver_when_there_is_one() -> None:
    url = "https://flux-webhook.example.com"
    readme = scaffold_files("clusters/prod", "prod", receiver_url=url, flux_namespace="flux")[
        "clusters/prod/README.md"
    ]
    assert "## Instant sync: exposing Flux's webhook Receiver" in readme
    assert "kubectl -n flux get receiver flux-system -o jsonpath='{.status.webhookPath}'" in readme
    assert "    - host: flux-webhook.example.com\n" in readme
    assert "backend: {service: {name: webhook-receiver, port: {number: 80}}}" in readme
    assert "LoadBalancer" in readme
    plain = scaffold_files("clusters/prod", "prod")["clusters/prod/README.md"]
    assert "Receiver" not in plain
