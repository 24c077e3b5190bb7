"""The GitOps layer: what Flux made of the stack's git source, read from the cluster the stack made.

The stack's state names the ``GitRepository`` and ``Kustomization`` it made (``FluxBootstrap``) and the
Kubernetes provider it made them through; that provider's kubeconfig, decrypted from the state like any
secret output, reaches the cluster. It is held in memory only: its certificate and key data go to files
in a private temporary directory for the length of the read (the TLS stack reads keys from files), and
no message, result or log line carries any of it. The read is a few GETs and LISTs: no engine run, no
lock, nothing written, to the cluster or to the state.

What Flux records decides what can be said:

- a source's ``Ready`` condition, and its artifact: the revision and when it was stored. Flux records a
  fetch only when it brings a new revision, so a quiet repository's artifact is old without anything
  being wrong. A source is **stale** when its controller has not reconciled its current spec
  (``status.observedGeneration`` behind ``metadata.generation``) for more than 3 intervals since that
  spec was written: the controller reacts to a spec change at once, so that many intervals means it is
  not running;
- a Kustomization's ``Ready`` condition, ``spec.suspend``, and ``status.lastAppliedRevision``, which
  **lags** while it differs from the revision its source holds;
- every other Kustomization and HelmRelease in the cluster that is not Ready or is suspended.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import tempfile
import threading
from base64 import b64decode
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

import yaml
from pulumi import automation as auto

from ..checks import parse_duration
from ..redaction import SECRET
from ._compat import run_pulumi_cmd
from ._engine import run_engine
from ._target import StackTarget
from ._wire import is_secret_payload
from .results import FluxStatus, GitOpsReport, GitOpsSource, GitOpsSync

__all__ = ["STALE_INTERVALS", "gitops_of", "gitops_report", "read_gitops"]

STALE_INTERVALS = 3
"""A source whose current spec went unreconciled for this many intervals is stale."""
REQUEST_TIMEOUT = (5.0, 20.0)
"""Connect and read timeouts of each request: an unreachable cluster is an error within seconds."""


class _Kind(NamedTuple):
    group: str
    kind: str
    plural: str


_SOURCE = _Kind("source.toolkit.fluxcd.io", "GitRepository", "gitrepositories")
_SYNC = _Kind("kustomize.toolkit.fluxcd.io", "Kustomization", "kustomizations")
_PLURALS = {_SOURCE.kind: _SOURCE.plural, _SYNC.kind: _SYNC.plural}
_OTHERS = (
    ("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations"),
    ("helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases"),
)
_DATA_FIELDS = ("certificate-authority-data", "client-certificate-data", "client-key-data")


@dataclass(frozen=True)
class _Made:
    """A Flux object the stack made, as its state records it."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str
    source_ref: tuple[str, str, str] | None = None
    """A Kustomization's ``spec.sourceRef``: kind, namespace and name."""


@dataclass(frozen=True)
class _Access:
    """How the stack's provider reaches its cluster: a kubeconfig's text or path, and a context."""

    kubeconfig: str | None
    context: str | None
    base: Path | None = None
    """Where a relative kubeconfig path is from: the project, where the program ran."""


# -- the state ----------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A state value with its secret envelope opened (``--show-secrets`` puts the JSON in ``plaintext``)."""
    if is_secret_payload(value):
        text = value.get("plaintext")
        return json.loads(text) if isinstance(text, str) else None
    return value


def _flux_kind(type_token: str) -> tuple[str, str, str] | None:
    """(group, version, kind) of a Flux sync object's Pulumi type token; ``None`` for any other type."""
    if not type_token.startswith("kubernetes:") or type_token.count(":") != 2:
        return None
    _, api_version, kind = type_token.split(":")
    group, _, version = api_version.partition("/")
    if (group, kind) not in {(_SOURCE.group, _SOURCE.kind), (_SYNC.group, _SYNC.kind)}:
        return None
    return group, version, kind


