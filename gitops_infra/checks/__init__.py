"""The small rules that more than one edge enforces, each written once. No Pulumi import.

The stack config models (:mod:`gitops_infra.config`), the component Args and the policy pack all call
these, so a value one of them accepts is never refused by another, in the manner of awsx's single
``validateVpcArgs`` gate. Each check returns ``None`` when the value passes, or what was expected, as a
short phrase (``"must be a Go duration such as 30s, 5m or 1h"``); the caller puts its own key path in front
(``gitops-infra:flux.interval`` in the config, ``FluxBootstrapArgs.interval`` in the Args). A check never
echoes the value it refused: config values may be secret-adjacent, and the key path says where to look.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Collection, Sequence, Sized
from datetime import timedelta

from gitops_infra.defaults import FLUX_CHART_VERSION, FLUX_VERSION, MIN_KUBERNETES_VERSION

__all__ = [
    "AL2_GONE_FROM_KUBERNETES",
    "AL2_SUCCESSORS",
    "AUTONAME_SUFFIX_LENGTH",
    "AVAILABILITY_ZONE_PATTERN",
    "BRANCH_PATTERN",
    "CHART_VERSION_PATTERN",
    "CUSTOM_AMI_TYPE",
    "DEFAULT_BRANCH",
    "DEFAULT_SSH_PORT",
    "DELETE_MARGIN",
    "DNS_LABEL_PATTERN",
    "EKS_AMI_TYPES",
    "EKS_CLUSTER_NAME_MAX",
    "EKS_NODE_GROUP_NAME_MAX",
    "FLEET_SECTION",
    "GITHUB_API_URL_PATTERN",
    "GITHUB_HOST",
    "GITHUB_ID_MAX",
    "GO_DURATION_PATTERN",
    "IAM_ROLE_NAME_MAX",
    "IAM_ROLE_PATTERN",
    "KUBERNETES_MINOR_PATTERN",
    "LABEL_KEY_PATTERN",
    "LABEL_VALUE_PATTERN",
    "MAX_NODE_GROUP_SIZE",
    "MAX_READY_TIMEOUT",
    "MAX_ZONES",
    "MIN_DELETE_TIMEOUT",
    "MIN_VPC_PREFIX",
    "MIN_ZONES",
    "NOTIFICATION_CONTROLLER",
    "PLAINTEXT_PRIVATE_KEY",
    "PRIVATE_KEY_PATTERN",
    "PROD_ENVIRONMENTS",
    "READY_MARGIN",
    "REPOSITORY_PATTERN",
    "REQUIRED_FLUX_COMPONENTS",
    "SSH_URL_PATTERN",
    "TOLERATION_EFFECTS",
    "ami_type_problem",
    "ami_type_version_problem",
    "availability_zone_problem",
    "availability_zones_problem",
    "branch_problem",
    "chart_version_problem",
    "cluster_component_name_problem",
    "default_ready_timeout",
    "delete_timeout",
    "dns_label_problem",
    "flux_components_extra_problem",
    "flux_components_problem",
    "format_duration",
    "github_api_url_problem",
    "github_app_url_problem",
    "github_host",
    "github_id",
    "github_id_problem",
    "go_duration_problem",
    "iam_role_problem",
    "instance_types_problem",
    "ipv4_cidr_problem",
    "is_prod",
    "known_hosts_for_url_problem",
    "known_hosts_problem",
    "kubernetes_floor_problem",
    "kubernetes_minor_problem",
    "kubernetes_version_problem",
    "label_problem",
    "max_cluster_component_name",
    "max_node_group_name",
    "node_group_name_problem",
    "node_group_names_problem",
    "node_group_size_problems",
    "notifications_problem",
    "parse_duration",
    "private_key_paths",
    "private_subnets_problem",
    "ready_timeout_after_timeout_problem",
    "ready_timeout_problem",
    "relative_path_problem",
    "repository_name_problem",
    "ssh_url_host",
    "ssh_url_problem",
    "toleration_problems",
    "vpc_cidr_problem",
]

# -- Go durations --------------------------------------------------------------------------------------

GO_DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
"""What Flux's CRDs accept for ``interval``, ``retryInterval`` and ``timeout`` (their OpenAPI ``pattern``).

