"""Promotion: a change proven on one stack (dev) is what reaches the next (prod), and nothing else.

``promote`` deploys to ``target`` the commit of ``source``'s last successful update, checked out in a
temporary worktree the way a rollback is. ``up(..., require_promoted_from=source)`` is the guard a prod
pipeline sets on its own ``up`` (:func:`require_promoted` checks it): the commit about to be applied must
have a successful update on the source stack.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from ..checks import format_duration
from ..errors import ArgumentError, PromotionError
from ._cluster.gitops import read_gitops
from ._engine.runner import run_engine
from ._engine.work import up_work
from ._state.git import head_commit, repo_root, uncommitted
from ._state.history import deployments
from ._state.target import StackTarget
from .drift import detect_drift
from .options import StackOptions
from .results.deployments import (
    Deployment,
    DeploymentKind,
    DeploymentResult,
    PromotionEvidence,
    PromotionResult,
)
from .results.drift import Layer
from .results.gitops import GitOpsReport
from .rollback import checked_out

__all__ = ["promote", "require_promoted", "require_promoted_on"]


def require_promoted(stack: str, source: str, *, options: StackOptions | None = None) -> str:
    """Check that the work tree's commit is what ``source`` runs now; return that commit.

    The rule is ``promote``'s: ``source``'s newest deployment is a successful update of this commit, from
    a clean work tree, and nothing came after it (a rollback away from it, a destroy). ``PromotionError``,
    naming the commit and the stack, otherwise; also for a work tree the engine would record as dirty
    (uncommitted changes, untracked files), since what would run is then not the commit ``source`` proved,
    and for ``source`` naming ``stack`` itself, which proves nothing.
    """
    return require_promoted_on(StackTarget.resolve(stack, options), source, options)


def require_promoted_on(target: StackTarget, source: str, options: StackOptions | None) -> str:
    """:func:`require_promoted` for a target already resolved (``up`` has one)."""
    stack = target.stack
    from_target = StackTarget.resolve(source, options)
    _refuse_one_stack(
        from_target, target, f"--require-promoted-from {source!r} on {stack!r}", "a stack cannot prove itself"
    )
    repo = repo_root(target.project.path)
    head = head_commit(repo)
    # "Dirty" is the engine's own git.dirty (untracked files count), so that nothing the engine would
    # record as dirty on the target passes as the commit the source proved.
    if dirty := uncommitted(target.project.path):
        more = f" and {len(dirty) - 3} more" if len(dirty) > 3 else ""
        shown = ", ".join(repr(path) for path in dirty[:3]) + more
        raise PromotionError(
            f"the work tree at {head[:12]} has uncommitted changes or untracked files ({shown}; files marked "
            f"--skip-worktree or --assume-unchanged count too), so `up {stack}` would not apply a commit "
            f"stack {source!r} ran; commit them (or git-ignore or remove them) and deploy that commit to "
            f"{source!r} first",
            stack=source,
            commit=head,
        )
    found = deployments(from_target)
    newest = found[0] if found else None
    if newest is None or newest.commit != head or not _succeeded_update(newest):
        ran = next((d for d in found if _succeeded_update(d) and d.commit == head and not d.dirty), None)
        if ran is None or newest is None:
            raise PromotionError(
                f"commit {head[:12]} has no successful update on stack {source!r}; deploy it there first "
                f"(`gitops-infra up {source}`), then to {stack!r}",
                stack=source,
                commit=head,
            )
        raise PromotionError(
            f"stack {source!r} ran commit {head[:12]} (version {ran.version}) but has moved on since: its "
            f"newest deployment is version {newest.version} ({_what(newest)}); promote only what the source "
            "runs now",
            stack=source,
            commit=head,
        )
    _refuse_dirty(source, newest)
    return head


def _succeeded_update(deployment: Deployment) -> bool:
    return deployment.kind is DeploymentKind.UPDATE and deployment.result is DeploymentResult.SUCCEEDED


def _what(deployment: Deployment) -> str:
    of = f" of {deployment.commit[:12]}" if deployment.commit else ""
    return f"{deployment.kind}{of}, {deployment.result}"


def _refuse_dirty(source: str, deployment: Deployment) -> None:
    """An update from a work tree with uncommitted changes ran code no commit holds: it proves nothing."""
    if deployment.dirty:
        sha = (deployment.commit or "")[:12]
        raise PromotionError(
            f"stack {source!r}'s last update (version {deployment.version}) ran from a work tree with "
            f"uncommitted changes (the engine recorded git.dirty), so it proves nothing about commit {sha}: "
            f"commit the changes, or discard them, and run `gitops-infra up {source}` from a clean tree",
            stack=source,
            commit=deployment.commit,
        )


def _refuse_one_stack(source: StackTarget, target: StackTarget, what: str, why: str) -> None:
    # `dev` and `acme/dev` are one stack of one project, unless two different organisations are named.
    source_name, target_name = source.stack_name, target.stack_name
    if source_name.name == target_name.name and len({source_name.org, target_name.org} - {None}) <= 1:
        raise PromotionError(
            f"{what}: that is one stack; {why}",
            stack=source.stack,
            commit=None,
        )


def _promoted(target: StackTarget) -> Deployment:
    source = target.stack
    found = deployments(target)
    if not found:
        raise PromotionError(f"stack {source!r} has no deployment to promote", stack=source, commit=None)
    newest = found[0]
    if not _succeeded_update(newest):
        raise PromotionError(
            f"the newest deployment of stack {source!r} is version {newest.version} ({newest.kind}, "
            f"{newest.result}), not a successful update: promote only what the source runs now",
            stack=source,
            commit=newest.commit,
        )
    if not newest.commit:
        raise PromotionError(
            f"stack {source!r}'s last update (version {newest.version}) recorded no git commit; it ran "
            "outside a git repository, so there is nothing to check out",
            stack=source,
            commit=None,
        )
    _refuse_dirty(source, newest)
    return newest


def _evidence(
    from_target: StackTarget,
    options: StackOptions | None,
    deployment: Deployment,
    *,
    require_no_drift: bool,
    require_healthy: bool,
    max_age: timedelta | None,
) -> PromotionEvidence:
    """Check the source as asked, cheapest first; ``PromotionError`` naming the first check that fails."""
    assert deployment.commit is not None  # _promoted guarantees it
    source = from_target.stack
    sha = deployment.commit
    ended = deployment.end_time or deployment.start_time
    # The engine's history gives UTC without a zone (as `pulumi stack history` shows it).
    ended = ended if ended.tzinfo is not None else ended.replace(tzinfo=UTC)
    age = (datetime.now(UTC) - ended).total_seconds()
    evidence = PromotionEvidence(
        source=source,
        commit=sha,
        version=deployment.version,
        updated_at=ended,
        age_seconds=age,
        max_age_seconds=max_age.total_seconds() if max_age is not None else None,
    )

    def refuse(why: str) -> PromotionError:
        error = PromotionError(
            f"promotion of {sha[:12]} from stack {source!r} refused: {why}", stack=source, commit=sha
        )
        error.evidence = evidence
        return error

    if max_age is not None and age > max_age.total_seconds():
        raise refuse(
            f"--max-age {format_duration(max_age)}: its last successful update (version "
            f"{deployment.version}) ended {format_duration(timedelta(seconds=age))} ago, at "
            f"{ended.isoformat(timespec='seconds')}"
        )
    if require_no_drift:
        drifted = detect_drift(source, options=options, layers=(Layer.IAC,)).has_drift
        evidence = replace(evidence, drift=drifted)
        if drifted:
            raise refuse("--require-no-drift: it has drifted from its last update; refresh or fix it first")
    if require_healthy:
        layer = read_gitops(from_target)
        evidence = replace(evidence, gitops=layer)
        if layer is None:
            raise refuse(
                "--require-healthy: it bootstraps no Flux (no GitRepository or Kustomization in its state)"
            )
        if not layer.healthy:
            raise refuse(_unhealthy(layer))
    return evidence


def _unhealthy(layer: GitOpsReport) -> str:
    """Why ``--require-healthy`` refuses: each problem in Flux's words, on one line.

    Flux's messages quote what came from git (a kustomize build error names files anyone who can push
    wrote), and the error is printed as it is, newlines kept: one in a message would forge a line.
    """
    said = "--require-healthy: " + "; ".join(" ".join(problem.split()) for problem in layer.problems)
    if layer.tenants:  # a tenant counts as the platform's own sync does: one not Ready refuses
        said += f" ({layer.healthy_tenants} of {len(layer.tenants)} tenants healthy)"
    return said


def promote(
    source: str,
    target: str,
    *,
    options: StackOptions | None = None,
    require_no_drift: bool = False,
    require_healthy: bool = False,
    max_age: timedelta | None = None,
    message: str | None = None,
) -> PromotionResult:
    """Deploy to ``target`` the commit of ``source``'s last successful update.

    Refused (``PromotionError``, naming the check and what it found) when that update is not
    ``source``'s newest deployment or failed, and on request:

    - ``max_age``: when it ended longer ago than that (PKO's ``succeededWithinDuration``);
    - ``require_no_drift``: when ``source`` has drifted from it (the IaC layer);
    - ``require_healthy``: unless ``source``'s GitOps layer is healthy now (Flux's sources and
      Kustomizations Ready, at the source's revision, none suspended), each tenant's own sync
      included; the evidence counts the tenants healthy (``GitOpsReport.healthy_tenants``).

    The update runs in a temporary worktree of that commit, with its program and ``Pulumi.<target>.yaml``;
    the result's ``commit`` is that commit, and its ``evidence`` what was checked. A refusal's error
    carries the evidence too (``PromotionError.evidence``).

    Example::

        result = promote("dev", "prod", require_healthy=True, max_age=timedelta(hours=24))
        print(result.commit, result.evidence.age_seconds, result.changes)
    """
    if max_age is not None and max_age <= timedelta(0):
        raise ArgumentError(f"max_age must be positive, not {max_age}")
    resolved, from_target = StackTarget.resolve(target, options), StackTarget.resolve(source, options)
    _refuse_one_stack(
        from_target,
        resolved,
        f"promote {source!r} to {target!r}",
        "promotion takes a change from one stack to another (to redeploy a commit on one stack, use "
        "rollback)",
    )
    deployment = _promoted(from_target)
    evidence = _evidence(
        from_target,
        options,
        deployment,
        require_no_drift=require_no_drift,
        require_healthy=require_healthy,
        max_age=max_age,
    )
    sha = evidence.commit
    label = f"promote {sha[:12]} from {source} (version {deployment.version})"
    with checked_out(resolved, repo_root(resolved.project.path), sha, f"{source}'s last update") as at_commit:
        result = run_engine(at_commit, "promote", up_work(at_commit, message=message or label))
    return PromotionResult(**vars(result), evidence=evidence)
