"""This repository's stack program, with what tenants add to a stack stood in for by config, so that the
GitOps layer's read of tenants is tested on its own: the output ``tenants`` (``fixture:tenants``, JSON,
as the platform exports it) and, with ``fixture:lockdown``, the platform's root Kustomization stating its
identity (``serviceAccountName: kustomize-controller``), as it does when Flux runs locked down. The
tenants' own objects the tests make with the API client.
"""

import json
import runpy
from pathlib import Path
from typing import Any

import pulumi

config = pulumi.Config("fixture")
KUSTOMIZATION = "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization"


def _identity(args: Any) -> Any:
    if args.type_ != KUSTOMIZATION:
        return None
    spec = {**(args.props.get("spec") or {}), "serviceAccountName": "kustomize-controller"}
    return pulumi.ResourceTransformResult({**args.props, "spec": spec}, args.opts)


if config.get_bool("lockdown"):
    pulumi.runtime.register_resource_transform(_identity)
runpy.run_path(str(Path(__file__).resolve().parents[3] / "stacks" / "__main__.py"))
if tenants := json.loads(config.get("tenants") or "[]"):
    pulumi.export("tenants", tenants)
