"""``gitops-infra:flux``, optional: the controllers to install, how the fleet repository is synced, SOPS,
health checks and notifications.

Example::

    flux = FluxSpec.model_validate({"interval": "5m", "sops": True})
    assert flux.timeout == "5m" and not flux.image_automation
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gitops_infra import checks, defaults
from gitops_infra.config._fields import ConfigModel, DnsLabel, Duration, gate
from gitops_infra.config.receiver import ReceiverSpec

__all__ = [
    "TOKEN_PROVIDER_TYPES",
    "FluxSpec",
    "HealthCheckSpec",
    "NotificationsSpec",
    "TolerationSpec",
]


_INSTALL_ONLY = ("version", "network_policy", "tolerations", "node_selector")
"""FluxSpec fields that configure the chart this stack installs: meaningless with ``install: external``."""


class TolerationSpec(ConfigModel):
    """A toleration added to every Flux controller and the chart's pre-install check."""

    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None

    @model_validator(mode="after")
    def _as_kubernetes_validates_it(self) -> TolerationSpec:
        problems = checks.toleration_problems(self.key, self.operator, self.value, self.effect)
        if problems:
            raise ValueError("; ".join(f"{field} {message}" for field, message in problems))
        return self


class HealthCheckSpec(ConfigModel):
    """An object the Kustomization waits for before it reports ready."""

    api_version: Annotated[str, Field(min_length=1)]
    kind: Annotated[str, Field(min_length=1)]
    name: DnsLabel
    namespace: DnsLabel


class NotificationsSpec(ConfigModel):
    """An Alert on sync failure, sent through a notification Provider.

    Every supported provider type posts to an address. A webhook URL is a credential, so it comes from
    the secret ``gitops-infra:notificationWebhook``, which the platform writes into the Secret
    ``secretName`` (key ``address``). A non-secret ``address`` (a GitHub repository URL) may be set here
    instead. ``github`` and ``generic-hmac`` also need a ``token``, which this stack does not manage:
    name your own Secret (``address`` here, ``token`` there) with ``secretName``.
    """

    provider_type: Literal["slack", "msteams", "discord", "googlechat", "github", "generic", "generic-hmac"]
    channel: str | None = None
    address: str | None = None
    secret_name: DnsLabel | None = None
    event_severity: Literal["info", "error"] = "error"

    @property
    def needs_token(self) -> bool:
        """True for the types that authenticate with a ``token`` from the Secret."""
        return self.provider_type in TOKEN_PROVIDER_TYPES


TOKEN_PROVIDER_TYPES = ("github", "generic-hmac")


