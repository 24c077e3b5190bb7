"""``gitops-infra:argocd``, optional: Argo CD, when ``gitops.engine`` is ``argocd``.

Example::

    argocd = ArgoCdSpec.model_validate({"selfHeal": False})
    assert argocd.prune and argocd.retry.limit == 5
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, model_validator
from pydantic.alias_generators import to_camel

from gitops_infra import checks, defaults
from gitops_infra.config._fields import ConfigModel, DnsLabel, Duration, gate

__all__ = ["ArgoCdSpec", "RetrySpec"]

_INSTALL_ONLY = ("version",)
"""ArgoCdSpec fields that configure the chart this stack installs: meaningless with ``install: external``."""


class RetrySpec(ConfigModel):
    """How a failed sync of the root is retried: ``limit`` times, waiting ``backoff``, then ``factor``
    times longer each time, up to ``maxBackoff`` (the root ``Application``'s ``syncPolicy.retry``)."""

    limit: Annotated[StrictInt, gate(checks.retry_limit_problem)] = defaults.ARGO_CD_RETRY_LIMIT
    backoff: Duration = defaults.ARGO_CD_RETRY_BACKOFF
    factor: Annotated[StrictInt, gate(checks.retry_factor_problem)] = 2
    max_backoff: Duration = defaults.ARGO_CD_RETRY_MAX_BACKOFF


class ArgoCdSpec(ConfigModel):
    """Argo CD: how it is installed, and how the root ``Application`` syncs the fleet repository.

    ``install: helm`` installs the pinned ``argo-cd`` chart (``version``) into ``namespace``;
    ``install: external`` means Argo CD runs already there (an EKS capability, or installed by another
    stack, as the local cluster runs it): the platform then makes only the repository Secret, the
    ``AppProject``, the root ``Application`` and the in-cluster cluster Secret that carries the contract.

    The root syncs ``git.path`` automatically, with ``prune`` and ``selfHeal`` (both on unless turned off;
    the policy pack requires them in prod), retrying a failed sync as ``retry`` says. Its ``AppProject``
    allows only the fleet repository, and only the namespaces in ``destinations`` besides Argo CD's own
    and the contract's ``serviceNamespace``. ``readyTimeout`` is how long ``up`` waits for the root to be
    Synced and Healthy (``0s``: it does not wait).
    """

    install: Literal["helm", "external"] = "helm"
    version: Annotated[str, gate(checks.argo_cd_chart_version_problem)] = defaults.ARGO_CD_CHART_VERSION
    """The ``argo-cd`` chart's version (with ``install: helm``)."""
    namespace: DnsLabel = defaults.ARGO_CD_NAMESPACE
    prune: StrictBool = True
    self_heal: StrictBool = True
    retry: RetrySpec = Field(default_factory=RetrySpec)
    destinations: tuple[Annotated[str, gate(checks.project_destination_problem)], ...] = ()
    """Namespaces the root may deploy to, besides ``namespace`` and the contract's ``serviceNamespace``."""
    ready_timeout: Annotated[str, gate(checks.ready_timeout_problem)] = defaults.DEFAULT_TIMEOUT

    @model_validator(mode="after")
    def _nothing_to_install_externally(self) -> ArgoCdSpec:
        unused = sorted(to_camel(key) for key in self.model_fields_set & set(_INSTALL_ONLY))
        if self.install == "external" and unused:
            raise ValueError(
                f"{', '.join(unused)}: not used with install: external (Argo CD is installed outside this "
                "stack)"
            )
        return self
