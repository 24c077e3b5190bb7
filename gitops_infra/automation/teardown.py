"""``destroy``: delete every resource of a stack, recorded like an update; a prod stack must be named.

The stack itself, its config and its history stay, as with ``pulumi destroy``: a later ``up`` builds it
again, and ``history`` shows the destroy with the commit it ran from.

A stack that made its cluster is drained first (``_cluster/drain.py``: what Flux applied that made AWS
resources goes while the controllers that delete them still run), and swept after, whether the destroy
succeeded or failed (``_cluster/sweep.py``: what AWS still holds tagged for the cluster is reported,
never deleted).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal, NamedTuple, overload

from pulumi import automation as auto

from ..checks import PROD_ENVIRONMENTS
from ..errors import ArgumentError, ConfigError, ConfirmationRequiredError, OperationFailedError
from ._cluster.drain import DEFAULT_DRAIN_TIMEOUT, DrainCallback, drain_clusters, owned_clusters
from ._cluster.kube import decrypted_state, plain
from ._cluster.sweep import AssumedRole, sweep  # boto3 itself loads only when a sweep runs
from ._engine.runner import EngineEvents, locked_error, run_engine
from ._engine.streamed import message_flags, run_command
from ._engine.work import preview_work, recorded
from ._state.history import last_deployment
from ._state.target import StackTarget
from .options import StackOptions
from .results.teardown import DestroyPreview, DestroyResult, DrainResult, SweepResult
from .signals import interrupted

__all__ = ["DEFAULT_DRAIN_TIMEOUT", "destroy", "prod_environment"]

_K8S_PROVIDER = "pulumi:providers:kubernetes"
_EKS_CLUSTER = "aws:eks/cluster:Cluster"
_NOT_OURS = (
    "the stack's cluster is not its own (its kubeconfig comes from config or another stack): "
    "nothing in it is drained"
)
_NOT_ASKED = (
    "drain=False (--no-drain): the cluster is not drained, and AWS resources its objects made may be left"
)


KEEP_PROTECTED = "--exclude-protected"
"""A destroy deletes everything but what is protected, and says what it kept: what Pulumi protects (the
Sealed Secrets keys) must outlive the cluster, where a plain ``pulumi destroy`` would refuse to run."""


def prod_environment(target: StackTarget) -> str | None:
    """Why ``target`` is a prod stack (``environment 'prod'``), or ``None`` when it is not.

    A stack is prod when its ``environment.name``, or else its own name, is one of
    ``PROD_ENVIRONMENTS`` (the names the policy pack treats as prod). ``environment`` is read where and as
    the engine reads it (:meth:`Project.read_stack_settings`: the stack file in ``stackConfigDir`` with the
    project file's extension, a bare or namespaced key, else the project's ``config:`` default in its long
    or short form), as a mapping or as the JSON text ``pulumi config set`` writes without ``--path``.
    Whatever cannot be told makes the stack prod, so that a destroy fails closed as the policy pack does:
    a value that cannot be read (a secret, text that is not JSON, a name that is not text), a key spelled
    twice in the stack file, and an ESC environment the stack imports, which may set it.
    """
    try:
        settings = target.project.read_stack_settings(target.stack_name)
    except ConfigError as exc:  # what the engine would refuse too: a config that is not a mapping, say
        return f"its environment cannot be read: {'; '.join(exc.problems)}"
    if settings.imports:
        return (
            f"its environment cannot be read: {settings.path.name} imports ESC environments, which may set it"
        )
    for setting in settings.values(f"{target.project.name}:environment"):
        reason = _prod_reason(setting.value)
        if reason is not None:
            return reason
    if target.stack_name.name.lower() in PROD_ENVIRONMENTS:
        return f"stack name {target.stack_name.name!r}"
    return None


def _prod_reason(environment: object) -> str | None:
    if isinstance(environment, str):
        try:
            environment = json.loads(environment)
        except ValueError:
            return "its environment cannot be read: a text value that is not JSON"
    if not isinstance(environment, Mapping):
        return "its environment cannot be read: not a mapping"
    if "secure" in environment:
        return "its environment cannot be read: a secret"
    name = environment.get("name")
    if name is not None and not isinstance(name, str):
        return "its environment cannot be read: environment.name is not text"
    if isinstance(name, str) and name.lower() in PROD_ENVIRONMENTS:
        return f"environment {name!r}"
    return None


class _Made(NamedTuple):
    """An EKS cluster the stack made, and how its AWS provider reaches the account: for the sweep."""

    name: str
    region: str
    profile: str | None
    account: str | None = None
    """The account in the cluster's ARN: the one the sweep must read."""
    roles: tuple[AssumedRole, ...] = ()
    """The provider's ``aws:assumeRoles`` chain, in order."""
    sts_region: str | None = None
    unreadable: str | None = None
    """Why the provider's role chain cannot be read: then the sweep cannot look."""


