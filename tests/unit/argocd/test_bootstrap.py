"""``ArgoCdBootstrap`` under mocks: the chart, the repository Secret, the project, the contract on the
in-cluster cluster Secret, and the root Application with its proof, in the order destroy needs."""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.argocd import (
    CLUSTER_SECRET_NAME,
    CREDENTIAL_ANNOTATION,
    REFRESH_ANNOTATION,
    RESOURCES_FINALIZER,
    ROOT_WAIT_CONDITIONS,
    ArgoCdBootstrap,
    ArgoCdBootstrapArgs,
    ArgoCdInstallOptions,
    RetryOptions,
    RootOptions,
    known_hosts_text,
)
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux import GitHubAppSecretOptions, SourceSecretOptions, credential_digest
from gitops_infra.contract import Environment
from gitops_infra.errors import ConfigError

from ..harness import MOCK_KUBECONFIG, Graph, run

URL = "ssh://git@github.com/acme/fleet"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET_PATCH = "kubernetes:core/v1:SecretPatch"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP_PATCH = "kubernetes:core/v1:ConfigMapPatch"
NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
PROJECT = "kubernetes:argoproj.io/v1alpha1:AppProject"
APPLICATION = "kubernetes:argoproj.io/v1alpha1:Application"
ENVIRONMENT = Environment(name="dev", base_domain="dev.example.com", service_namespace="apps")
KEY = SourceSecretOptions(private_key="mock-openssh-private-key", public_key="ecdsa-sha2-nistp384 AAAA")


def _args(**overrides: Any) -> ArgoCdBootstrapArgs:
    root: dict[str, Any] = {"url": URL, "path": "clusters/dev"}
    for key in list(overrides):
        if key in RootOptions.__dataclass_fields__:
            root[key] = overrides.pop(key)
    return ArgoCdBootstrapArgs(
        **{
            "source": KEY,
            "root": RootOptions(**root),
            "environment": ENVIRONMENT,
            "destinations": ["apps"],
            **overrides,
        }
    )


def _graph(**overrides: Any) -> Graph:
    def program() -> ArgoCdBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        return ArgoCdBootstrap(
            "argocd", _args(**overrides), opts=pulumi.ResourceOptions(providers=[provider])
        )

    return run(program).graph


def _after(graph: Graph, later: str, earlier: str, name: str | None = None) -> bool:
    return graph.one(earlier, name).urn in graph.one(later).dependencies


def test_the_chart_is_pinned_and_trusts_the_fleets_host_keys() -> None:
    graph = _graph()
    release = graph.one(RELEASE)
    assert release.inputs["chart"] == "argo-cd"
    assert release.inputs["version"] == "10.1.1"
    assert release.inputs["repositoryOpts"] == {"repo": "https://argoproj.github.io/argo-helm"}
    values = release.inputs["values"]
    assert values["configs"]["ssh"]["extraHosts"] == GITHUB_KNOWN_HOSTS
    assert values["dex"] == {"enabled": False}
    assert graph.one(NAMESPACE).input("metadata.name") == "argocd"
    assert not graph.of_type(CONFIG_MAP_PATCH)  # the chart writes the host keys


def test_the_repository_secret_holds_the_key_as_a_secret_and_is_labelled_for_argo_cd() -> None:
    secret = _graph().one(SECRET_PATCH, "argocd-repository")
    assert secret.input("metadata.name") == "platform-repository"
    assert secret.input("metadata.labels") == {"argocd.argoproj.io/secret-type": "repository"}
    assert secret.is_secret("stringData")
    assert secret.inputs["stringData"] == {
        "type": "git",
        "url": URL,
        "sshPrivateKey": "mock-openssh-private-key",
    }


def test_a_github_app_is_the_repository_secrets_app_fields() -> None:
    app = GitHubAppSecretOptions(
        app_id=1, installation_id=2, private_key="mock-pem", base_url="https://ghe.example.com/api/v3"
    )
    secret = _graph(source=app, url="https://ghe.example.com/acme/fleet").one(
        SECRET_PATCH, "argocd-repository"
    )
    assert secret.inputs["stringData"] == {
        "type": "git",
        "url": "https://ghe.example.com/acme/fleet",
        "githubAppID": "1",
        "githubAppInstallationID": "2",
        "githubAppPrivateKey": "mock-pem",
        "githubAppEnterpriseBaseUrl": "https://ghe.example.com/api/v3",
    }


def test_the_project_allows_the_fleet_only_and_names_each_namespace() -> None:
    project = _graph(destinations=["apps", "monitoring"]).one(PROJECT)
    assert project.input("metadata.name") == "platform"
    spec = project.inputs["spec"]
    assert spec["sourceRepos"] == [URL]
    assert [d["namespace"] for d in spec["destinations"]] == ["argocd", "apps", "monitoring"]
    assert {d["server"] for d in spec["destinations"]} == {"https://kubernetes.default.svc"}
    assert spec["clusterResourceWhitelist"] == [{"group": "", "kind": "Namespace"}]


def test_the_contract_is_on_the_in_cluster_secret_for_application_sets() -> None:
    secret = _graph().one(SECRET)
    assert secret.input("metadata.name") == CLUSTER_SECRET_NAME
    labels = secret.input("metadata.labels")
    assert labels == {
        "argocd.argoproj.io/secret-type": "cluster",
        "gitops-infra.io/environment": "dev",
        "gitops-infra.io/contract-version": "1.1",
    }
    annotations = secret.input("metadata.annotations")
    assert annotations["gitops-infra.io/baseDomain"] == "dev.example.com"
    assert annotations["gitops-infra.io/serviceNamespace"] == "apps"
    assert annotations["gitops-infra.io/name"] == "dev"


