"""The rule on the ``environment`` ConfigMap: its data is what the environment contract's reader accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitops_infra.contract import ENVIRONMENT_CONFIGMAP, parse_environment

from ._inputs import at

__all__ = ["CONFIG_MAP_PATCH_TYPE", "CONFIG_MAP_TYPE", "environment_contract_violations"]

CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
CONFIG_MAP_PATCH_TYPE = "kubernetes:core/v1:ConfigMapPatch"
"""How the components declare their fixed-name ConfigMaps (``environment``): judged as a ConfigMap."""


def environment_contract_violations(props: Mapping[str, Any]) -> list[str]:
    """The ``environment`` ConfigMap's ``data`` parses as the current environment contract.

    App teams read it back with ``parse_environment``, so data it rejects breaks them at run time.
    ConfigMaps with any other ``metadata.name`` pass.
    """
    if at(props, "metadata", "name") != ENVIRONMENT_CONFIGMAP:
        return []
    data = props.get("data")
    if not isinstance(data, Mapping):
        return [
            f"the {ENVIRONMENT_CONFIGMAP} ConfigMap has no data, so app teams cannot read the environment "
            "contract from it; write its data with environment_data"
        ]
    try:
        parse_environment(data)
    except ValueError as exc:
        return [str(exc)]
    return []
