"""``EnvironmentConfig``: the typed ``environment`` ConfigMap, the contract between platform and app teams.

The platform writes an ``Environment`` as a ConfigMap named ``environment`` into the service namespace
(which it creates), and the same value into Flux's namespace, where the root Kustomization's
``postBuild.substituteFrom`` hands it to fleet manifests as ``${baseDomain}``, ``${serviceNamespace}``
and the rest. App teams read it back, typed:

- in a Pulumi program, ``read_environment("apps")`` gives a ``pulumi.Output[Environment]``;
- anywhere else, ``parse_environment(configmap.data)``, or any language against ``contract_schema()``
  (``gitops-infra contract schema``).

ConfigMap data are strings: keys are the model's camelCase names, flags are ``"true"``/``"false"``, and
``contractVersion`` says which version of the contract the data follow (``CONTRACT_VERSION``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from gitops_infra.checks import DNS_LABEL_PATTERN, dns_label_problem
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import owned_in
from gitops_infra.errors import EnvironmentContractError

__all__ = [
    "CONTRACT_KEYS",
    "CONTRACT_VERSION",
    "CONTRACT_VERSION_KEY",
    "ENVIRONMENT_CONFIGMAP",
    "SUBSTITUTION_NAME_PATTERN",
    "Environment",
    "EnvironmentConfig",
    "EnvironmentConfigArgs",
    "EnvironmentContract",
    "build_environment_configmap",
    "contract_schema",
    "environment_data",
    "parse_environment",
    "read_environment",
]

TYPE_TOKEN = "gitops-infra:index:EnvironmentConfig"
ENVIRONMENT_CONFIGMAP = "environment"
CONTRACT_VERSION = "1"
"""The contract's version, written as ``contractVersion``.

A reader accepts its own major version (``1``, ``1.3``) and refuses any other, because a new major version
may change what a key means. A newer minor version only adds keys, which an older reader ignores.
"""
CONTRACT_VERSION_KEY = "contractVersion"
SUBSTITUTION_NAME_PATTERN = r"^[_A-Za-z][_A-Za-z0-9]*$"
"""The variable names Flux substitutes (kustomize-controller's ``varsubRegex``); every key must match."""

DOMAIN_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"
_VERSION = re.compile(r"^(\d+)(?:\.(\d+))?$")


class Environment(BaseModel):
    """Which environment workloads run in, and what the platform provides there."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    name: Annotated[str, Field(pattern=DNS_LABEL_PATTERN, description="The environment: dev, prod, ...")]
    base_domain: Annotated[
        str,
        Field(pattern=DOMAIN_PATTERN, max_length=253, description="The DNS zone services are reached under."),
    ]
    service_namespace: Annotated[
        str, Field(pattern=DNS_LABEL_PATTERN, description="The namespace app teams deploy into.")
    ]
    ingress_enabled: Annotated[StrictBool, Field(description="Whether an ingress controller serves it.")] = (
        True
    )
    network_policies_enforced: Annotated[
        StrictBool, Field(description="Whether NetworkPolicies are enforced (the CNI's policy agent).")
    ] = False


def _flag_text(value: Any) -> Any:
    # Only the two spellings the platform writes read as flags; "yes" or "True" stay strings and fail.
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def _known_major(version: str) -> str:
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a contract version such as {CONTRACT_VERSION!r}")
    if match.group(1) != CONTRACT_VERSION:
        raise ValueError(
            f"{version!r} is major version {match.group(1)} of the contract; this reader knows version "
            f"{CONTRACT_VERSION} only: upgrade gitops-infra to read it"
        )
    return version


_Flag = Annotated[
    StrictBool,
    BeforeValidator(_flag_text),
    WithJsonSchema({"type": "string", "enum": ["true", "false"]}),
]


class EnvironmentContract(Environment):
    """The ``environment`` ConfigMap's data: an ``Environment`` as strings, with its contract version.

    ``contract_schema()`` is this model's JSON Schema, for readers in any language.
    """

    model_config = ConfigDict(title="EnvironmentContract")

    contract_version: Annotated[
        str,
        AfterValidator(_known_major),
        Field(description="The contract version the data follow; a reader refuses another major version."),
        WithJsonSchema({"type": "string", "pattern": rf"^{CONTRACT_VERSION}(\.[0-9]+)?$"}),
    ]
    ingress_enabled: _Flag = True
    network_policies_enforced: _Flag = False


def contract_schema() -> dict[str, Any]:
    """The JSON Schema of an ``environment`` ConfigMap's ``data``, at ``CONTRACT_VERSION``."""
    schema = EnvironmentContract.model_json_schema(by_alias=True)
    fields = {**EnvironmentContract.model_fields, **Environment.model_fields}  # flags keep their words
    described = {f.alias or n: f.description for n, f in fields.items()}
    for key, prop in schema["properties"].items():
        prop.pop("title", None)  # "Basedomain": the descriptions say it better
        prop.setdefault("description", described[key])
        if isinstance(prop.get("default"), bool):
            prop["default"] = str(prop["default"]).lower()  # as written: ConfigMap data are strings
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:gitops-infra:environment-contract:v{CONTRACT_VERSION}",
        **schema,
        "description": (
            f"The data of the '{ENVIRONMENT_CONFIGMAP}' ConfigMap the gitops-infra platform writes into the "
            "service namespace and the Flux namespace (contract version "
            f"{CONTRACT_VERSION}). Every value is a string."
        ),
    }


