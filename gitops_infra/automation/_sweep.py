"""The sweep after a destroy: what AWS still holds tagged for a cluster the stack made.

The controllers inside an EKS cluster create AWS resources with their own API calls, so those resources
are in no Pulumi state and a ``destroy`` does not delete them: the AWS Load Balancer Controller's load
balancers, target groups and security groups, the EBS CSI driver's volumes and snapshots, the legacy
cloud-provider-aws service controller's classic ELBs and NLBs, the VPC CNI's ENIs, Karpenter's instances
and volumes. The drain before a destroy deletes the Kubernetes objects so that the controllers delete
what they made; whatever survives (a controller too slow or gone, a volume whose PV said ``Retain``) is
an *orphan*: it costs money, and an ENI or a security group keeps a VPC from being deleted.

Why the Resource Groups Tagging API: one read-only call (``tag:GetResources``) lists the resources of
every service in a region by their tags, so one permission covers load balancers, EC2 and EBS alike.
It ANDs separate tag filters and ORs the values of one, so each identifying tag below is a query of its
own, and a resource found by several is reported once, by the first.

Why these tags: each is one a controller writes on what it creates, and whose key or value names the
cluster, as read in the controllers' source (aws-load-balancer-controller v3.5.0, aws-ebs-csi-driver
v1.64.0, cloud-provider-aws v1.34, amazon-vpc-cni-k8s v1.22, karpenter-provider-aws v1.14):

- ``elbv2.k8s.aws/cluster=<name>``: the Load Balancer Controller, on every load balancer, target group,
  listener, rule and security group it makes (kubernetes-sigs/aws-load-balancer-controller,
  ``pkg/deploy/tracking/provider.go``, ``pkg/shared_constants/tag_keys.go``). Its ``ingress.k8s.aws/*``
  and ``service.k8s.aws/*`` tags name an Ingress group or a Service, not the cluster.
- ``ebs.csi.aws.com/cluster=true`` together with ``KubernetesCluster=<name>`` or
  ``ebs.csi.aws.com/cluster-name=<name>``: the EBS CSI driver (kubernetes-sigs/aws-ebs-csi-driver,
  ``pkg/driver/controller.go``, ``pkg/driver/constants.go``). ``ebs.csi.aws.com/cluster=true`` alone is
  on every volume of every cluster's driver in the account, so it ties nothing to this cluster; the
  names are written only when the driver runs with ``--k8s-tag-cluster-id`` (the chart's
  ``controller.k8sTagClusterId``, empty by default), and a volume without them cannot be found here.
- ``cluster.k8s.amazonaws.com/name=<name>``: the VPC CNI, on the ENIs it creates when ``CLUSTER_NAME`` is
  set (aws/amazon-vpc-cni-k8s, ``pkg/awsutils/awsutils.go``).
- ``eks:eks-cluster-name=<name>``: Karpenter, on its instances, volumes, ENIs, fleets and launch templates
  (aws/karpenter-provider-aws, ``pkg/utils/utils.go``, ``pkg/apis/v1/labels.go``).
- ``kubernetes.io/cluster/<name>=owned``: cloud-provider-aws on its load balancers and security groups
  (kubernetes/cloud-provider-aws, ``pkg/providers/v1/tags.go``), and the EBS CSI driver and Karpenter
  too. Only ``owned``: ``shared`` is how a VPC's subnets are marked for a cluster to discover, and those
  outlive it by design.

Left out on purpose: ``KubernetesCluster=<name>`` alone (cloud-provider-aws writes it only on clusters
whose instances carry the legacy tag, and people tag their own resources with it), and
``ingress.k8s.aws/cluster`` and Karpenter's ``karpenter.k8s.aws/cluster``, which current versions no
longer write.

What is reported is what the Tagging API lists. It can lag: a resource deleted a minute ago may still be
listed, so a later sweep confirms an orphan. And a region's listing holds no global resources (IAM).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError
from ..redaction import SECRET
from .results import Orphan, SweepResult

if TYPE_CHECKING:
    import boto3

__all__ = ["sweep"]

# A sweep is a report after the work is done: it must end soon, and say why when it cannot look.
_CONNECT_TIMEOUT = 5
_READ_TIMEOUT = 30
_MAX_ATTEMPTS = 3
_PAGE_SIZE = 100  # the API's maximum: fewer round trips for an account with many tagged resources
_MAX_MESSAGE = 300

# Error codes by which AWS refuses the caller's identity itself, rather than what it may do.
_REJECTED_CREDENTIALS = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "AuthFailure",
        "RequestExpired",
    }
)
_DENIED = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})

# What could pass for a credential in a message from botocore (a credential_process's output, say):
# access key ids, and long base64-like runs such as secret keys and session tokens.
_CREDENTIAL_LIKE = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|[A-Za-z0-9/+=]{40,}")

TagFilter = tuple[tuple[str, str], ...]
"""One ``GetResources`` query: (key, value) pairs that must all be on a resource."""


def _tag_filters(cluster: str) -> tuple[TagFilter, ...]:
    """The queries, in the order that names what found a resource: each controller's own tag first, the
    generic ``kubernetes.io/cluster`` tag, which several controllers write, last. An orphan's ``matched``
    is its query's pairs as ``key=value``, joined by commas."""
    ebs_driver = ("ebs.csi.aws.com/cluster", "true")
    return (
        (("elbv2.k8s.aws/cluster", cluster),),
        (ebs_driver, ("KubernetesCluster", cluster)),
        (ebs_driver, ("ebs.csi.aws.com/cluster-name", cluster)),
        (("cluster.k8s.amazonaws.com/name", cluster),),
        (("eks:eks-cluster-name", cluster),),
        ((f"kubernetes.io/cluster/{cluster}", "owned"),),
    )


