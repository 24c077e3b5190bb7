"""The cluster's network: a dedicated VPC (``NewVpcArgs``), with a public and a private subnet per zone and
its NAT gateways, or the subnets of an existing one.

Example::

    assert subnet_cidrs("10.0.0.0/16", 2)[1] == ("10.0.16.0/20", "10.0.144.0/20")  # zone 2's public, private
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components.eks_cluster.args import NewVpcArgs
from gitops_infra.defaults import NatGateways

if TYPE_CHECKING:
    import pulumi_aws as aws
else:
    aws = sdk("pulumi_aws")

__all__ = ["Network", "build_vpc", "subnet_cidrs"]


ANYWHERE = "0.0.0.0/0"
# Subnets are a sixteenth of the VPC each: public ones from the first half, private from the second.
SUBNET_PREFIX_DELTA = 4
PRIVATE_SUBNET_OFFSET = 8


def subnet_cidrs(vpc_cidr: str, zones: int) -> list[tuple[str, str]]:
    """The ``(public, private)`` subnet CIDRs of each zone in a dedicated VPC.

    Raises ``ValueError`` for a block ``checks.vpc_cidr_problem`` refuses, the same rule as the config's.
    """
    problem = checks.vpc_cidr_problem(vpc_cidr)
    if problem is not None:
        raise ValueError(problem)
    network = ipaddress.IPv4Network(vpc_cidr)
    subnets = list(network.subnets(prefixlen_diff=SUBNET_PREFIX_DELTA))
    return [
        (str(subnets[i]), str(subnets[PRIVATE_SUBNET_OFFSET + i]))
        for i in range(min(zones, checks.MAX_ZONES))
    ]


@dataclass(frozen=True)
class Network:
    """The VPC and subnets the cluster goes into: a dedicated VPC's (``build_vpc``), or an existing one's."""

    vpc_id: pulumi.Input[str]
    public_subnet_ids: Sequence[pulumi.Input[str]]
    private_subnet_ids: Sequence[pulumi.Input[str]]


def build_vpc(
    name: str, args: NewVpcArgs, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource
) -> Network:
    """The dedicated VPC: IGW, per-zone public/private subnets, NAT gateways and route tables."""
    opts = pulumi.ResourceOptions(parent=parent)

    def tagged(role: str, **extra: str) -> dict[str, pulumi.Input[str]]:
        return {**tags, "Name": f"{name}-{role}", **extra}

    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=args.cidr,
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags=tagged("vpc"),
        opts=opts,
    )
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tagged("igw"), opts=opts)
    public_routes = aws.ec2.RouteTable(
        f"{name}-public",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block=ANYWHERE, gateway_id=igw.id)],
        tags=tagged("public"),
        opts=opts,
    )
    zones = list(args.availability_zones)
    public: list[aws.ec2.Subnet] = []
    private: list[aws.ec2.Subnet] = []

    def subnet(role: str, zone: str, cidr: str, load_balancer_tag: str) -> aws.ec2.Subnet:
        # The kubernetes.io/role tags tell the AWS load balancer controller which subnets to use.
        tags = tagged(f"{role}-{zone}", **{load_balancer_tag: "1"})
        return aws.ec2.Subnet(
            f"{name}-{role}-{zone}",
            vpc_id=vpc.id,
            cidr_block=cidr,
            availability_zone=zone,
            tags=tags,
            opts=opts,
        )

    for zone, (public_cidr, private_cidr) in zip(zones, subnet_cidrs(args.cidr, len(zones)), strict=True):
        public.append(subnet("public", zone, public_cidr, "kubernetes.io/role/elb"))
        aws.ec2.RouteTableAssociation(
            f"{name}-public-{zone}", subnet_id=public[-1].id, route_table_id=public_routes.id, opts=opts
        )
        private.append(subnet("private", zone, private_cidr, "kubernetes.io/role/internal-elb"))

    _build_private_routes(name, args, vpc, igw, public, private, tagged, parent)
    return Network(
        vpc_id=vpc.id,
        public_subnet_ids=[subnet.id for subnet in public],
        private_subnet_ids=[subnet.id for subnet in private],
    )


def _build_private_routes(
    name: str,
    args: NewVpcArgs,
    vpc: aws.ec2.Vpc,
    igw: aws.ec2.InternetGateway,
    public: list[aws.ec2.Subnet],
    private: list[aws.ec2.Subnet],
    tagged: Callable[[str], dict[str, pulumi.Input[str]]],
    parent: pulumi.Resource,
) -> None:
    """NAT gateways in the public subnets (one, or one per zone), and each private subnet's route to one."""
    opts = pulumi.ResourceOptions(parent=parent)
    zones = list(args.availability_zones)
    nat_zones = zones[:1] if args.nat_gateways is NatGateways.SINGLE else zones
    nats: list[aws.ec2.NatGateway] = []
    for index, zone in enumerate(nat_zones):
        eip = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags=tagged(f"nat-{zone}"), opts=opts)
        nats.append(
            aws.ec2.NatGateway(
                f"{name}-nat-{zone}",
                allocation_id=eip.id,
                subnet_id=public[index].id,
                tags=tagged(f"nat-{zone}"),
                opts=pulumi.ResourceOptions(parent=parent, depends_on=[igw]),
            )
        )
    for index, (zone, subnet) in enumerate(zip(zones, private, strict=True)):
        nat = nats[0] if len(nats) == 1 else nats[index]
        table = aws.ec2.RouteTable(
            f"{name}-private-{zone}",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block=ANYWHERE, nat_gateway_id=nat.id)],
            tags=tagged(f"private-{zone}"),
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-private-{zone}", subnet_id=subnet.id, route_table_id=table.id, opts=opts
        )