Narrower than Go's ``time.ParseDuration``: no bare ``0``, no ``.5m`` or ``1.m``, no ``ns``/``us``/``µs``.
A value the API server would refuse must be refused here first, by the same pattern.
"""
_DURATION = re.compile(GO_DURATION_PATTERN)
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
GO_DURATION_HINT = "must be a Go duration such as 30s, 5m, 1m30s or 1h (units ms, s, m, h)"


GO_MAX_DURATION_SECONDS = (2**63 - 1) / 1e9
"""Go's longest ``time.Duration`` (int64 nanoseconds, about 2562047h): a longer one does not parse."""


def _duration_seconds(text: str) -> float:
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(text))


def go_duration_problem(value: object) -> str | None:
    """``None`` for a duration Flux's CRDs accept and Go can hold, else what was expected."""
    if not isinstance(value, str) or not _DURATION.fullmatch(value):
        return GO_DURATION_HINT
    if _duration_seconds(value) > GO_MAX_DURATION_SECONDS:
        return "must be at most 2562047h, the longest duration Go (and so Flux) can hold"
    return None


PROD_ENVIRONMENTS = ("prod", "production")
"""Environment names that mean prod: the policy pack's default, and where ``destroy`` asks to confirm."""


def is_prod(environment_name: object, stack: str) -> bool:
    """True for a prod stack, as ``destroy`` tells one (``prod_environment``): its environment's name or
    its own (the part after the last ``/``) is one of ``PROD_ENVIRONMENTS``. An environment name that is
    there but not text cannot be told from prod, so it is prod."""
    if environment_name is not None and not isinstance(environment_name, str):
        return True
    names = (environment_name or "", stack.rpartition("/")[2])
    return any(name.lower() in PROD_ENVIRONMENTS for name in names)


PRIVATE_KEY_PATTERN = (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"  # PEM and OpenSSH; PGP's ends in BLOCK
    r"|PuTTY-User-Key-File-[0-9]+:"
    r"|AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{50,}"  # age: bech32 after its HRP
)
"""Text that holds a private key: what a PEM, OpenSSH, PGP, PuTTY or age private key starts with."""
_PRIVATE_KEY = re.compile(PRIVATE_KEY_PATTERN)
PLAINTEXT_PRIVATE_KEY = (
    "holds a private key in plaintext, in a file that is committed: set it with "
    "`pulumi config set --secret` (a file's content with `< file`), and rotate the key: git history keeps it"
)


def private_key_paths(value: object, where: str) -> list[str]:
    """The key paths under ``where`` whose text holds a private key (see ``PRIVATE_KEY_PATTERN``), in a
    config value as a stack file holds it: text, mappings and lists. A ``{"secure": ...}`` value is
    ciphertext, never one. A value a YAML alias repeats (or that holds itself) is looked into once."""
    found: list[str] = []
    seen: set[int] = set()
    pending: list[tuple[object, str]] = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            if _PRIVATE_KEY.search(item):
                found.append(path)
            continue
        if id(item) in seen or (isinstance(item, dict) and set(item) == {"secure"}):
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            pending.extend((child, f"{path}.{key}") for key, child in reversed(item.items()))
        elif isinstance(item, list | tuple):
            pending.extend((child, f"{path}[{index}]") for index, child in reversed(list(enumerate(item))))
    return found


MAX_READY_TIMEOUT = timedelta(hours=24)


def ready_timeout_problem(value: object) -> str | None:
    """``None`` for a wait ``up`` can make: a Go duration of at most a day (``0s``: no wait)."""
    problem = go_duration_problem(value)
    if problem is not None:
        return problem
    assert isinstance(value, str)  # go_duration_problem accepts strings only
    # A day is already a hung pipeline; far beyond it, the provider's seconds overflow to no wait at all.
    return "must be at most 24h" if parse_duration(value) > MAX_READY_TIMEOUT else None


