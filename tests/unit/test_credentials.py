"""Credentials over time under mocks: Flux as a GitHub App, the GitHub provider as an App, and the move
from a deploy key to an App in one update (what is made, what waits for what, and what goes)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gitops_infra.components.flux import (
    FLUX_SECRET_NAME,
    GITHUB_APP_SECRET_NAME,
    RECONCILE_REQUEST_ANNOTATION,
    WAIT_FOR_ANNOTATION,
    credential_digest,
)
from gitops_infra.config import load_config, plan_config
from gitops_infra.errors import ConfigError
from gitops_infra.platform import build_platform

from .conftest import GITHUB_TEST_TOKEN
from .harness import Graph, run

APP_PEM = "mock-github-app-pem-testonly"
PROVIDER_PEM = "mock-provider-app-pem-testonly"
SECRET_PATCH = "kubernetes:core/v1:SecretPatch"
GIT_REPOSITORY = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"
TLS_KEY = "tls:index/privateKey:PrivateKey"
DEPLOY_KEY = "github:index/repositoryDeployKey:RepositoryDeployKey"
GITHUB_PROVIDER = "pulumi:providers:github"
APP = {"appId": 123456, "installationId": 7890123, "privateKey": "fluxAppKey"}


def with_app(minimal: dict[str, Any], **git: Any) -> dict[str, Any]:
    raw = copy.deepcopy(minimal)
    raw["git"] = {**raw["git"], "githubApp": dict(APP), **git}
    raw["fluxAppKey"] = APP_PEM
    return raw


def problems_of(raw: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    return info.value.problems


def graph_of(raw: dict[str, Any]) -> Graph:
    return run(lambda: build_platform(load_config(raw, stack="test"))).graph


# -- the config ----------------------------------------------------------------------------------------


def test_a_github_app_syncs_github_over_https_with_no_key(minimal: dict[str, Any]) -> None:
    config = load_config(with_app(minimal), stack="test")
    assert config.git.sync_url == "https://github.com/acme/fleet"
    assert config.git.github_app is not None and config.git.github_app.app_id == 123456
    assert not config.git.registers_deploy_key


@pytest.mark.parametrize(
    ("git", "expected"),
    [
        (
            {"deployKey": {"algorithm": "ed25519"}},
            "gitops-infra:git: githubApp and deployKey: Flux authenticates with one of them; remove "
            "deployKey to fetch as the App",
        ),
        (
            {"url": "ssh://git@github.com/acme/fleet"},
            "gitops-infra:git: url: GitHub App auth fetches over HTTPS: use "
            "https://github.com/<owner>/<repository> (an ssh:// URL needs a deploy key)",
        ),
        (
            {"knownHosts": "github.com ssh-ed25519 AAAA"},
            "gitops-infra:git: knownHosts: not used with githubApp, which fetches over HTTPS",
        ),
        ({"githubApp": {**APP, "appId": "12345x"}}, "gitops-infra:git.githubApp.appId: must be a positive"),
        ({"githubApp": {**APP, "installationId": 0}}, "gitops-infra:git.githubApp.installationId: must be a"),
        ({"githubApp": {**APP, "baseUrl": "http://ghe"}}, "gitops-infra:git.githubApp.baseUrl: must be an"),
        ({"githubApp": {**APP, "privateKey": "no such key"}}, "gitops-infra:git.githubApp.privateKey: must"),
        (
            {"githubApp": {**APP, "privateKey": "unsetKey"}},
            "gitops-infra:git.githubApp.privateKey: names the secret gitops-infra:unsetKey, which is not set",
        ),
    ],
)
def test_a_bad_github_app_config_names_the_key_and_the_remedy(
    minimal: dict[str, Any], git: dict[str, Any], expected: str
) -> None:
    problems = problems_of(with_app(minimal, **git))
    assert any(problem.startswith(expected) for problem in problems), problems


def test_a_deploy_key_over_https_is_refused_with_the_remedy(minimal: dict[str, Any]) -> None:
    minimal["git"]["url"] = "https://github.com/acme/fleet"
    minimal["git"]["deployKey"] = {"existing": {"privateKey": "deployKey"}}
    minimal["deployKey"] = "mock-openssh-private-key"
    assert problems_of(minimal) == (
        "gitops-infra:git: url: a deploy key authenticates over SSH: use ssh://git@<host>/<owner>/"
        "<repository>, or GitHub App auth for an https:// URL; or set githubApp",
    )


def test_the_provider_authenticates_as_an_app_or_with_a_token_not_both(minimal: dict[str, Any]) -> None:
    minimal["github"] = {"appAuth": {"id": 1, "installationId": 2, "pemFile": "providerPem"}}
    minimal["providerPem"] = PROVIDER_PEM
    minimal["githubToken"] = GITHUB_TEST_TOKEN
    (problem,) = problems_of(minimal)
    assert problem.startswith("gitops-infra:github.appAuth: the GitHub provider authenticates as the App")
    assert GITHUB_TEST_TOKEN not in problem and PROVIDER_PEM not in problem
    del minimal["providerPem"], minimal["githubToken"]
    assert problems_of(minimal) == (
        "gitops-infra:github.appAuth.pemFile: names the secret gitops-infra:providerPem, which is not set "
        "(pulumi config set --secret providerPem ...)",
    )


def test_the_offline_plan_plans_the_app_keys_with_placeholders(minimal: dict[str, Any]) -> None:
    raw = {f"gitops-infra:{key}": value for key, value in with_app(minimal).items() if key != "fluxAppKey"}
    raw["gitops-infra:github"] = {"appAuth": {"id": 1, "installationId": 2, "pemFile": "providerPem"}}
    planned = plan_config(raw, "gitops-infra", "test")
    assert planned["gitops-infra:fluxAppKey"] == {"secure": "[secret]"}
    assert planned["gitops-infra:providerPem"] == {"secure": "[secret]"}
    assert "gitops-infra:githubToken" not in planned  # the App stands in for it


# -- the platform ------------------------------------------------------------------------------------------


def test_flux_as_an_app_makes_no_key_and_reads_the_app_secret(minimal: dict[str, Any]) -> None:
    graph = graph_of(with_app(minimal))
    assert not graph.of_type(TLS_KEY) and not graph.of_type(DEPLOY_KEY) and not graph.of_type(GITHUB_PROVIDER)
    (secret,) = graph.of_type(SECRET_PATCH)
    assert secret.input("metadata.name") == GITHUB_APP_SECRET_NAME
    assert secret.input("stringData.githubAppPrivateKey") == APP_PEM
    assert secret.is_secret("stringData.githubAppPrivateKey")
    repository = graph.one(GIT_REPOSITORY)
    assert repository.inputs["spec"]["url"] == "https://github.com/acme/fleet"
    assert repository.inputs["spec"]["provider"] == "github"
    assert secret.urn in repository.dependencies
    assert APP_PEM not in json.dumps(repository.inputs)


def test_the_github_provider_authenticates_as_an_app_with_no_token(minimal: dict[str, Any]) -> None:
    minimal["git"]["scaffold"] = True
    minimal["github"] = {"appAuth": {"id": 11, "installationId": 22, "pemFile": "providerPem"}}
    minimal["providerPem"] = PROVIDER_PEM
    graph = graph_of(minimal)
    provider = graph.one(GITHUB_PROVIDER)
    assert "token" not in provider.inputs
    # A provider's nested config goes to the engine as JSON, and secret whole.
    app_auth = {"id": "11", "installationId": "22", "pemFile": PROVIDER_PEM}
    assert json.loads(provider.input("appAuth")) == app_auth
    assert provider.is_secret("appAuth")
    # Everything made on GitHub goes through it: the deploy key and the scaffold's files.
    for made in (*graph.of_type(DEPLOY_KEY), *graph.of_type("github:index/repositoryFile:RepositoryFile")):
        assert made.provider.startswith(provider.urn + "::"), made.name


def test_a_move_from_a_deploy_key_to_an_app_makes_the_app_secret_and_drops_the_key(
    minimal: dict[str, Any],
) -> None:
    minimal["githubToken"] = GITHUB_TEST_TOKEN
    before = graph_of(minimal)
    after = graph_of(with_app(minimal))
    old_secret = before.one(SECRET_PATCH)
    new_secret = after.one(SECRET_PATCH)
    assert old_secret.input("metadata.name") == FLUX_SECRET_NAME
    assert new_secret.input("metadata.name") == GITHUB_APP_SECRET_NAME
    # Different resources: the update creates the App's Secret, and what the program no longer declares
    # (the old Secret, the key pair, the deploy key) is deleted at the end of the update, after the
    # GitRepository's update has waited for Flux to fetch as the App.
    assert old_secret.urn != new_secret.urn
    gone = {r.urn for r in before} - {r.urn for r in after}
    assert {old_secret.urn, before.one(TLS_KEY).urn, before.one(DEPLOY_KEY).urn} <= gone
    repository = after.one(GIT_REPOSITORY)
    assert repository.urn == before.one(GIT_REPOSITORY).urn  # updated in place, not replaced
    assert new_secret.urn in repository.dependencies
    annotations = repository.input("metadata.annotations")
    request = credential_digest(str(APP["appId"]), str(APP["installationId"]), APP_PEM)
    assert annotations[RECONCILE_REQUEST_ANNOTATION] == request
    assert f"={request}" in annotations[WAIT_FOR_ANNOTATION]
    assert before.one(GIT_REPOSITORY).input("metadata.annotations")[RECONCILE_REQUEST_ANNOTATION] != request


def test_a_rotation_replaces_the_key_before_deleting_and_gates_on_the_new_one(
    minimal: dict[str, Any],
) -> None:
    minimal["githubToken"] = GITHUB_TEST_TOKEN
    graph = graph_of(minimal)
    key, deploy_key = graph.one(TLS_KEY), graph.one(DEPLOY_KEY)
    # Create-before-delete on a new `rotation`: the old key and deploy key stay until the update ends.
    # The key pair is replaced with anything else that replaces the deploy key (GitHub refuses a key twice).
    assert json.loads(key.replacement_trigger) == {
        "readOnly": True,
        "repository": "fleet",
        "rotation": "",
        "title": "flux-gitops-test",
    }
    assert deploy_key.replacement_trigger == ""
    for resource in (key, deploy_key):
        assert resource.delete_before_replace is False
    secret, repository = graph.one(SECRET_PATCH), graph.one(GIT_REPOSITORY)
    # The Secret takes the key GitHub has registered; the GitRepository's request is that key's digest.
    assert deploy_key.urn in secret.dependencies
    assert secret.urn in repository.dependencies
    assert repository.property_dependencies.get("metadata"), repository.property_dependencies
    assert key.urn in repository.property_dependencies["metadata"]


# -- GitHub Enterprise Server ------------------------------------------------------------------------

GHES_API = "https://ghe.example.com/api/v3"


def test_an_app_on_an_enterprise_server_clones_from_that_server_not_github_com(
    minimal: dict[str, Any],
) -> None:
    raw = with_app(minimal, githubApp={**APP, "baseUrl": GHES_API})
    assert load_config(raw, stack="test").git.sync_url == "https://ghe.example.com/acme/fleet"
    graph = graph_of(raw)
    # The token source-controller earns at the Enterprise Server's API goes to that server alone.
    assert graph.one(SECRET_PATCH).input("stringData.githubAppBaseURL") == GHES_API
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["url"] == "https://ghe.example.com/acme/fleet"


@pytest.mark.parametrize(
    ("base_url", "url", "expected_host"),
    [
        (GHES_API, "https://github.com/acme/fleet", "ghe.example.com"),
        (GHES_API, "https://other.example.com/acme/fleet", "ghe.example.com"),
        (None, "https://ghe.example.com/acme/fleet", "github.com"),
        ("https://api.github.com/v3", "https://ghe.example.com/acme/fleet", "github.com"),
        ("https://ghe.example.com:8443/api/v3", "https://ghe.example.com/acme/fleet", "ghe.example.com:8443"),
    ],
)
def test_an_app_url_on_another_github_than_the_one_issuing_its_token_is_refused(
    minimal: dict[str, Any], base_url: str | None, url: str, expected_host: str
) -> None:
    app = {**APP, "baseUrl": base_url} if base_url is not None else dict(APP)
    (problem,) = problems_of(with_app(minimal, githubApp=app, url=url))
    assert problem.startswith(
        f"gitops-infra:git: url: must be on {expected_host} (https://{expected_host}/<owner>/<repository>), "
        "the GitHub whose API issues the App's token"
    ), problem


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        (GHES_API, "https://ghe.example.com/acme/fleet.git"),
        (GHES_API + "/", "https://GHE.example.com:443/acme/fleet"),  # host names ignore case; 443 is https's
        ("https://ghe.example.com:8443/api/v3", "https://ghe.example.com:8443/acme/fleet"),
        (None, "https://github.com/acme/fleet"),
        ("https://api.github.com/", "https://github.com/acme/fleet"),
        ("https://api.octo.ghe.com/", "https://octo.ghe.com/acme/fleet"),  # GitHub Enterprise Cloud
    ],
)
def test_an_app_url_on_the_github_issuing_its_token_is_taken(
    minimal: dict[str, Any], base_url: str | None, url: str
) -> None:
    app = {**APP, "baseUrl": base_url} if base_url is not None else dict(APP)
    assert load_config(with_app(minimal, githubApp=app, url=url), stack="test").git.sync_url == url


def test_the_github_provider_of_an_enterprise_app_scaffolds_on_that_server(minimal: dict[str, Any]) -> None:
    minimal["github"] = {"appAuth": {"id": 11, "installationId": 22, "pemFile": "providerPem"}}
    minimal["providerPem"] = PROVIDER_PEM
    on_ghes = with_app(minimal, githubApp={**APP, "baseUrl": GHES_API}, scaffold=True)
    on_github = with_app(minimal, scaffold=True)
    # The server's root: terraform-provider-github adds api/v3/ itself (before v6.11, to whatever it is
    # given). github.com's API is what the provider writes by default, so such a stack sees no change.
    assert graph_of(on_ghes).one(GITHUB_PROVIDER).input("baseUrl") == "https://ghe.example.com/"
    assert graph_of(on_github).one(GITHUB_PROVIDER).input("baseUrl") == "https://api.github.com/"


def test_a_github_base_url_the_platform_would_not_read_is_refused(minimal: dict[str, Any]) -> None:
    # github:baseUrl sets up Pulumi's default GitHub provider; the platform makes its own and never uses it.
    minimal["githubToken"] = GITHUB_TEST_TOKEN
    minimal["github:baseUrl"] = "https://ghe.example.com/"
    (problem,) = problems_of(minimal)  # a deploy key registered on GitHub, through the platform's provider
    assert problem.startswith(
        "github:baseUrl: is not read: the platform makes its own GitHub provider, which talks to the API "
        "in the GITHUB_BASE_URL environment variable, else github.com's; remove it"
    ), problem
    app = with_app(minimal, githubApp={**APP, "baseUrl": "https://other.example.com/api/v3"}, scaffold=True)
    del app["githubToken"]
    (problem,) = problems_of(app)
    assert "which talks to other.example.com, the GitHub of gitops-infra:git.githubApp;" in problem
    # Naming the GitHub the platform talks to anyway, or with nothing made on GitHub, it does no harm.
    app["github:baseUrl"] = "https://other.example.com/"
    assert load_config(app, stack="test").git.github_host == "other.example.com"
    assert load_config(with_app(minimal), stack="test").git.github_base_url == "https://api.github.com/"


# -- App IDs --------------------------------------------------------------------------------------------


def test_app_ids_may_be_digit_strings_as_github_app_auth_writes_them(minimal: dict[str, Any]) -> None:
    # pulumi-github's own `github:appAuth` takes its id as a string, and so do GitHub's docs' examples.
    raw = with_app(minimal, githubApp={**APP, "appId": "123456", "installationId": "7890123"}, scaffold=True)
    raw["github"] = {"appAuth": {"id": "11", "installationId": "22", "pemFile": "providerPem"}}
    raw["providerPem"] = PROVIDER_PEM
    config = load_config(raw, stack="test")
    assert config.git.github_app is not None
    assert (config.git.github_app.app_id, config.git.github_app.installation_id) == (123456, 7890123)
    assert config.github.app_auth is not None and config.github.app_auth.id == 11
    graph = graph_of(raw)
    assert graph.one(SECRET_PATCH).input("stringData.githubAppID") == "123456"
    assert json.loads(graph.one(GITHUB_PROVIDER).input("appAuth"))["id"] == "11"


FULLWIDTH = "\uff11\uff12"  # digits to str.isdigit(), not to GitHub
TOO_LONG = "9" * 5000  # more digits than int() reads (CVE-2020-10735)


@pytest.mark.parametrize(
    "value",
    [True, 1.0, 123456.0, "12a", "-5", "+5", " 123", "123 ", "0", 0, -1, "1e3", 2**63, FULLWIDTH, TOO_LONG],
)
def test_an_app_id_that_is_no_positive_whole_number_is_refused_by_its_key(
    minimal: dict[str, Any], value: object
) -> None:
    raw = with_app(minimal, githubApp={**APP, "installationId": value})
    raw["github"] = {"appAuth": {"id": value, "installationId": 22, "pemFile": "providerPem"}}
    raw["providerPem"] = PROVIDER_PEM
    expected = "must be a positive whole number such as 123456, or its digits as a string"
    assert problems_of(raw) == (
        f"gitops-infra:git.githubApp.installationId: {expected} (GitHub shows it on the App's settings page)",
        f"gitops-infra:github.appAuth.id: {expected} (GitHub shows it on the App's settings page)",
    )
