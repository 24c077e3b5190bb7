"""``EnvironmentConfig``: the typed ``environment`` ConfigMap, the contract between platform and app teams.

The platform writes an ``Environment`` as a ConfigMap named ``environment`` into the service namespace
(which it creates). App teams read it back with ``parse_environment`` and get the same types::

    env = parse_environment(configmap.data)   # e.g. from the kubernetes client
    if env.ingress_enabled:
        host = f"shop.{env.base_domain}"

ConfigMap data are strings: keys are the model's camelCase names, booleans are ``"true"``/``"false"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

import pulumi
import pulumi_kubernetes as k8s
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError
from pydantic.alias_generators import to_camel

from gitops_infra.checks import DNS_LABEL_PATTERN
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import OWNED

__all__ = [
    "ENVIRONMENT_CONFIGMAP",
    "Environment",
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "environment_data",
    "parse_environment",
]

TYPE_TOKEN = "gitops-infra:index:EnvironmentConfig"
ENVIRONMENT_CONFIGMAP = "environment"

DOMAIN_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"


class Environment(BaseModel):
    """Which environment workloads run in, and what the platform provides there."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    name: Annotated[str, Field(pattern=DNS_LABEL_PATTERN)]
    base_domain: Annotated[str, Field(pattern=DOMAIN_PATTERN, max_length=253)]
    service_namespace: Annotated[str, Field(pattern=DNS_LABEL_PATTERN)]
    ingress_enabled: StrictBool = True
    network_policies_enforced: StrictBool = False


def environment_data(environment: Environment) -> dict[str, str]:
    """The ConfigMap ``data`` for ``environment``: camelCase keys, string values."""
    data: dict[str, str] = {}
    for key, value in environment.model_dump(by_alias=True).items():
        data[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return data


def parse_environment(data: Mapping[str, str]) -> Environment:
    """Parse a ConfigMap's ``data`` back into an ``Environment``.

    Raises ``ValueError`` naming each bad key.
    """
    # ConfigMap data are strings: the flags are written "true"/"false", and only those read as flags.
    flags = {"true": True, "false": False}
    values = {key: flags.get(value, value) if key in _FLAG_KEYS else value for key, value in data.items()}
    try:
        return Environment.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"invalid {ENVIRONMENT_CONFIGMAP} ConfigMap: {problems}") from None


_FLAG_KEYS = frozenset(
    field.alias or name for name, field in Environment.model_fields.items() if field.annotation is bool
)


@dataclass(frozen=True)
class EnvironmentConfigArgs:
    """Inputs of ``EnvironmentConfig``. The Kubernetes provider comes through ``opts``."""

    environment: Environment

    def __post_init__(self) -> None:
        problems = Problems("EnvironmentConfigArgs")
        problems.check(isinstance(self.environment, Environment), "environment", "must be an Environment")
        problems.raise_if_any()


class EnvironmentConfig(pulumi.ComponentResource):
    """The service namespace and its ``environment`` ConfigMap."""

    namespace: k8s.core.v1.Namespace
    config_map: k8s.core.v1.ConfigMap
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
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.config_map = k8s.core.v1.ConfigMap(
            f"{name}-configmap",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=ENVIRONMENT_CONFIGMAP, namespace=env.service_namespace, annotations=OWNED
            ),
            data=environment_data(env),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.namespace]),
        )
        self.environment = pulumi.Output.all(self.config_map.urn, environment_data(env)).apply(
            lambda values: dict(values[1])
        )
        self.register_outputs({"environment": self.environment})
