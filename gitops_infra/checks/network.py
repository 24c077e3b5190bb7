"""The network: CIDR blocks, a dedicated VPC's size, availability zones and an existing VPC's subnets.

Example::

    assert checks.vpc_cidr_problem("10.0.0.0/16") is None
    assert checks.availability_zones_problem(["eu-west-1a"]) == "needs 2 to 6 zones"
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Sized

from gitops_infra.checks._pattern import pattern_problem

__all__ = [
    "AVAILABILITY_ZONE_PATTERN",
    "MAX_ZONES",
    "MIN_VPC_PREFIX",
    "MIN_ZONES",
    "availability_zone_problem",
    "availability_zones_problem",
    "ipv4_cidr_problem",
    "private_subnets_problem",
    "vpc_cidr_problem",
]


MIN_VPC_PREFIX = 20
"""The smallest dedicated VPC: a /20, cut into sixteen /24s, a public and a private one per zone.

Anything smaller leaves /25 or narrower private subnets, and every pod takes a VPC address with the
VPC CNI: a node group outgrows them long before it reaches its ``maxSize``.
"""


def ipv4_cidr_problem(value: object) -> str | None:
    """``None`` for an IPv4 CIDR block with no host bits set (``10.0.0.0/16``)."""
    try:
        ipaddress.IPv4Network(str(value), strict=True)
    except ValueError:
        return "must be an IPv4 CIDR block such as 10.0.0.0/16, with no host bits set"
    return None


def vpc_cidr_problem(value: object) -> str | None:
    """``None`` for a CIDR block that fits the dedicated VPC's subnet layout (``MIN_VPC_PREFIX``)."""
    problem = ipv4_cidr_problem(value)
    if problem is not None:
        return problem
    if ipaddress.IPv4Network(str(value)).prefixlen > MIN_VPC_PREFIX:
        return f"must be /{MIN_VPC_PREFIX} or larger, to fit a /24 public and private subnet per zone"
    return None


MIN_ZONES = 2
"""EKS places its control plane's network interfaces in subnets of at least two availability zones."""
MAX_ZONES = 6
"""No AWS region has more zones; a dedicated VPC's layout (``MIN_VPC_PREFIX``) has room for eight."""
AVAILABILITY_ZONE_PATTERN = r"^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$"
"""An availability zone's name (``eu-west-1a``, ``us-gov-west-1b``): a region and one letter."""
_AVAILABILITY_ZONE = re.compile(AVAILABILITY_ZONE_PATTERN)


def availability_zone_problem(value: object) -> str | None:
    """``None`` for an availability zone's name (``eu-west-1a``); a region (``eu-west-1``) is not one."""
    return pattern_problem(_AVAILABILITY_ZONE, value, "must be an availability zone such as eu-west-1a")


def availability_zones_problem(zones: Collection[object]) -> str | None:
    """``None`` for the zones of a dedicated VPC: ``MIN_ZONES`` to ``MAX_ZONES`` of them, none twice."""
    if not MIN_ZONES <= len(zones) <= MAX_ZONES:
        return f"needs {MIN_ZONES} to {MAX_ZONES} zones"
    if len(set(zones)) != len(zones):
        return "must not repeat a zone"
    return None


def private_subnets_problem(subnet_ids: Sized) -> str | None:
    """``None`` for an existing VPC's private subnets, the nodes' and the control plane's: two at least.

    Only the count is known here (a subnet's zone is the cloud's to say), so two subnets stand for two
    zones, as EKS requires (``MIN_ZONES``).
    """
    return None if len(subnet_ids) >= MIN_ZONES else "needs subnets in at least two zones"