def _made(resource: Mapping[str, Any]) -> _Made | None:
    flux = _flux_kind(str(resource.get("type", "")))
    if resource.get("delete") or flux is None:
        return None
    group, version, kind = flux
    body = _plain(resource.get("outputs")) or _plain(resource.get("inputs")) or {}
    metadata = _plain(body.get("metadata")) or {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str):
        return None
    ref = None
    if kind == _SYNC.kind:
        source = (_plain(body.get("spec")) or {}).get("sourceRef") or {}
        ref = (
            str(source.get("kind", "")),
            str(source.get("namespace") or namespace),
            str(source.get("name", "")),
        )
    return _Made(group, version, kind, namespace, name, ref)


def _access(deployment: Mapping[str, Any], made_by: str) -> _Access:
    """The kubeconfig of the provider ``made_by`` references (``urn::id``); ambient when it names none."""
    urn = made_by.rpartition("::")[0]
    for resource in deployment.get("resources") or []:
        if resource.get("urn") == urn:
            inputs = _plain(resource.get("inputs")) or {}
            kubeconfig, context = _plain(inputs.get("kubeconfig")), _plain(inputs.get("context"))
            return _Access(
                kubeconfig if isinstance(kubeconfig, str) and kubeconfig else None,
                context if isinstance(context, str) and context else None,
            )
    return _Access(None, None)


def _decrypted_state(target: StackTarget) -> Mapping[str, Any]:
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


# -- the cluster --------------------------------------------------------------------------------------


def _kubeconfig(access: _Access) -> dict[str, Any] | None:
    """The provider's kubeconfig as a mapping: its text, or the file its value names; ``None``: ambient."""
    text = access.kubeconfig
    if text is None:
        return None
    try:
        parsed = yaml.safe_load(text) if "\n" in text or text.lstrip().startswith("{") else None
        if not isinstance(parsed, dict):
            # The provider also takes a path to a kubeconfig file.
            parsed = yaml.safe_load(((access.base or Path.cwd()) / Path(text).expanduser()).read_text())
    except yaml.YAMLError:
        # YAML's own message quotes the text around the fault: a kubeconfig's is credentials.
        raise ValueError("the provider's kubeconfig is not valid YAML") from None
    if not isinstance(parsed, dict):
        raise ValueError("the provider's kubeconfig is not a kubeconfig (a YAML mapping)")
    return parsed


def _secret_strings(config: Mapping[str, Any] | None) -> list[str]:
    """Every credential a kubeconfig holds, to be scrubbed from any message that might echo one."""
    found: list[str] = []
    for entry in (config or {}).get("users") or []:
        user = (entry or {}).get("user") or {}
        found += [str(user[key]) for key in ("token", "client-key-data", "password") if user.get(key)]
    return [s for s in found if len(s) >= 8]


def _materialised(config: dict[str, Any], directory: Path) -> dict[str, Any]:
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


