"""Sync: the GitRepository and the Kustomization, and the waits that make a bootstrap prove itself."""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gitops_infra.components.flux import FLUX_SECRET_NAME
from gitops_infra.components.flux.bootstrap import FluxBootstrap
from gitops_infra.components.flux.source_secret import credential_digest
from gitops_infra.components.flux.sync import (
    GIT_REPOSITORY_API_VERSION,
    KUSTOMIZATION_API_VERSION,
    RECONCILE_REQUEST_ANNOTATION,
    WAIT_FOR_ANNOTATION,
    SyncOptions,
    git_repository_manifest,
    kustomization_manifest,
    ready_annotations,
)
from gitops_infra.defaults import FLUX_NAMESPACE
from gitops_infra.errors import ConfigError

from ..harness import MOCK_KUBECONFIG, run
from .support import GIT_REPOSITORY, KUSTOMIZATION, URL, bootstrap, bootstrap_args


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


def test_destroy_waits_for_what_the_kustomization_applied() -> None:
    # Without it, kustomize-controller drops its finalizer at once and the chart's uninstall removes the
    # CRDs under Flux objects that still hold finalizers.fluxcd.io: destroy hangs.
    spec = kustomization_manifest(SyncOptions(url=URL, path="clusters/dev"))["spec"]
    assert spec["deletionPolicy"] == "WaitForTermination"
    assert spec["prune"] is True


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


def test_the_identity_a_kustomization_applies_as_and_where_it_applies_are_stated_only_when_asked() -> None:
    plain = kustomization_manifest(SyncOptions(url=URL, path="clusters/dev"))
    assert "serviceAccountName" not in plain["spec"] and "targetNamespace" not in plain["spec"]
    assert "labels" not in plain["metadata"]
    options = SyncOptions(
        url=URL,
        path="tenants/shop",
        name="shop",
        namespace="shop",
        service_account_name="shop-reconciler",
        target_namespace="shop",
        labels={"gitops-infra.io/tenant": "shop"},
    )
    kustomization, repository = kustomization_manifest(options), git_repository_manifest(options)
    assert kustomization["spec"]["serviceAccountName"] == "shop-reconciler"
    assert kustomization["spec"]["targetNamespace"] == "shop"
    assert (
        kustomization["metadata"]["labels"]
        == repository["metadata"]["labels"]
        == {"gitops-infra.io/tenant": "shop"}
    )
    with pytest.raises(ConfigError) as info:
        SyncOptions(url=URL, path="p", service_account_name="Not_A_Name", labels={"a b": "c"})
    assert [problem.split(":")[0] for problem in info.value.problems] == [
        "SyncOptions.labels",
        "SyncOptions.service_account_name",
    ]
