"""``flux.receiver``: its public URL (given or derived), the webhook switch, and what it needs elsewhere."""

from __future__ import annotations

from typing import Any

import pytest

from gitops_infra.config import ReceiverSpec, load_config
from gitops_infra.config.receiver import RECEIVER_HOST
from gitops_infra.errors import ConfigError

from .conftest import stack_config


def problems_of(raw: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    return info.value.problems


def test_prod_turns_the_receiver_on_with_its_webhook_at_a_url_derived_from_its_base_domain() -> None:
    config = load_config(stack_config("prod"), stack="prod")
    receiver = config.flux.receiver
    assert receiver is not None
    assert config.flux.receiver_enabled and config.flux.receiver_webhook
    assert receiver.public_url(config.environment.base_domain) == f"https://{RECEIVER_HOST}.example.com"


def test_other_stacks_have_no_receiver() -> None:
    for stack in ("dev", "local"):
        config = load_config(stack_config(stack), stack=stack)
        assert not config.flux.receiver_enabled and not config.flux.receiver_webhook


def test_a_url_given_is_used_without_its_trailing_slash() -> None:
    receiver = ReceiverSpec.model_validate({"url": "https://hooks.example.org:8443/flux/"})
    assert receiver.public_url("example.com") == "https://hooks.example.org:8443/flux"


def test_webhook_false_makes_a_receiver_without_a_github_webhook(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {"receiver": {"webhook": False}}
    config = load_config(minimal, stack="test")
    assert config.flux.receiver_enabled and not config.flux.receiver_webhook


def test_enabled_false_makes_nothing_and_needs_nothing(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {
        "components": ["source-controller", "kustomize-controller"],
        "receiver": {"enabled": False},
    }
    config = load_config(minimal, stack="test")
    assert not config.flux.receiver_enabled and not config.flux.receiver_webhook


@pytest.mark.parametrize(
    "receiver, problem",
    [
        (
            {"url": "http://flux-webhook.example.com"},
            "gitops-infra:flux.receiver.url: must be an https:// URL with a host and an optional port and "
            "path, and no query or fragment",
        ),
        (
            {"url": "https://flux-webhook.example.com/?token=1"},
            "gitops-infra:flux.receiver.url: must be an https:// URL with a host and an optional port and "
            "path, and no query or fragment",
        ),
        ({"enabled": "yes"}, "gitops-infra:flux.receiver.enabled: Input should be a valid boolean"),
        ({"webhooks": False}, "gitops-infra:flux.receiver.webhooks: unknown key"),
    ],
)
def test_a_bad_receiver_is_named_by_its_key_path(
    minimal: dict[str, Any], receiver: dict[str, Any], problem: str
) -> None:
    minimal["flux"] = {"receiver": receiver}
    assert problem in problems_of(minimal)


def test_the_receiver_needs_notification_controller(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {
        "components": ["source-controller", "kustomize-controller"],
        "receiver": {"webhook": False},
    }
    assert problems_of(minimal) == ("gitops-infra:flux.receiver: need notification-controller in components",)


def test_the_webhook_needs_the_github_repository_it_is_registered_on(minimal: dict[str, Any]) -> None:
    host_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    minimal["git"] = {
        "url": "ssh://git@git.example.com/fleet.git",
        "knownHosts": f"git.example.com {host_key}",
        "deployKey": {"existing": {"privateKey": "fleetKey"}},
    }
    minimal["fleetKey"] = "mock-openssh-private-key"
    minimal["flux"] = {"receiver": {}}
    assert problems_of(minimal) == (
        "gitops-infra:flux.receiver.webhook: the webhook is registered on the GitHub repository: set "
        "git.owner and git.repository, or webhook: false (a Receiver with no GitHub webhook)",
    )
    minimal["flux"] = {"receiver": {"webhook": False}}
    assert load_config(minimal, stack="test").flux.receiver_enabled
