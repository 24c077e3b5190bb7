"""``ExternalSecrets``: External Secrets Operator, reading the stack's secrets from AWS Secrets Manager.

For component ``<n>`` the platform makes:

- with ``iam_role`` (the default), the IAM role ``<n>-role`` that the controller's ServiceAccount takes
  through EKS Pod Identity (trust: ``pods.eks.amazonaws.com``), with the inline policy ``<n>-read``:
  read (``GetSecretValue``, ``DescribeSecret``, ``ListSecretVersionIds``, ``GetResourcePolicy``) only
  the secrets whose names start with ``secret_prefix``, in ``region``
  (:func:`~gitops_infra.checks.secrets_arn`), and ``kms:Decrypt`` on ``kms_key_arn`` through Secrets
  Manager alone, when the secrets are encrypted with a key of the stack's. No
  ``secretsmanager:ListSecrets``: it cannot be scoped to a prefix, so an ``ExternalSecret``'s
  ``dataFrom.find`` is refused, and a ``remoteRef.key`` names each secret. Without ``iam_role``, no AWS
  resource at all: the controller's credentials come from its environment (a cluster outside AWS, the
  local cluster against moto);
- with ``cluster_name``, the ``aws.eks.PodIdentityAssociation`` ``<n>-identity`` of that role with the
  ServiceAccount, and with ``pod_identity_agent`` the cluster's ``eks-pod-identity-agent`` add-on
  (``<n>-pod-identity-agent``), which a cluster the platform made lacks; on a cluster you run it is
  yours. Without ``cluster_name`` (the local cluster) there is no association: the controller's
  credentials come from its environment;
- with ``install``, the namespace and the controller, the ``external-secrets`` Helm chart at
  :data:`CHART_VERSION` (ESO :data:`ESO_VERSION`) with pinned values (:func:`chart_values`), after the
  association, so its pods start with the role;
- the ``ClusterSecretStore`` ``store_name`` for AWS Secrets Manager in ``region``, with no ``auth``: the
  controller's own credentials, which the role gives it. Its name is what app teams reference.

The AWS provider and the Kubernetes provider come through ``opts`` (``providers=[aws, cluster]``). Without
``install``, what the store waits for (ESO's CRDs) comes through ``opts`` too (``depends_on``).

Example::

    secrets = ExternalSecrets(
        "external-secrets",
        ExternalSecretsArgs(region="eu-west-1", secret_prefix="prod/", cluster_name=cluster.name),
        opts=pulumi.ResourceOptions(providers=[aws_provider, cluster.provider]),
    )
    pulumi.export("secretStore", secrets.store_name)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._args import Problems
from gitops_infra.components._kubernetes import custom_resource
from gitops_infra.defaults import CLUSTER_SECRET_STORE, EXTERNAL_SECRETS_NAMESPACE

if TYPE_CHECKING:
    import pulumi_aws as aws
else:
    aws = sdk("pulumi_aws")

__all__ = [
    "CHART",
    "CHART_REPOSITORY",
    "CHART_VERSION",
    "DEFAULT_NAMESPACE",
    "DEFAULT_SERVICE_ACCOUNT",
    "DEFAULT_STORE_NAME",
    "ESO_VERSION",
    "POD_IDENTITY_AGENT",
    "READ_ACTIONS",
    "ExternalSecrets",
    "ExternalSecretsArgs",
    "chart_values",
    "read_policy",
    "store_manifest",
]

TYPE_TOKEN = "gitops-infra:index:ExternalSecrets"
ESO_VERSION = "v0.20.4"
"""The controller the chart runs, and the one the local cluster builds: the newest single-module release
the Go module proxy serves."""
CHART_VERSION = "0.20.4"
"""The ``external-secrets`` chart that ships :data:`ESO_VERSION` (its ``appVersion``)."""
CHART = "external-secrets"
CHART_REPOSITORY = "https://charts.external-secrets.io"
RELEASE_NAME = "external-secrets"
RELEASE_TIMEOUT_SECONDS = 600
DEFAULT_NAMESPACE = EXTERNAL_SECRETS_NAMESPACE
DEFAULT_SERVICE_ACCOUNT = "external-secrets"
DEFAULT_STORE_NAME = CLUSTER_SECRET_STORE
UNKNOWN_ACCOUNT = "<account>"
"""The account in the policy's ARN while the deploying identity is not known: under mocks (the offline
plan answers no function), never in a deployment, where the AWS provider's identity always answers."""
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
"""The EKS add-on that hands pods the role their ServiceAccount is associated with."""
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"
READ_ACTIONS = (
    "secretsmanager:GetSecretValue",
    "secretsmanager:DescribeSecret",
    "secretsmanager:ListSecretVersionIds",
    "secretsmanager:GetResourcePolicy",
)
"""What the controller does to read a secret (ESO's documented read-only policy, less ``ListSecrets``)."""