def _eks_clusters(deployment: Mapping[str, Any]) -> tuple[_Made, ...]:
    resources = {r.get("urn"): r for r in deployment.get("resources") or [] if isinstance(r, Mapping)}
    found = []
    for resource in resources.values():
        if resource.get("type") != _EKS_CLUSTER or resource.get("delete"):
            continue
        outputs = plain(resource.get("outputs")) or {}
        provider = resources.get(str(resource.get("provider") or "").rpartition("::")[0]) or {}
        settings = plain(provider.get("inputs")) or {}
        name, arn = plain(outputs.get("name")), plain(outputs.get("arn"))
        parts = arn.split(":") if isinstance(arn, str) and arn.count(":") >= 5 else None
        region = (parts[3] if parts else None) or plain(settings.get("region"))
        profile, sts_region = plain(settings.get("profile")), plain(settings.get("stsRegion"))
        roles, unreadable = _role_chain(settings)
        if isinstance(name, str) and name and isinstance(region, str) and region:
            found.append(
                _Made(
                    name,
                    region,
                    profile if isinstance(profile, str) and profile else None,
                    account=(parts[4] if parts else None) or None,
                    roles=roles,
                    sts_region=sts_region if isinstance(sts_region, str) and sts_region else None,
                    unreadable=unreadable,
                )
            )
    return tuple(dict.fromkeys(found))


_ROLE_KEYS = (("roleArn", "role_arn"), ("externalId", "external_id"), ("sessionName", "session_name"))
"""Each field of a role as the state may spell it: a stack's config and the SDKs' input classes write
the Pulumi name, a Python program's plain dict (``ProviderAssumeRoleArgsDict``) the snake_case one."""


def _role_chain(settings: Mapping[str, Any]) -> tuple[tuple[AssumedRole, ...], str | None]:
    """The roles the AWS provider assumes, in order, and why they cannot be read (or ``None``).

    pulumi-aws v7 takes ``assumeRoles``, a list; v6 took one ``assumeRole``. Both reach the state as the
    JSON text that the SDKs make of an object input (``pulumi.runtime.to_json`` in pulumi_aws's
    ``Provider``) and that a stack's ``aws:assumeRoles`` config is passed as (see ``_ROLE_KEYS``). A
    chain that cannot be read is not skipped: the sweep would read the runner's own account and find it
    "clean".
    """
    key = "assumeRoles" if settings.get("assumeRoles") is not None else "assumeRole"
    value = plain(settings.get(key))
    if value is None or value == "":
        return (), None
    problem = f"the AWS provider's {key} cannot be read: a list of roles, each with roleArn, was expected"
    try:
        value = plain(json.loads(value)) if isinstance(value, str) else value
    except ValueError:
        return (), problem
    entries = [value] if isinstance(value, Mapping) else value
    if not isinstance(entries, list):
        return (), problem
    roles = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            return (), problem
        arn, external_id, session_name = (
            plain(entry[name] if name in entry else entry.get(snake)) for name, snake in _ROLE_KEYS
        )
        # An entry with no role ARN is refused by the provider too (terraform-provider-aws's
        # expandAssumeRole: role_arn is required), so none is skipped here.
        if not (isinstance(arn, str) and arn) or not all(
            v is None or isinstance(v, str) for v in (external_id, session_name)
        ):
            return (), problem
        roles.append(AssumedRole(arn, external_id or None, session_name or None))
    return tuple(roles), None


def _cluster_state(target: StackTarget) -> Mapping[str, Any]:
    """The decrypted state, when the stack may have a cluster to drain or sweep; else nothing. A file
    backend's checkpoint says so without decrypting anything, so a stack with no Kubernetes provider
    costs no extra engine command."""
    files = target.file_backend()
    types = files.resource_types() if files is not None else None
    if types is not None and not types & {_K8S_PROVIDER, _EKS_CLUSTER}:
        return {}
    return decrypted_state(target)


def _checked_timeout(drain_timeout: float) -> float:
    if not (isinstance(drain_timeout, int | float) and math.isfinite(drain_timeout) and drain_timeout > 0):
        raise ArgumentError(f"drain_timeout: {drain_timeout!r} must be a finite number of seconds, above 0")
    return float(drain_timeout)


def _drain_of(
    target: StackTarget,
    deployment: Mapping[str, Any],
    *,
    drain: bool,
    timeout: float,
    on_drain: DrainCallback | None,
    planned: bool,
) -> DrainResult | None:
    """The drain of the clusters the stack made; ``None`` for a stack that deploys to no cluster."""
    clusters = owned_clusters(deployment, base=target.project.path)
    if not clusters:
        has_provider = any(
            isinstance(r, Mapping) and r.get("type") == _K8S_PROVIDER and not r.get("delete")
            for r in deployment.get("resources") or []
        )
        return DrainResult(skipped=_NOT_OURS, planned=planned) if has_provider else None
    if not drain:
        return DrainResult(skipped=_NOT_ASKED, planned=planned)
    if not planned:
        _wait_unlocked(target)
    return drain_clusters(clusters, stack=target.stack, timeout=timeout, on_drain=on_drain, planned=planned)


