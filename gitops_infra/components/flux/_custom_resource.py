"""A Flux custom resource registered from its manifest, as the sync and the notifications make theirs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra.components._kubernetes import OWNED

__all__ = ["custom_resource"]


def custom_resource(
    resource_name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """``manifest`` as a ``CustomResource`` whose apply takes its fields back (``OWNED``)."""
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata={
            **manifest["metadata"],
            "annotations": {**OWNED, **manifest["metadata"].get("annotations", {})},
        },
        spec=manifest["spec"],
        opts=opts,
    )