def environment_data(environment: Environment) -> dict[str, str]:
    """The ConfigMap ``data`` for ``environment``: its contract version, camelCase keys, string values."""
    data: dict[str, str] = {CONTRACT_VERSION_KEY: CONTRACT_VERSION}
    for key, value in environment.model_dump(by_alias=True).items():
        data[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return data


CONTRACT_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in EnvironmentContract.model_fields.items()
)
"""Every key of the contract, as written in the ConfigMap."""


def _newer_minor(version: Any) -> bool:
    match = _VERSION.match(version) if isinstance(version, str) else None
    return match is not None and match.group(1) == CONTRACT_VERSION and int(match.group(2) or 0) > 0


def parse_environment(data: Mapping[str, str]) -> Environment:
    """Parse a ConfigMap's ``data`` back into an ``Environment``.

    Raises ``EnvironmentContractError`` (a ``ValueError``) naming each bad key, and on a contract
    version whose major version this reader does not know.
    """
    values = dict(data)
    if _newer_minor(values.get(CONTRACT_VERSION_KEY)):
        # A newer minor version only adds keys: read the ones this version knows.
        values = {key: value for key, value in values.items() if key in CONTRACT_KEYS}
    try:
        contract = EnvironmentContract.model_validate(values)
    except ValidationError as exc:
        problems = [f"{_where(error['loc'])}: {_message(error)}" for error in exc.errors()]
        raise EnvironmentContractError(problems) from None
    return Environment.model_validate(contract.model_dump(exclude={"contract_version"}))


def _where(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "data"


def _message(error: Any) -> str:
    if error["type"] == "missing":
        return "missing"
    if error["type"] == "extra_forbidden":
        return "not a key of the contract"
    if error["type"] == "bool_type":
        return 'must be "true" or "false"'
    if error["type"] == "string_pattern_mismatch":
        return f"{error['input']!r} does not match {error['ctx']['pattern']}"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def build_environment_configmap(
    resource_name: str,
    environment: Environment,
    namespace: k8s.core.v1.Namespace,
    parent: pulumi.Resource,
) -> k8s.core.v1.ConfigMap:
    """The ``environment`` ConfigMap in ``namespace``. Every copy comes from here, so none can disagree."""
    metadata, opts = owned_in(ENVIRONMENT_CONFIGMAP, namespace, parent)
    return k8s.core.v1.ConfigMap(
        resource_name, metadata=metadata, data=environment_data(environment), opts=opts
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
        self.config_map = build_environment_configmap(f"{name}-configmap", env, self.namespace, self)
        self.environment = pulumi.Output.all(self.config_map.urn, environment_data(env)).apply(
            lambda values: dict(values[1])
        )
        self.register_outputs({"environment": self.environment})
