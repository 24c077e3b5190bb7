"""The Flux tests' set-up: Args with test defaults, a bootstrap under mocks, and the resource types."""

from __future__ import annotations

import dataclasses
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.components.flux import (
    FluxBootstrap,
    FluxBootstrapArgs,
    InstallOptions,
    SourceSecretOptions,
    SyncOptions,
)

from ..harness import MOCK_KUBECONFIG, Graph, Run, run

URL = "ssh://git@github.com/acme/fleet"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:SecretPatch"
CONFIG_MAP_PATCH = "kubernetes:core/v1:ConfigMapPatch"
NAMESPACE = "kubernetes:core/v1:Namespace"
GIT_REPOSITORY = "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository"
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"
NOTIFY_PROVIDER = "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Provider"
ALERT = "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Alert"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"


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


def assert_after(graph: Graph, later: str, earlier: str) -> None:
    assert graph.one(earlier).urn in graph.one(later).dependencies, f"{later} does not depend on {earlier}"
