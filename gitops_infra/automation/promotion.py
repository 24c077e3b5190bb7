"""Promotion: a change proven on one stack (dev) is what reaches the next (prod), and nothing else.

``promote`` deploys to ``target`` the commit of ``source``'s last successful update, checked out in a
temporary worktree the way a rollback is. ``up(..., require_promoted_from=source)`` is the guard a prod
pipeline sets on its own ``up`` (:func:`require_promoted`): the commit about to be applied must have a
successful update on the source stack.
"""

from __future__ import annotations

from ..errors import PromotionError
from . import engine
from .drift import detect_drift
from .git import repo_root
from .operations import deployments, up_work
from .results import Deployment, UpResult
from .rollback import checked_out
from .stack_target import StackOptions, StackTarget

__all__ = ["promote", "promoted_commit"]


def promoted_commit(source: str, *, options: StackOptions | None = None) -> Deployment:
    """``source``'s newest deployment, if it is a successful update with a commit; else ``PromotionError``."""
    return _promoted(StackTarget.resolve(source, options))


def _promoted(target: StackTarget) -> Deployment:
    source = target.stack
    found = deployments(target)
    if not found:
        raise PromotionError(f"stack {source!r} has no deployment to promote", stack=source, commit=None)
    newest = found[0]
    if newest.kind != "update" or newest.result != "succeeded":
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
    with checked_out(resolved, repo_root(resolved.project), sha, f"{source}'s last update") as at_commit:
        return engine.run(at_commit, "promote", up_work(at_commit, message=message or label))