class _Cluster:
    """Reads of Flux's objects through one API client."""

    def __init__(self, api: Any) -> None:
        from kubernetes import client

        self._objects = client.CustomObjectsApi(api)

    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            found = cast(
                dict[str, Any],
                self._objects.get_namespaced_custom_object(
                    group, version, namespace, plural, name, _request_timeout=REQUEST_TIMEOUT
                ),
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return found

    def list(self, group: str, version: str, plural: str) -> list[dict[str, Any]]:
        from kubernetes.client.exceptions import ApiException

        try:
            found = cast(
                dict[str, Any],
                self._objects.list_cluster_custom_object(
                    group, version, plural, _request_timeout=REQUEST_TIMEOUT
                ),
            )
        except ApiException as exc:
            if exc.status == 404:  # that kind's CRD is not installed (no helm-controller, say)
                return []
            raise
        return list(found.get("items") or [])


@contextlib.contextmanager
def _connected(kubeconfig: dict[str, Any] | None, context: str | None) -> Iterator[_Cluster]:
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
                _materialised(kubeconfig, Path(directory)),
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        configuration.retries = 1  # an unreachable cluster is said within seconds, not retried for long
        api = client.ApiClient(configuration)
        try:
            yield _Cluster(api)
        finally:
            api.close()  # type: ignore[no-untyped-call]


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
def _client_log() -> Iterator[list[str]]:
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


def _why(exc: BaseException | str, secrets: list[str]) -> str:
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


# -- judging what Flux reports ------------------------------------------------------------------------


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ready(obj: Mapping[str, Any]) -> tuple[bool | None, str | None, str | None]:
    """The Ready condition as (ready, reason, message), ``None`` unless it speaks of the current spec."""
    status = obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation")
    observed = status.get("observedGeneration")
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if isinstance(generation, int) and isinstance(observed, int) and observed < generation:
        return None, "Progressing", f"generation {generation} is not reconciled yet (observed {observed})"
    if ready is None:
        return None, None, "no Ready condition reported yet"
    state = {"True": True, "False": False}.get(str(ready.get("status")))
    return state, ready.get("reason") or None, ready.get("message") or None


def _status(kind: str, obj: Mapping[str, Any]) -> FluxStatus:
    metadata = obj.get("metadata") or {}
    ready, reason, message = _ready(obj)
    return FluxStatus(
        kind=kind,
        namespace=str(metadata.get("namespace", "")),
        name=str(metadata.get("name", "")),
        ready=ready,
        reason=reason,
        message=message,
        suspended=bool((obj.get("spec") or {}).get("suspend")),
    )


def _absent(made: _Made) -> FluxStatus:
    return FluxStatus(
        kind=made.kind,
        namespace=made.namespace,
        name=made.name,
        ready=None,
        reason="NotFound",
        message="the stack made it, and it is not in the cluster",
    )


def _spec_written_at(obj: Mapping[str, Any]) -> datetime | None:
    """When the object's spec was last written: its newest non-status managed field, else its creation."""
    metadata = obj.get("metadata") or {}
    times = [
        _time(entry.get("time"))
        for entry in metadata.get("managedFields") or []
        if isinstance(entry, Mapping) and not entry.get("subresource")
    ]
    known = [t for t in times if t is not None]
    return max(known) if known else _time(metadata.get("creationTimestamp"))


def _source(obj: Mapping[str, Any], now: datetime) -> GitOpsSource:
    base = _status(_SOURCE.kind, obj)
    status = obj.get("status") or {}
    artifact = status.get("artifact") or {}
    interval = (obj.get("spec") or {}).get("interval")
    stale = False
    metadata = obj.get("metadata") or {}
    generation, observed = metadata.get("generation"), status.get("observedGeneration", 0)
    written = _spec_written_at(obj)
    if isinstance(interval, str) and isinstance(generation, int) and written is not None:
        try:
            period = parse_duration(interval)
        except ValueError:
            period = None
        behind = isinstance(observed, int) and observed < generation
        stale = bool(period and behind and now - written > STALE_INTERVALS * period)
    return GitOpsSource(
        **asdict(base),
        revision=artifact.get("revision"),
        fetched_at=_time(artifact.get("lastUpdateTime")),
        interval=interval if isinstance(interval, str) else None,
        stale=stale,
    )


def _sync(obj: Mapping[str, Any], source_revision: str | None) -> GitOpsSync:
    base = _status(_SYNC.kind, obj)
    return GitOpsSync(
        **asdict(base),
        applied_revision=(obj.get("status") or {}).get("lastAppliedRevision") or None,
        source_revision=source_revision,
    )


def gitops_report(
    made: Sequence[_Made],
    read: Mapping[tuple[str, str, str], Mapping[str, Any] | None],
    others: Sequence[tuple[str, Mapping[str, Any]]],
    now: datetime,
) -> GitOpsReport:
    """Judge what the cluster returned: ``read`` holds each object by (kind, namespace, name), ``None``
    for one that is not there; ``others`` every Kustomization and HelmRelease, with its kind."""
    sources: list[GitOpsSource | FluxStatus] = []
    revisions: dict[tuple[str, str, str], str | None] = {}
    for key, obj in read.items():
        if key[0] == _SOURCE.kind and obj is not None:
            revisions[key] = ((obj.get("status") or {}).get("artifact") or {}).get("revision")
    syncs: list[GitOpsSync | FluxStatus] = []
    for item in made:
        obj = read.get((item.kind, item.namespace, item.name))
        if obj is None:
            (sources if item.kind == _SOURCE.kind else syncs).append(_absent(item))
        elif item.kind == _SOURCE.kind:
            sources.append(_source(obj, now))
        else:
            syncs.append(_sync(obj, revisions.get(item.source_ref) if item.source_ref else None))
    own = {(m.kind, m.namespace, m.name) for m in made}
    failing = []
    for kind, obj in others:
        status = _status(kind, obj)
        if (kind, status.namespace, status.name) not in own and status.problems:
            failing.append(status)
    return GitOpsReport(
        sources=tuple(_as(GitOpsSource, s) for s in sources),
        syncs=tuple(_as(GitOpsSync, s) for s in syncs),
        failing=tuple(sorted(failing, key=lambda s: (s.kind, s.namespace, s.name))),
        checked_at=now,
    )


def _as(cls: type[Any], status: FluxStatus) -> Any:
    if isinstance(status, cls):
        return status
    return cls(**asdict(status))


def read_gitops(target: StackTarget) -> GitOpsReport | None:
    """The GitOps layer of the stack ``target`` names: ``None`` when the stack made no Flux sync object.

    A cluster that cannot be reached (or refuses the stack's credentials) is the report's ``error``;
    a stack whose state cannot be read raises, as any engine command does.
    """
    files = target.file_backend()
    types = files.resource_types() if files is not None else None
    if types is not None and not any(_flux_kind(t) is not None for t in types):
        # Read straight from a file backend, no secret decrypted: a stack without Flux costs no engine
        # command.
        return None
    return gitops_of(_decrypted_state(target), base=target.project.path)


def gitops_of(deployment: Mapping[str, Any], *, base: Path | None = None) -> GitOpsReport | None:
    """:func:`read_gitops` of a decrypted checkpoint; a relative kubeconfig path is from ``base``."""
    resources = [r for r in deployment.get("resources") or [] if isinstance(r, Mapping)]
    made = []
    provider_ref = None
    for resource in resources:
        item = _made(resource)
        if item is not None:
            made.append(item)
            provider_ref = provider_ref or resource.get("provider")
    if not made:
        return None
    access = replace(_access(deployment, str(provider_ref or "")), base=base)
    secrets = [access.kubeconfig] if access.kubeconfig else []
    with _client_log() as logged:
        try:
            kubeconfig = _kubeconfig(access)
            secrets += _secret_strings(kubeconfig)
            read, others = _read(kubeconfig, access.context, made)
        except Exception as exc:  # any failure to read the cluster is this layer's answer, not a crash
            # Why credentials failed (an exec plugin that is not installed) the client only logs.
            said = [_why(exc, secrets), *(f"the client said: {_why(message, secrets)}" for message in logged)]
            return GitOpsReport(error="; ".join(said), checked_at=datetime.now(UTC))
    return gitops_report(made, read, others, datetime.now(UTC))


_Read = tuple[dict[tuple[str, str, str], Mapping[str, Any] | None], list[tuple[str, Mapping[str, Any]]]]


def _read(kubeconfig: dict[str, Any] | None, context: str | None, made: Sequence[_Made]) -> _Read:
    """The stack's Flux objects by (kind, namespace, name), ``None`` for one not there, and every other
    Kustomization and HelmRelease with its kind."""
    with _connected(kubeconfig, context) as cluster:
        read: dict[tuple[str, str, str], Mapping[str, Any] | None] = {}
        for item in made:
            read[(item.kind, item.namespace, item.name)] = cluster.get(
                item.group, item.version, _PLURALS[item.kind], item.namespace, item.name
            )
        for item in made:
            ref = item.source_ref
            if ref is not None and ref[0] == _SOURCE.kind and ref not in read:
                read[ref] = cluster.get(_SOURCE.group, "v1", _SOURCE.plural, ref[1], ref[2])
        others: list[tuple[str, Mapping[str, Any]]] = [
            (kind, obj)
            for group, version, kind, plural_name in _OTHERS
            for obj in cluster.list(group, version, plural_name)
        ]
    return read, others
