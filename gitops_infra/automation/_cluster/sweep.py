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

Which account: the Tagging API lists the account of the credentials it is called with, so the sweep
reaches the account as the stack's AWS provider does: the same profile, then each role of its
``aws:assumeRoles`` chain in turn (role, external ID, session name). It then asks STS which account it
is in, reports it, and where the cluster's ARN names another account, lists nothing and says it could
not look: an empty listing of the wrong account would read as "clean".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import ArgumentError
from ...redaction import SECRET
from ..results.teardown import Orphan, SweepResult

if TYPE_CHECKING:
    import boto3

__all__ = ["AssumedRole", "sweep"]

# A sweep is a report after the work is done: it must end soon, and say why when it cannot look.
_CONNECT_TIMEOUT = 5
_READ_TIMEOUT = 30
_MAX_ATTEMPTS = 3
_PAGE_SIZE = 100  # the API's maximum: fewer round trips for an account with many tagged resources
_MAX_MESSAGE = 300
# STS's shortest session: the sweep's few calls need no more, and its credentials should not outlive it.
_ROLE_SECONDS = 900
_SESSION_NAME = "gitops-infra-sweep"
"""The session name of a role with no ``sessionName`` (AWS requires one; the provider makes one up too)."""

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


@dataclass(frozen=True)
class AssumedRole:
    """One role of the AWS provider's ``aws:assumeRoles`` chain, as the sweep assumes it."""

    role_arn: str
    external_id: str | None = field(default=None, repr=False)
    """Never shown: a trust policy's shared value, which the holder of a role ARN must not learn."""
    session_name: str | None = None


def sweep(
    cluster: str,
    region: str,
    *,
    profile: str | None = None,
    session: boto3.session.Session | None = None,
    roles: Sequence[AssumedRole] = (),
    account: str | None = None,
    sts_region: str | None = None,
) -> SweepResult:
    """List what AWS still holds tagged for ``cluster`` in ``region``: the resources its controllers made.

    Credentials are found as for ``pulumi up``: the named AWS ``profile`` (the stack's ``aws:profile``),
    else the environment's, then each of ``roles`` assumed in turn through STS (in ``sts_region``, else
    ``region``), as the provider's ``aws:assumeRoles`` chain does. ``session`` is one the caller has
    already set up (a test); give it or ``profile``, not both. The result names the account listed;
    where ``account`` (the cluster's, from its ARN) is another, nothing is listed and the result's
    ``error`` says the sweep could not look.

    Never raises for AWS: a failure to look (no credentials, an unknown profile, a role that cannot be
    assumed, access denied, no network) is the result's ``error``, one line that says what to do, with no
    credential or external ID in it. Raises ``ArgumentError`` for an empty ``cluster`` or ``region``.
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
    from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

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
    hidden = tuple(role.external_id for role in roles if role.external_id)
    sts_region = sts_region or region
    link: int | None = None  # the role of the chain being assumed, for an error's words
    swept: str | None = None
    try:
        if session is None:
            session = boto3.session.Session(profile_name=profile, region_name=region)
        for index, role in enumerate(roles):
            link = index
            session = _assumed(session, role, region=sts_region, config=config)
        link = None
        identity = session.client("sts", region_name=sts_region, config=config).get_caller_identity()
        swept = str(identity["Account"])
        if account is not None and swept != account:
            error = _elsewhere(account, swept, source=source, roles=roles)
            return SweepResult(cluster=cluster, region=region, account=swept, error=_one_line(error, hidden))
        client = session.client("resourcegroupstaggingapi", region_name=region, config=config)
        orphans = _orphans(client, cluster)
    except (BotoCoreError, ClientError, Boto3Error) as exc:
        refused = isinstance(exc, ParamValidationError) or (
            isinstance(exc, ClientError) and _code(exc) not in _REJECTED_CREDENTIALS
        )
        if link is not None and refused:
            text = _refused_role(exc, link, roles=roles, source=source)
        else:
            listing = swept is not None
            where = region if listing else sts_region
            text = _explain(exc, region=where, profile=profile, source=source, listing=listing)
        return SweepResult(cluster=cluster, region=region, account=swept, error=_one_line(text, hidden))
    return SweepResult(cluster=cluster, region=region, account=swept, orphans=orphans)


def _orphans(client: Any, cluster: str) -> tuple[Orphan, ...]:
    """Every resource a query of :func:`_tag_filters` lists, once, sorted by ARN."""
    found: dict[str, Orphan] = {}
    for tag_filter in _tag_filters(cluster):
        matched = ",".join(f"{key}={value}" for key, value in tag_filter)
        for mapping in _resources(client, tag_filter):
            arn = mapping.get("ResourceARN")
            if isinstance(arn, str) and arn and arn not in found:
                found[arn] = Orphan(arn=arn, type=_arn_type(arn), tags=_tags(mapping), matched=matched)
    return tuple(found[arn] for arn in sorted(found))


def _assumed(
    session: boto3.session.Session, role: AssumedRole, *, region: str, config: Any
) -> boto3.session.Session:
    """A session with the credentials of ``role``, assumed with those of ``session`` (one link of a
    chain, as ``aws:assumeRoles`` assumes each role with the credentials of the one before)."""
    import boto3.session

    extra = {"ExternalId": role.external_id} if role.external_id else {}
    answer = session.client("sts", region_name=region, config=config).assume_role(
        RoleArn=role.role_arn,
        RoleSessionName=role.session_name or _SESSION_NAME,
        DurationSeconds=_ROLE_SECONDS,
        **extra,
    )
    credentials = answer["Credentials"]
    return boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=session.region_name,
    )


def _elsewhere(account: str, swept: str, *, source: str, roles: Sequence[AssumedRole]) -> str:
    """Why the sweep did not list: its credentials reach another account than the cluster's."""
    reached = f"{source}, as role {roles[-1].role_arn}," if roles else source
    return (
        f"the cluster is in AWS account {account} (its ARN), but the credentials of {reached} are for "
        f"account {swept}: nothing was listed; sweep with the stack's own AWS credentials (aws:profile, "
        "aws:assumeRoles)"
    )


