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
    """Check that the work tree's commit is what ``source`` runs now; return that commit.

    The rule is ``promote``'s: ``source``'s newest deployment is a successful update of this commit, from
    a clean work tree, and nothing came after it (a rollback away from it, a destroy). ``PromotionError``,
    naming the commit and the stack, otherwise; also for a work tree whose tracked files have uncommitted
    changes, since what would run is then not the commit ``source`` proved, and for ``source`` naming
    ``stack`` itself, which proves nothing.
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
    if tracked_changes(repo):
        raise PromotionError(
            f"the work tree at {head[:12]} has uncommitted changes (or files marked --skip-worktree or "
            f"--assume-unchanged, which git status does not look at), so `up {stack}` would not apply a "
            f"commit stack {source!r} ran; commit them and deploy that commit to {source!r} first",
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
    _refuse_one_stack(
        from_target,
        resolved,
        f"promote {source!r} to {target!r}",
        "promotion takes a change from one stack to another (to redeploy a commit on one stack, use "
        "rollback)",
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
