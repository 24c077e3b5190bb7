"""The environment contract: the typed data platform and app teams share. No Pulumi import.

The platform writes an ``Environment`` as a ConfigMap named ``environment`` into the service namespace,
and the same value into Flux's namespace, where the root Kustomization's ``postBuild.substituteFrom``
hands it to fleet manifests as ``${baseDomain}``, ``${serviceNamespace}`` and the rest
(:mod:`gitops_infra.components.environment` makes both). App teams read it back, typed:

- anywhere, ``parse_environment(configmap.data)``, or any language against ``contract_schema()``
  (``gitops-infra contract schema``);
- in a Pulumi program, ``read_environment("apps")`` gives a ``pulumi.Output[Environment]``.

ConfigMap data are strings: keys are the model's camelCase names, flags are ``"true"``/``"false"``, and
``contractVersion`` says which version of the contract the data follow (``CONTRACT_VERSION``). A key is
added in a minor version (``clusterSecretStore`` in 1.1, present only when the platform runs External
Secrets): data of an older minor version lack it and still parse, and may not hold it.

``check_contract`` checks a document the way a reader would parse it (``gitops-infra contract check
FILE``): a ConfigMap manifest (``kubectl get configmap environment -o yaml``), a ``List`` of them, a
multi-document YAML stream, or the ``data`` mapping alone, in YAML or JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

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

from gitops_infra._yaml import YamlRefused, load_documents
from gitops_infra.checks import DNS_LABEL_PATTERN
from gitops_infra.errors import EnvironmentContractError

__all__ = [
    "CLUSTER_SECRET_STORE_KEY",
    "CONTRACT_KEYS",
    "CONTRACT_MAJOR",
    "CONTRACT_VERSION",
    "CONTRACT_VERSION_KEY",
    "DOMAIN_PATTERN",
    "ENVIRONMENT_CONFIGMAP",
    "SUBSTITUTION_NAME_PATTERN",
    "CheckedDocument",
    "ContractCheck",
    "Environment",
    "EnvironmentContract",
    "check_contract",
    "contract_schema",
    "environment_data",
    "parse_environment",
]

ENVIRONMENT_CONFIGMAP = "environment"
CONTRACT_MAJOR = "1"
CONTRACT_MINOR = 1
CONTRACT_VERSION = f"{CONTRACT_MAJOR}.{CONTRACT_MINOR}"
"""The contract's version, written as ``contractVersion``: ``MAJOR.MINOR``.

A reader accepts its own major version (``1``, ``1.1``, ``1.3``) and refuses any other, because a new
major version may change what a key means. A newer minor version only adds keys, which an older reader
ignores; an older one lacks the keys added since, which are optional for that reason. 1.1 added
``clusterSecretStore``.
"""
CLUSTER_SECRET_STORE_KEY = "clusterSecretStore"
_ADDED_IN: dict[str, int] = {CLUSTER_SECRET_STORE_KEY: 1}
"""The keys added after ``MAJOR.0``, by the minor version that added each: data of an older minor version
that hold one are refused (that version had no such key)."""
CONTRACT_VERSION_KEY = "contractVersion"
MAX_CONFIGMAP_BYTES = 1024 * 1024
"""The most a ConfigMap holds (the API server's limit): a larger document is no ConfigMap to check."""
SUBSTITUTION_NAME_PATTERN = r"^[_A-Za-z][_A-Za-z0-9]*$"
"""The variable names Flux substitutes (kustomize-controller's ``varsubRegex``); every key must match."""

DOMAIN_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"
_VERSION = re.compile(r"^(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?$")
"""``MAJOR`` or ``MAJOR.MINOR``, ASCII digits with no leading zero: ``01`` is not a version."""


class Environment(BaseModel):
    """Which environment workloads run in, and what the platform provides there."""

    # Built when first used (as the config's models are), so that importing the contract costs little.
    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, defer_build=True
    )

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
    cluster_secret_store: Annotated[
        str | None,
        Field(
            pattern=DNS_LABEL_PATTERN,
            description=(
                "The ClusterSecretStore (AWS Secrets Manager) ExternalSecrets name; absent when the platform "
                "runs no External Secrets. Since contract version 1.1."
            ),
        ),
    ] = None


def _flag_text(value: Any) -> Any:
    # Only the two spellings the platform writes read as flags; "yes" or "True" stay strings and fail.
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def _known_major(version: str) -> str:
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a contract version such as {CONTRACT_VERSION!r}")
    if match.group(1) != CONTRACT_MAJOR:
        raise ValueError(
            f"{version!r} is major version {match.group(1)} of the contract; this reader knows version "
            f"{CONTRACT_MAJOR} only: upgrade gitops-infra to read it"
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
        WithJsonSchema({"type": "string", "pattern": rf"^{CONTRACT_MAJOR}(\.[0-9]+)?$"}),
    ]
    ingress_enabled: _Flag = True
    network_policies_enforced: _Flag = False
    # Absent, not null, when there is none: ConfigMap data hold strings only.
    cluster_secret_store: Annotated[
        str | None,
        Field(pattern=DNS_LABEL_PATTERN),
        WithJsonSchema({"type": "string", "pattern": DNS_LABEL_PATTERN}),
    ] = None


def contract_schema() -> dict[str, Any]:
    """The JSON Schema of an ``environment`` ConfigMap's ``data``, at ``CONTRACT_VERSION``."""
    schema = EnvironmentContract.model_json_schema(by_alias=True)
    fields = {**EnvironmentContract.model_fields, **Environment.model_fields}  # flags keep their words
    described = {f.alias or n: f.description for n, f in fields.items()}
    for key, prop in schema["properties"].items():
        prop.pop("title", None)  # "Basedomain": the descriptions say it better
        prop.setdefault("description", described[key])
        if "default" in prop and prop["default"] is None:
            del prop["default"]  # an optional key is absent, never null
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
    # An optional key without a value is absent, not "None": the data say only what the platform provides.
    for key, value in environment.model_dump(by_alias=True, exclude_none=True).items():
        data[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return data


CONTRACT_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in EnvironmentContract.model_fields.items()
)
"""Every key of the contract, as written in the ConfigMap."""


def _minor(version: Any) -> int | None:
    """The minor version of ``version`` when it is of this reader's major version, else ``None``."""
    match = _VERSION.match(version) if isinstance(version, str) else None
    return int(match.group(2) or 0) if match is not None and match.group(1) == CONTRACT_MAJOR else None


def parse_environment(data: Mapping[str, str]) -> Environment:
    """Parse a ConfigMap's ``data`` back into an ``Environment``.

    Raises ``EnvironmentContractError`` (a ``ValueError``) naming each bad key, and on a contract
    version whose major version this reader does not know.
    """
    values = dict(data)
    minor = _minor(values.get(CONTRACT_VERSION_KEY))
    if minor is not None and minor > CONTRACT_MINOR:
        # A newer minor version only adds keys: read the ones this version knows.
        values = {key: value for key, value in values.items() if key in CONTRACT_KEYS}
    # An older minor version had no key added since: one there is not what its writer meant.
    too_new = (
        [] if minor is None else sorted(k for k, since in _ADDED_IN.items() if k in values and since > minor)
    )
    problems = [
        f"{key}: not a key of contract version {values[CONTRACT_VERSION_KEY]} (added in "
        f"{CONTRACT_MAJOR}.{_ADDED_IN[key]})"
        for key in too_new
    ]
    try:
        contract = EnvironmentContract.model_validate({k: v for k, v in values.items() if k not in too_new})
    except ValidationError as exc:
        problems += [f"{_where(error['loc'])}: {_message(error)}" for error in exc.errors()]
    if problems:
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


# -- checking a document ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckedDocument:
    """One environment ConfigMap (or data mapping) found in the document, and what the check found."""

    where: str
    """Which part of the document: ``ConfigMap apps/environment``, ``document 2``, ``data``."""
    environment: Environment | None
    problems: tuple[str, ...]


