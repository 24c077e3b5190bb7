"""``EnvironmentConfig``: the ``environment`` ConfigMap, the contract between platform and app teams.

The contract itself (``Environment``, its schema and its parser) lives in :mod:`gitops_infra.contract`,
which imports no Pulumi; this module writes it into the cluster and reads it back in a Pulumi program:

- ``EnvironmentConfig`` makes the service namespace and its ``environment`` ConfigMap;
- ``build_environment_configmap`` makes every copy (Flux's namespace holds one too), so none can disagree;
- ``read_environment("apps")`` gives an app team's program a ``pulumi.Output[Environment]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.checks import dns_label_problem
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import NamespaceResource, fixed_config_map
from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, Environment, environment_data, parse_environment
from gitops_infra.errors import EnvironmentContractError

__all__ = [
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "build_environment_configmap",
    "read_environment",
]

TYPE_TOKEN = "gitops-infra:index:EnvironmentConfig"


def build_environment_configmap(
    resource_name: str,
    environment: Environment,
    namespace: NamespaceResource,
    parent: pulumi.Resource,
) -> k8s.core.v1.ConfigMapPatch:
    """The ``environment`` ConfigMap in ``namespace``, updated in place under any provider.

    Every copy comes from here, so none can disagree.
    """
    return fixed_config_map(
        resource_name, ENVIRONMENT_CONFIGMAP, environment_data(environment), namespace, parent
    )


def read_environment(
    namespace: str = "apps", *, provider: k8s.Provider | None = None
) -> pulumi.Output[Environment]:
    """The ``environment`` contract in ``namespace``, read from the cluster and typed, for app programs.

    It reads the ConfigMap with ``ConfigMap.get`` (nothing is created or managed) and parses it; a
    ConfigMap that breaks the contract fails the program with the bad key's name. Call it once per
    namespace in a program (the read is a resource named ``<namespace>-environment``)::

        env = read_environment("apps", provider=cluster)
        host = env.apply(lambda e: f"shop.{e.base_domain}" if e.ingress_enabled else None)
    """
    problems = Problems("read_environment")
    problem = dns_label_problem(namespace)
    if problem is not None:
        problems.add("namespace", problem)
    problems.raise_if_any()
    config_map = k8s.core.v1.ConfigMap.get(
        f"{namespace}-{ENVIRONMENT_CONFIGMAP}",
        f"{namespace}/{ENVIRONMENT_CONFIGMAP}",
        opts=pulumi.ResourceOptions(provider=provider),
    )

    def parse(data: Mapping[str, str] | None) -> Environment:
        try:
            return parse_environment(data or {})
        except EnvironmentContractError as exc:
            # A RunError fails the program with its message alone: the key is the news, not a traceback.
            raise pulumi.RunError(f"{namespace}/{ENVIRONMENT_CONFIGMAP}: {exc}") from None

    return config_map.data.apply(parse)


@dataclass(frozen=True)
class EnvironmentConfigArgs:
    """Inputs of ``EnvironmentConfig``. The Kubernetes provider comes through ``opts``.

    ``keep_namespace``: the service namespace may exist already (a cluster you run, with workloads in
    it): it is kept on destroy, so a destroy never deletes what was there before. Adopting an existing one
    needs a provider that upserts (the platform's does).
    """

    environment: Environment
    keep_namespace: bool = False

    def __post_init__(self) -> None:
        problems = Problems("EnvironmentConfigArgs")
        problems.check(isinstance(self.environment, Environment), "environment", "must be an Environment")
        problems.raise_if_any()


class EnvironmentConfig(pulumi.ComponentResource):
    """The service namespace and its ``environment`` ConfigMap."""

    namespace: k8s.core.v1.Namespace
    config_map: k8s.core.v1.ConfigMapPatch
    environment: pulumi.Output[dict[str, str]]

    def __init__(
        self, name: str, args: EnvironmentConfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        env = args.environment
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=env.service_namespace, labels={"gitops-infra/environment": env.name}
            ),
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=args.keep_namespace),
        )
        self.config_map = build_environment_configmap(f"{name}-configmap", env, self.namespace, self)
        self.environment = pulumi.Output.all(self.config_map.urn, environment_data(env)).apply(
            lambda values: dict(values[1])
        )
        self.register_outputs({"environment": self.environment})