def test_the_root_syncs_the_path_automatically_with_prune_self_heal_and_retry() -> None:
    root = _graph(retry=RetryOptions(limit=3, backoff="10s", factor=3, max_backoff="5m")).one(APPLICATION)
    assert root.input("metadata.name") == "platform"
    assert root.input("metadata.finalizers") == [RESOURCES_FINALIZER]
    spec = root.inputs["spec"]
    assert spec["project"] == "platform"
    assert spec["source"] == {"repoURL": URL, "targetRevision": "main", "path": "clusters/dev"}
    assert spec["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "argocd"}
    assert spec["syncPolicy"] == {
        "automated": {"prune": True, "selfHeal": True},
        "syncOptions": ["CreateNamespace=true"],
        "retry": {"limit": 3, "backoff": {"duration": "10s", "factor": 3, "maxDuration": "5m"}},
    }


def test_up_waits_for_synced_healthy_and_an_answered_hard_refresh() -> None:
    annotations = _graph(ready_timeout="7m").one(APPLICATION).input("metadata.annotations")
    assert annotations[REFRESH_ANNOTATION] == "hard"
    assert json.loads(annotations["pulumi.com/waitFor"]) == list(ROOT_WAIT_CONDITIONS)
    assert annotations["pulumi.com/timeoutSeconds"] == "420"
    assert annotations[CREDENTIAL_ANNOTATION] == credential_digest("ecdsa-sha2-nistp384 AAAA")


def test_a_new_key_is_a_new_credential_on_the_root() -> None:
    first = _graph().one(APPLICATION).input("metadata.annotations")[CREDENTIAL_ANNOTATION]
    other = SourceSecretOptions(private_key="another-key", public_key="ecdsa-sha2-nistp384 BBBB")
    second = _graph(source=other).one(APPLICATION).input("metadata.annotations")[CREDENTIAL_ANNOTATION]
    assert first != second and first.startswith("sha256-")


def test_no_wait_with_a_zero_ready_timeout() -> None:
    annotations = _graph(ready_timeout="0s").one(APPLICATION).input("metadata.annotations")
    assert "pulumi.com/waitFor" not in annotations
    assert annotations[REFRESH_ANNOTATION] == "hard"


def test_the_root_comes_after_everything_it_reads() -> None:
    graph = _graph()
    for earlier, name in (
        (RELEASE, None),
        (SECRET_PATCH, "argocd-repository"),
        (PROJECT, None),
        (SECRET, None),
    ):
        assert _after(graph, APPLICATION, earlier, name), earlier


def test_installed_elsewhere_the_namespace_is_adopted_and_the_host_keys_written() -> None:
    graph = _graph(install=None)
    assert not graph.of_type(RELEASE) and not graph.of_type(NAMESPACE)
    assert graph.one(NAMESPACE_PATCH).input("metadata.name") == "argocd"
    hosts = graph.one(CONFIG_MAP_PATCH)
    assert hosts.input("metadata.name") == "argocd-ssh-known-hosts-cm"
    assert hosts.inputs["data"] == {"ssh_known_hosts": known_hosts_text(GITHUB_KNOWN_HOSTS)}
    assert _after(graph, APPLICATION, CONFIG_MAP_PATCH)


def test_known_hosts_keep_what_argo_cd_s_config_map_held_first_and_take_no_host_away() -> None:
    gitlab = "gitlab.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfuCHKVTjquxvt6CM6tdG4SLp1Btn/nOeHHE5UOzRdf"
    team = "git.example.com ssh-ed25519 AAAAC3Nz-team"
    fleet = "[127.0.0.1]:2222 ssh-ed25519 AAAAC3Nz"
    text = known_hosts_text(fleet, existing=f"# upstream's defaults\n{gitlab}\n{team}\n{fleet}\n")
    lines = text.splitlines()
    assert lines[:3] == ["# upstream's defaults", gitlab, team]
    assert lines.count(fleet) == 1 and set(GITHUB_KNOWN_HOSTS.splitlines()) <= set(lines)
    # Read again at the next up, it is the same text: no diff.
    assert known_hosts_text(fleet, existing=text) == text


def test_known_hosts_keep_github_s_and_add_the_fleets_once() -> None:
    fleet = "[127.0.0.1]:2222 ssh-ed25519 AAAAC3Nz"
    text = known_hosts_text(f"{fleet}\n{fleet}\n")
    assert text.splitlines()[-1] == fleet
    assert text.count(fleet) == 1
    assert text.startswith(GITHUB_KNOWN_HOSTS.splitlines()[0])


@pytest.mark.parametrize(
    ("overrides", "where"),
    [
        ({"destinations": ["*"]}, "destinations[0]"),
        ({"destinations": ["team-*"]}, "destinations[0]"),
        ({"path": "../etc"}, "path"),
        ({"ready_timeout": "forever"}, "ready_timeout"),
        ({"install": "helm"}, "install"),
    ],
)
def test_bad_args_name_the_field(overrides: dict[str, Any], where: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _args(**overrides)
    assert where in str(raised.value)


def test_a_chart_version_that_is_not_one_is_refused() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("version: must be a version major.minor.patch, such as 10.1.1")
    ):
        ArgoCdInstallOptions(version="latest")


@pytest.mark.parametrize("factor", [0, 11, True])
def test_a_retry_factor_out_of_range_is_refused_as_the_config_refuses_it(factor: Any) -> None:
    with pytest.raises(
        ConfigError, match=re.escape("RetryOptions.factor: must be a whole number from 1 to 10")
    ):
        RetryOptions(factor=factor)