def sweep(
    cluster: str,
    region: str,
    *,
    profile: str | None = None,
    session: boto3.session.Session | None = None,
) -> SweepResult:
    """List what AWS still holds tagged for ``cluster`` in ``region``: the resources its controllers made.

    Credentials are found as for ``pulumi up``: the named AWS ``profile`` (the stack's ``aws:profile``),
    else the environment's. ``session`` is one the caller has already set up (a destroy that has resolved
    the stack's credentials, a test); give it or ``profile``, not both.

    Never raises for AWS: a failure to look (no credentials, an unknown profile, access denied, no
    network) is the result's ``error``, one line that says what to do. Raises ``ArgumentError`` for an
    empty ``cluster`` or ``region``.
    """
    if not cluster or not cluster.strip():
        raise ArgumentError("sweep needs the name of the cluster whose leftovers to list, got an empty one")
    if not region or not region.strip():
        raise ArgumentError(f"sweep of cluster {cluster!r} needs the AWS region it ran in, got an empty one")
    profile = profile or None  # an empty aws:profile names no profile
    if session is not None and profile is not None:
        raise ArgumentError("sweep takes an AWS session or a profile to make one with, not both")

    # boto3 is imported here, not at the top: importing it costs every CLI command, and only a destroy
    # needs it.
    import boto3.session
    from boto3.exceptions import Boto3Error
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    config = Config(
        connect_timeout=_CONNECT_TIMEOUT,
        read_timeout=_READ_TIMEOUT,
        # ``total_max_attempts`` counts the first attempt; botocore's ``max_attempts`` counts retries only.
        retries={"total_max_attempts": _MAX_ATTEMPTS, "mode": "standard"},
    )
    source = (
        f"aws:profile {profile!r}"
        if profile
        else "the AWS session given"
        if session is not None
        else "AWS_PROFILE or the environment"
    )
    try:
        if session is None:
            session = boto3.session.Session(profile_name=profile, region_name=region)
        client = session.client("resourcegroupstaggingapi", region_name=region, config=config)
        found: dict[str, Orphan] = {}
        for tag_filter in _tag_filters(cluster):
            matched = ",".join(f"{key}={value}" for key, value in tag_filter)
            for mapping in _resources(client, tag_filter):
                arn = mapping.get("ResourceARN")
                if isinstance(arn, str) and arn and arn not in found:
                    found[arn] = Orphan(arn=arn, type=_arn_type(arn), tags=_tags(mapping), matched=matched)
    except (BotoCoreError, ClientError, Boto3Error) as exc:
        error = _explain(exc, region=region, profile=profile, source=source)
        return SweepResult(cluster=cluster, region=region, error=error)
    return SweepResult(cluster=cluster, region=region, orphans=tuple(found[arn] for arn in sorted(found)))


