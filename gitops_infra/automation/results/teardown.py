"""What a destroy did: the drain of the cluster before it, the engine's deletes, and the sweep after."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .deployments import PreviewResult, RecordedResult

__all__ = ["DestroyPreview", "DestroyResult", "DrainResult", "KubeObject", "Orphan", "SweepResult"]


@dataclass(frozen=True)
class KubeObject:
    """A Kubernetes object the drain before a destroy stopped or deleted, as ``kind namespace/name``
    (``kind name`` when it has no namespace: a PersistentVolume)."""

    kind: str
    namespace: str
    name: str
    finalizers: tuple[str, ...] = ()
    """Its finalizers when it was last read: who holds it back (the AWS controllers, on EKS)."""

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(frozen=True)
class DrainResult:
    """What Flux made that a destroy removed first, so the AWS controllers could delete what it made.

    With ``planned`` it is a preview: what would be suspended and deleted, nothing done.
    """

    suspended: tuple[KubeObject, ...] = ()
    """The Kustomizations and HelmReleases suspended, so nothing is applied again."""
    deleted: tuple[KubeObject, ...] = ()
    """Ingresses and Gateways, LoadBalancer Services, what mounted the claims (a StatefulSet, say), the
    PersistentVolumeClaims and their volumes, then Karpenter's objects: in the order deleted, each one
    gone before the destroy began."""
    skipped: str | None = None
    """Why nothing was drained (the cluster is not the stack's; ``drain=False``), or ``None``."""
    planned: bool = False


@dataclass(frozen=True)
class Orphan:
    """An AWS resource still tagged for the stack's cluster after the stack is gone."""

    arn: str
    type: str
    """The ARN's service and resource type, e.g. ``ec2:volume``, ``elasticloadbalancing:loadbalancer``."""
    tags: Mapping[str, str]
    matched: str
    """The tag it was found by, e.g. ``elbv2.k8s.aws/cluster=dev-eks``."""


@dataclass(frozen=True)
class SweepResult:
    """What the Resource Groups Tagging API still lists for a cluster the stack made, once it is gone."""

    cluster: str
    region: str
    orphans: tuple[Orphan, ...] = ()
    error: str | None = None
    """Why the sweep could not look (no credentials, access denied, a role that cannot be assumed, the
    cluster in another account than the credentials'): then nothing is known."""
    account: str | None = None
    """The AWS account the sweep read, as STS named it; ``None`` when it got no answer that far."""

    @property
    def clean(self) -> bool:
        """True when the sweep looked and found nothing left."""
        return self.error is None and not self.orphans


@dataclass(frozen=True)
class DestroyResult(RecordedResult):
    """A destroy: every resource of the stack deleted but the protected ones (the stack itself and its history
    are kept too)."""

    drain: DrainResult | None = None
    """The drain before it; ``None`` for a stack with no cluster to drain."""
    sweeps: tuple[SweepResult, ...] = ()
    """One per cluster the stack made, read after it was gone."""
    kept: tuple[str, ...] = ()
    """The URNs of the protected resources the destroy left in the stack (Pulumi's ``protect``), such as
    the Sealed Secrets keys, which a rebuilt cluster needs to open what was sealed before it."""

    @property
    def clean(self) -> bool:
        """True when every sweep looked and found nothing left behind."""
        return all(sweep.clean for sweep in self.sweeps)


@dataclass(frozen=True)
class DestroyPreview(PreviewResult):
    """What a destroy would do: the drain's plan, then the engine's deletes."""

    drain: DrainResult | None = None