READY_MARGIN = timedelta(minutes=2)
"""How much longer than Flux's own ``timeout`` ``up`` waits for Ready by default: Flux clones and builds
the path before its wait for the applied objects' health starts."""
DELETE_MARGIN = timedelta(minutes=5)
"""How much longer than Flux's ``timeout`` a delete of a sync object may take: with ``deletionPolicy:
WaitForTermination`` kustomize-controller holds its finalizer up to ``timeout`` while what it applied goes."""
MIN_DELETE_TIMEOUT = timedelta(minutes=10)
"""The provider's own delete timeout, which a derived one never goes below."""


def default_ready_timeout(timeout: str) -> str:
    """How long ``up`` waits for Ready when ``readyTimeout`` is not set: Flux's ``timeout`` and a margin."""
    return format_duration(parse_duration(timeout) + READY_MARGIN)


def ready_timeout_after_timeout_problem(ready_timeout: str, timeout: str) -> str | None:
    """``None`` when ``up`` waits longer than Flux does (or not at all, ``0s``), else what was expected.

    Flux reports a Kustomization not Ready only once its health checks have run out of ``timeout``; a
    shorter wait fails ``up`` while Flux is still legitimately waiting, with no verdict to show.
    """
    wait = parse_duration(ready_timeout)
    if not wait or wait > parse_duration(timeout):
        return None
    return (
        f"must be longer than timeout ({timeout}), which Flux may spend waiting for health checks before "
        f"it reports Ready or not; leave it unset for timeout plus {format_duration(READY_MARGIN)}, or "
        "0s not to wait"
    )


def delete_timeout(timeout: str) -> str:
    """How long a delete of a sync object may take: Flux's ``timeout`` and a margin, 10m at least."""
    return format_duration(max(parse_duration(timeout) + DELETE_MARGIN, MIN_DELETE_TIMEOUT))


def format_duration(delta: timedelta) -> str:
    """``delta`` as a Go duration Flux and Pulumi both read (``7m``, ``1h2m3s``), whole seconds up."""
    seconds = math.ceil(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if n)
    return text or "0s"


def parse_duration(text: str) -> timedelta:
    """Parse a duration Flux accepts (``1m30s``, ``5m``, ``1.5h``); raise ``ValueError`` otherwise."""
    if go_duration_problem(text) is not None:
        raise ValueError(f"{text!r} is not a Go duration such as 1m30s, 5m or 60s, of at most 2562047h")
    return timedelta(seconds=_duration_seconds(text))


# -- networks ------------------------------------------------------------------------------------------

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


def _pattern_problem(pattern: re.Pattern[str], value: object, hint: str) -> str | None:
    """``None`` for a string ``pattern`` matches whole, else ``hint``.

    ``fullmatch``, not ``match``: a ``$`` alone would let a trailing newline through.
    """
    return None if isinstance(value, str) and pattern.fullmatch(value) else hint


def availability_zone_problem(value: object) -> str | None:
    """``None`` for an availability zone's name (``eu-west-1a``); a region (``eu-west-1``) is not one."""
    return _pattern_problem(_AVAILABILITY_ZONE, value, "must be an availability zone such as eu-west-1a")


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


# -- node groups ---------------------------------------------------------------------------------------

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


# -- Kubernetes ----------------------------------------------------------------------------------------

DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
"""An RFC 1123 label, as Kubernetes names namespaces (at most 63 characters)."""
_DNS_LABEL = re.compile(DNS_LABEL_PATTERN)
DNS_LABEL_HINT = "must be a DNS label (lowercase letters, digits and '-', at most 63 characters)"

TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""The effects Kubernetes accepts on a toleration; empty means every effect."""


def dns_label_problem(value: object) -> str | None:
    """``None`` for an RFC 1123 label (a namespace name, a node group name)."""
    if isinstance(value, str) and _DNS_LABEL.fullmatch(value):
        return None
    return DNS_LABEL_HINT


def relative_path_problem(value: object) -> str | None:
    """``None`` for a path inside a repository: relative, no ``..`` step, no whitespace."""
    if (
        isinstance(value, str)
        and value
        and not value.startswith("/")
        and ".." not in value.split("/")
        and not re.search(r"\s", value)
    ):
        return None
    return "must be a relative path inside the repository, without '..' or whitespace"


def toleration_problems(
    key: str | None, operator: str | None, value: str | None, effect: str | None
) -> list[tuple[str, str]]:
    """``(field, what was expected)`` for each way a toleration breaks the API server's own validation.

    As ``ValidateTolerations`` in Kubernetes: ``Exists`` takes no value, an empty key matches every taint
    and so needs ``Exists``, and the effect is one of ``TOLERATION_EFFECTS`` (or empty, for all).
    """
    problems: list[tuple[str, str]] = []
    operator = operator or "Equal"
    if operator not in ("Exists", "Equal"):
        problems.append(("operator", "must be Exists or Equal"))
    if operator == "Exists" and value:
        problems.append(("value", "must be empty when operator is Exists"))
    if not key and operator != "Exists":
        problems.append(("operator", "must be Exists when key is empty (a toleration of every taint)"))
    if effect and effect not in TOLERATION_EFFECTS:
        problems.append(("effect", f"must be one of {', '.join(TOLERATION_EFFECTS)}"))
    return problems


IAM_ROLE_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+$"
"""An IAM role ARN: what ``aws:assumeRoles`` and a fleet stack's ``role`` name."""
_IAM_ROLE = re.compile(IAM_ROLE_PATTERN)
IAM_ROLE_HINT = "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"


def iam_role_problem(value: object) -> str | None:
    """``None`` for an IAM role ARN."""
    return _pattern_problem(_IAM_ROLE, value, IAM_ROLE_HINT)


_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY_PATTERN = rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$"
"""A Kubernetes label key: an optional DNS prefix and ``/``, then a name of at most 63 characters."""
LABEL_VALUE_PATTERN = rf"^({_LABEL_NAME})?$"
"""A Kubernetes label value: empty, or a name of at most 63 characters."""
_LABEL_KEY = re.compile(LABEL_KEY_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)


def label_problem(key: object, value: object) -> str | None:
    """``None`` for a label Kubernetes would take: fleet labels become selectors and Job labels."""
    return _pattern_problem(
        _LABEL_KEY,
        key,
        "a label key is letters, digits, '-', '_' and '.' (at most 63), with an optional DNS prefix and '/'",
    ) or _pattern_problem(
        _LABEL_VALUE, value, "a label value is empty, or letters, digits, '-', '_' and '.' (at most 63)"
    )


IAM_PRINCIPAL_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[\w+=,.@/-]+$"
"""An IAM role or user ARN: what an EKS access entry names (not an STS assumed-role session)."""
_IAM_PRINCIPAL = re.compile(IAM_PRINCIPAL_PATTERN)
IAM_PRINCIPAL_HINT = "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)"


def iam_principal_problem(value: object) -> str | None:
    """``None`` for an IAM role or user ARN."""
    return _pattern_problem(_IAM_PRINCIPAL, value, IAM_PRINCIPAL_HINT)


def principal_key(arn: str) -> tuple[str, str, str, str] | None:
    """An IAM role or user ARN as (partition, account, kind, name): IAM names ignore case and path."""
    if _IAM_PRINCIPAL.match(arn) is None:
        return None
    parts = arn.split(":", 5)
    kind, _, path = parts[5].partition("/")
    return (parts[1], parts[4], kind, path.rsplit("/", 1)[-1].lower())


ADMINS_NEED_CREATOR = (
    "required when admins are listed: EKS gives the principal that creates the cluster an access entry "
    "of its own and refuses a second one for it, so the creator is named once, not taken from whoever "
    "runs the update"
)


def admins_problem(admins: Sequence[str]) -> str | None:
    """``None`` unless two admins name one principal (EKS holds one access entry per principal)."""
    seen: dict[tuple[str, str, str, str], str] = {}
    for arn in admins:
        key = principal_key(arn)
        if key is None:
            continue
        if key in seen:
            return f"{seen[key]} and {arn} are one principal (IAM names ignore case and path)"
        seen[key] = arn
    return None


KUBERNETES_MINOR_PATTERN = r"^1\.[0-9]{2}$"
"""A Kubernetes minor version as EKS takes it (``1.33``): no patch, no ``v``."""
_KUBERNETES_MINOR = re.compile(KUBERNETES_MINOR_PATTERN)


