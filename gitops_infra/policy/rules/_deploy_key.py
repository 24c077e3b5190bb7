"""The rule on the fleet repository's deploy key: read-only unless Flux image automation is on.

Whether a key may write depends on the stack's Flux install (:func:`~._flux.flux_image_automation`), so
the rule also runs over a whole stack (:func:`stack_deploy_key_violations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._flux import flux_image_automation

__all__ = [
    "DEPLOY_KEY_TYPE",
    "DeployKeySettings",
    "deploy_key_violations",
    "stack_deploy_key_violations",
]

DEPLOY_KEY_TYPE = "github:index/repositoryDeployKey:RepositoryDeployKey"


@dataclass(frozen=True)
class DeployKeySettings:
    """Config of ``deploy-key-read-only``."""

    image_automation: bool = False
    """Flux image automation runs, so Flux must push to git (config ``imageAutomation``).

    The stack policy also infers it from the Flux install in the same stack; this setting forces it on
    for a stack whose Flux is installed elsewhere (another stack, or ``flux bootstrap``).
    """

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> DeployKeySettings:
        """Settings from a policy's config, with defaults for what it leaves out."""
        return cls(image_automation=config.get("imageAutomation") is True)


def deploy_key_violations(
    props: Mapping[str, Any],
    settings: DeployKeySettings = DeployKeySettings(),
) -> list[str]:
    """A deploy key must be read-only unless Flux image automation is on (only then does Flux push).

    ``readOnly`` left unset is read-only: the GitHub provider defaults it to true.
    """
    if props.get("readOnly", True) is not False or settings.image_automation:
        return []
    return [
        "this deploy key can write to the repository, but image automation is off (no Flux install in this "
        "stack enables imageAutomationController); set readOnly to true, or set the policy's "
        "imageAutomation config to true if Flux image automation pushes to git"
    ]


def stack_deploy_key_violations(
    resources: Iterable[tuple[str, str, Mapping[str, Any]]],
    settings: DeployKeySettings = DeployKeySettings(),
) -> list[tuple[str, str]]:
    """``deploy-key-read-only`` over a whole stack: ``(urn, message)`` for each writable deploy key.

    ``resources`` are ``(type, urn, props)`` triples. Image automation is on when ``settings`` says so
    (the explicit override) or when the stack's own Flux install enables it (:func:`flux_image_automation`).
    """
    resources = list(resources)
    inferred = flux_image_automation((resource_type, props) for resource_type, _, props in resources)
    effective = DeployKeySettings(image_automation=settings.image_automation or inferred)
    return [
        (urn, message)
        for resource_type, urn, props in resources
        if resource_type == DEPLOY_KEY_TYPE
        for message in deploy_key_violations(props, effective)
    ]
