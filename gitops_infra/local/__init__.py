"""Try stacks on your laptop: a real Kubernetes API, Flux's controllers and an SSH fleet repository on
loopback, as plain processes. It is the harness behind ``make demo`` and the cluster tests, and it lives
in the package so that a platform engineer can reuse it to try their own stacks locally.

:class:`GitHubAppServer` stands in for GitHub when Flux fetches as a GitHub App (:class:`GitHubApp`):
its token endpoint and git over HTTPS, with a certificate from the cluster's CA.
:class:`ExternalSecretsController`, started on request after the cluster, runs External Secrets Operator
against moto's server as AWS Secrets Manager. :class:`ImageRegistry` is a container registry on loopback
(distribution's), which images are pushed to over its HTTP API: the image source of image automation.
:class:`FluxOperator`, likewise on request, runs the Flux Operator, for stacks with ``flux.install:
operator``; and :class:`ArgoCd` runs Argo CD's controllers, repo server and Redis, for stacks with
``gitops.engine: argocd``.

It runs from the binaries ``make setup`` builds into a checkout's ``.tools/`` (:class:`Toolchain` finds
them), and needs the ``local`` extra (``pip install 'gitops-infra[local]'``) for the cluster's PKI and
deploy key; without it, using a name here raises :class:`~gitops_infra.errors.MissingExtraError`.

Example::

    from pathlib import Path

    from gitops_infra.local import DeployKeyPair, FleetServer, LocalCluster, Toolchain, running

    tools = Toolchain.of(Path("."))  # a gitops-infra checkout after `make setup`
    key = DeployKeyPair.generate()
    cluster = LocalCluster(Path("/tmp/local/cluster"), toolchain=tools)
    fleet = FleetServer(Path("/tmp/local/fleet"), key)
    with running(cluster, fleet):
        print(cluster.server, fleet.url)  # a kubeconfig in cluster.kubeconfig, a deploy key in key

``gitops-infra local up|down`` runs the demo (:mod:`gitops_infra.local.demo`) in a checkout.
"""

from typing import TYPE_CHECKING

from gitops_infra._lazy import exports

if TYPE_CHECKING:
    from ._argocd import ArgoCd
    from ._cluster import LocalCluster
    from ._external_secrets import ExternalSecretsController
    from ._fleet_server import DeployKeyPair, FleetServer
    from ._flux_operator import FluxOperator
    from ._github import GitHubApp, GitHubAppServer
    from ._processes import free_port, running
    from ._project import Toolchain
    from ._registry import ImageRegistry

# Lazy, so that importing this package (and the CLI that offers `local`) loads neither the extra's
# packages nor the harness until a name is used.
__all__ = [
    "ArgoCd",
    "DeployKeyPair",
    "ExternalSecretsController",
    "FleetServer",
    "FluxOperator",
    "GitHubApp",
    "GitHubAppServer",
    "ImageRegistry",
    "LocalCluster",
    "Toolchain",
    "free_port",
    "running",
]

__getattr__, __dir__ = exports(__name__)
