"""Moving a stack from one GitOps engine to the other: the old one lets go of the fleet, then one update
brings the new one and removes the old.

An ``up`` with ``gitops.engine`` changed is refused (:mod:`._state.engine_switch`): in one update Flux
would prune what it applied while Argo CD applies it again. :func:`switch_engine` makes the same update
safe. From Flux to Argo CD, it first suspends the stack's root Kustomization and sets its
``deletionPolicy: Orphan`` (:mod:`._cluster.handover`), then runs the update: Argo CD's root applies the
same path over the same objects, and Flux's root is deleted without pruning them. What the fleet runs
stays up throughout. From Argo CD to Flux is not made by this version, and is refused.
"""

from __future__ import annotations

from ..defaults import GitOpsEngine
from ..errors import EngineSwitchError
from ._cluster.handover import release_flux
from ._cluster.kube import decrypted_state
from ._engine.runner import run_engine
from ._engine.work import up_work
from ._state.engine_switch import engine_switch
from ._state.target import StackTarget
from .options import StackOptions
from .results.deployments import UpResult

__all__ = ["switch_engine"]


def switch_engine(stack: str, *, options: StackOptions | None = None, message: str | None = None) -> UpResult:
    """Hand ``stack``'s fleet from the engine its state runs to the one ``gitops.engine`` asks for.

    The fleet path must be one both engines apply: plain manifests (Argo CD's Applications are applied
    by Flux as objects too). A root that applied Flux objects of its own is refused, with nothing changed
    (``EngineSwitchError``). Should the update fail after the release, Flux stays suspended and applies
    nothing: run ``switch_engine`` again.

    Example::

        # Pulumi.dev.yaml: gitops.engine: argocd (and the argocd section), the flux section removed
        result = switch_engine("dev", message="to Argo CD")
        print(result.changes)  # ArgoCdBootstrap's resources created, FluxBootstrap's deleted
    """
    target = StackTarget.resolve(stack, options)
    switch = engine_switch(target)
    if switch is None:
        raise EngineSwitchError(
            f"stack {stack!r}: its state and its gitops.engine name the same engine (or it has no state "
            "yet): nothing to switch; run up",
            stack=stack,
        )
    running, wanted = switch
    if running is not GitOpsEngine.FLUX:
        raise EngineSwitchError(
            f"stack {stack!r} runs Argo CD, and gitops.engine asks for {wanted.value}: a move from Argo CD "
            "to Flux is not made by this version, and nothing was changed; set gitops.engine back to "
            "argocd (docs/argocd.md, 'Moving a stack between engines')",
            stack=stack,
        )
    release_flux(decrypted_state(target), stack=stack, base=target.project.path)
    return run_engine(target, "up", up_work(target, message=message, switching=True))