class FluxSpec(ConfigModel):
    """Flux: the controllers to install and how the fleet repository is synced.

    ``install: external`` means the controllers and CRDs are already on the cluster (the Flux Operator,
    an EKS add-on): the platform then only labels the namespace (a patch), and makes the secrets, the sync
    objects and the notifications. ``components`` still says which controllers run there. The sync
    objects are named ``flux-system``, as a Flux Operator ``FluxInstance`` with ``.spec.sync`` names its
    own: leave that unset, or the two fight over one GitRepository and one Kustomization.

    ``install: operator`` installs the Flux Operator (its ``flux-operator`` chart, unless
    ``operatorInstall: external`` says the operator already runs) and a ``FluxInstance`` the stack owns,
    with no ``.spec.sync``: the stack makes the sync objects as in the other modes. ``version`` is then
    the Flux release (default ``defaults.FLUX_OPERATOR_FLUX_VERSION``), one the operator bundles; a new
    ``version`` is how Flux is upgraded.
    """

    install: defaults.FluxInstall = defaults.FluxInstall.HELM
    version: Annotated[str, gate(checks.chart_version_problem)] = defaults.FLUX_CHART_VERSION
    """The flux2 chart's version; with ``install: operator``, the Flux release the FluxInstance runs."""
    operator_install: Literal["helm", "external"] = "helm"
    """With ``install: operator``: ``helm`` installs the operator's chart; ``external``, the operator runs
    already (installed outside this stack, as the local cluster runs it), and only the FluxInstance is
    made."""
    namespace: DnsLabel = defaults.FLUX_NAMESPACE
    components: Annotated[tuple[defaults.FluxComponent, ...], gate(checks.flux_components_problem)] = (
        defaults.DEFAULT_COMPONENTS
    )
    components_extra: tuple[defaults.FluxComponent, ...] = ()
    network_policy: StrictBool = True
    tolerations: tuple[TolerationSpec, ...] = ()
    node_selector: Mapping[str, str] = Field(default_factory=dict)
    git_interval: Duration = defaults.DEFAULT_GIT_INTERVAL
    interval: Duration = defaults.DEFAULT_INTERVAL
    retry_interval: Duration = defaults.DEFAULT_RETRY_INTERVAL
    timeout: Duration = defaults.DEFAULT_TIMEOUT
    ready_timeout: Annotated[str, gate(checks.ready_timeout_problem)] | None = None
    """How long ``up`` waits for the GitRepository and Kustomization to be Ready; ``0s`` does not wait.

    Longer than ``timeout``, which Flux may spend on health checks; unset, ``timeout`` plus a margin."""
    sops: StrictBool = False
    substitute: StrictBool = True
    """Hand the environment contract to the root Kustomization's post-build substitution (``${baseDomain}``
    in fleet manifests). Flux then substitutes every ``${VAR}`` under the sync path: with ``false``,
    nothing there is (for a fleet whose manifests hold ``${...}`` of their own throughout)."""
    health_checks: tuple[HealthCheckSpec, ...] = ()
    notifications: NotificationsSpec | None = None
    receiver: ReceiverSpec | None = None
    """Instant sync: a webhook ``Receiver`` that GitHub's push events reach (see ``ReceiverSpec``)."""

    @model_validator(mode="before")
    @classmethod
    def _operator_version_default(cls, data: object) -> object:
        # The default version depends on the mode: the chart's with helm, Flux's own with the operator.
        operator = isinstance(data, dict) and data.get("install") == defaults.FluxInstall.OPERATOR
        if operator and isinstance(data, dict) and "version" not in data:
            return {**data, "version": defaults.FLUX_OPERATOR_FLUX_VERSION}
        return data

    @field_validator("version")
    @classmethod
    def _bundled_by_the_operator(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("install") is defaults.FluxInstall.OPERATOR:
            problem = checks.flux_operator_version_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("ready_timeout")
    @classmethod
    def _outlasts_flux(cls, value: str | None, info: ValidationInfo) -> str | None:
        timeout = info.data.get("timeout")  # absent when it failed its own check
        if value is not None and timeout is not None:
            problem = checks.ready_timeout_after_timeout_problem(value, timeout)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("components_extra")
    @classmethod
    def _no_repeats(
        cls, value: tuple[defaults.FluxComponent, ...], info: ValidationInfo
    ) -> tuple[defaults.FluxComponent, ...]:
        problem = checks.flux_components_extra_problem(value, info.data.get("components", ()))
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("notifications", "receiver")
    @classmethod
    def _needs_notification_controller(
        cls, value: NotificationsSpec | ReceiverSpec | None, info: ValidationInfo
    ) -> NotificationsSpec | ReceiverSpec | None:
        installed = (*info.data.get("components", ()), *info.data.get("components_extra", ()))
        needed = isinstance(value, NotificationsSpec) or (isinstance(value, ReceiverSpec) and value.enabled)
        problem = checks.notifications_problem(installed) if needed else None
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _nothing_to_install_externally(self) -> FluxSpec:
        unused = sorted(to_camel(key) for key in self.model_fields_set & set(_INSTALL_ONLY))
        if self.install is defaults.FluxInstall.EXTERNAL and unused:
            raise ValueError(
                f"{', '.join(unused)}: not used with install: external (the controllers are installed "
                "outside this stack)"
            )
        if self.install is not defaults.FluxInstall.OPERATOR and "operator_install" in self.model_fields_set:
            raise ValueError("operatorInstall: only used with install: operator")
        return self

    @property
    def receiver_enabled(self) -> bool:
        """True when the stack makes a webhook ``Receiver``."""
        return self.receiver is not None and self.receiver.enabled

    @property
    def receiver_webhook(self) -> bool:
        """True when the stack registers the Receiver's webhook on GitHub."""
        return self.receiver is not None and self.receiver.enabled and self.receiver.webhook

    @property
    def image_automation(self) -> bool:
        """True when Flux writes to git (image automation), so its deploy key must be read-write."""
        return defaults.image_automation_enabled((*self.components, *self.components_extra))
