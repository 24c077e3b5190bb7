"""The package's face: ``gitops_infra.components.flux`` still exports every name the one module did, and
each piece's public names, as the same objects."""

from __future__ import annotations

import importlib

import pytest

import gitops_infra.components.flux as flux

# What ``components/flux.py`` exported before it became one module per piece (issue 45): a user's
# ``from gitops_infra.components.flux import ...`` of any of them must keep working.
EXPORTED = (
    "DEFAULT_BRANCH",
    "DEFAULT_COMPONENTS",
    "DEFAULT_GIT_INTERVAL",
    "DEFAULT_INTERVAL",
    "DEFAULT_RETRY_INTERVAL",
    "DEFAULT_TIMEOUT",
    "FLUX_CHART",
    "FLUX_CHART_REPOSITORY",
    "FLUX_CHART_VERSION",
    "FLUX_NAMESPACE",
    "FLUX_SECRET_NAME",
    "FLUX_SYNC_NAME",
    "FLUX_VERSION",
    "GITHUB_APP_BASE_URL_KEY",
    "GITHUB_APP_ID_KEY",
    "GITHUB_APP_INSTALLATION_ID_KEY",
    "GITHUB_APP_PRIVATE_KEY_KEY",
    "GITHUB_APP_SECRET_NAME",
    "GITHUB_PROVIDER",
    "GIT_REPOSITORY_API_VERSION",
    "HANDLED_REQUEST_PATH",
    "IDENTITY_KEY",
    "IDENTITY_PUB_KEY",
    "KNOWN_HOSTS_KEY",
    "KUBERNETES_FLOOR",
    "KUSTOMIZATION_API_VERSION",
    "KUSTOMIZATION_DELETION_POLICY",
    "MIN_KUBERNETES_VERSION",
    "NOTIFICATION_ADDRESS_KEY",
    "NOTIFICATION_API_VERSION",
    "NOTIFICATION_WEBHOOK_SECRET_NAME",
    "RECONCILE_REQUEST_ANNOTATION",
    "REQUIRED_COMPONENTS",
    "SOPS_AGE_KEY",
    "SOPS_SECRET_NAME",
    "TIMEOUT_ANNOTATION",
    "WAIT_FOR_ANNOTATION",
    "WAIT_FOR_READY",
    "FluxBootstrap",
    "FluxBootstrapArgs",
    "FluxComponent",
    "FluxInstall",
    "GitAuth",
    "GitHubAppSecretOptions",
    "InstallOptions",
    "NotificationArgs",
    "Notifications",
    "SourceSecretOptions",
    "SyncObjects",
    "SyncOptions",
    "build_install",
    "build_notifications",
    "build_sops_secret",
    "build_source_secret",
    "build_sync",
    "credential_digest",
    "git_repository_manifest",
    "image_automation_enabled",
    "install_values",
    "kubernetes_floor_problem",
    "kustomization_manifest",
    "notification_manifests",
    "ready_annotations",
    "source_secret_data",
)
PIECES = ("install", "source_secret", "sync", "notifications", "bootstrap")


def test_every_name_the_module_exported_is_still_exported() -> None:
    assert [name for name in EXPORTED if name not in flux.__all__ or not hasattr(flux, name)] == []


@pytest.mark.parametrize("piece", PIECES)
def test_the_package_exports_each_pieces_names_as_they_are(piece: str) -> None:
    module = importlib.import_module(f"gitops_infra.components.flux.{piece}")
    assert module.__all__
    for name in module.__all__:
        assert name in flux.__all__, name
        assert getattr(flux, name) is getattr(module, name), name
