"""Source secret: the git-auth Secret of a deploy key or a GitHub App, the SOPS age key, and the
reconcile request that names a credential."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra import checks
from gitops_infra.components.flux import FLUX_SECRET_NAME
from gitops_infra.components.flux.bootstrap import FluxBootstrap, FluxBootstrapArgs
from gitops_infra.components.flux.source_secret import (
    GITHUB_APP_SECRET_NAME,
    IDENTITY_KEY,
    KNOWN_HOSTS_KEY,
    SOPS_AGE_KEY,
    SOPS_SECRET_NAME,
    GitHubAppSecretOptions,
    SourceSecretOptions,
    credential_digest,
    source_secret_data,
)
from gitops_infra.components.flux.sync import RECONCILE_REQUEST_ANNOTATION, SyncOptions
from gitops_infra.errors import ConfigError
from gitops_infra.local import DeployKeyPair

from ..conftest import SOPS_TEST_KEY
from ..harness import MOCK_KUBECONFIG, Run, run
from .support import GIT_REPOSITORY, KUSTOMIZATION, SECRET, bootstrap


def test_an_existing_key_without_its_public_half_writes_no_identity_pub() -> None:
    data = source_secret_data(SourceSecretOptions(private_key="mock-openssh-private-key"))
    assert set(data) == {IDENTITY_KEY, KNOWN_HOSTS_KEY}


def test_identity_is_sent_as_a_secret() -> None:
    secret = bootstrap().graph.one(SECRET, "flux-git-auth")
    assert secret.is_secret("stringData.identity")


def test_sops_adds_an_age_secret_and_decryption() -> None:
    graph = bootstrap(sops_age_key=SOPS_TEST_KEY).graph
    age = graph.one(SECRET, "flux-sops-age")
    assert age.input("metadata.name") == SOPS_SECRET_NAME
    assert age.is_secret("stringData")
    assert age.inputs["stringData"] == {SOPS_AGE_KEY: SOPS_TEST_KEY}
    kustomization = graph.one(KUSTOMIZATION)
    assert kustomization.inputs["spec"]["decryption"] == {
        "provider": "sops",
        "secretRef": {"name": SOPS_SECRET_NAME},
    }
    assert age.urn in graph.one(GIT_REPOSITORY).dependencies


# -- credentials over time: a new key is proven before the old one goes --------------------------------


def test_the_reconcile_request_follows_the_key_and_nothing_else() -> None:
    key = "ecdsa-sha2-nistp384 AAAAE2VjZHNh"

    def request_of(**overrides: Any) -> str:
        graph = bootstrap(**overrides).graph
        value = graph.one(GIT_REPOSITORY).input("metadata.annotations")[RECONCILE_REQUEST_ANNOTATION]
        assert checks.reconcile_request_problem(value) is None, value
        return str(value)

    first = request_of(public_key=key)
    # The key's comment, its trailing newline (as the TLS provider writes it) and other settings: the same.
    assert request_of(public_key=f"{key} flux-dev\n", interval="5m") == first
    assert request_of(public_key="ecdsa-sha2-nistp384 AAAAother") != first
    # An existing key with no public half: the private key's digest, which shows nothing of it.
    private, other = DeployKeyPair.generate().private_key, DeployKeyPair.generate().private_key
    without_public = request_of(public_key=None, private_key=private)
    assert without_public not in private and without_public != first
    assert request_of(public_key=None, private_key=other) != without_public


def test_the_reconcile_request_is_not_secret_though_a_private_key_made_it() -> None:
    result = bootstrap(public_key=None, private_key=pulumi.Output.secret("mock-openssh-private-key"))
    repository = result.graph.one(GIT_REPOSITORY)
    assert not repository.is_secret(f"metadata.annotations.{RECONCILE_REQUEST_ANNOTATION}")
    assert not repository.secret_paths, repository.secret_paths
    assert "mock-openssh-private-key" not in json.dumps(repository.inputs)


# -- GitHub App auth -----------------------------------------------------------------------------------


APP_URL = "https://github.com/acme/fleet"


def app_bootstrap(url: str = APP_URL, **app: Any) -> Run[FluxBootstrap]:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        source = GitHubAppSecretOptions(
            **{"app_id": 123, "installation_id": 456, "private_key": pulumi.Output.secret("mock-pem"), **app}
        )
        args = FluxBootstrapArgs(source=source, sync=SyncOptions(url=url, path="clusters/dev"))
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(program, outputs=lambda f: {"namespace": f.namespace, "url": f.repository_url})


def test_a_github_app_source_is_its_own_secret_read_by_provider_github_over_https() -> None:
    url = "https://github.example.com/acme/fleet"  # on the GitHub Enterprise Server the token is for
    result = app_bootstrap(url, base_url="https://github.example.com/api/v3")
    graph = result.graph
    (secret,) = graph.of_type(SECRET)
    assert secret.name == "flux-github-app-auth"
    assert secret.input("metadata.name") == GITHUB_APP_SECRET_NAME != FLUX_SECRET_NAME
    # The keys source-controller v1.8.2 reads (fluxcd/pkg/auth v0.38.4, githubapp/client.go).
    assert secret.inputs["stringData"] == {
        "githubAppID": "123",
        "githubAppInstallationID": "456",
        "githubAppPrivateKey": "mock-pem",
        "githubAppBaseURL": "https://github.example.com/api/v3",
    }
    assert secret.is_secret("stringData.githubAppPrivateKey")
    repository = graph.one(GIT_REPOSITORY)
    assert repository.inputs["spec"]["provider"] == "github"
    assert repository.inputs["spec"]["url"] == url
    assert repository.inputs["spec"]["secretRef"] == {"name": GITHUB_APP_SECRET_NAME}
    assert secret.urn in repository.dependencies
    request = repository.input("metadata.annotations")[RECONCILE_REQUEST_ANNOTATION]
    assert request == credential_digest("123", "456", "mock-pem")
    assert "mock-pem" not in json.dumps(repository.inputs)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("app_id", 0, "GitHubAppSecretOptions.app_id: must be a positive whole number"),
        ("installation_id", "4x6", "GitHubAppSecretOptions.installation_id: must be a positive whole"),
        ("base_url", "http://github.example.com", "GitHubAppSecretOptions.base_url: must be an https://"),
    ],
)
def test_bad_github_app_options_name_the_field(field: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        GitHubAppSecretOptions(**{"app_id": 1, "installation_id": 2, "private_key": "k", field: value})
    assert info.value.problems[0].startswith(expected), info.value.problems
