"""The rules on Flux's objects: a GitRepository's interval, a Kustomization's prune and health checks, and
a stack's sync alerting; and whether a stack's Flux install runs image automation (which the deploy key
rule asks)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitops_infra.checks import parse_duration

from ._inputs import at, decoded

__all__ = [
    "ALERT_TYPES",
    "DEFAULT_MAX_INTERVAL",
    "DEFAULT_MIN_INTERVAL",
    "FLUX_CHART",
    "FLUX_IMAGE_AUTOMATION_VALUES",
    "GIT_REPOSITORY_TYPES",
    "HELM_RELEASE_TYPES",
    "KUSTOMIZATION_TYPES",
    "IntervalSettings",
    "flux_image_automation",
    "git_repository_interval_violations",
    "kustomization_health_violations",
    "kustomization_prune_violations",
    "stack_alerting_violations",
]

HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release",)
FLUX_CHART = "flux2"
"""The fluxcd-community chart that installs the Flux controllers (``gitops_infra.components.flux``)."""
FLUX_IMAGE_AUTOMATION_VALUES = ("imageAutomationController", "create")
"""Where the chart's values turn on image-automation-controller, the only controller that pushes to git."""
FLUX_INSTANCE_TYPES = ("kubernetes:fluxcd.controlplane.io/v1:FluxInstance",)
"""The Flux Operator's FluxInstance (``flux.install: operator``): its ``spec.components`` are what runs."""
IMAGE_AUTOMATION_CONTROLLER = "image-automation-controller"
GIT_REPOSITORY_TYPES = ("kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",)
KUSTOMIZATION_TYPES = ("kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",)
ALERT_TYPES = (
    "kubernetes:notification.toolkit.fluxcd.io/v1beta3:Alert",
    "kubernetes:notification.toolkit.fluxcd.io/v1beta2:Alert",
)
"""Flux notification Alerts: v1beta3 is what the platform writes (``flux.notifications``)."""

DEFAULT_MIN_INTERVAL = "1m"
DEFAULT_MAX_INTERVAL = "10m"


@dataclass(frozen=True)
class IntervalSettings:
    """Config of ``flux-git-repository-interval``: the inclusive range a GitRepository interval must be in."""

    min_interval: str = DEFAULT_MIN_INTERVAL
    max_interval: str = DEFAULT_MAX_INTERVAL

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> IntervalSettings:
        """Settings from a policy's config (``minInterval``, ``maxInterval``), with defaults."""
        return cls(
            min_interval=str(config.get("minInterval") or DEFAULT_MIN_INTERVAL),
            max_interval=str(config.get("maxInterval") or DEFAULT_MAX_INTERVAL),
        )


def flux_image_automation(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> bool:
    """True when a Flux install among ``resources`` (``(type, props)`` pairs) runs image automation.

    A Flux install is a Helm release of the ``flux2`` chart; image automation is on unless its values set
    ``imageAutomationController.create`` to false: the chart's own default is true (the platform always
    sets it, but a release written elsewhere may not). Values may arrive JSON-encoded, as object-valued
    inputs sometimes do; values that cannot be read count as the chart's defaults. Or it is a Flux
    Operator ``FluxInstance``, whose ``spec.components`` name image-automation-controller (the operator's
    default components leave it out).
    """
    for resource_type, props in resources:
        if resource_type in FLUX_INSTANCE_TYPES:
            spec = decoded(props.get("spec"))
            components = spec.get("components") if isinstance(spec, Mapping) else None
            if isinstance(components, list) and IMAGE_AUTOMATION_CONTROLLER in components:
                return True
            continue
        if resource_type not in HELM_RELEASE_TYPES or props.get("chart") != FLUX_CHART:
            continue
        values = decoded(props.get("values"))
        create = at(values, *FLUX_IMAGE_AUTOMATION_VALUES) if isinstance(values, Mapping) else None
        if create is not False:
            return True
    return False


def git_repository_interval_violations(
    props: Mapping[str, Any],
    settings: IntervalSettings = IntervalSettings(),
) -> list[str]:
    """A Flux GitRepository's ``spec.interval`` must be within ``[min_interval, max_interval]``.

    Shorter intervals hammer the git host; longer ones make drift from git go unnoticed for too long.
    """
    low, high = parse_duration(settings.min_interval), parse_duration(settings.max_interval)
    interval = at(props, "spec", "interval")
    if interval is None:
        return ["this GitRepository has no spec.interval"]
    try:
        value = parse_duration(interval)
    except ValueError as exc:
        return [f"spec.interval: {exc}"]
    if low <= value <= high:
        return []
    return [
        f"spec.interval {interval!r} is outside {settings.min_interval}..{settings.max_interval}; "
        "Flux would poll the git host too often or notice changes too late"
    ]


def kustomization_prune_violations(props: Mapping[str, Any]) -> list[str]:
    """A Flux Kustomization sets ``spec.prune: true``.

    Without prune, Flux never deletes what it applied: an object removed from git stays on the cluster.
    """
    if at(props, "spec", "prune") is True:
        return []
    return [
        "this Kustomization does not set spec.prune to true, so objects removed from git stay on the "
        "cluster and the cluster drifts from the repository; set spec.prune: true"
    ]


def kustomization_health_violations(props: Mapping[str, Any]) -> list[str]:
    """A Flux Kustomization has ``spec.healthChecks`` (non-empty) or sets ``spec.wait: true``.

    Without either, Flux reports the Kustomization Ready as soon as its objects are applied.
    """
    if at(props, "spec", "wait") is True:
        return []
    checks = at(props, "spec", "healthChecks")
    if isinstance(checks, Sequence) and not isinstance(checks, str) and len(checks) > 0:
        return []
    return [
        "this Kustomization has no spec.healthChecks and does not set spec.wait, so Flux reports it "
        "Ready as soon as its objects are applied; if its path deploys workloads, list them in "
        "spec.healthChecks or set spec.wait: true so Ready means they are running"
    ]


def stack_alerting_violations(
    resources: Iterable[tuple[str, str, Mapping[str, Any]]],
) -> list[tuple[str, str]]:
    """``flux-sync-alerting`` over a whole stack: a stack that installs Flux has a notification Alert.

    ``resources`` are ``(type, urn, props)`` triples. A stack installs Flux when it has a Helm release of
    the ``flux2`` chart or a Flux GitRepository or Kustomization (it bootstraps a sync). The one
    violation is reported on the first Kustomization, else the flux2 release, else the GitRepository.
    """
    kustomizations: list[str] = []
    releases: list[str] = []
    repositories: list[str] = []
    for resource_type, urn, props in resources:
        if resource_type in ALERT_TYPES:
            return []
        if resource_type in KUSTOMIZATION_TYPES:
            kustomizations.append(urn)
        elif resource_type in GIT_REPOSITORY_TYPES:
            repositories.append(urn)
        elif resource_type in HELM_RELEASE_TYPES and props.get("chart") == FLUX_CHART:
            releases.append(urn)
    flux = [*kustomizations, *releases, *repositories]
    if not flux:
        return []
    return [
        (
            flux[0],
            "this stack installs Flux but has no notification Alert, so sync failures (a broken "
            "manifest, an unreachable repository) go unnoticed; set flux.notifications in the stack "
            "config to send them to a chat or webhook",
        )
    ]
