"""``EksCluster``, the component: the KMS key, the ``pulumi_eks.Cluster``, the private endpoint's rules, the
nodes, and a Kubernetes provider that waits for them. See :mod:`gitops_infra.components.eks_cluster`.

Example::

    cluster = EksCluster("gitops-dev", args)
    pulumi.export("kubeconfig", cluster.kubeconfig)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._kubernetes import kubernetes_provider
from gitops_infra.components.eks_cluster.access import access_entries, positional_key_aliases
from gitops_infra.components.eks_cluster.args import EksClusterArgs, NewVpcArgs
from gitops_infra.components.eks_cluster.network import Network, build_vpc
from gitops_infra.components.eks_cluster.nodes import build_node_groups, build_node_role
from gitops_infra.defaults import EndpointAccess
from gitops_infra.errors import ConfigError

if TYPE_CHECKING:
    import pulumi_aws as aws
    import pulumi_eks as eks
else:
    aws = sdk("pulumi_aws")
    eks = sdk("pulumi_eks")

__all__ = ["TYPE_TOKEN", "EksCluster"]


TYPE_TOKEN = "gitops-infra:index:EksCluster"
KMS_DELETION_WINDOW_DAYS = 30
API_PORT = 443


def _vpc_cni_options(network_policy: bool) -> eks.VpcCniOptionsArgs | None:
    """The VPC CNI's network policy agent, without which NetworkPolicy objects are not enforced."""
    return eks.VpcCniOptionsArgs(enable_network_policy=True) if network_policy else None


def _name_problems(name: str, args: EksClusterArgs) -> list[str]:
    """Names AWS derives from the component's name must fit AWS's limits (``checks``, as the config)."""
    problem = checks.cluster_component_name_problem(name)
    if problem is not None:
        return [f"EksCluster name: {problem}"]
    return [
        f"EksClusterArgs.node_groups[{index}].name: {problem}"
        for index, group in enumerate(args.node_groups)
        if (problem := checks.node_group_name_problem(name, group.name)) is not None
    ]


