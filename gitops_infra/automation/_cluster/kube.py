"""How the automation layer reaches the cluster a stack deploys to: its provider's kubeconfig, from the state.

The stack's state records each Kubernetes provider's inputs; its kubeconfig, decrypted from the state like
any secret output, reaches the cluster. It is held in memory only: its certificate and key data go to files
in a private temporary directory for the length of the connection (the TLS stack reads keys from files),
and no message, result or log line carries any of it. The GitOps layer reads Flux's objects through it, and
the drain before a destroy deletes what Flux made.

Which version of a custom kind a request names is the server's to say: :class:`Discovery` asks it (API
discovery), rather than reading a 404 as "not installed", which cannot tell a kind no CRD defines from
one served only at another version.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import re
import tempfile
import threading
from base64 import b64decode
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml
from pulumi import automation as auto

from ..._files import FileRefused, read_regular_file
from ...redaction import SECRET
from .._engine.compat import run_pulumi_cmd
from .._engine.runner import run_engine
from .._engine.wire import is_secret_payload
from .._state.target import StackTarget

__all__ = [
    "REQUEST_TIMEOUT",
    "Access",
    "Discovery",
    "client_log",
    "connected",
    "decrypted_state",
    "kubeconfig_of",
    "plain",
    "provider_access",
    "secret_strings",
    "served_version",
    "version_priority",
    "why",
]

REQUEST_TIMEOUT = (5.0, 20.0)
"""Connect and read timeouts of each request: an unreachable cluster is an error within seconds."""
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024
"""Far beyond any kubeconfig: a larger file named as one is not read."""
_DATA_FIELDS = ("certificate-authority-data", "client-certificate-data", "client-key-data")


@dataclass(frozen=True)
class Access:
    """How the stack's provider reaches its cluster: a kubeconfig's text or path, and a context."""

    kubeconfig: str | None
    context: str | None
    base: Path | None = None
    """Where a relative kubeconfig path is from: the project, where the program ran."""


def plain(value: Any) -> Any:
    """A state value with its secret envelope opened (``--show-secrets`` puts the JSON in ``plaintext``)."""
    if is_secret_payload(value):
        text = value.get("plaintext")
        return json.loads(text) if isinstance(text, str) else None
    return value


def provider_access(deployment: Mapping[str, Any], made_by: str) -> Access:
    """The kubeconfig of the provider ``made_by`` references (``urn::id``); ambient when it names none."""
    urn = made_by.rpartition("::")[0]
    for resource in deployment.get("resources") or []:
        if resource.get("urn") == urn:
            inputs = plain(resource.get("inputs")) or {}
            kubeconfig, context = plain(inputs.get("kubeconfig")), plain(inputs.get("context"))
            return Access(
                kubeconfig if isinstance(kubeconfig, str) and kubeconfig else None,
                context if isinstance(context, str) and context else None,
            )
    return Access(None, None)


def decrypted_state(target: StackTarget) -> Mapping[str, Any]:
    """The stack's checkpoint with its secrets decrypted: kept in memory, never shown."""

    def work(pulumi_stack: auto.Stack, _: Any) -> Mapping[str, Any]:
        args = ["stack", "export", "--show-secrets", "--stack", target.stack]
        try:
            result = run_pulumi_cmd(cast(auto.LocalWorkspace, pulumi_stack.workspace), args)
        except auto.CommandError as exc:
            # Its text carries the command's stdout, which may hold the state it began to print, secrets
            # decrypted: only the engine's own stderr goes on.
            stderr = str(exc).rpartition("\n stderr: ")[2]
            raise auto.CommandError(auto.CommandResult(stdout="", stderr=stderr, code=1)) from None
        deployment = json.loads(result.stdout).get("deployment")
        return deployment if isinstance(deployment, Mapping) else {}

    return run_engine(target, "read the stack's state", work)