def _refused_role(exc: Exception, link: int, *, roles: Sequence[AssumedRole], source: str) -> str:
    """Why role ``link`` of the chain could not be assumed, naming the identity that asked for it."""
    role = roles[link]
    if hasattr(exc, "response"):  # AWS's refusal
        message = (exc.response.get("Error") or {}).get("Message")
        detail = f"{_code(exc)}: {message}" if message else _code(exc)
    else:  # botocore's own check of the parameters (a session name too short)
        detail = f"{type(exc).__name__}: {exc}"
    asker = f"role {roles[link - 1].role_arn}" if link else f"the credentials of {source}"
    external = " with the external ID given" if role.external_id else ""
    return (
        f"could not assume role {role.role_arn} ({detail}): its trust policy must let {asker} assume it"
        f"{external}, and that identity needs sts:AssumeRole on it"
    )


def _code(exc: Any) -> str:
    """The error code of AWS's answer (a ``ClientError``)."""
    return str((exc.response.get("Error") or {}).get("Code") or "error")


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


def _explain(exc: Exception, *, region: str, profile: str | None, source: str, listing: bool = True) -> str:
    """What failed, and what to do about it.

    ``source`` names where the credentials came from, for the messages that blame them; ``listing`` is
    False while the sweep still asks STS (a role, the account), before the Tagging API.
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
        elif not listing:
            text = f"AWS STS could not tell which account the credentials of {source} are for ({detail})"
        elif code in _DENIED:
            text = (
                f"not allowed to list tagged resources in {region} ({detail}): grant tag:GetResources "
                "to the identity that ran the destroy"
            )
        else:
            text = f"the Resource Groups Tagging API failed in {region} ({detail})"
    elif isinstance(exc, ConnectionError | HTTPClientError):
        api = "the Resource Groups Tagging API" if listing else "AWS STS"
        text = (
            f"could not reach {api} in {region} ({exc}): check the network, a proxy (HTTPS_PROXY), and "
            "the region's name"
        )
    else:
        text = f"the sweep could not list tagged resources in {region}: {type(exc).__name__}: {exc}"
    return text


def _one_line(text: str, hidden: Sequence[str] = ()) -> str:
    """``text`` on one line of bounded length, with each of ``hidden`` (external IDs) and anything that
    looks like a credential masked."""
    for secret in sorted(hidden, key=len, reverse=True):
        text = text.replace(secret, SECRET)
    line = _CREDENTIAL_LIKE.sub(SECRET, " ".join(text.split()))
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"
