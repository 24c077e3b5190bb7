"""DeployKey under mocks: algorithm, repository, read-only, rotation and secrecy."""

from __future__ import annotations

import json

import pulumi
import pytest

from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS, DeployKey, DeployKeyArgs, KeyAlgorithm
from gitops_infra.errors import ConfigError

from .harness import MOCK_PRIVATE_KEY_PREFIX, Run, run

TLS_KEY = "tls:index/privateKey:PrivateKey"
GH_KEY = "github:index/repositoryDeployKey:RepositoryDeployKey"


def build(args: DeployKeyArgs, name: str = "fleet") -> Run[DeployKey]:
    return run(
        lambda: DeployKey(name, args),
        outputs=lambda k: {
            "private": k.private_key,
            "public": k.public_key,
            "known_hosts": k.known_hosts,
            "read_only": k.read_only,
        },
    )


def test_default_is_ecdsa_p384_read_only_on_the_repository() -> None:
    result = build(DeployKeyArgs(repository="fleet"))
    key = result.graph.one(TLS_KEY, "fleet-key")
    assert key.inputs == {"algorithm": "ECDSA", "ecdsaCurve": "P384"}
    deploy = result.graph.one(GH_KEY, "fleet-deploy-key")
    assert deploy.inputs["repository"] == "fleet"
    assert deploy.inputs["readOnly"] is True
    assert deploy.inputs["title"] == "flux-fleet"
    assert deploy.inputs["key"] == result.values["public"].value
    assert key.urn in deploy.dependencies
    assert result.values["read_only"].value is True


def test_ed25519_on_request() -> None:
    key = build(DeployKeyArgs(repository="fleet", algorithm=KeyAlgorithm.ED25519)).graph.one(TLS_KEY)
    assert key.inputs == {"algorithm": "ED25519"}


def test_read_write_when_asked_for() -> None:
    deploy = build(DeployKeyArgs(repository="fleet", read_only=False)).graph.one(GH_KEY)
    assert deploy.inputs["readOnly"] is False


def test_private_key_is_a_secret_output_and_the_public_key_is_not() -> None:
    result = build(DeployKeyArgs(repository="fleet"))
    assert result.values["private"].secret is True
    assert result.values["private"].value.startswith(MOCK_PRIVATE_KEY_PREFIX)
    assert result.values["public"].secret is False


def test_private_key_resolves_only_after_github_has_the_key() -> None:
    order: list[str] = []

    def program() -> DeployKey:
        key = DeployKey("fleet", DeployKeyArgs(repository="fleet"))
        key.deploy_key.id.apply(lambda _: order.append("deploy-key"))
        key.private_key.apply(lambda _: order.append("private-key"))
        return key

    run(program)
    assert order == ["deploy-key", "private-key"]


def test_rotation_replaces_key_pair_and_deploy_key_create_before_delete() -> None:
    graph = build(DeployKeyArgs(repository="fleet", rotation="2026-02")).graph
    assert json.loads(graph.one(TLS_KEY).replacement_trigger)["rotation"] == "2026-02"
    assert graph.one(GH_KEY).replacement_trigger == "2026-02"
    for resource in (graph.one(TLS_KEY), graph.one(GH_KEY)):
        assert resource.delete_before_replace is False


@pytest.mark.parametrize(
    "change",
    [{"read_only": False}, {"repository": "platform-fleet"}, {"title": "flux-prod"}],
    ids=["read_only", "repository", "title"],
)
def test_what_replaces_the_deploy_key_replaces_the_key_pair_too(change: dict[str, object]) -> None:
    # GitHub refuses a key already registered: a new deploy key needs a new key pair.
    before = build(DeployKeyArgs(repository="fleet")).graph.one(TLS_KEY)
    after = build(DeployKeyArgs(**{"repository": "fleet", **change})).graph.one(TLS_KEY)  # type: ignore[arg-type]
    assert before.replacement_trigger != after.replacement_trigger
    assert before.inputs == after.inputs


def test_rotation_value_changes_the_trigger_the_engine_diffs() -> None:
    before = build(DeployKeyArgs(repository="fleet", rotation="2026-01")).graph.one(TLS_KEY)
    after = build(DeployKeyArgs(repository="fleet", rotation="2026-02")).graph.one(TLS_KEY)
    assert before.replacement_trigger != after.replacement_trigger
    assert before.inputs == after.inputs  # only the trigger moves; the engine replaces on it


def test_known_hosts_are_githubs_published_keys() -> None:
    result = build(DeployKeyArgs(repository="fleet"))
    lines = result.values["known_hosts"].value.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["github.com", "ssh-ed25519"],
        ["github.com", "ecdsa-sha2-nistp256"],
        ["github.com", "ssh-rsa"],
    ]
    assert lines[0].endswith("AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
    assert result.values["known_hosts"].value == GITHUB_KNOWN_HOSTS


def test_children_are_parented_and_the_github_provider_is_inherited() -> None:
    def program() -> DeployKey:
        provider = pulumi.ProviderResource("github", "gh", {})
        return DeployKey(
            "fleet", DeployKeyArgs(repository="fleet"), pulumi.ResourceOptions(providers=[provider])
        )

    graph = run(program).graph
    component = graph.one("gitops-infra:index:DeployKey")
    assert graph.one(TLS_KEY).parent == component.urn
    deploy = graph.one(GH_KEY)
    assert deploy.parent == component.urn
    assert deploy.provider.startswith(graph.one("pulumi:providers:github").urn)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"repository": "acme/fleet"}, "DeployKeyArgs.repository: must be a repository name, not owner/name"),
        ({"repository": ""}, "DeployKeyArgs.repository:"),
        ({"repository": "fleet", "algorithm": "rsa"}, "DeployKeyArgs.algorithm: must be a KeyAlgorithm"),
        ({"repository": "fleet", "known_hosts": " "}, "DeployKeyArgs.known_hosts: must not be empty"),
    ],
)
def test_bad_args_name_the_field(kwargs: dict[str, object], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        DeployKeyArgs(**kwargs)  # type: ignore[arg-type]
    assert any(problem.startswith(expected) for problem in info.value.problems)
