"""FluxBootstrap: its Args, and the whole graph of its pieces under mocks."""

from __future__ import annotations

import dataclasses
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux import FLUX_SECRET_NAME
from gitops_infra.components.flux.bootstrap import FluxBootstrap, FluxBootstrapArgs
from gitops_infra.components.flux.install import (
    FLUX_CHART,
    FLUX_CHART_REPOSITORY,
    InstallOptions,
    install_values,
)
from gitops_infra.components.flux.notifications import NotificationArgs
from gitops_infra.components.flux.source_secret import (
    IDENTITY_KEY,
    IDENTITY_PUB_KEY,
    KNOWN_HOSTS_KEY,
    GitHubAppSecretOptions,
)
from gitops_infra.components.flux.sync import SyncOptions
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment, environment_data
from gitops_infra.defaults import DEFAULT_COMPONENTS, FLUX_CHART_VERSION, FLUX_NAMESPACE, FluxComponent
from gitops_infra.errors import ConfigError

from ..conftest import SOPS_TEST_KEY
from ..harness import MOCK_KUBECONFIG, Run, run
from .support import (
    ALERT,
    CONFIG_MAP_PATCH,
    GIT_REPOSITORY,
    KUSTOMIZATION,
    NAMESPACE,
    NAMESPACE_PATCH,
    NOTIFY_PROVIDER,
    RELEASE,
    SECRET,
    URL,
    assert_after,
    bootstrap,
    bootstrap_args,
)


def test_namespace_controllers_secret_and_sync_objects() -> None:
    result = bootstrap()
    graph = result.graph
    namespace = graph.one(NAMESPACE)
    assert namespace.input("metadata.name") == FLUX_NAMESPACE
    release = graph.one(RELEASE, "flux-controllers")
    assert release.inputs["chart"] == FLUX_CHART
    assert release.inputs["version"] == FLUX_CHART_VERSION
    assert release.inputs["repositoryOpts"] == {"repo": FLUX_CHART_REPOSITORY}
    assert release.inputs["namespace"] == FLUX_NAMESPACE
    assert release.inputs["values"] == install_values(InstallOptions())
    secret = graph.one(SECRET, "flux-git-auth")
    assert secret.input("metadata.name") == FLUX_SECRET_NAME
    assert set(secret.inputs["stringData"]) == {IDENTITY_KEY, IDENTITY_PUB_KEY, KNOWN_HOSTS_KEY}
    assert secret.input("stringData.known_hosts") == GITHUB_KNOWN_HOSTS
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["url"] == URL
    assert graph.one(KUSTOMIZATION).inputs["spec"]["path"] == "./clusters/dev"
    assert result.values["namespace"].value == FLUX_NAMESPACE
    assert result.values["url"].value == URL
    assert not graph.of_type(NOTIFY_PROVIDER)
    assert len(graph.of_type(SECRET)) == 1


def test_everything_is_parented_and_uses_the_given_provider() -> None:
    graph = bootstrap().graph
    component = graph.one("gitops-infra:index:FluxBootstrap")
    provider = graph.one("pulumi:providers:kubernetes")
    children = [r for r in graph if r.parent == component.urn]
    assert {r.type for r in children} == {NAMESPACE, RELEASE, SECRET, GIT_REPOSITORY, KUSTOMIZATION}
    assert all(r.provider.startswith(provider.urn + "::") for r in children)


def test_sync_objects_come_after_the_controllers_and_the_secret() -> None:
    graph = bootstrap().graph
    assert_after(graph, RELEASE, NAMESPACE)
    assert_after(graph, SECRET, NAMESPACE)
    assert_after(graph, GIT_REPOSITORY, RELEASE)
    assert_after(graph, GIT_REPOSITORY, SECRET)
    assert_after(graph, KUSTOMIZATION, RELEASE)
    assert_after(graph, KUSTOMIZATION, GIT_REPOSITORY)
    # ...and so destroy removes them first, while the controllers can still clear their finalizers.
    release = graph.one(RELEASE)
    assert not {graph.one(GIT_REPOSITORY).urn, graph.one(KUSTOMIZATION).urn} & set(release.dependencies)