def kubernetes_minor_problem(value: object) -> str | None:
    """``None`` for a Kubernetes minor version such as ``1.33``."""
    return _pattern_problem(_KUBERNETES_MINOR, value, "must be a Kubernetes minor version such as 1.33")


def kubernetes_version_problem(version: str, floor: str) -> str | None:
    """``None`` when the ``major.minor`` ``version`` is at least ``floor``."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    try:
        too_old = parts(version) < parts(floor)
    except ValueError:
        return "must be a Kubernetes minor version such as 1.33"
    return f"must be {floor} or newer" if too_old else None


# -- names AWS derives from ours -----------------------------------------------------------------------

IAM_ROLE_NAME_MAX = 64
EKS_CLUSTER_NAME_MAX = 100
EKS_NODE_GROUP_NAME_MAX = 63
AUTONAME_SUFFIX_LENGTH = 8
"""What Pulumi's auto-naming appends to a resource name for its physical name: ``-`` and 7 hex digits."""

# The longest IAM role name derived from an EksCluster named N: pulumi-eks's cluster role, from its
# `${name}-eksRole` ServiceRole around a `${name}-role` Role, where its own name is our `N-cluster`.
# Our node role (`N-node-role`) is shorter. Both are auto-named, so the suffix counts too.
_LONGEST_ROLE_SUFFIX = "-cluster-eksRole-role"


def max_cluster_component_name() -> int:
    """The longest ``EksCluster`` resource name whose derived IAM role names fit IAM's limit."""
    return IAM_ROLE_NAME_MAX - len(_LONGEST_ROLE_SUFFIX) - AUTONAME_SUFFIX_LENGTH


def cluster_component_name_problem(name: str) -> str | None:
    """``None`` when every name AWS derives from the ``EksCluster`` named ``name`` fits its limit."""
    limit = max_cluster_component_name()
    if len(name) <= limit:
        return None
    return (
        f"must be at most {limit} characters: pulumi-eks names the cluster's IAM role "
        f"<name>{_LONGEST_ROLE_SUFFIX} plus an {AUTONAME_SUFFIX_LENGTH}-character suffix, "
        f"and IAM allows {IAM_ROLE_NAME_MAX}"
    )


def max_node_group_name(cluster_component_name: str) -> int:
    """The longest node group name whose EKS node group (``<cluster>-<group>``, auto-named) fits."""
    return EKS_NODE_GROUP_NAME_MAX - len(cluster_component_name) - 1 - AUTONAME_SUFFIX_LENGTH


def node_group_name_problem(cluster_component_name: str, group: str) -> str | None:
    """``None`` when the EKS node group named after ``group`` in that cluster fits EKS's limit."""
    limit = max_node_group_name(cluster_component_name)
    if len(group) <= limit:
        return None
    return (
        f"must be at most {max(limit, 0)} characters here: the EKS node group is named "
        f"<cluster>-<group> plus an {AUTONAME_SUFFIX_LENGTH}-character suffix, and EKS allows "
        f"{EKS_NODE_GROUP_NAME_MAX}"
    )


# -- git -----------------------------------------------------------------------------------------------

DEFAULT_BRANCH = "main"
"""The branch Flux syncs and the scaffold commits to, unless ``git.branch`` says otherwise."""
SSH_URL_PATTERN = r"^ssh://([A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+(:[0-9]{1,5})?/\S+$"
"""``ssh://[user@]host[:port]/path``: how a GitRepository names a repository it clones with an SSH key
(its CRD takes only ``http``, ``https`` and ``ssh`` URLs, so no scp-like ``git@host:path``)."""
_SSH_URL = re.compile(SSH_URL_PATTERN)
REPOSITORY_PATTERN = r"^[A-Za-z0-9_.-]{1,100}$"
"""A GitHub repository's name, as GitHub allows it: ASCII letters, digits, ``.``, ``-`` and ``_``."""
_REPOSITORY = re.compile(REPOSITORY_PATTERN)
BRANCH_PATTERN = r"^[^\s~^:?*\[\\]{1,255}$"
"""A branch name of at most 255 characters, none of them whitespace or one of ``~ ^ : ? * [ \\``, which
``git check-ref-format`` refuses. git refuses a few more forms (``a..b``, ``name.lock``): Flux says so."""
_BRANCH = re.compile(BRANCH_PATTERN)


