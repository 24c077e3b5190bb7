"""A platform team's own program that makes its cluster, as the drain tests run it on the local cluster.

The cluster is a dynamic-provider stand-in for the EKS cluster, which cannot run here: its kubeconfig is
its output, so the Kubernetes provider takes it from a resource of the stack, as ``EksCluster``'s does,
and the stack owns the cluster. Its delete is logged, so a test sees it go after the drain. On it, our
``FluxBootstrap`` (Flux installed outside the stack) syncs the fleet path the test fills, with the
Kustomization health checks ``healthChecks`` lists (JSON); with ``engine: argocd``, our
``ArgoCdBootstrap`` does (Argo CD installed outside the stack, in ``namespace``, its project allowing
``destinations``, JSON). With ``configMaps: N`` it also holds N
ConfigMaps of its own, for the bench's stacks of a given size.
"""

import json
import pathlib

import pulumi
import pulumi_kubernetes as k8s
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider

from gitops_infra.components import (
    ArgoCdBootstrap,
    ArgoCdBootstrapArgs,
    FluxBootstrap,
    FluxBootstrapArgs,
    RootOptions,
    SourceSecretOptions,
    SyncOptions,
)

config = pulumi.Config()


class _Cluster(ResourceProvider):
    def create(self, props: dict) -> CreateResult:
        return CreateResult(id_="local", outs=props)

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        return DiffResult(changes=olds != news)

    def delete(self, _id: str, props: dict) -> None:
        with pathlib.Path(props["log"]).open("a") as out:
            out.write("cluster deleted\n")


class Cluster(Resource):
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, kubeconfig: pulumi.Input[str], log: str) -> None:
        super().__init__(
            _Cluster(),
            name,
            {"kubeconfig": kubeconfig, "log": log},
            pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]),
        )


cluster = Cluster("cluster", config.require_secret("kubeconfig"), config.require("log"))
provider = k8s.Provider("cluster", kubeconfig=cluster.kubeconfig)
source = SourceSecretOptions(
    private_key=config.require_secret("deployKey"), known_hosts=config.require("knownHosts")
)
if config.get("engine") == "argocd":
    ArgoCdBootstrap(
        "argocd",
        ArgoCdBootstrapArgs(
            source=source,
            root=RootOptions(
                url=config.require("url"),
                path=config.require("path"),
                namespace=config.require("namespace"),
                destination_namespace=config.require("namespace"),
            ),
            install=None,
            destinations=json.loads(config.get("destinations") or "[]"),
        ),
        opts=pulumi.ResourceOptions(providers=[provider]),
    )
else:
    FluxBootstrap(
        "flux",
        FluxBootstrapArgs(
            source=source,
            sync=SyncOptions(
                url=config.require("url"),
                path=config.require("path"),
                namespace=config.require("namespace"),
                git_interval="1h",
                interval="1h",
                retry_interval="10s",
                health_checks=json.loads(config.get("healthChecks") or "[]"),
            ),
            install=None,
        ),
        opts=pulumi.ResourceOptions(providers=[provider]),
    )
count = config.get_int("configMaps") or 0
if count:
    on_cluster = pulumi.ResourceOptions(provider=provider)
    namespace = k8s.core.v1.Namespace("sized", metadata={"name": "sized"}, opts=on_cluster)
    for index in range(count):
        k8s.core.v1.ConfigMap(
            f"sized-{index}",
            metadata={"namespace": namespace.metadata.name, "name": f"sized-{index}"},
            data={"index": str(index)},
            opts=on_cluster,
        )
