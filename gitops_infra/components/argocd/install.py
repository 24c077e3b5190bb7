"""Install: Argo CD, from the ``argo-cd`` Helm chart (argoproj/argo-helm) at a pinned version.

The first piece of :mod:`gitops_infra.components.argocd`: ``install_values`` turns the fleet's host keys
into the chart's values, and ``build_install`` registers them as a ``helm.v3.Release`` of
``ARGO_CD_CHART_VERSION`` (Argo CD ``ARGO_CD_VERSION``). The fleet repository's SSH host keys go into the
chart's ``argocd-ssh-known-hosts-cm`` (``configs.ssh.extraHosts``), after the hosts the chart trusts
already, since Argo CD reads known hosts from that ConfigMap only, never from a repository Secret. Dex and
the notifications controller are off: the platform uses neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource
from gitops_infra.defaults import ARGO_CD_CHART_VERSION

__all__ = [
    "ARGO_CD_CHART",
    "ARGO_CD_CHART_REPOSITORY",
    "ArgoCdInstallOptions",
    "build_install",
    "install_values",
]

ARGO_CD_CHART = "argo-cd"
ARGO_CD_CHART_REPOSITORY = "https://argoproj.github.io/argo-helm"
RELEASE_NAME = "argo-cd"
RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ArgoCdInstallOptions:
    """What to install: the chart's version."""

    version: str = ARGO_CD_CHART_VERSION

    def __post_init__(self) -> None:
        problems = Problems("ArgoCdInstallOptions")
        problems.gate("version", checks.argo_cd_chart_version_problem, self.version)
        problems.raise_if_any()


def install_values(known_hosts: str) -> dict[str, Any]:
    """The ``argo-cd`` chart values: the fleet's host keys trusted, CRDs kept on uninstall off (the
    platform's destroy removes what it made), and what the platform does not use turned off."""
    return {
        "crds": {"install": True, "keep": False},
        "configs": {"ssh": {"extraHosts": known_hosts}},
        "dex": {"enabled": False},
        "notifications": {"enabled": False},
    }


def build_install(
    name: str,
    options: ArgoCdInstallOptions,
    known_hosts: pulumi.Input[str],
    namespace: NamespaceResource,
    parent: pulumi.Resource,
) -> k8s.helm.v3.Release:
    """Argo CD, as a Helm release of the pinned chart."""
    return k8s.helm.v3.Release(
        f"{name}-argo-cd",
        name=RELEASE_NAME,
        chart=ARGO_CD_CHART,
        version=options.version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=ARGO_CD_CHART_REPOSITORY),
        namespace=namespace.metadata.name,
        create_namespace=False,
        values=pulumi.Output.from_input(known_hosts).apply(install_values),
        cleanup_on_fail=True,
        timeout=RELEASE_TIMEOUT_SECONDS,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )
