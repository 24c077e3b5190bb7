"""The environment contract for readers outside Pulumi: its JSON Schema, and a check of a document.

App teams in any language validate the ``environment`` ConfigMap against ``contract_schema()``
(``gitops-infra contract schema``). ``check_contract`` checks a document the way a reader would parse it
(``gitops-infra contract check FILE``): a ConfigMap manifest (``kubectl get configmap environment -o
yaml``), a ``List`` of them, a multi-document YAML stream, or the ``data`` mapping alone, in YAML or JSON.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from gitops_infra.components.environment import (
    CONTRACT_VERSION,
    ENVIRONMENT_CONFIGMAP,
    Environment,
    contract_schema,
    parse_environment,
)
from gitops_infra.errors import EnvironmentContractError

__all__ = ["CONTRACT_VERSION", "CheckedDocument", "ContractCheck", "check_contract", "contract_schema"]


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


def _candidates(documents: list[Any]) -> Iterator[tuple[str, Any]]:
    """``(where, data)`` for each environment ConfigMap, or the one document when it is the data alone."""
    items: list[Any] = []
    for document in documents:
        if isinstance(document, Mapping) and document.get("kind") == "List":
            items.extend(document.get("items") or [])
        else:
            items.append(document)
    if len(items) == 1 and not _is_object(items[0]):
        yield "data", items[0]
        return
    for item in items:
        if not _is_configmap(item):
            continue
        metadata = item.get("metadata") or {}
        if metadata.get("name") != ENVIRONMENT_CONFIGMAP and len(items) > 1:
            continue
        where = "/".join(str(part) for part in (metadata.get("namespace"), metadata.get("name")) if part)
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


def check_contract(text: str, *, source: str = "<document>") -> ContractCheck:
    """Check ``text`` (YAML or JSON) against the environment contract; see the module docstring."""
    try:
        documents = [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        return ContractCheck(source, CONTRACT_VERSION, (), (f"not YAML or JSON{at}",))
    checked = tuple(_check(where, data) for where, data in _candidates(documents))
    if not checked:
        found = "an empty document" if not documents else f"no ConfigMap named {ENVIRONMENT_CONFIGMAP!r}"
        return ContractCheck(source, CONTRACT_VERSION, (), (f"{found}: nothing to check",))
    return ContractCheck(source, CONTRACT_VERSION, checked)
