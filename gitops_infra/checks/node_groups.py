"""EKS managed node groups: their sizes, names, instance types and AMI types.

Example::

    assert checks.node_group_size_problems(2, 1, None) == [("max_size", "must be >= min_size")]
    assert checks.ami_type_problem("al2023_x86_64_standard") is not None  # EKS's types are case-sensitive
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized

from gitops_infra.checks.kubernetes import kubernetes_version_problem

__all__ = [
    "AL2_GONE_FROM_KUBERNETES",
    "AL2_SUCCESSORS",
    "CUSTOM_AMI_TYPE",
    "EKS_AMI_TYPES",
    "MAX_NODE_GROUP_SIZE",
    "ami_type_problem",
    "ami_type_version_problem",
    "instance_types_problem",
    "node_group_names_problem",
    "node_group_size_problems",
]


MAX_NODE_GROUP_SIZE = 450
"""EKS's quota of nodes in one managed node group: EKS refuses a larger ``maxSize``."""


def _as_written(name: str) -> str:
    return name


_WITHIN_QUOTA = f"at most {MAX_NODE_GROUP_SIZE} (EKS's quota of nodes in a managed node group)"


def node_group_size_problems(
    min_size: int | None,
    max_size: int | None,
    desired_size: int | None,
    *,
    spell: Callable[[str], str] = _as_written,
) -> list[tuple[str, str]]:
    """``(field, what was expected)`` for each size of a node group that EKS would refuse.

    ``field`` is ``min_size``, ``max_size`` or ``desired_size``. A size that is ``None`` (not set, or
    not known yet) is compared with nothing, and neither is one that breaks its own rule, so a caller
    that checks a size at a time (the config, field by field) hears the same as one that checks all
    three. ``spell`` writes a sibling's name as the caller's keys are written (``minSize`` in the config).
    """
    problems: list[tuple[str, str]] = []
    low, high = min_size, max_size
    if low is not None and not 0 <= low <= MAX_NODE_GROUP_SIZE:
        problems.append(("min_size", "must be >= 0" if low < 0 else f"must be {_WITHIN_QUOTA}"))
        low = None
    if high is not None:
        # EKS refuses a group that may never run a node as well as one whose range is upside down.
        expected = [f">= {spell('min_size')}"] if low is not None and high < low else []
        expected += [">= 1"] if high < 1 else []
        expected += [_WITHIN_QUOTA] if high > MAX_NODE_GROUP_SIZE else []
        if expected:
            problems.append(("max_size", f"must be {' and '.join(expected)}"))
            high = None
    if desired_size is not None and low is not None and high is not None and not low <= desired_size <= high:
        problems.append(
            ("desired_size", f"must be within min/max ({spell('min_size')} to {spell('max_size')})")
        )
    return problems


def node_group_names_problem(names: Sequence[str]) -> str | None:
    """``None`` for a cluster's node groups: one at least, each named once (their names name resources)."""
    if not names:
        return "needs at least one node group"
    if len(set(names)) != len(names):
        return "node group names must be unique"
    return None


def instance_types_problem(instance_types: Sized) -> str | None:
    """``None`` when a node group names at least one EC2 instance type."""
    return None if len(instance_types) > 0 else "must not be empty"


EKS_AMI_TYPES = (
    "AL2023_x86_64_STANDARD",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "AL2023_x86_64_NEURON",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_ARM_64",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_FIPS",
    "BOTTLEROCKET_ARM_64_FIPS",
    "BOTTLEROCKET_x86_64_NVIDIA_FIPS",
    "BOTTLEROCKET_ARM_64_NVIDIA_FIPS",
    "WINDOWS_CORE_2019_x86_64",
    "WINDOWS_FULL_2019_x86_64",
    "WINDOWS_CORE_2022_x86_64",
    "WINDOWS_FULL_2022_x86_64",
    "WINDOWS_CORE_2025_x86_64",
    "WINDOWS_FULL_2025_x86_64",
    "AL2_x86_64",
    "AL2_x86_64_GPU",
    "AL2_ARM_64",
)
"""The managed node group AMI types a node group may name: EKS's ``AMITypes`` (botocore 1.44.8's
``eks/2017-11-01`` model) but ``CUSTOM``, which stands for a launch template's own AMI, and the platform
makes no launch template. EKS refuses any other value, but only at CreateNodegroup, after the cluster
(10-15 minutes into the first ``up``); and the case is easy to get wrong (``x86_64`` but ``ARM_64``)."""
CUSTOM_AMI_TYPE = "CUSTOM"
AL2_GONE_FROM_KUBERNETES = "1.33"
"""EKS publishes no Amazon Linux 2 AMI for Kubernetes 1.33 or later (1.32 is the last), and refuses an
``AL2_*`` node group there."""
AL2_SUCCESSORS = {
    "AL2_x86_64": ("AL2023_x86_64_STANDARD", "BOTTLEROCKET_x86_64"),
    "AL2_x86_64_GPU": ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"),
    "AL2_ARM_64": ("AL2023_ARM_64_STANDARD", "BOTTLEROCKET_ARM_64"),
}
"""Each Amazon Linux 2 AMI type, and its Amazon Linux 2023 and Bottlerocket counterparts."""


def ami_type_problem(value: object) -> str | None:
    """``None`` for an AMI type EKS gives a managed node group without a launch template."""
    if value in EKS_AMI_TYPES:
        return None
    if value == CUSTOM_AMI_TYPE:
        return (
            "CUSTOM is for a launch template with an AMI of its own, and the platform makes none: use an "
            "EKS-optimized type such as AL2023_x86_64_STANDARD or BOTTLEROCKET_x86_64"
        )
    if isinstance(value, str):
        spelled = next((known for known in EKS_AMI_TYPES if known.lower() == value.lower()), None)
        if spelled is not None:
            return f"must be written {spelled}: EKS's AMI types are case-sensitive"
    return (
        "must be an EKS AMI type, such as AL2023_x86_64_STANDARD, AL2023_ARM_64_STANDARD, "
        "AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64 or BOTTLEROCKET_ARM_64"
    )


def ami_type_version_problem(ami_type: object, kubernetes_version: str) -> str | None:
    """``None`` unless ``ami_type`` is Amazon Linux 2 on a Kubernetes version EKS has no AL2 AMI for."""
    successors = AL2_SUCCESSORS.get(ami_type) if isinstance(ami_type, str) else None
    # A version that is no version is its own key's problem, not this one's.
    if successors is None or kubernetes_version_problem(kubernetes_version, AL2_GONE_FROM_KUBERNETES):
        return None
    al2023, bottlerocket = successors
    return (
        f"Amazon Linux 2 has no EKS AMI for Kubernetes {AL2_GONE_FROM_KUBERNETES} or later, so EKS "
        f"refuses it there: use {al2023} (Amazon Linux 2023) or {bottlerocket} (Bottlerocket)"
    )