def _wait_unlocked(target: StackTarget) -> None:
    """Drain nothing while another update holds the stack: it may be deploying what the drain deletes.

    The engine's lock is taken only when the destroy itself starts, so a file backend's lock is read first
    (waiting up to ``lock_wait``, as the engine would). Another backend's lock is the engine's to say.
    """
    files = target.file_backend()
    if files is None:
        return
    deadline = time.monotonic() + target.lock_wait
    while files.locks():
        left = deadline - time.monotonic()
        if left <= 0:
            raise locked_error(target)
        time.sleep(min(1.0, left))


@overload
def destroy(
    stack: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    confirm: str | None = ...,
    preview_only: Literal[False] = ...,
    drain: bool = ...,
    drain_timeout: float = ...,
    on_drain: DrainCallback | None = ...,
) -> DestroyResult: ...


@overload
def destroy(
    stack: str,
    *,
    options: StackOptions | None = ...,
    message: str | None = ...,
    confirm: str | None = ...,
    preview_only: Literal[True],
    drain: bool = ...,
    drain_timeout: float = ...,
    on_drain: DrainCallback | None = ...,
) -> DestroyPreview: ...


def destroy(
    stack: str,
    *,
    options: StackOptions | None = None,
    message: str | None = None,
    confirm: str | None = None,
    preview_only: bool = False,
    drain: bool = True,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    on_drain: DrainCallback | None = None,
) -> DestroyResult | DestroyPreview:
    """Delete every resource of ``stack`` but the protected ones (``protect``: the Sealed Secrets keys,
    which the result's ``kept`` lists); with ``preview_only``, only show what would be deleted.

    A prod stack (see :func:`prod_environment`) is destroyed only when ``confirm`` repeats its name;
    otherwise ``ConfirmationRequiredError`` is raised before anything runs. A ``confirm`` that names
    another stack is refused for any stack. A preview needs no confirmation.

    A stack that made its cluster is drained first, within ``drain_timeout`` seconds (``_cluster/drain.py``):
    Flux suspended and Argo CD's automated sync off, then its Ingresses and Gateways, LoadBalancer
    Services, what mounts its PersistentVolumeClaims, the claims, and Karpenter's NodePools, NodeClaims
    and EC2NodeClasses deleted and gone, so that the controllers that made AWS resources for them delete
    those. When the drain cannot finish, ``DrainError`` names what is left and nothing is destroyed.
    ``drain=False`` skips it (the result says so). ``on_drain`` is called as each object is suspended,
    deleted and gone. After the destroy, each EKS cluster the stack made is swept, in its account (as
    the stack's AWS provider reaches it: ``aws:profile``, then its ``aws:assumeRoles`` chain): the AWS
    resources still tagged for it are the result's ``sweeps`` (reported, never deleted). A destroy that
    fails is swept too: ``OperationFailedError.sweeps``; not after a signal of ``cancel_on_signals``
    (SIGINT, SIGTERM or SIGHUP), which asked the process to stop, so it does not wait on AWS then. A
    preview shows the drain's plan.

    Example::

        print(destroy("dev", preview_only=True).changes)   # {"delete": 12}
        result = destroy("dev", message="tear down the review environment")
        if not result.clean:
            print([o.arn for sweep in result.sweeps for o in sweep.orphans])
        destroy("prod", confirm="prod")
    """
    target = StackTarget.resolve(stack, options)
    timeout = _checked_timeout(drain_timeout)
    # Only what is protected is left (a destroy's second run): the engine would do nothing and record
    # nothing, so neither is asked; the result says what is kept.
    only_kept = _protected_only(_state_resources(target))
    if preview_only and only_kept is not None:
        return DestroyPreview(stack=stack, changes={}, steps=())
    if preview_only:
        planned = _drain_of(
            target, _cluster_state(target), drain=drain, timeout=timeout, on_drain=None, planned=True
        )

        look = preview_work(stack, "destroy", "--preview-only", KEEP_PROTECTED)
        previewed = run_engine(target, "destroy", look)
        return DestroyPreview(
            stack=previewed.stack, changes=previewed.changes, steps=previewed.steps, drain=planned
        )
    if confirm is not None and confirm != stack:
        # A name given and wrong is a mix-up (the wrong terminal, the wrong variable): never a go-ahead.
        raise ConfirmationRequiredError(
            f"confirm names {confirm!r}, but the stack to destroy is {stack!r}; nothing was destroyed",
            stack=stack,
        )
    prod = prod_environment(target)
    if prod is not None and confirm != stack:
        raise ConfirmationRequiredError(
            f"stack {stack!r} is prod ({prod}): destroying it needs its name repeated, "
            f"confirm={stack!r} in Python or `--confirm {stack}` on the command line",
            stack=stack,
        )

    if only_kept is not None:
        return _nothing_destroyed(target, only_kept)
    deployment = _cluster_state(target)
    drained = _drain_of(target, deployment, drain=drain, timeout=timeout, on_drain=on_drain, planned=False)

    def work(pulumi_stack: auto.Stack, events: EngineEvents) -> DestroyResult:
        streamed = run_command(pulumi_stack, events, "destroy", KEEP_PROTECTED, *message_flags(message))
        kept = _protected(_state_resources(target, pulumi_stack))
        return replace(recorded(DestroyResult, target, pulumi_stack, streamed), kept=kept)

    clusters = _eks_clusters(deployment)
    try:
        result = run_engine(target, "destroy", work)
    except OperationFailedError as exc:
        # A destroy fails where the sweep matters most: AWS refused a delete (the VPC's) for something a
        # controller made. After a signal the process was asked to stop: it does not wait on AWS then.
        if interrupted() is None:
            exc.sweeps = _swept(clusters)
        raise
    return replace(result, drain=drained, sweeps=_swept(clusters))


