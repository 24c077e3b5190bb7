"""The GitOps layer (Flux's sources and syncs, each tenant's sync by name, Argo CD's Applications, and
their problems), as ``drift``, ``status`` and a promotion's evidence show it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .escape import one_line
from .markdown import Plain, code, table, word

if TYPE_CHECKING:
    from rich.console import Console

    from ... import automation

__all__ = ["gitops_markdown", "gitops_outcome", "print_gitops", "tenants_outcome"]


def gitops_outcome(layer: automation.GitOpsReport | None, *, checked: bool = True) -> str:
    """The GitOps layer in a few words: ``healthy``, ``N problem(s)``, ``unreachable``, ``no engine``."""
    if not checked:
        return "gitops not checked"
    if layer is None:
        return "gitops: no GitOps engine in this stack"
    if layer.error is not None:
        return "gitops: the cluster could not be read"
    tenants = f"; {tenants_outcome(layer)}" if layer.tenants else ""
    if layer.healthy:
        return f"gitops: healthy{tenants}"
    return f"gitops: {len(layer.problems)} problem(s){tenants}"


def tenants_outcome(layer: automation.GitOpsReport) -> str:
    """How many of the stack's tenants are healthy: ``tenants: 1 of 2 healthy``."""
    return f"tenants: {layer.healthy_tenants} of {len(layer.tenants)} healthy"


def _tenant_line(tenant: automation.TenantSync) -> str:
    """A tenant by name: its home namespace, and what it applied or why it is not healthy."""
    if tenant.healthy:
        state = f"healthy, applied {tenant.sync.applied_revision}"
    else:
        state = f"{len(tenant.problems)} problem(s)"
    return f"tenant {tenant.name} ({tenant.namespace}): {state}"


def print_gitops(
    out: Console, layer: automation.GitOpsReport | None, *, checked: bool = True, indent: str = ""
) -> None:
    if layer is None:  # a stack without Flux has no GitOps section
        if not checked:
            out.print(indent + gitops_outcome(layer, checked=checked))
        return
    out.print(indent + gitops_outcome(layer))
    if layer.healthy:
        for source in layer.sources:
            out.print(f"{indent}  " + one_line(f"{source.shown} at {source.revision}"))
        for sync in layer.syncs:
            out.print(f"{indent}  " + one_line(f"{sync.shown} applied {sync.applied_revision}"))
        for application in layer.applications:
            out.print(
                f"{indent}  " + one_line(f"{application.shown} Synced and Healthy at {application.revision}")
            )
    if layer.error is None:
        for tenant in layer.tenants:
            out.print(f"{indent}  " + one_line(_tenant_line(tenant)))
    for problem in layer.problems:
        # One line each: Flux's messages quote files from git, and a newline in one would forge a line.
        out.print(f"{indent}  {one_line(problem)}")


def _flux_rows(layer: automation.GitOpsReport) -> list[tuple[Any, ...]]:
    """A row per Flux object: a source with its revision, a sync with the one it applied, others bare."""
    revisions: list[tuple[automation.FluxStatus, str | None]] = [
        *((s, s.revision) for s in layer.sources),
        *((s, s.applied_revision) for s in layer.syncs),
        *((s, None) for s in layer.failing),
    ]
    return [
        (
            word(s.kind),  # the cluster's word, or a report's: any text at all
            f"{s.namespace}/{s.name}",
            Plain({True: "yes", False: "no", None: "not yet"}[s.ready]),
            Plain("yes" if s.suspended else "no"),
            revision if revision else Plain(""),
        )
        for s, revision in revisions
    ]


def gitops_markdown(layer: automation.GitOpsReport) -> list[str]:
    """The GitOps layer as Markdown lines: its outcome, each problem in Flux's words, and the objects."""
    lines = [f"#### GitOps layer: {gitops_outcome(layer).removeprefix('gitops: ')}", ""]
    if layer.problems:
        lines += [*(f"- {code(problem)}" for problem in layer.problems), ""]
    flux = layer.sources or layer.syncs or layer.failing or layer.tenants or not layer.applications
    if layer.error is None and flux:
        lines += table(["kind", "object", "ready", "suspended", "revision"], _flux_rows(layer))
    if layer.error is None and layer.applications:
        lines += table(["application", "sync", "health", "revision", "last sync"], _application_rows(layer))
    if layer.error is None and layer.tenants:
        lines += [
            "",
            *table(["tenant", "namespaces", "kustomization", "ready", "applied"], _tenant_rows(layer)),
        ]
    return lines


def _application_rows(layer: automation.GitOpsReport) -> list[tuple[Any, ...]]:
    """A row per Argo CD Application: its sync and health, the revision, and its last sync operation."""
    return [
        (
            f"{a.namespace}/{a.name}",
            a.sync or Plain("not found"),
            a.health or Plain(""),
            a.revision or Plain(""),
            a.operation or Plain(""),
        )
        for a in layer.applications
    ]


def _tenant_rows(layer: automation.GitOpsReport) -> list[tuple[Any, ...]]:
    """A row per tenant, by name: its namespaces, its Kustomization, whether it is Ready, what it applied."""
    return [
        (
            t.name,
            ", ".join(t.namespaces),
            f"{t.sync.namespace}/{t.sync.name}",
            Plain({True: "yes", False: "no", None: "not yet"}[t.sync.ready]),
            t.sync.applied_revision if t.sync.applied_revision else Plain(""),
        )
        for t in layer.tenants
    ]