def _build_kms_key(name: str, tags: Mapping[str, pulumi.Input[str]], parent: pulumi.Resource) -> aws.kms.Key:
    """The cluster's own KMS key for Kubernetes secrets encryption."""
    return aws.kms.Key(
        f"{name}-secrets",
        description=f"EKS secrets encryption for {name}",
        enable_key_rotation=True,
        deletion_window_in_days=KMS_DELETION_WINDOW_DAYS,
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _build_cluster(
    name: str,
    args: EksClusterArgs,
    network: Network,
    kms_key: aws.kms.Key,
    tags: Mapping[str, pulumi.Input[str]],
    parent: pulumi.Resource,
) -> eks.Cluster:
    """The ``pulumi_eks.Cluster``: API access entries, OIDC, logs, KMS, the endpoint, no default nodes."""
    private_only = args.endpoint_access is EndpointAccess.PRIVATE
    return eks.Cluster(
        f"{name}-cluster",
        name=args.cluster_name if args.cluster_name is not None else name,
        version=args.kubernetes_version,
        authentication_mode=eks.AuthenticationMode.API,
        access_entries=access_entries(args.admin_principal_arns, args.creator_principal_arn, tags),
        create_oidc_provider=True,
        skip_default_node_group=True,
        enabled_cluster_log_types=[str(log) for log in args.log_types],
        encryption_config_key_arn=kms_key.arn,
        vpc_id=network.vpc_id,
        public_subnet_ids=list(network.public_subnet_ids) or None,
        private_subnet_ids=list(network.private_subnet_ids),
        node_associate_public_ip_address=False,
        endpoint_private_access=True,
        endpoint_public_access=not private_only,
        public_access_cidrs=None if private_only or not args.allowed_cidrs else list(args.allowed_cidrs),
        vpc_cni_options=_vpc_cni_options(args.network_policy),
        tags=dict(tags),
        opts=pulumi.ResourceOptions(
            parent=parent, transforms=[positional_key_aliases(f"{name}-cluster", args.admin_principal_arns)]
        ),
    )


def _build_endpoint_rules(
    name: str, args: EksClusterArgs, cluster: eks.Cluster, parent: pulumi.Resource
) -> list[aws.ec2.SecurityGroupRule]:
    """With no public endpoint, the allow-listed networks reach the private one through the VPC, on 443."""
    if args.endpoint_access is not EndpointAccess.PRIVATE:
        return []
    return [
        aws.ec2.SecurityGroupRule(
            f"{name}-endpoint-{index}",
            type="ingress",
            protocol="tcp",
            from_port=API_PORT,
            to_port=API_PORT,
            cidr_blocks=[cidr],
            security_group_id=cluster.cluster_security_group_id,
            description=f"Kubernetes API from {cidr}",
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for index, cidr in enumerate(args.allowed_cidrs)
    ]


def _build_provider(
    name: str,
    cluster: eks.Cluster,
    args: EksClusterArgs,
    depends_on: list[pulumi.Resource],
    parent: pulumi.Resource,
) -> k8s.Provider:
    """The Kubernetes provider for the cluster, secret kubeconfig and all.

    The exported kubeconfig stays profile- and role-less, as pulumi-eks's is: they name this runner's
    credentials, not a reader's. The provider deploys from this runner, so its kubeconfig authenticates as
    the AWS provider does: with the profile, and assuming the role, that created the cluster. Without the
    role, ``aws eks get-token`` would run as the ambient credentials, a principal with no access entry.
    """
    profile, role = args.kubeconfig_profile, args.kubeconfig_role_arn
    kubeconfig: pulumi.Input[str] = (
        cluster.kubeconfig_json
        if profile is None and role is None
        else cluster.get_kubeconfig(profile_name=profile, role_arn=role)
    )
    opts = pulumi.ResourceOptions(parent=parent, depends_on=depends_on)
    return kubernetes_provider(f"{name}-k8s", kubeconfig, opts)


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster ready for Flux: see :mod:`gitops_infra.components.eks_cluster`."""

    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    oidc_provider_arn: pulumi.Output[str]
    oidc_provider_url: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    cluster: eks.Cluster
    node_groups: dict[str, eks.ManagedNodeGroup]
    kms_key: aws.kms.Key

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        problems = _name_problems(name, args)
        if problems:
            raise ConfigError(problems)
        super().__init__(TYPE_TOKEN, name, None, opts)
        tags = dict(args.tags)
        network = (
            build_vpc(name, args.network, tags, self)
            if isinstance(args.network, NewVpcArgs)
            else Network(
                vpc_id=args.network.vpc_id,
                public_subnet_ids=list(args.network.public_subnet_ids),
                private_subnet_ids=list(args.network.private_subnet_ids),
            )
        )
        self.kms_key = _build_kms_key(name, tags, self)
        self.cluster = _build_cluster(name, args, network, self.kms_key, tags, self)
        endpoint_rules = _build_endpoint_rules(name, args, self.cluster, self)
        node_role = build_node_role(name, tags, self)
        self.node_groups = build_node_groups(name, args, self.cluster, network, node_role, tags, self)

        cluster_name = args.cluster_name if args.cluster_name is not None else name
        self.cluster_name = pulumi.Output.all(self.cluster.urn, cluster_name).apply(
            lambda values: str(values[1])
        )
        self.kubeconfig = pulumi.Output.secret(self.cluster.kubeconfig_json)
        self.oidc_provider_arn = self.cluster.oidc_provider_arn
        self.oidc_provider_url = self.cluster.oidc_provider_url
        self.vpc_id = pulumi.Output.from_input(network.vpc_id)
        # Workloads need nodes, and a private endpoint is reached only once its rules exist: anything
        # deployed through this provider waits for both.
        self.provider = _build_provider(
            name, self.cluster, args, [*self.node_groups.values(), *endpoint_rules], self
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "oidcProviderUrl": self.oidc_provider_url,
                "vpcId": self.vpc_id,
            }
        )
