"""A stack's GitOps engine, as its state holds it, against the one its config asks for.

A stack that runs Flux and is updated with ``gitops.engine: argocd`` (or the reverse) would lose its
engine in the same update that brings the other: Pulumi creates Argo CD's root first and deletes Flux's
Kustomization last, and that delete has kustomize-controller prune everything Flux applied
(``WaitForTermination``) while Argo CD applies it again. What the fleet runs would go down in the
middle of the update. So ``up`` (and a rollback or a promotion, which update too) refuses that before
the engine starts, naming ``gitops.engine``; docs/argocd.md says how a stack moves.

The state is read straight from a file backend, no secret decrypted; on another backend the check
is not made. Nor is it for a team's own program, which composes ``FluxBootstrap`` or ``ArgoCdBootstrap``
itself and so sets no ``gitops-infra:`` config: its code picks the engine, not ``gitops.engine``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...defaults import GitOpsEngine
from ...errors import ConfigError
from .target import StackTarget

__all__ = ["ENGINE_TYPES", "engine_switch", "engine_switch_problem", "refuse_engine_switch"]

ENGINE_TYPES = {
    GitOpsEngine.FLUX: "gitops-infra:index:FluxBootstrap",
    GitOpsEngine.ARGOCD: "gitops-infra:index:ArgoCdBootstrap",
}
"""The component each engine's state holds."""
PROJECT = "gitops-infra"
"""The config namespace (``gitops_infra.config.PROJECT``: the automation layer imports no config)."""
_NAMES = {GitOpsEngine.FLUX: "Flux", GitOpsEngine.ARGOCD: "Argo CD"}


def _wanted(target: StackTarget) -> GitOpsEngine | None:
    """The engine the stack's files ask for; ``None`` when they cannot say (config validation will), or
    when they configure no ``gitops-infra:`` key at all: then the program is not ours but a team's own,
    which composes ``FluxBootstrap`` or ``ArgoCdBootstrap`` itself, whichever its code says."""
    settings = target.project.read_stack_settings(target.stack_name)
    if not any(key.startswith(f"{PROJECT}:") for key in settings.config):
        return None
    values = settings.values(f"{PROJECT}:gitops")
    if not values:
        return GitOpsEngine.FLUX
    value = values[0].value
    engine = value.get("engine", GitOpsEngine.FLUX.value) if isinstance(value, Mapping) else None
    return next((known for known in GitOpsEngine if known.value == engine), None)


def engine_switch(target: StackTarget) -> tuple[GitOpsEngine, GitOpsEngine] | None:
    """The engine ``target``'s state runs and the other one its config asks for; ``None`` when they
    agree, or either cannot be told (no state yet, another backend, a config the program will refuse)."""
    files = target.file_backend()
    types = files.resource_types() if files is not None else None
    if not types:
        return None
    running = [engine for engine, type_ in ENGINE_TYPES.items() if type_ in types]
    wanted = _wanted(target)
    if len(running) != 1 or wanted is None or wanted in running:
        return None
    return running[0], wanted


def engine_switch_problem(target: StackTarget) -> str | None:
    """Why an update of ``target`` must not run now, or ``None``: its state runs one engine, and its
    config asks for the other."""
    switch = engine_switch(target)
    if switch is None:
        return None
    running, wanted = switch
    old, new = _NAMES[running], _NAMES[wanted]
    way = (
        f"or hand the fleet over: gitops-infra switch-engine {target.stack}"
        if running is GitOpsEngine.FLUX
        else f"a move from {old} to {new} is not made by this version"
    )
    return (
        f"{PROJECT}:gitops.engine: {wanted.value}, and stack {target.stack!r} runs {old}: one update "
        f"would delete {old}'s sync while {new} takes over, and {old} would take down what it applied "
        f"first. Set gitops.engine back to {running.value}; {way} (docs/argocd.md, 'Moving a stack "
        "between engines')"
    )


def refuse_engine_switch(target: StackTarget) -> None:
    """Raise ``ConfigError`` with :func:`engine_switch_problem`'s reason, if there is one."""
    problem = engine_switch_problem(target)
    if problem is not None:
        raise ConfigError([problem], stack=target.stack)
