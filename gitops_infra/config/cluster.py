"""``gitops-infra:cluster``: the EKS cluster (version, network, endpoint access, node groups, admins), or
``existing``, a cluster you already run, reached through its kubeconfig.

Example::

    cluster = ClusterSpec.model_validate(
        {
            "kubernetesVersion": "1.33",
            "network": {"vpc": {"cidr": "10.0.0.0/16", "availabilityZones": ["eu-west-1a", "eu-west-1b"]}},
            "nodeGroups": [{"name": "system", "instanceTypes": ["m6i.large"], "minSize": 2, "maxSize": 4}],
        }
    )
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

from gitops_infra import checks, defaults
from gitops_infra.config._fields import (
    IAM_PRINCIPAL_PATTERN,
    VPC_ID_PATTERN,
    AvailabilityZone,
    Cidr,
    ClusterName,
    ConfigModel,
    DnsLabel,
    SecretKeyName,
    SubnetId,
    gate,
)

__all__ = [
    "PRIVATE_ENDPOINT_NEEDS_EXISTING_VPC",
    "ClusterSpec",
    "EndpointSpec",
    "ExistingClusterSpec",
    "ExistingKubeconfigSpec",
    "ExistingVpcSpec",
    "NetworkSpec",
    "NewVpcSpec",
    "NodeGroupSpec",
    "TaintSpec",
]


class TaintSpec(ConfigModel):
    """A Kubernetes taint on the nodes of a group."""

    key: Annotated[str, Field(min_length=1, max_length=63)]
    value: Annotated[str, Field(max_length=63)] = ""
    effect: defaults.TaintEffect


_SIZES = ("min_size", "max_size", "desired_size")
"""A node group's sizes, in the order pydantic validates them."""


class NodeGroupSpec(ConfigModel):
    """One EKS managed node group."""

    name: DnsLabel
    instance_types: Annotated[tuple[str, ...], gate(checks.instance_types_problem)]
    min_size: StrictInt
    max_size: StrictInt
    desired_size: StrictInt | None = None
    disk_size: Annotated[StrictInt, Field(ge=20, le=16384)] = defaults.DEFAULT_DISK_SIZE_GIB
    capacity_type: defaults.CapacityType = defaults.CapacityType.ON_DEMAND
    ami_type: Annotated[str, gate(checks.ami_type_problem)] = defaults.DEFAULT_AMI_TYPE
    labels: Mapping[str, str] = Field(default_factory=dict)
    taints: tuple[TaintSpec, ...] = ()
    scaling_managed_externally: StrictBool = False
    """True when an autoscaler (Cluster Autoscaler, Karpenter) owns the desired size: updates then
    leave ``desiredSize`` as the autoscaler set it. Off by default, because EKS refuses a ``minSize``
    raised above the current desired size, which only an update that sets ``desiredSize`` avoids."""

    @field_validator("min_size", "max_size", "desired_size")
    @classmethod
    def _sizes_eks_accepts(cls, value: int | None, info: ValidationInfo) -> int | None:
        # Fields validate in order: `info.data` holds the sizes before this one that passed their checks.
        sizes = {size: info.data.get(size) for size in _SIZES} | {str(info.field_name): value}
        for size, problem in checks.node_group_size_problems(**sizes, spell=to_camel):
            if size == info.field_name:
                raise ValueError(problem)
        return value

    @property
    def desired(self) -> int:
        """The desired size: ``desiredSize`` if set, else ``minSize`` (but at least one node)."""
        return self.desired_size if self.desired_size is not None else max(self.min_size, 1)


class NewVpcSpec(ConfigModel):
    """A dedicated VPC the cluster builds: a public and a private subnet per availability zone."""

    cidr: Annotated[str, gate(checks.vpc_cidr_problem)]
    # The count is checked after the items, not in Field(): pydantic would report it again after an item
    # fails.
    availability_zones: Annotated[tuple[AvailabilityZone, ...], gate(checks.availability_zones_problem)]
    nat_gateways: defaults.NatGateways = defaults.NatGateways.SINGLE


class ExistingVpcSpec(ConfigModel):
    """An existing VPC and its subnets."""

    vpc_id: Annotated[str, Field(pattern=VPC_ID_PATTERN)]
    public_subnet_ids: tuple[SubnetId, ...] = ()
    private_subnet_ids: Annotated[tuple[SubnetId, ...], gate(checks.private_subnets_problem)]


