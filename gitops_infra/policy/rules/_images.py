"""The rule on workloads' container images: each pinned, by a tag other than ``latest`` or by a digest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._inputs import at, objects

__all__ = ["POD_SPEC_PATHS", "image_problem", "image_tag_violations"]

POD_SPEC_PATHS: Mapping[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    "kubernetes:batch/v1:Job": ("spec", "template", "spec"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
"""Where each workload kind keeps its pod spec. Helm releases' values are not inspected."""
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
LATEST_TAG = "latest"


def image_problem(image: str) -> str | None:
    """What is wrong with a container image reference, or ``None`` when it is pinned.

    A digest (``@sha256:...``) pins an image whatever its tag. Otherwise the tag is what follows the last
    ``:`` of the last path segment, so a registry port (``registry:5000/app``) is not mistaken for one.
    """
    if "@" in image:
        return None
    last_segment = image.rsplit("/", 1)[-1]
    _, colon, tag = last_segment.rpartition(":")
    if not colon or not tag:
        return "has no tag (so it runs whatever 'latest' is)"
    if tag == LATEST_TAG:
        return f"uses the tag {LATEST_TAG!r}"
    return None


def image_tag_violations(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """No container of a workload may run an image tagged ``latest`` or without a tag.

    Covers the kinds in :data:`POD_SPEC_PATHS`; other types pass.
    """
    path = POD_SPEC_PATHS.get(resource_type)
    if path is None:
        return []
    pod_spec = at(props, *path)
    if not isinstance(pod_spec, Mapping):
        return []
    messages: list[str] = []
    for list_name in CONTAINER_LISTS:
        for container in objects(pod_spec.get(list_name)):
            image = container.get("image")
            if not isinstance(image, str):
                continue
            if (problem := image_problem(image)) is not None:
                name = container.get("name", "?")
                messages.append(f"{list_name} {name!r}: image {image!r} {problem}; pin a version or a digest")
    return messages
