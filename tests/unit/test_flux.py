"""FluxBootstrap: the three builders on their own, and the component's graph under mocks."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra import checks
from gitops_infra.components.deploy_key import GITHUB_KNOWN_HOSTS
from gitops_infra.components.flux import (
    DEFAULT_COMPONENTS,
    FLUX_CHART,
    FLUX_CHART_REPOSITORY,
    FLUX_CHART_VERSION,
    FLUX_NAMESPACE,
    FLUX_SECRET_NAME,
    GIT_REPOSITORY_API_VERSION,
    GITHUB_APP_SECRET_NAME,
    IDENTITY_KEY,
    IDENTITY_PUB_KEY,
    KNOWN_HOSTS_KEY,
    KUSTOMIZATION_API_VERSION,
    RECONCILE_REQUEST_ANNOTATION,
    SOPS_AGE_KEY,
    SOPS_SECRET_NAME,
    WAIT_FOR_ANNOTATION,
    FluxBootstrap,
    FluxBootstrapArgs,
    FluxComponent,
    GitHubAppSecretOptions,
    InstallOptions,
    NotificationArgs,
    SourceSecretOptions,
    SyncOptions,
    credential_digest,
    git_repository_manifest,
    image_automation_enabled,
    install_values,
    kustomization_manifest,
    ready_annotations,
    source_secret_data,
)
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment, environment_data
from gitops_infra.errors import ConfigError
from gitops_infra.local import DeployKeyPair

from .harness import MOCK_KUBECONFIG, Graph, Run, run

URL = "ssh://git@github.com/acme/fleet"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:SecretPatch"
CONFIG_MAP_PATCH = "kubernetes:core/v1:ConfigMapPatch"
NAMESPACE = "kubernetes:core/v1:Namespace"
GIT_REPOSITORY = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
NOTIFY_PROVIDER = "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Provider"
ALERT = "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Alert"


# -- the builders, without Pulumi ----------------------------------------------------------------------


def test_install_values_switch_every_controller_explicitly() -> None:
    values = install_values(InstallOptions())
    assert values["installCRDs"] is True
    assert values["policies"] == {"create": True}
    assert {key: v["create"] for key, v in values.items() if key.endswith(("Controller", "Watcher"))} == {
        "sourceController": True,
        "kustomizeController": True,
        "helmController": True,
        "notificationController": True,
        "imageReflectionController": False,
        "imageAutomationController": False,
        "sourceWatcher": False,
    }


def test_install_values_extra_components_policy_and_tolerations() -> None:
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    values = install_values(
        InstallOptions(
            components=(FluxComponent.SOURCE_CONTROLLER, FluxComponent.KUSTOMIZE_CONTROLLER),
            components_extra=(
                FluxComponent.IMAGE_REFLECTOR_CONTROLLER,
                FluxComponent.IMAGE_AUTOMATION_CONTROLLER,
            ),
            network_policy=False,
            tolerations=[toleration],
        )
    )
    assert values["policies"] == {"create": False}
    assert values["helmController"] == {"create": False, "tolerations": [toleration]}
    assert values["imageAutomationController"] == {"create": True, "tolerations": [toleration]}


def test_sync_manifests() -> None:
    options = SyncOptions(url=URL, path="clusters/dev/", decryption_secret="sops-age")
    repo = git_repository_manifest(options)
    assert repo == {
        "apiVersion": GIT_REPOSITORY_API_VERSION,
        "kind": "GitRepository",
        "metadata": {
            "name": "flux-system",
            "namespace": FLUX_NAMESPACE,
            # `up` succeeds only once Flux reports Ready: by default Flux's 5m timeout, and a margin.
            "annotations": {"pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "420"},
        },
        "spec": {
            "url": URL,
            "ref": {"branch": "main"},
            "interval": "1m",
            "secretRef": {"name": FLUX_SECRET_NAME},
        },
    }
    kustomization = kustomization_manifest(options)
    assert kustomization["apiVersion"] == KUSTOMIZATION_API_VERSION
    assert kustomization["spec"] == {
        "interval": "10m",
        "retryInterval": "2m",
        "timeout": "5m",
        "path": "./clusters/dev",
        "prune": True,
        "deletionPolicy": "WaitForTermination",
        "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        "decryption": {"provider": "sops", "secretRef": {"name": "sops-age"}},
    }
    assert "healthChecks" not in kustomization["spec"]


def test_image_automation_is_what_makes_flux_write() -> None:
    assert image_automation_enabled([FluxComponent.IMAGE_AUTOMATION_CONTROLLER]) is True
    assert image_automation_enabled([FluxComponent.IMAGE_REFLECTOR_CONTROLLER]) is False
    assert image_automation_enabled(DEFAULT_COMPONENTS) is False


# -- the component under mocks -------------------------------------------------------------------------


def _fields(options: type) -> set[str]:
    return {f.name for f in dataclasses.fields(options)}


def bootstrap_args(**overrides: Any) -> FluxBootstrapArgs:
    """Args with test defaults; each override goes to the option group that has the field."""
    source = {"private_key": "mock-openssh-private-key", "public_key": "ecdsa-sha2-nistp384 AAAA"}
    sync: dict[str, Any] = {"url": URL, "path": "clusters/dev"}
    install: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in overrides.items():
        group = next(
            (
                g
                for g, kind in ((source, SourceSecretOptions), (sync, SyncOptions), (install, InstallOptions))
                if key in _fields(kind)
            ),
            rest,
        )
        group[key] = value
    return FluxBootstrapArgs(
        source=SourceSecretOptions(**source),
        sync=SyncOptions(**sync),
        install=InstallOptions(**install),
        **rest,
    )


def bootstrap(**overrides: Any) -> Run[FluxBootstrap]:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        args = bootstrap_args(**overrides)
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(program, outputs=lambda f: {"namespace": f.namespace, "url": f.repository_url})


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


def test_identity_is_sent_as_a_secret() -> None:
    secret = bootstrap().graph.one(SECRET, "flux-git-auth")
    assert secret.is_secret("stringData.identity")


def test_everything_is_parented_and_uses_the_given_provider() -> None:
    graph = bootstrap().graph
    component = graph.one("gitops-infra:index:FluxBootstrap")
    provider = graph.one("pulumi:providers:kubernetes")
    children = [r for r in graph if r.parent == component.urn]
    assert {r.type for r in children} == {NAMESPACE, RELEASE, SECRET, GIT_REPOSITORY, KUSTOMIZATION}
    assert all(r.provider.startswith(provider.urn + "::") for r in children)


def assert_after(graph: Graph, later: str, earlier: str) -> None:
    assert graph.one(earlier).urn in graph.one(later).dependencies, f"{later} does not depend on {earlier}"


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


def test_sops_adds_an_age_secret_and_decryption() -> None:
    graph = bootstrap(sops_age_key="AGE-SECRET-KEY-1TEST").graph
    age = graph.one(SECRET, "flux-sops-age")
    assert age.input("metadata.name") == SOPS_SECRET_NAME
    assert age.is_secret("stringData")
    assert age.inputs["stringData"] == {SOPS_AGE_KEY: "AGE-SECRET-KEY-1TEST"}
    kustomization = graph.one(KUSTOMIZATION)
    assert kustomization.inputs["spec"]["decryption"] == {
        "provider": "sops",
        "secretRef": {"name": SOPS_SECRET_NAME},
    }
    assert age.urn in graph.one(GIT_REPOSITORY).dependencies


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


# -- what a real `pulumi up` (and destroy) would get wrong --------------------------------------------


def test_destroy_waits_for_what_the_kustomization_applied() -> None:
    # Without it, kustomize-controller drops its finalizer at once and the chart's uninstall removes the
    # CRDs under Flux objects that still hold finalizers.fluxcd.io: destroy hangs.
    spec = kustomization_manifest(SyncOptions(url=URL, path="clusters/dev"))["spec"]
    assert spec["deletionPolicy"] == "WaitForTermination"
    assert spec["prune"] is True


def test_tolerations_reach_the_pre_install_job_too() -> None:
    # The chart's `flux check --pre` Job is placed through `cli`, not through any controller's values:
    # without it, the Job stays Pending on a cluster whose only nodes are tainted, and the install fails.
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    assert install_values(InstallOptions(tolerations=[toleration]))["cli"] == {"tolerations": [toleration]}


def test_placement_reaches_every_controller_and_the_pre_install_job() -> None:
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    values = install_values(InstallOptions(tolerations=[toleration], node_selector={"role": "system"}))
    controllers = [key for key in values if key.endswith(("Controller", "Watcher"))]
    assert len(controllers) == 7
    for key in controllers:
        assert values[key]["tolerations"] == [toleration], key
        assert values[key]["nodeSelector"] == {"role": "system"}, key
    # The chart's `flux check --pre` Job is placed through `cli`, not through any controller's values.
    assert values["cli"] == {"tolerations": [toleration], "nodeSelector": {"role": "system"}}
    assert "cli" not in install_values(InstallOptions())


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


def test_option_groups_must_be_the_option_types() -> None:
    with pytest.raises(ConfigError) as info:
        FluxBootstrapArgs(source="key", sync={"url": URL})  # type: ignore[arg-type]
    assert info.value.problems == (
        "FluxBootstrapArgs.source: must be a SourceSecretOptions (a deploy key) or a GitHubAppSecretOptions",
        "FluxBootstrapArgs.sync: must be a SyncOptions",
    )


# -- Flux installed outside the component -----------------------------------------------------------------


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


NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"


def bootstrap_external() -> Run[FluxBootstrap]:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        args = dataclasses.replace(bootstrap_args(), install=None)
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return run(program)


def test_an_existing_key_without_its_public_half_writes_no_identity_pub() -> None:
    data = source_secret_data(SourceSecretOptions(private_key="mock-openssh-private-key"))
    assert set(data) == {IDENTITY_KEY, KNOWN_HOSTS_KEY}


def test_every_object_flux_bootstrap_declares_takes_its_fields_back_on_apply() -> None:
    # Server-side apply leaves a field edited out of band to its editor; `up` must restore it instead.
    graph = bootstrap(
        sops_age_key="AGE-SECRET-KEY-1TEST",
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
        sops_age_key="AGE-SECRET-KEY-1TEST",
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


# -- a bootstrap that proves itself --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ready_timeout", "annotations"),
    [
        ("5m", {"pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "300"}),
        ("90s", {"pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "90"}),
        ("1.5s", {"pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "2"}),
        ("0s", {}),  # for a cluster Flux cannot reach yet: `up` does not wait
    ],
)
def test_up_waits_for_both_sync_objects_to_be_ready(ready_timeout: str, annotations: dict[str, str]) -> None:
    assert ready_annotations(ready_timeout) == annotations
    graph = bootstrap(ready_timeout=ready_timeout, timeout="1s").graph  # the wait must outlast Flux's
    kustomization = graph.one(KUSTOMIZATION)
    assert kustomization.input("metadata.annotations") == {"pulumi.com/patchForce": "true", **annotations}
    # The GitRepository waits for Flux to have handled the key's fetch request, then for Ready.
    request = credential_digest("ecdsa-sha2-nistp384 AAAA")
    gated = {**annotations, RECONCILE_REQUEST_ANNOTATION: request}
    if annotations:
        gated[WAIT_FOR_ANNOTATION] = json.dumps(
            [
                f"jsonpath={{.status.lastHandledReconcileAt}}={request}",
                "condition=Ready",
                "jsonpath={$[?@.interval && (!@.suspend || @.suspend == false)]}",
            ]
        )
    git_repository = graph.one(GIT_REPOSITORY)
    assert git_repository.input("metadata.annotations") == {"pulumi.com/patchForce": "true", **gated}
    for sync_object in (git_repository, kustomization):
        # The annotation would bound deletes too: they keep the provider's 10m, for finalizers to run.
        assert sync_object.custom_timeouts == {"delete": "10m"}


# -- credentials over time: a new key is proven before the old one goes ----------------------------------


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


def test_the_git_repository_reads_the_secret_the_source_names_after_it_is_updated() -> None:
    graph = bootstrap(name="flux-keys").graph
    assert graph.one(GIT_REPOSITORY).inputs["spec"]["secretRef"] == {"name": "flux-keys"}
    secret = graph.one(SECRET, "flux-git-auth")
    assert secret.urn in graph.one(GIT_REPOSITORY).dependencies


# -- GitHub App auth --------------------------------------------------------------------------------------

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


def test_by_default_up_waits_longer_than_flux_and_a_delete_outlasts_its_timeout() -> None:
    # Prod's Flux waits up to 10m for its health checks: `up` waited 5m and failed with no verdict, and a
    # delete's 10m ran out just as kustomize-controller released its finalizer (WaitForTermination).
    assert SyncOptions(url=URL, path="clusters/prod", timeout="10m").ready_wait == "12m"
    graph = bootstrap(timeout="10m").graph
    for sync_object in (graph.one(GIT_REPOSITORY), graph.one(KUSTOMIZATION)):
        assert sync_object.input("metadata.annotations")["pulumi.com/timeoutSeconds"] == "720"
        assert sync_object.custom_timeouts == {"delete": "15m"}
    # A short Flux timeout keeps the provider's own 10m for a delete.
    assert bootstrap(timeout="1m").graph.one(KUSTOMIZATION).custom_timeouts == {"delete": "10m"}


def test_a_wait_no_longer_than_flux_timeout_is_refused() -> None:
    for ready_timeout in ("5m", "10m"):
        with pytest.raises(
            ConfigError, match=r"SyncOptions.ready_timeout: must be longer than timeout \(10m\)"
        ):
            SyncOptions(url=URL, path="clusters/prod", timeout="10m", ready_timeout=ready_timeout)
    assert SyncOptions(url=URL, path="clusters/prod", timeout="10m", ready_timeout="0s").ready_wait == "0s"
    assert SyncOptions(url=URL, path="clusters/prod", timeout="10m", ready_timeout="11m").ready_wait == "11m"


def test_ready_timeout_is_a_go_duration() -> None:
    with pytest.raises(ConfigError, match=r"SyncOptions.ready_timeout: .*Go duration"):
        SyncOptions(url=URL, path="clusters/dev", ready_timeout="5 minutes")


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


def test_both_sync_objects_wait_for_what_the_path_needs() -> None:
    def program() -> FluxBootstrap:
        provider = k8s.Provider("cluster", kubeconfig=MOCK_KUBECONFIG)
        scaffold = k8s.core.v1.ConfigMap("scaffold", opts=pulumi.ResourceOptions(provider=provider))
        args = bootstrap_args(sync_after=[scaffold])
        return FluxBootstrap("flux", args, opts=pulumi.ResourceOptions(providers=[provider]))

    graph = run(program).graph
    scaffold = graph.one("kubernetes:core/v1:ConfigMap", "scaffold")
    assert scaffold.urn in graph.one(KUSTOMIZATION).dependencies
    # The source fetches once when made: a fetch before the scaffold's commit lacked the path.
    assert scaffold.urn in graph.one(GIT_REPOSITORY).dependencies
