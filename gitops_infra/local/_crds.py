"""CustomResourceDefinitions from the toolchain, applied to a local cluster and waited for.

One way for every part of the harness that brings CRDs (Flux's, the Flux Operator's, Sealed Secrets',
External Secrets'): a server-side apply, so a CRD an earlier part applied on the same cluster (or an older
toolchain's) is brought to these files' version instead of failing, then a bounded wait until each is
``Established``, the point from which the API serves its kind.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._processes import READY_SECONDS

__all__ = ["FIELD_MANAGER", "apply_crds"]

FIELD_MANAGER = "gitops-infra-local"
"""The field manager of what the harness applies, server-side."""


def apply_crds(api: Any, paths: Iterable[Path]) -> list[str]:
    """Apply every ``CustomResourceDefinition`` in the YAML files ``paths`` with the ``kubernetes`` client
    ``api``, and return their names once each is ``Established`` (a ``RuntimeError`` after
    :data:`~._processes.READY_SECONDS`)."""
    import yaml
    from kubernetes import client

    # libyaml's loader where PyYAML has it: CRDs run to megabytes, which the pure-Python one reads slowly.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    extensions = client.ApiextensionsV1Api(api)
    names = []
    for path in paths:
        for document in yaml.load_all(path.read_text(), Loader=loader):
            if document and document.get("kind") == "CustomResourceDefinition":
                name = document["metadata"]["name"]
                extensions.patch_custom_resource_definition(
                    name,
                    document,
                    field_manager=FIELD_MANAGER,
                    force=True,
                    _content_type="application/apply-patch+yaml",
                )
                names.append(name)
    deadline = time.monotonic() + READY_SECONDS
    for name in names:
        while not _established(extensions.read_custom_resource_definition(name)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"CRD {name} was not established within {READY_SECONDS:.0f} s")
            time.sleep(0.2)
    return names


def _established(crd: Any) -> bool:
    conditions = (crd.status.conditions or []) if crd.status else []
    return any(c.type == "Established" and c.status == "True" for c in conditions)