@dataclass(frozen=True)
class ExternalSecretsArgs:
    """Inputs of ``ExternalSecrets``.

    ``secret_prefix`` is plain text, checked here: the role's whole scope follows from it, so it is never
    left to a value known only at deploy time. ``account_id`` is the secrets' account (by default the
    deploying one). ``iam_role=False`` makes no AWS resource (and so takes no ``cluster_name``): the
    controller then reads with the credentials of its environment. ``namespace``, ``service_account`` and
    ``store_name`` name objects, so they are plain text too. ``tags`` go on the AWS resources.
    """

    region: pulumi.Input[str]
    secret_prefix: str
    cluster_name: pulumi.Input[str] | None = None
    pod_identity_agent: bool = False
    kms_key_arn: pulumi.Input[str] | None = None
    account_id: pulumi.Input[str] | None = None
    iam_role: bool = True
    install: bool = True
    chart_version: str = CHART_VERSION
    namespace: str = DEFAULT_NAMESPACE
    service_account: str = DEFAULT_SERVICE_ACCOUNT
    store_name: str = DEFAULT_STORE_NAME
    tags: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = Problems("ExternalSecretsArgs")
        problems.gate("region", checks.aws_region_problem, self.region)
        problems.gate("secret_prefix", checks.secret_prefix_problem, self.secret_prefix)
        problems.check(
            self.iam_role or self.cluster_name is None,
            "cluster_name",
            "needs iam_role: the association hands the controller that role",
        )
        problems.check(
            self.cluster_name is not None or not self.pod_identity_agent,
            "pod_identity_agent",
            "needs cluster_name: the add-on is installed on that cluster",
        )
        problems.gate("chart_version", checks.chart_version_problem, self.chart_version)
        problems.gate("namespace", checks.dns_label_problem, self.namespace)
        problems.gate("service_account", checks.dns_label_problem, self.service_account)
        problems.gate("store_name", checks.dns_label_problem, self.store_name)
        problems.raise_if_any()