def ssh_url_problem(value: object) -> str | None:
    """``None`` for an ``ssh://`` URL with a path (``ssh://git@git.example.com/org/fleet.git``)."""
    return _pattern_problem(
        _SSH_URL, value, "must be an ssh:// URL, such as ssh://git@git.example.com/org/fleet.git"
    )


HTTPS_URL_PATTERN = r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/\S+$"
"""``https://host[:port]/path``: how a GitRepository names a repository it clones as a GitHub App."""
_HTTPS_URL = re.compile(HTTPS_URL_PATTERN)


def https_url_problem(value: object) -> str | None:
    """``None`` for an ``https://`` URL with a path (``https://github.com/org/fleet``)."""
    return _pattern_problem(
        _HTTPS_URL, value, "must be an https:// URL, such as https://github.com/org/fleet"
    )


def git_url_problem(value: object) -> str | None:
    """``None`` for a URL a GitRepository clones: ``ssh://`` (a deploy key) or ``https://`` (a GitHub App)."""
    if ssh_url_problem(value) is None or https_url_problem(value) is None:
        return None
    return (
        "must be an ssh:// URL such as ssh://git@git.example.com/org/fleet.git, or an https:// URL "
        "such as https://github.com/org/fleet for GitHub App auth"
    )


def git_auth_url_problem(url: str, github_app: bool) -> str | None:
    """``None`` when ``url``'s scheme is the one its auth speaks: SSH for a deploy key, HTTPS for an App.

    Flux would take either and fail at the first fetch (a key offered over HTTPS, an App token over SSH).
    """
    if github_app and not url.startswith("https://"):
        return (
            "GitHub App auth fetches over HTTPS: use https://github.com/<owner>/<repository> "
            "(an ssh:// URL needs a deploy key)"
        )
    if not github_app and not url.startswith("ssh://"):
        return (
            "a deploy key authenticates over SSH: use ssh://git@<host>/<owner>/<repository>, or "
            "GitHub App auth for an https:// URL"
        )
    return None


GITHUB_HOST = "github.com"
"""The host github.com's repositories are cloned from; its API is ``api.github.com``."""
_HTTPS_DEFAULT_PORT = ":443"


def _https_host(url: str) -> str:
    """The ``host[:port]`` of an ``https://`` URL, lowercase, without the default port."""
    authority = url.removeprefix("https://").split("/", 1)[0].lower()
    return authority.removesuffix(_HTTPS_DEFAULT_PORT)


GITHUB_API_URL_PATTERN = r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/\S*)?$"
"""A GitHub API's base URL: ``https://<host>/api/v3`` on an Enterprise Server, a bare ``https://api.<host>``
on github.com and GitHub Enterprise Cloud (``https://api.<name>.ghe.com``)."""
_GITHUB_API_URL = re.compile(GITHUB_API_URL_PATTERN)


def github_api_url_problem(value: object) -> str | None:
    """``None`` for a GitHub API's base URL (``https://ghe.example.com/api/v3``)."""
    return _pattern_problem(
        _GITHUB_API_URL,
        value,
        "must be an https:// URL of a GitHub API, such as https://ghe.example.com/api/v3 (Enterprise Server)",
    )


def github_host(api_url: str | None) -> str:
    """The host a GitHub's repositories are cloned from, given its API's base URL (``None``: github.com).

    GitHub Enterprise Server serves its API on its own host, under ``/api/v3``
    (``https://ghe.example.com/api/v3``). github.com and GitHub Enterprise Cloud with data residency
    serve theirs on an ``api.`` host (``api.github.com``, ``api.<name>.ghe.com``), which is how
    fluxcd/pkg/auth's githubapp client tells the two apart (``isGitHubAPIHost``).
    """
    if api_url is None:
        return GITHUB_HOST
    host = _https_host(api_url)
    path = api_url.removeprefix("https://").partition("/")[2]
    if host.startswith("api.") and path.rstrip("/") != "api/v3":
        return host.removeprefix("api.")
    return host