def test_health_checks_tolerations_and_extra_components_reach_the_graph() -> None:
    check = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "apps"}
    graph = bootstrap(
        health_checks=[check],
        components_extra=[
            FluxComponent.IMAGE_REFLECTOR_CONTROLLER,
            FluxComponent.IMAGE_AUTOMATION_CONTROLLER,
        ],
        tolerations=[{"key": "dedicated", "operator": "Exists"}],
        network_policy=False,
    ).graph
    assert graph.one(KUSTOMIZATION).inputs["spec"]["healthChecks"] == [check]
    values = graph.one(RELEASE).inputs["values"]
    assert values["imageAutomationController"]["create"] is True
    assert values["sourceController"]["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    assert values["policies"] == {"create": False}


def test_the_git_repository_reads_the_secret_the_source_names_after_it_is_updated() -> None:
    graph = bootstrap(name="flux-keys").graph
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["secretRef"] == {"name": "flux-keys"}
    secret = graph.one(SECRET, "flux-git-auth")
    assert secret.urn in graph.one(GIT_REPOSITORY).dependencies


def test_the_environment_contract_is_handed_to_flux_substitution() -> None:
    env = Environment(name="dev", base_domain="dev.example.com", service_namespace="apps")
    result = bootstrap(environment=env)
    graph = result.graph
    config_map = graph.one("kubernetes:core/v1:ConfigMapPatch", "flux-environment")
    assert config_map.input("metadata.name") == ENVIRONMENT_CONFIGMAP
    assert config_map.input("metadata.namespace") == FLUX_NAMESPACE
    assert config_map.inputs["data"] == environment_data(env)
    kustomization = graph.one(KUSTOMIZATION)
    assert kustomization.input("spec.postBuild") == {
        "substituteFrom": [{"kind": "ConfigMap", "name": ENVIRONMENT_CONFIGMAP, "optional": False}]
    }
    # Flux fails a Kustomization whose substituteFrom names a ConfigMap that is not there yet.
    assert config_map.urn in kustomization.dependencies
    assert graph.one(NAMESPACE).urn in config_map.dependencies
    assert config_map.parent == graph.one("gitops-infra:index:FluxBootstrap").urn


def test_without_an_environment_nothing_is_substituted() -> None:
    graph = bootstrap().graph
    assert "postBuild" not in graph.one(KUSTOMIZATION).inputs["spec"]
    assert graph.of_type("kubernetes:core/v1:ConfigMapPatch") == []


def test_every_object_flux_bootstrap_declares_takes_its_fields_back_on_apply() -> None:
    # Server-side apply leaves a field edited out of band to its editor; `up` must restore it instead.
    graph = bootstrap(
        sops_age_key=SOPS_TEST_KEY,
        notifications=NotificationArgs(provider_type="slack", webhook="https://hooks.example.invalid/x"),
    ).graph
    declared = [*graph.of_type(SECRET), *graph.of_type(GIT_REPOSITORY), *graph.of_type(KUSTOMIZATION)]
    declared += [*graph.of_type(NOTIFY_PROVIDER), *graph.of_type(ALERT)]
    assert len(declared) == 7
    assert all(r.input("metadata.annotations")["pulumi.com/patchForce"] == "true" for r in declared)


def test_every_fixed_name_configmap_and_secret_is_a_patch_carried_over_from_the_plain_kind() -> None:
    # Whether a data change replaces a ConfigMap or Secret is the provider's setting, which a component
    # cannot see: with a plain provider the fixed-name object was deleted and made again (a new UID on
    # the real cluster, test_a_plain_provider_updates_the_fixed_name_objects_in_place). A patch is
    # updated in place under any provider; the alias keeps a stack made before it in place.
    graph = bootstrap(
        sops_age_key=SOPS_TEST_KEY,
        notifications=NotificationArgs(provider_type="slack", webhook="https://hooks.example.invalid/x"),
        environment=Environment(name="dev", base_domain="dev.example.com", service_namespace="apps"),
    ).graph
    assert graph.of_type("kubernetes:core/v1:Secret") == graph.of_type("kubernetes:core/v1:ConfigMap") == []
    fixed = {r.name: r for r in [*graph.of_type(SECRET), *graph.of_type(CONFIG_MAP_PATCH)]}
    assert sorted(fixed) == [
        "flux-environment",
        "flux-git-auth",
        "flux-notification-webhook",
        "flux-sops-age",
    ]
    for name, resource in fixed.items():
        was = "ConfigMap" if name == "flux-environment" else "Secret"
        assert [alias["spec"]["type"] for alias in resource.aliases] == [f"kubernetes:core/v1:{was}"], name


# -- bad Args ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"url": "git@github.com:acme/fleet"}, "SyncOptions.url: must be an ssh:// URL"),
        (
            {"url": "https://github.com/acme/fleet"},
            "FluxBootstrapArgs.sync.url: a deploy key authenticates over SSH: use ssh://git@",
        ),
        ({"reconcile_request": "a=b"}, "SyncOptions.reconcile_request: must be 1-128 letters"),
        ({"provider": "gitlab"}, "SyncOptions.provider: must be one of github, or unset"),
        ({"path": "../x"}, "SyncOptions.path: must be a relative path"),
        (
            {"components": [FluxComponent.SOURCE_CONTROLLER]},
            "InstallOptions.components: must include kustomize",
        ),
        (
            {"components_extra": [FluxComponent.IMAGE_REFLECTOR_CONTROLLER] * 2},
            "InstallOptions.components_extra: repeats a component",
        ),
        (
            {
                "components": list(DEFAULT_COMPONENTS[:2]),
                "notifications": NotificationArgs(provider_type="slack"),
            },
            "FluxBootstrapArgs.notifications: needs notification-controller",
        ),
    ],
)
def test_bad_args_name_the_field(overrides: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        bootstrap(**overrides)
    assert any(problem.startswith(expected) for problem in info.value.problems), info.value.problems


def test_option_groups_must_be_the_option_types() -> None:
    with pytest.raises(ConfigError) as info:
        FluxBootstrapArgs(source="key", sync={"url": URL})  # type: ignore[arg-type]
    assert info.value.problems == (
        "FluxBootstrapArgs.source: must be a SourceSecretOptions (a deploy key) or a GitHubAppSecretOptions",
        "FluxBootstrapArgs.sync: must be a SyncOptions",
    )


def test_a_github_app_over_ssh_is_refused_with_the_remedy() -> None:
    with pytest.raises(ConfigError) as info:
        FluxBootstrapArgs(
            source=GitHubAppSecretOptions(app_id=1, installation_id=2, private_key="k"),
            sync=SyncOptions(url=URL, path="clusters/dev"),
        )
    assert info.value.problems == (
        "FluxBootstrapArgs.sync.url: GitHub App auth fetches over HTTPS: use "
        "https://github.com/<owner>/<repository> (an ssh:// URL needs a deploy key)",
    )


# -- Flux installed outside the component --------------------------------------------------------------


def test_installed_elsewhere_makes_no_release_and_neither_makes_nor_deletes_the_namespace() -> None:
    graph = bootstrap_external().graph
    assert not graph.of_type(RELEASE) and not graph.of_type(NAMESPACE)
    # The Flux Operator's namespace exists and is not ours: its labels are patched in. A Namespace would
    # fail to create on it from pulumi-kubernetes 4.29 on (AlreadyExists), under a provider that does not
    # upsert, and after a destroy the retained one made the next `up` fail the same way.
    namespace = graph.one(NAMESPACE_PATCH)
    assert namespace.input("metadata.name") == FLUX_NAMESPACE
    assert namespace.input("metadata.labels") == {"app.kubernetes.io/part-of": "flux"}
    repository, kustomization = graph.one(GIT_REPOSITORY), graph.one(KUSTOMIZATION)
    assert graph.one(SECRET).urn in repository.dependencies
    assert repository.urn in kustomization.dependencies
    # Destroy still takes the sync objects first: their Secret, then the namespace, wait for them.
    assert namespace.urn in graph.one(SECRET).dependencies


def bootstrap_external() -> Run[FluxBootstrap]:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        args = dataclasses.replace(bootstrap_args(), install=None)
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(program)