def _state_resources(
    target: StackTarget, pulumi_stack: auto.Stack | None = None
) -> list[dict[str, Any]] | None:
    """The stack's resources as its state holds them: a file backend's checkpoint says, without an engine
    command; elsewhere the engine exports them, given ``pulumi_stack`` (else ``None``: not known here)."""
    files = target.file_backend()
    found = files.resources() if files is not None else None
    if found is not None or pulumi_stack is None:
        return found
    return [
        r
        for r in (pulumi_stack.export_stack().deployment or {}).get("resources") or []
        if isinstance(r, dict)
    ]


def kept_urns(resources: list[dict[str, Any]]) -> set[str]:
    """What ``pulumi destroy --exclude-protected`` keeps: each protected resource and everything it depends
    on, transitively (its parent, its provider, its dependencies), as the engine's ``getProtectedExcludes``
    (``cmd/pulumi/operations/destroy.go``, Pulumi 3.274) reckons it."""
    by_urn = {str(r.get("urn")): r for r in resources}
    kept: set[str] = set()
    todo: list[object] = [urn for urn, r in by_urn.items() if r.get("protect") is True]
    while todo:
        urn = str(todo.pop())
        if urn in kept or urn not in by_urn:
            continue
        kept.add(urn)
        resource = by_urn[urn]
        provider = str(resource.get("provider") or "")
        # A provider reference is "<urn>::<id>"; a URN holds "::" itself, so the id is cut at the last one.
        todo += [resource.get("parent"), provider.rpartition("::")[0], resource.get("deletedWith")]
        todo += list(resource.get("dependencies") or [])
        for urns in (resource.get("propertyDependencies") or {}).values():
            todo += list(urns or [])
        todo = [u for u in todo if u]
    return kept


def _protected_only(resources: list[dict[str, Any]] | None) -> tuple[str, ...] | None:
    """The protected URNs when they and what they depend on are all the stack holds (the engine then
    destroys nothing and records nothing); ``None`` when there is something to destroy, or it cannot tell."""
    if not resources:
        return None
    if len(kept_urns(resources)) < len(resources):
        return None
    return tuple(str(r.get("urn")) for r in resources if r.get("protect") is True)


def _protected(resources: list[dict[str, Any]] | None) -> tuple[str, ...]:
    """The URNs of the protected resources among ``resources``."""
    return tuple(str(r.get("urn")) for r in resources or [] if r.get("protect") is True)


def _nothing_destroyed(target: StackTarget, kept: tuple[str, ...]) -> DestroyResult:
    """A destroy with only protected resources left: no change, the history as it was (its newest
    version), and what is kept."""
    latest = last_deployment(target)
    version, commit = (latest.version, latest.commit) if latest is not None else (0, None)
    return DestroyResult(stack=target.stack, changes={}, version=version, commit=commit, kept=kept)


def _swept(clusters: tuple[_Made, ...]) -> tuple[SweepResult, ...]:
    """Each cluster's sweep, in its account as the stack's AWS provider reaches it."""
    return tuple(
        SweepResult(c.name, c.region, error=c.unreadable)
        if c.unreadable is not None
        else sweep(
            c.name,
            c.region,
            profile=c.profile,
            roles=c.roles,
            account=c.account,
            sts_region=c.sts_region,
        )
        for c in clusters
    )