def read_policy(region: str, account: str, prefix: str, kms_key_arn: str | None = None) -> dict[str, Any]:
    """The role's policy: read the secrets under ``prefix``, and decrypt with ``kms_key_arn`` when given
    (only on Secrets Manager's behalf, in ``region``)."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadStackSecrets",
            "Effect": "Allow",
            "Action": list(READ_ACTIONS),
            "Resource": [checks.secrets_arn(region, account, prefix)],
        }
    ]
    if kms_key_arn:
        statements.append(
            {
                "Sid": "DecryptStackSecrets",
                "Effect": "Allow",
                "Action": ["kms:Decrypt"],
                "Resource": [kms_key_arn],
                "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{region}.amazonaws.com"}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


def _trust_policy() -> str:
    # Pod Identity's agent assumes the role and tags the session with the pod's identity.
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def chart_values(args: ExternalSecretsArgs) -> dict[str, Any]:
    """The chart's values: every one the platform leans on is stated, not left to the chart's defaults."""
    return {
        "installCRDs": True,
        "crds": {
            "createClusterExternalSecret": True,
            "createClusterSecretStore": True,
            "createClusterGenerator": True,
            "createClusterPushSecret": True,
            "createPushSecret": True,
        },
        # The chart's tags default to its appVersion: stated, so the controller is the one pinned.
        "image": {"tag": ESO_VERSION},
        "webhook": {"create": True, "image": {"tag": ESO_VERSION}},
        "certController": {"create": True, "image": {"tag": ESO_VERSION}},
        # Pod Identity associates the role with this exact ServiceAccount.
        "serviceAccount": {"create": True, "name": args.service_account},
        "processClusterStore": True,
        "processClusterExternalSecret": True,
        # Two pods overlap during a rolling update: only one reconciles.
        "leaderElect": True,
    }


def store_manifest(name: str, region: pulumi.Input[str], prefix: str) -> dict[str, Any]:
    """The ``ClusterSecretStore``: Secrets Manager in ``region``, with the controller's own credentials.

    The store puts ``prefix`` before every key it reads, as the role's policy allows only the names under
    it: an ``ExternalSecret`` names a secret relative to the prefix and cannot name one outside it, even
    where the credentials could read more (a cluster outside AWS, ``iam_role=False``). ESO applies it to
    ``remoteRef.key`` only, not to ``dataFrom.find``, which the role is not allowed (no listing).
    """
    return {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": name},
        "spec": {"provider": {"aws": {"service": "SecretsManager", "region": region, "prefix": prefix}}},
    }


class ExternalSecrets(pulumi.ComponentResource):
    """The controller's role and its Pod Identity association, the controller, and the store."""

    role: aws.iam.Role | None
    """The controller's role (``None`` without ``iam_role``)."""
    policy: pulumi.Output[str] | None
    """The role's policy document (JSON)."""
    store_name: pulumi.Output[str]
    """The ``ClusterSecretStore`` app teams reference."""

    def __init__(
        self, name: str, args: ExternalSecretsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(args.tags)

        self.role, self.policy = (None, None) if not args.iam_role else self._role(name, args, tags)

        installed_after: list[pulumi.Resource] = []
        if self.role is not None and args.cluster_name is not None:
            if args.pod_identity_agent:
                installed_after.append(
                    aws.eks.Addon(
                        f"{name}-pod-identity-agent",
                        cluster_name=args.cluster_name,
                        addon_name=POD_IDENTITY_AGENT,
                        tags=tags,
                        opts=child,
                    )
                )
            installed_after.append(
                aws.eks.PodIdentityAssociation(
                    f"{name}-identity",
                    cluster_name=args.cluster_name,
                    namespace=args.namespace,
                    service_account=args.service_account,
                    role_arn=self.role.arn,
                    tags=tags,
                    opts=child,
                )
            )

        store_after: list[pulumi.Resource] = []
        if args.install:
            namespace = k8s.core.v1.Namespace(
                f"{name}-namespace", metadata={"name": args.namespace}, opts=child
            )
            store_after.append(
                k8s.helm.v3.Release(
                    f"{name}-controller",
                    name=RELEASE_NAME,
                    chart=CHART,
                    version=args.chart_version,
                    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
                    namespace=namespace.metadata.name,
                    create_namespace=False,
                    values=chart_values(args),
                    cleanup_on_fail=True,
                    timeout=RELEASE_TIMEOUT_SECONDS,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[namespace, *installed_after]),
                )
            )
        store = custom_resource(
            f"{name}-store",
            store_manifest(args.store_name, args.region, args.secret_prefix),
            pulumi.ResourceOptions(parent=self, depends_on=store_after),
        )
        # Known once the store exists: what depends on the name (the contract) waits for it.
        self.store_name = pulumi.Output.all(store.id, args.store_name).apply(lambda values: str(values[1]))
        self.register_outputs(
            {
                "role_arn": self.role.arn if self.role is not None else None,
                "policy": self.policy,
                "store_name": self.store_name,
            }
        )

    def _role(
        self, name: str, args: ExternalSecretsArgs, tags: dict[str, pulumi.Input[str]]
    ) -> tuple[aws.iam.Role, pulumi.Output[str]]:
        """The controller's role and its policy document."""
        child = pulumi.ResourceOptions(parent=self)
        account: pulumi.Input[str] = (
            args.account_id
            if args.account_id is not None
            else aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        )
        # Offline the identity answers nothing: the ARN then says so, rather than "None", and the rest of
        # the document (its prefix, what the policy check reads) is still there to check.
        policy = pulumi.Output.all(args.region, account, args.kms_key_arn).apply(
            lambda values: json.dumps(
                read_policy(values[0], values[1] or UNKNOWN_ACCOUNT, args.secret_prefix, values[2])
            )
        )
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=_trust_policy(),
            description="External Secrets Operator: reads the stack's secrets from AWS Secrets Manager",
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(f"{name}-read", role=role.id, policy=policy, opts=child)
        return role, policy