@dataclass(frozen=True)
class ContractCheck:
    """The result of ``check_contract``: valid when something was checked and nothing was wrong."""

    source: str
    contract_version: str
    checked: tuple[CheckedDocument, ...]
    problems: tuple[str, ...] = ()
    """Problems with the document as a whole: unreadable, or no environment ConfigMap in it."""

    @property
    def valid(self) -> bool:
        """True when at least one contract was found and every one of them holds."""
        return bool(self.checked) and not self.problems and not any(c.problems for c in self.checked)


def _is_configmap(document: Any) -> bool:
    return isinstance(document, Mapping) and document.get("kind") == "ConfigMap"


def _is_object(document: Any) -> bool:
    """A Kubernetes object (of any kind), as opposed to a bare data mapping."""
    return isinstance(document, Mapping) and "kind" in document and "apiVersion" in document


def _candidates(documents: list[Any], problems: list[str]) -> Iterator[tuple[str, Any]]:
    """``(where, data)`` for each environment ConfigMap, or the one document when it is the data alone.

    A ``List`` whose ``items`` is not a list, or a ConfigMap whose ``metadata`` is not a mapping, is a
    problem of its own (appended to ``problems``), not a crash.
    """
    items: list[Any] = []
    for document in documents:
        if isinstance(document, Mapping) and document.get("kind") == "List":
            listed = document.get("items")
            if listed is not None and not isinstance(listed, list):
                problems.append(f"items: must be a list of objects, not {type(listed).__name__}")
                continue
            items.extend(listed or [])
        else:
            items.append(document)
    if len(items) == 1 and not _is_object(items[0]):
        yield "data", items[0]
        return
    for item in items:
        if not _is_configmap(item):
            continue
        metadata = item.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, Mapping):
            problems.append(f"ConfigMap metadata: must be a mapping, not {type(metadata).__name__}")
            continue
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if name != ENVIRONMENT_CONFIGMAP and len(items) > 1:
            continue
        where = "/".join(str(part) for part in (namespace, name) if isinstance(part, str) and part)
        yield f"ConfigMap {where or '(unnamed)'}", item.get("data")


def _check(where: str, data: Any) -> CheckedDocument:
    if not isinstance(data, Mapping):
        return CheckedDocument(where, None, ("data: must be a mapping of keys to strings",))
    # ConfigMap data are strings; a YAML `true` or `1` would not survive the API server.
    not_strings = {
        str(key): f"{key}: must be a string (ConfigMap data are strings), not {type(value).__name__}"
        for key, value in data.items()
        if not isinstance(value, str)
    }
    try:
        environment = parse_environment(data)
    except EnvironmentContractError as exc:
        others = [p for p in exc.problems if p.split(":", 1)[0] not in not_strings]
        return CheckedDocument(where, None, (*not_strings.values(), *others))
    if not_strings:
        return CheckedDocument(where, None, tuple(not_strings.values()))
    return CheckedDocument(where, environment, ())


def _refused(source: str, problem: str) -> ContractCheck:
    return ContractCheck(source, CONTRACT_VERSION, (), (problem,))


def check_contract(text: str, *, source: str = "<document>") -> ContractCheck:
    """Check ``text`` (YAML or JSON) against the environment contract; see the module docstring.

    The text is read by the same guarded loader as the stack files (no deeper than ``MAX_DEPTH``, no
    alias bomb, no repeated key), and may be at most ``MAX_CONFIGMAP_BYTES``, the most a ConfigMap
    holds: whatever it is, the answer is a ``ContractCheck``, never an exception.
    """
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_CONFIGMAP_BYTES:
        return _refused(source, f"is {size} bytes; a ConfigMap holds {MAX_CONFIGMAP_BYTES} at most")
    try:
        documents = [document for document in load_documents(text) if document is not None]
    except YamlRefused as exc:
        return _refused(source, f"the document {exc}")
    problems: list[str] = []
    checked = tuple(_check(where, data) for where, data in _candidates(documents, problems))
    if not checked and not problems:
        found = "an empty document" if not documents else f"no ConfigMap named {ENVIRONMENT_CONFIGMAP!r}"
        problems.append(f"{found}: nothing to check")
    return ContractCheck(source, CONTRACT_VERSION, checked, tuple(problems))