def kubeconfig_of(access: Access) -> dict[str, Any] | None:
    """The provider's kubeconfig as a mapping: its text, or the file its value names; ``None``: ambient."""
    text = access.kubeconfig
    if text is None:
        return None
    try:
        parsed = yaml.safe_load(text) if "\n" in text or text.lstrip().startswith("{") else None
        if not isinstance(parsed, dict):
            # The provider also takes a path to a kubeconfig file: a user's, which may name a FIFO or a device
            path = (access.base or Path.cwd()) / Path(text).expanduser()
            parsed = yaml.safe_load(read_regular_file(path, MAX_KUBECONFIG_BYTES).decode("utf-8"))
    except FileRefused as exc:
        raise ValueError(f"the provider's kubeconfig file cannot be read: {exc}") from None
    except UnicodeDecodeError:
        raise ValueError("the provider's kubeconfig file is not UTF-8 text") from None
    except yaml.YAMLError:
        # YAML's own message quotes the text around the fault: a kubeconfig's is credentials.
        raise ValueError("the provider's kubeconfig is not valid YAML") from None
    if not isinstance(parsed, dict):
        raise ValueError("the provider's kubeconfig is not a kubeconfig (a YAML mapping)")
    return parsed


def secret_strings(config: Mapping[str, Any] | None) -> list[str]:
    """Every credential a kubeconfig holds, to be scrubbed from any message that might echo one."""
    found: list[str] = []
    for entry in (config or {}).get("users") or []:
        user = (entry or {}).get("user") or {}
        found += [str(user[key]) for key in ("token", "client-key-data", "password") if user.get(key)]
    return [s for s in found if len(s) >= 8]


def materialised(config: dict[str, Any], directory: Path) -> dict[str, Any]:
    """``config`` with each ``*-data`` field written to a file in ``directory``, and named by path.

    The client would otherwise write them itself, to files it reuses across calls by content and removes
    only at exit; these are removed when the read ends.
    """
    config = copy.deepcopy(config)
    counter = 0
    for section, body_key in (("clusters", "cluster"), ("users", "user")):
        for entry in config.get(section) or []:
            body = (entry or {}).get(body_key) or {}
            for data_key in _DATA_FIELDS:
                if isinstance(body.get(data_key), str):
                    counter += 1
                    path = directory / f"{counter}.pem"
                    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(descriptor, "wb") as file:
                        file.write(b64decode(body.pop(data_key)))
                    body[data_key.removesuffix("-data")] = str(path)
    return config


@contextlib.contextmanager
def connected(kubeconfig: dict[str, Any] | None, context: str | None) -> Iterator[Any]:
    """A client for the cluster ``kubeconfig`` reaches (``None``: the ambient one), at ``context``."""
    from kubernetes import client, config

    configuration = client.Configuration()
    with tempfile.TemporaryDirectory(prefix="gitops-infra-kube-") as directory:
        if kubeconfig is None:
            config.load_kube_config(  # type: ignore[no-untyped-call]
                context=context, client_configuration=configuration, persist_config=False
            )
        else:
            config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                materialised(kubeconfig, Path(directory)),
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        configuration.retries = 1  # an unreachable cluster is said within seconds, not retried for long
        api = client.ApiClient(configuration)
        try:
            yield api
        finally:
            api.close()  # type: ignore[no-untyped-call]