def github_app_url_problem(url: str, api_url: str | None) -> str | None:
    """``None`` when a GitHub App's ``https://`` ``url`` is on the GitHub whose API issues its token.

    Source-controller trades the App's key for a token at the API (``githubAppBaseURL``, else
    github.com's) and presents it to whatever host the url names, unchecked (fluxcd/pkg/auth
    githubapp): on another host every fetch fails, and a token of the one GitHub is sent to the other.
    """
    expected = github_host(api_url)
    if not url.startswith("https://") or _https_host(url) == expected:
        return None
    issuer = "the API at the App's base URL" if api_url else "github.com's API: no base URL is set"
    return (
        f"must be on {expected} (https://{expected}/<owner>/<repository>), the GitHub whose API issues "
        f"the App's token ({issuer}); Flux presents that token to the url's host"
    )


GIT_PROVIDERS = ("github",)
"""The GitRepository ``spec.provider`` values the platform writes (``generic``, Flux's default, is none)."""


def git_provider_problem(value: object) -> str | None:
    """``None`` for a GitRepository provider the platform sets up the auth of."""
    return None if value in GIT_PROVIDERS else f"must be one of {', '.join(GIT_PROVIDERS)}, or unset"


FLEET_SECTION = "fleet"
"""The stack config section (``gitops-infra:fleet``) that places a stack in the fleet: the stack config
knows it as a key of its own, and the fleet's inventory reads it, even from projects of other programs."""

RECONCILE_REQUEST_ANNOTATION = "reconcile.fluxcd.io/requestedAt"
"""Asks a Flux controller to reconcile now, whatever its interval: any new value is a new request, and
``status.lastHandledReconcileAt`` echoes the value handled. The platform sets it to prove a credential,
``flux reconcile`` sets it to a time."""
RECONCILE_REQUEST_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
_RECONCILE_REQUEST = re.compile(RECONCILE_REQUEST_PATTERN)


def reconcile_request_problem(value: object) -> str | None:
    """``None`` for a ``reconcile.fluxcd.io/requestedAt`` value ``up`` can wait on: the provider's
    ``jsonpath={...}=value`` splits on ``=``, so the value holds none."""
    return _pattern_problem(
        _RECONCILE_REQUEST, value, "must be 1-128 letters, digits, '.', '_' or '-' (such as a digest)"
    )


GITHUB_ID_MAX = 2**63 - 1
"""The largest ID source-controller reads (``strconv.ParseInt(..., 10, 64)`` in fluxcd/pkg/auth)."""


def github_id(value: object) -> int | None:
    """A GitHub App's or installation's ID as a number: ``123456``, or the digit string ``"123456"``
    (the form pulumi-github's own ``github:appAuth`` takes); ``None`` for anything else."""
    # 19 digits at most: longer is out of range, and int() refuses a string of over 4300 (CVE-2020-10735).
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    # bool is an int to Python, and a float is not a whole number even when it looks like one.
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= GITHUB_ID_MAX:
        return value
    return None


def github_id_problem(value: object) -> str | None:
    """``None`` for a GitHub App's or installation's ID (``123456`` or ``"123456"``)."""
    if github_id(value) is not None:
        return None
    return (
        "must be a positive whole number such as 123456, or its digits as a string "
        "(GitHub shows it on the App's settings page)"
    )


def repository_name_problem(value: object) -> str | None:
    """``None`` for a repository's name on GitHub, without its owner (``fleet``)."""
    if isinstance(value, str) and "/" in value:
        return "must be a repository name, not owner/name"
    return _pattern_problem(_REPOSITORY, value, "must be a repository name")


def branch_problem(value: object) -> str | None:
    """``None`` for a branch name git and GitHub accept (``main``, ``release/v1``)."""
    hint = "must be a branch name: at most 255 characters, no whitespace and none of ~ ^ : ? * [ \\"
    return _pattern_problem(_BRANCH, value, hint)


DEFAULT_SSH_PORT = 22


def ssh_url_host(url: str) -> tuple[str, int | None]:
    """The host of an ``ssh://[user@]host[:port]/path`` URL, and its port when it names one."""
    authority = url.removeprefix("ssh://").split("/", 1)[0].rpartition("@")[2]
    host, _, port = authority.partition(":")
    return host, int(port) if port.isdigit() else None