def _resources(client: Any, tag_filter: TagFilter) -> Iterable[Mapping[str, Any]]:
    """Every resource mapping ``GetResources`` lists for one query, page after page."""
    pages = client.get_paginator("get_resources").paginate(
        TagFilters=[{"Key": key, "Values": [value]} for key, value in tag_filter],
        ResourcesPerPage=_PAGE_SIZE,
    )
    for page in pages:
        yield from page.get("ResourceTagMappingList") or ()


def _tags(mapping: Mapping[str, Any]) -> dict[str, str]:
    """A resource's tags as a mapping, sorted by key so that equal results print alike."""
    pairs = ((tag.get("Key"), tag.get("Value", "")) for tag in mapping.get("Tags") or ())
    return dict(sorted((key, str(value)) for key, value in pairs if isinstance(key, str)))


def _arn_type(arn: str) -> str:
    """``service:type`` of an ARN (``arn:partition:service:region:account:resource``), the type being
    the resource's part before its first ``/`` or ``:``; the service alone when the resource is a bare
    name (an S3 bucket), and ``unknown`` for what is not an ARN."""
    parts = arn.split(":", 5)
    if len(parts) < 6 or parts[0] != "arn" or not parts[2]:
        return "unknown"
    service, resource = parts[2], parts[5]
    kind = re.match(r"([^/:]+)[/:]", resource)
    return f"{service}:{kind.group(1)}" if kind else service


def _explain(exc: Exception, *, region: str, profile: str | None, source: str) -> str:
    """One line for a failure to look: what failed, and what to do about it.

    ``source`` names where the credentials came from, for the messages that blame them.
    """
    from botocore.exceptions import (
        ClientError,
        ConnectionError,
        CredentialRetrievalError,
        HTTPClientError,
        NoCredentialsError,
        PartialCredentialsError,
        ProfileNotFound,
        SSOError,
        SSOTokenLoadError,
        TokenRetrievalError,
    )

    if isinstance(exc, NoCredentialsError):
        text = (
            "no AWS credentials found to list what the cluster left: set aws:profile in the stack's config "
            "or AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), then sweep again"
        )
    elif isinstance(exc, PartialCredentialsError):
        text = f"incomplete AWS credentials ({exc}): set both halves of the key pair, or use a profile"
    elif isinstance(exc, ProfileNotFound):
        text = (
            f"AWS profile {profile!r} is not in the AWS config files: create it (aws configure --profile "
            f"{profile}) or set aws:profile to one that exists"
            if profile
            else f"the AWS profile named by AWS_PROFILE is not in the AWS config files ({exc}): fix it"
        )
    elif isinstance(exc, SSOError | SSOTokenLoadError | TokenRetrievalError):
        text = f"the AWS SSO session of {source} cannot be used ({exc}): run aws sso login, then sweep again"
    elif isinstance(exc, CredentialRetrievalError):
        text = f"could not get AWS credentials from {source} ({exc}): fix the profile's credential source"
    elif isinstance(exc, ClientError):
        error = exc.response.get("Error") or {}
        code = str(error.get("Code") or "error")
        detail = f"{code}: {error.get('Message')}" if error.get("Message") else code
        if code in _REJECTED_CREDENTIALS:
            text = f"AWS rejected the credentials of {source} ({detail}): refresh them, then sweep again"
        elif code in _DENIED:
            text = (
                f"not allowed to list tagged resources in {region} ({detail}): grant tag:GetResources "
                "to the identity that ran the destroy"
            )
        else:
            text = f"the Resource Groups Tagging API failed in {region} ({detail})"
    elif isinstance(exc, ConnectionError | HTTPClientError):
        text = (
            f"could not reach the Resource Groups Tagging API in {region} ({exc}): check the network, "
            "a proxy (HTTPS_PROXY), and the region's name"
        )
    else:
        text = f"the sweep could not list tagged resources in {region}: {type(exc).__name__}: {exc}"
    return _one_line(text)


def _one_line(text: str) -> str:
    """``text`` on one line of bounded length, with anything that looks like a credential masked."""
    line = _CREDENTIAL_LIKE.sub(SECRET, " ".join(text.split()))
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"
