"""Promotion: a change proven on one stack (dev) is what reaches the next (prod), and nothing else.

``promote`` deploys to ``target`` the commit of ``source``'s last successful update, checked out in a
temporary worktree the way a rollback is. ``up(..., require_promoted_from=source)`` is the guard a prod
pipeline sets on its own ``up`` (:func:`require_promoted` checks it): the commit about to be applied must
have a successful update on the source stack.
"""

from __future__ import annotations

from ..errors import PromotionError
from ._engine import run_engine
from ._git import head_commit, repo_root, tracked_changes
from ._target import StackTarget
from ._work import deployments, up_work
from .drift import detect_drift
from .options import StackOptions
from .results import Deployment, DeploymentKind, DeploymentResult, UpResult
from .rollback import checked_out

__all__ = ["promote", "require_promoted", "require_promoted_on"]


def require_promoted(stack: str, source: str, *, options: StackOptions | None = None) -> str:
    """Check that the work tree's commit has a successful update on ``source``; return that commit.

    ``PromotionError``, naming the commit and the stack, otherwise; and for a work tree whose tracked
    files have uncommitted changes, since what would run is then not the commit ``source`` proved.
    """
    return require_promoted_on(StackTarget.resolve(stack, options), source, options)


def require_promoted_on(target: StackTarget, source: str, options: StackOptions | None) -> str:
    """:func:`require_promoted` for a target already resolved (``up`` has one)."""
    stack = target.stack
    repo = repo_root(target.project.path)
    head = head_commit(repo)
    if tracked_changes(repo):
        raise PromotionError(
            f"the work tree at {head[:12]} has uncommitted changes, so `up {stack}` would not apply a commit "
            f"stack {source!r} ran; commit them and deploy that commit to {source!r} first",
            stack=source,
            commit=head,
        )
    proven = any(
        d.kind is DeploymentKind.UPDATE and d.result is DeploymentResult.SUCCEEDED and d.commit == head
        for d in deployments(StackTarget.resolve(source, options))
    )
    if not proven:
        raise PromotionError(
            f"commit {head[:12]} has no successful update on stack {source!r}; deploy it there first "
            f"(`gitops-infra up {source}`), then to {stack!r}",
            stack=source,
            commit=head,
        )
    return head


def _promoted(target: StackTarget) -> Deployment:
    source = target.stack
    found = deployments(target)
    if not found:
        raise PromotionError(f"stack {source!r} has no deployment to promote", stack=source, commit=None)
    newest = found[0]
    if newest.kind is not DeploymentKind.UPDATE or newest.result is not DeploymentResult.SUCCEEDED:
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
    return newest


def promote(
    source: str,
    target: str,
    *,
    options: StackOptions | None = None,
    require_no_drift: bool = False,
    message: str | None = None,
) -> UpResult:
    """Deploy to ``target`` the commit of ``source``'s last successful update.

    Refused (``PromotionError``) when that update is not ``source``'s newest deployment or failed, and,
    with ``require_no_drift``, when ``source`` has drifted from it. The update runs in a temporary
    worktree of that commit, with its program and ``Pulumi.<target>.yaml``; the result's ``commit`` is
    that commit.

    Example::

        result = promote("dev", "prod", require_no_drift=True)
        print(result.commit, result.changes)
    """
    resolved, from_target = StackTarget.resolve(target, options), StackTarget.resolve(source, options)
    source_name, target_name = from_target.stack_name, resolved.stack_name
    # `dev` and `acme/dev` are one stack of one project, unless two different organisations are named.
    if source_name.name == target_name.name and len({source_name.org, target_name.org} - {None}) <= 1:
        raise PromotionError(
            f"promote {source!r} to {target!r}: that is one stack; promotion takes a change from one "
            "stack to another (to redeploy a commit on one stack, use rollback)",
            stack=source,
            commit=None,
        )
    deployment = _promoted(from_target)
    assert deployment.commit is not None  # _promoted guarantees it
    if require_no_drift and detect_drift(source, options=options).has_drift:
        raise PromotionError(
            f"stack {source!r} has drifted from its last update; refresh or fix it before promoting "
            f"{deployment.commit[:12]}",
            stack=source,
            commit=deployment.commit,
        )
    sha = deployment.commit
    label = f"promote {sha[:12]} from {source} (version {deployment.version})"
    with checked_out(resolved, repo_root(resolved.project.path), sha, f"{source}'s last update") as at_commit:
        return run_engine(at_commit, "promote", up_work(at_commit, message=message or label))