_KUBE_VERSION = re.compile(r"v([0-9]+)(?:(alpha|beta)([0-9]+))?")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of Kubernetes' version priority, highest first: GA, then beta, then alpha versions, each by
    major then minor number, highest first; a name of any other form after them, alphabetically. The
    API server's own order of a CRD's versions (apimachinery ``version.CompareKubeAwareVersionStrings``)."""
    match = _KUBE_VERSION.fullmatch(version)
    if match is None:
        return (3, 0, 0, version)
    major, stability, minor = match.groups()
    return ({None: 0, "beta": 1, "alpha": 2}[stability], -int(major), -int(minor or 0), "")


def served_version(served: Sequence[str], known: Sequence[str]) -> str | None:
    """The version to reach a kind at, of the ``served`` ones: the first of ``known`` (newest first) that
    the server serves; where it serves none of them (an API newer than this code), the highest it serves
    by Kubernetes' priority; ``None`` when it serves the kind at no version (no CRD defines it).

    A served version holds the same objects as any other (the API server converts between them), so
    the newest known one is read. Flux's fields read here (``spec.suspend``, the ``Ready`` condition, the
    artifact's revision) have been the same at every version so far; an API that moved them would
    leave its objects with no ``Ready`` condition, which reads as not Ready, never as healthy.
    """
    chosen = next((version for version in known if version in served), None)
    if chosen is None and served:
        chosen = min(served, key=version_priority)
    return chosen


class Discovery:
    """The versions at which the API server serves each resource, from its discovery documents: ``/apis``
    for each group's versions, then ``/apis/<group>/<version>`` for the resources of each, each fetched
    once per connection."""

    def __init__(self, api: Any) -> None:
        from kubernetes import client

        self._api = api
        self._groups_api = client.ApisApi(api)
        self._custom = client.CustomObjectsApi(api)
        self._groups: dict[str, tuple[str, ...]] | None = None
        self._resources: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {}
        """Per group and version, each kind's plural and whether it is namespaced (no subresources)."""

    def versions(self, group: str, plural: str) -> tuple[str, ...]:
        """Every version at which the server serves ``plural`` of ``group``, highest priority first."""
        if self._groups is None:
            listed = self._plain(self._groups_api.get_api_versions(_request_timeout=REQUEST_TIMEOUT))
            self._groups = {
                str(entry.get("name")): tuple(
                    str(v.get("version")) for v in entry.get("versions") or [] if isinstance(v, Mapping)
                )
                for entry in listed.get("groups") or []
                if isinstance(entry, Mapping)
            }
        found = [
            v
            for v in self._groups.get(group, ())
            if any(p == plural for p, _ in self._resources_of(group, v).values())
        ]
        return tuple(sorted(found, key=version_priority))

    def version(self, group: str, plural: str, known: Sequence[str]) -> str | None:
        """The version to reach ``plural`` of ``group`` at (:func:`served_version`); ``None``: not served."""
        return served_version(self.versions(group, plural), known)

    def kind(self, group: str, version: str, kind: str) -> tuple[str, bool] | None:
        """``kind``'s plural at ``group``/``version`` and whether it is namespaced; ``None``: not served."""
        return self._resources_of(group, version).get(kind)

    def _resources_of(self, group: str, version: str) -> dict[str, tuple[str, bool]]:
        from kubernetes.client.exceptions import ApiException

        if (group, version) not in self._resources:
            try:
                listed = self._plain(
                    self._custom.get_api_resources(group, version, _request_timeout=REQUEST_TIMEOUT)
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise
                listed = {}  # its last CRD went since /apis listed it
            self._resources[(group, version)] = {
                str(r.get("kind")): (str(r.get("name")), bool(r.get("namespaced")))
                for r in listed.get("resources") or []
                if isinstance(r, Mapping) and "/" not in str(r.get("name"))  # not a subresource
            }
        return self._resources[(group, version)]

    def _plain(self, answer: Any) -> dict[str, Any]:
        return (
            answer
            if isinstance(answer, dict)
            else cast(dict[str, Any], self._api.sanitize_for_serialization(answer))
        )


class _Recorded(logging.Handler):
    """What the Kubernetes client logs on the root logger from this thread (its exec plugin's failure)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and record.name == "root":
            self.messages.append(record.getMessage())


@contextlib.contextmanager
def client_log() -> Iterator[list[str]]:
    """Keep the client's log out of the terminal while it reads, and hand its messages to the error.

    It logs a failed exec plugin with ``logging.error`` on the root logger, which, with no handler there,
    configures logging for the whole process and prints it (and every retry warning of urllib3 after it).
    """
    handler = _Recorded()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.messages
    finally:
        root.removeHandler(handler)


def why(exc: BaseException | str, secrets: list[str]) -> str:
    """What went wrong reaching the cluster, in a line, with no credential in it."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import MaxRetryError

    if isinstance(exc, str):
        text = exc
    elif isinstance(exc, ApiException):
        try:
            detail = json.loads(exc.body or "{}").get("message") or ""
        except (ValueError, AttributeError):
            detail = ""
        text = f"the API server answered {exc.status} {exc.reason}" + (f": {detail}" if detail else "")
    elif isinstance(exc, MaxRetryError):  # urllib3's: its reason names the host and the underlying error
        text = f"cannot reach the API server: {exc.reason if exc.reason is not None else exc}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        text = text.replace(secret, SECRET)
    return " ".join(text.split())[:1000]