def known_hosts_for_url_problem(known_hosts: str, url: str) -> str | None:
    """``None`` when ``known_hosts`` can vouch for the host ``url`` names, else what was expected.

    On a port other than 22, ssh looks the host key up under ``[host]:port``, so a line naming the bare
    host never matches and every clone fails host key checking. A hashed line (``|1|...``) cannot be read
    here, so it is taken on trust.
    """
    host, port = ssh_url_host(url)
    if port is None or port == DEFAULT_SSH_PORT:
        return None
    wanted = f"[{host}]:{port}"
    for line in known_hosts.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("@"):  # a marker (@cert-authority, @revoked) comes first
            fields = fields[1:]
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0].startswith("|1|") or wanted in fields[0].split(","):
            return None
    return (
        f"must name the host as {wanted}: the url's port is {port}, and ssh looks a host key up under "
        "[host]:port on a port other than 22, so a line for the bare host never matches"
    )


def known_hosts_problem(value: object) -> str | None:
    """``None`` for ``known_hosts`` text that holds something: with none, every clone fails host checking."""
    if isinstance(value, str) and value.strip():
        return None
    return "must not be empty: the git host's SSH host keys, one per line in known_hosts form"


# -- Flux ----------------------------------------------------------------------------------------------

# Flux's controllers are named as strings here: their enum (FluxComponent) lives with the component, which
# imports Pulumi. A StrEnum member is equal to its string, so either may be handed in.
REQUIRED_FLUX_COMPONENTS = ("source-controller", "kustomize-controller")
"""The controllers the sync needs: source-controller clones, kustomize-controller applies."""
NOTIFICATION_CONTROLLER = "notification-controller"
CHART_VERSION_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+$"
"""A chart version as ``major.minor.patch``: the pinned chart's form, and no range or ``v`` prefix."""
_CHART_VERSION = re.compile(CHART_VERSION_PATTERN)


def chart_version_problem(value: object) -> str | None:
    """``None`` for a Flux chart version (``2.18.3``)."""
    return _pattern_problem(_CHART_VERSION, value, "must be a version major.minor.patch, such as 2.18.3")


def _repeated(names: Sequence[str]) -> list[str]:
    return sorted({name for name in names if names.count(name) > 1})


def flux_components_problem(components: Sequence[str]) -> str | None:
    """``None`` when ``components`` holds the controllers the sync needs, each once."""
    missing = [name for name in REQUIRED_FLUX_COMPONENTS if name not in components]
    if missing:
        return f"must include {', '.join(missing)}: the sync needs {' and '.join(REQUIRED_FLUX_COMPONENTS)}"
    repeated = _repeated(components)
    return f"repeats a component ({', '.join(repeated)})" if repeated else None


def flux_components_extra_problem(components_extra: Sequence[str], components: Sequence[str]) -> str | None:
    """``None`` when ``components_extra`` adds controllers ``components`` does not name, each once."""
    overlap = sorted(set(components_extra) & set(components))
    if overlap:
        return f"repeats {', '.join(overlap)} from components"
    repeated = _repeated(components_extra)
    return f"repeats a component ({', '.join(repeated)})" if repeated else None


def notifications_problem(installed: Collection[str]) -> str | None:
    """``None`` when the controllers that run include notification-controller, which sends the alerts."""
    return None if NOTIFICATION_CONTROLLER in installed else f"need {NOTIFICATION_CONTROLLER} in components"


def kubernetes_floor_problem(kubernetes_version: str, chart_version: str) -> str | None:
    """``None`` when the pinned chart's Flux installs on ``kubernetes_version``, or the chart is not the
    pinned one (a chart of the user's own is the user's to match), else what was expected."""
    if chart_version != FLUX_CHART_VERSION:
        return None
    problem = kubernetes_version_problem(kubernetes_version, MIN_KUBERNETES_VERSION)
    if problem is None:
        return None
    return (
        f"{problem}: Flux {FLUX_VERSION} (chart {FLUX_CHART_VERSION}) needs it, and the chart's "
        "pre-install check (flux check --pre) fails on an older cluster"
    )