class NetworkSpec(ConfigModel):
    """Exactly one of ``vpc`` (build one) or ``existingVpc`` (use one)."""

    vpc: NewVpcSpec | None = None
    existing_vpc: ExistingVpcSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> NetworkSpec:
        if (self.vpc is None) == (self.existing_vpc is None):
            raise ValueError("set exactly one of vpc or existingVpc")
        return self


class EndpointSpec(ConfigModel):
    """Who reaches the Kubernetes API.

    ``public-and-private``: ``allowedCidrs`` restrict the public endpoint. ``private``: the public endpoint
    is off and ``allowedCidrs`` (a VPN, a peered network) may reach the private one on port 443; that needs
    ``network.existingVpc`` (see ``ClusterSpec``).
    """

    access: defaults.EndpointAccess = defaults.EndpointAccess.PUBLIC_AND_PRIVATE
    allowed_cidrs: tuple[Cidr, ...] = ()


PRIVATE_ENDPOINT_NEEDS_EXISTING_VPC = (
    "access 'private' needs network.existingVpc: pulumi up installs Flux through the Kubernetes API "
    "from wherever it runs, and a VPC this stack creates has no route from there (no peering, VPN or "
    "transit gateway exists yet). Use access: public-and-private with allowedCidrs set to the runner's "
    "egress range, or deploy into an existing VPC the runner reaches"
)


class ExistingKubeconfigSpec(ConfigModel):
    """How to reach a cluster you already run: ``kubeconfig`` names the secret key that holds it."""

    kubeconfig: SecretKeyName


class ExistingClusterSpec(ConfigModel):
    """A cluster you already run: the platform makes no AWS resource and deploys through its kubeconfig.

    Written ``cluster: {existing: {kubeconfig: <secret config key>}}`` instead of the EKS settings.
    """

    name: ClusterName | None = None
    existing: ExistingKubeconfigSpec


def _node_group_names_problem(groups: tuple[NodeGroupSpec, ...]) -> str | None:
    return checks.node_group_names_problem([group.name for group in groups])


class ClusterSpec(ConfigModel):
    """The EKS cluster."""

    name: ClusterName | None = None
    kubernetes_version: Annotated[str, gate(checks.kubernetes_minor_problem)]
    admins: Annotated[
        tuple[Annotated[str, Field(pattern=IAM_PRINCIPAL_PATTERN)], ...], gate(checks.admins_problem)
    ] = ()
    creator: Annotated[str, Field(pattern=IAM_PRINCIPAL_PATTERN)] | None = None
    log_types: tuple[defaults.LogType, ...] = defaults.ALL_LOG_TYPES
    # network comes before endpoint: the endpoint's check reads it.
    network: NetworkSpec
    endpoint: EndpointSpec = EndpointSpec()
    node_groups: Annotated[tuple[NodeGroupSpec, ...], gate(_node_group_names_problem)]

    @field_validator("node_groups")
    @classmethod
    def _ami_types_for_the_version(
        cls, groups: tuple[NodeGroupSpec, ...], info: ValidationInfo
    ) -> tuple[NodeGroupSpec, ...]:
        version = info.data.get("kubernetes_version")
        if version is None:  # it failed its own check
            return groups
        problems = [
            (index, problem)
            for index, group in enumerate(groups)
            if (problem := checks.ami_type_version_problem(group.ami_type, version)) is not None
        ]
        if problems:
            # Raised as the groups' own errors, so each is reported at nodeGroups[<index>].amiType.
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError("ami_type", "{problem}", {"problem": problem}),
                        loc=(index, "ami_type"),
                        input=groups[index].ami_type,
                    )
                    for index, problem in problems
                ],
            )
        return groups

    @field_validator("endpoint")
    @classmethod
    def _private_needs_reachable_vpc(cls, value: EndpointSpec, info: ValidationInfo) -> EndpointSpec:
        network: NetworkSpec | None = info.data.get("network")
        if (
            value.access is defaults.EndpointAccess.PRIVATE
            and network is not None
            and network.existing_vpc is None
        ):
            raise ValueError(PRIVATE_ENDPOINT_NEEDS_EXISTING_VPC)
        return value
