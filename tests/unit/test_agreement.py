"""One gate per rule: for each field both the stack config and a component's Args check, they agree.

Every row is a value for one such field. The config (``load_config`` on the minimal config, with that one
key changed) and the Args (the dataclass the platform hands the value to) must both accept it, or both
refuse it, as the row says. A value one side takes and the other refuses is a config that loads, then
fails inside ``pulumi up``; or a component that refuses what its own config documents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from gitops_infra.components.deploy_key import DeployKeyArgs
from gitops_infra.components.eks_cluster import ExistingVpcArgs, NewVpcArgs
from gitops_infra.components.fleet_repository import FleetRepositoryArgs
from gitops_infra.components.flux import FluxComponent, InstallOptions, NotificationArgs
from gitops_infra.config import load_config
from gitops_infra.errors import ConfigError

from .flux.support import bootstrap_args
from .test_eks_cluster import group, new_vpc_args

SOURCE, KUSTOMIZE = "source-controller", "kustomize-controller"
HELM, NOTIFICATION = "helm-controller", "notification-controller"
IMAGE_REFLECTOR, IMAGE_AUTOMATION = "image-reflector-controller", "image-automation-controller"
DEFAULTS = [SOURCE, KUSTOMIZE, HELM, NOTIFICATION]
VPC_ID = "vpc-0123456789abcdef0"
SUBNETS = [f"subnet-0123456789abcdef{index}" for index in range(3)]
KNOWN_HOSTS = "git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA"
ADDRESS = "https://hooks.example.invalid/alerts"


Row = tuple[str, Any, bool]
"""What the row is (its test id), the value, and whether both sides take it."""


@dataclass(frozen=True)
class SharedField:
    """A field both sides check: how a value goes into the bare config, how it makes the Args, the rows."""

    config: Callable[[dict[str, Any], Any], None]
    args: Callable[[Any], object]
    rows: list[Row]


def _key(path: str) -> Callable[[dict[str, Any], Any], None]:
    """Sets the key at a dotted path of the bare config (``cluster.nodeGroups.0.instanceTypes``)."""

    def put(raw: dict[str, Any], value: Any) -> None:
        *parents, last = path.split(".")
        target: Any = raw
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
        target[last] = value

    return put


def _sizes(raw: dict[str, Any], sizes: tuple[int, int, int]) -> None:
    minimum, maximum, desired = sizes
    raw["cluster"]["nodeGroups"][0] |= {"minSize": minimum, "maxSize": maximum, "desiredSize": desired}


def _sized_group(sizes: tuple[int, int, int]) -> object:
    minimum, maximum, desired = sizes
    return new_vpc_args(node_groups=[group(min_size=minimum, max_size=maximum, desired_size=desired)])


def _existing_vpc(raw: dict[str, Any], subnet_ids: list[str]) -> None:
    raw["cluster"]["network"] = {"existingVpc": {"vpcId": VPC_ID, "privateSubnetIds": subnet_ids}}


def _node_groups(raw: dict[str, Any], names: Sequence[str]) -> None:
    first = raw["cluster"]["nodeGroups"][0]
    raw["cluster"]["nodeGroups"] = [{**first, "name": name} for name in names]


def _flux_components(raw: dict[str, Any], lists: tuple[list[str], list[str]]) -> None:
    raw["flux"] |= {"components": lists[0], "componentsExtra": lists[1]}


def _notifications(raw: dict[str, Any], lists: tuple[list[str], list[str]]) -> None:
    _flux_components(raw, lists)
    raw["flux"]["notifications"] = {"providerType": "slack", "address": ADDRESS}


def _host_keys(url: str) -> str:
    """Host keys for ``url``'s host, as ssh looks them up: ``[host]:port`` on a port other than 22."""
    authority = url.removeprefix("ssh://").split("/", 1)[0].rpartition("@")[2]
    host, _, port = authority.partition(":")
    return KNOWN_HOSTS.replace("git.example.com", f"[{host}]:{port}" if port else host, 1)


def _url(raw: dict[str, Any], url: str) -> None:
    # With its host keys, so that a host other than github.com is judged on the URL alone.
    raw["git"] |= {"url": url, "knownHosts": _host_keys(url)}


PORTED_URL = "ssh://git@git.example.com:2222/org/fleet.git"


def _ported_host_keys(raw: dict[str, Any], known_hosts: str) -> None:
    raw["git"] |= {"url": PORTED_URL, "knownHosts": known_hosts}


def _flux_waits(raw: dict[str, Any], waits: tuple[str, str | None]) -> None:
    timeout, ready_timeout = waits
    raw["flux"]["timeout"] = timeout
    if ready_timeout is not None:
        raw["flux"]["readyTimeout"] = ready_timeout


def _install_args(lists: tuple[list[str], list[str]], **rest: Any) -> object:
    components, extra = ([FluxComponent(name) for name in names] for names in lists)
    return bootstrap_args(components=components, components_extra=extra, **rest)


SIZES: list[Row] = [
    ("2-3-2", (2, 3, 2), True),
    ("scale to zero", (0, 1, 0), True),
    ("never a node", (0, 0, 0), False),
    ("max below min", (3, 2, 2), False),
    ("desired above max", (2, 3, 4), False),
    ("desired below min", (2, 3, 1), False),
    ("negative min", (-1, 3, 1), False),
    ("max 450", (0, 450, 1), True),
    ("max 451", (0, 451, 1), False),
    ("all 450", (450, 450, 450), True),
    ("all 451", (451, 451, 451), False),
]
NAMES: list[Row] = [
    ("one", ["system"], True),
    ("two", ["system", "workers"], True),
    ("none", [], False),
    ("repeated", ["system", "system"], False),
]
INSTANCE_TYPES: list[Row] = [
    ("one", ["t3.large"], True),
    ("two", ["t3.large", "m5.large"], True),
    ("none", [], False),
]
US_EAST = [f"us-east-1{letter}" for letter in "abcdefg"]
ZONES: list[Row] = [
    ("2 zones", ["eu-west-1a", "eu-west-1b"], True),
    ("6 zones", US_EAST[:6], True),
    ("govcloud", ["us-gov-west-1a", "us-gov-west-1b"], True),
    ("1 zone", ["eu-west-1a"], False),
    ("0 zones", [], False),
    ("7 zones", US_EAST, False),
    ("repeated", ["eu-west-1a", "eu-west-1a"], False),
    ("a region", ["eu-west-1", "eu-west-1b"], False),
    ("empty", ["", "eu-west-1b"], False),
    ("whitespace", [" eu-west-1a", "eu-west-1b"], False),
    ("newline", ["eu-west-1a\n", "eu-west-1b"], False),
    ("uppercase", ["EU-WEST-1A", "EU-WEST-1B"], False),
    ("unicode", ["eu-wést-1a", "eu-west-1b"], False),
]
SUBNET_IDS: list[Row] = [
    ("none", [], False),
    ("one", SUBNETS[:1], False),
    ("two", SUBNETS[:2], True),
    ("three", SUBNETS, True),
]
COMPONENTS: list[Row] = [
    ("defaults", (DEFAULTS, []), True),
    ("the two the sync needs", ([SOURCE, KUSTOMIZE], []), True),
    ("extra helm", ([SOURCE, KUSTOMIZE], [HELM]), True),
    ("extra image automation", ([SOURCE, KUSTOMIZE], [IMAGE_REFLECTOR, IMAGE_AUTOMATION]), True),
    ("no kustomize", ([SOURCE], []), False),
    ("no source", ([KUSTOMIZE], []), False),
    ("none", ([], []), False),
    ("kustomize only in extra", ([SOURCE], [KUSTOMIZE]), False),
    ("repeated in components", ([SOURCE, KUSTOMIZE, SOURCE], []), False),
    ("extra repeats components", ([SOURCE, KUSTOMIZE, HELM], [HELM]), False),
    ("repeated in extra", ([SOURCE, KUSTOMIZE], [IMAGE_REFLECTOR, IMAGE_REFLECTOR]), False),
]
NOTIFICATIONS: list[Row] = [
    ("defaults", (DEFAULTS, []), True),
    ("controller in extra", ([SOURCE, KUSTOMIZE], [NOTIFICATION]), True),
    ("no controller", ([SOURCE, KUSTOMIZE], []), False),
    ("helm but no controller", ([SOURCE, KUSTOMIZE, HELM], []), False),
]
VERSIONS: list[Row] = [
    ("pinned", "2.18.3", True),
    ("older", "2.16.0", True),
    ("wide numbers", "10.200.3000", True),
    ("v prefix", "v2.18.3", False),
    ("two numbers", "2.18", False),
    ("empty", "", False),
    ("leading space", " 2.18.3", False),
    ("newline", "2.18.3\n", False),
    ("pre-release", "2.18.3-rc.1", False),
    ("fullwidth digits", "\uff12.18.3", False),
    ("latest", "latest", False),
]
URLS: list[Row] = [
    ("github", "ssh://git@github.com/acme/fleet", True),
    ("port and .git", "ssh://git@git.example.com:2222/org/fleet.git", True),
    ("no user", "ssh://host/x", True),
    ("no path", "ssh://host", False),
    ("empty path", "ssh://host/", False),
    ("scheme only", "ssh://", False),
    ("empty", "", False),
    ("https", "https://github.com/acme/fleet", False),
    ("scp-like", "git@github.com:acme/fleet.git", False),
    ("uppercase scheme", "SSH://git@github.com/acme/fleet", False),
    ("leading space", " ssh://git@github.com/acme/fleet", False),
    ("space in path", "ssh://git@github.com/acme/my fleet", False),
    ("newline", "ssh://git@github.com/acme/fleet\n", False),
    ("unicode host", "ssh://git@gïthub.com/acme/fleet", False),
]
REPOSITORIES: list[Row] = [
    ("name", "fleet", True),
    ("dots", "a..b", True),
    (".github", ".github", True),
    ("100 chars", "r" * 100, True),
    ("101 chars", "r" * 101, False),
    ("owner/name", "acme/fleet", False),
    ("empty", "", False),
    ("whitespace", " ", False),
    ("space", "my fleet", False),
    ("newline", "fleet\n", False),
    ("unicode", "flëet", False),
    ("punctuation", "fleet!", False),
]
BRANCHES: list[Row] = [
    ("main", "main", True),
    ("slash and dots", "release/v1.2", True),
    ("unicode", "ünïcode", True),
    ("255 chars", "b" * 255, True),
    # git itself refuses a..b: neither side does yet, and both agree on it.
    ("double dot", "a..b", True),
    ("256 chars", "b" * 256, False),
    ("empty", "", False),
    ("whitespace", " ", False),
    ("space", "feature branch", False),
    ("newline", "main\n", False),
    ("tilde", "main~1", False),
    ("caret", "main^", False),
    ("colon", "wip:1", False),
    ("glob", "heads/*", False),
    ("bracket", "[x]", False),
    ("backslash", "a\\b", False),
]
HOST_KEYS: list[Row] = [
    ("a host key", KNOWN_HOSTS, True),
    ("empty", "", False),
    ("whitespace", " ", False),
    ("newline and tab", "\n\t", False),
]

# Host keys for a git host on port 2222: ssh looks them up as [host]:2222, so a bare host never matches.
PORTED_HOST_KEYS: list[Row] = [
    ("[host]:port", "[git.example.com]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA", True),
    ("among other patterns", "other,[git.example.com]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA", True),
    ("a hashed line", "|1|c2FsdA==|aGFzaA== ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA", True),
    ("a marker first", "@cert-authority [git.example.com]:2222 ssh-ed25519 AAAA", True),
    ("the bare host", KNOWN_HOSTS, False),
    ("another port", "[git.example.com]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA", False),
    ("a comment only", "# [git.example.com]:2222", False),
]

# The cluster's Kubernetes minor: its form (EksClusterArgs), and the pinned Flux's floor (InstallOptions).
KUBERNETES_VERSIONS: list[Row] = [
    ("the floor", "1.33", True),
    ("newer", "1.34", True),
    ("older than the pinned Flux takes", "1.32", False),
    ("one digit", "1.3", False),
    ("a patch release", "1.33.1", False),
    ("a v prefix", "v1.33", False),
    ("empty", "", False),
    ("a newline", "1.33\n", False),
]


# (admins, creator): each admin a distinct IAM principal, and the creator named when any is listed.
ADMIN, OTHER = "arn:aws:iam::111111111111:role/admin", "arn:aws:iam::111111111111:user/alice"
CREATOR = "arn:aws:iam::111111111111:role/gitops-deploy"
ADMINS: list[Row] = [
    ("none, no creator", ((), None), True),
    ("two with their creator", ((ADMIN, OTHER), CREATOR), True),
    ("the creator among them", ((ADMIN, OTHER), ADMIN), True),
    ("admins with no creator", ((ADMIN,), None), False),
    ("one principal twice", ((ADMIN, ADMIN), CREATOR), False),
    ("one principal by path and case", ((ADMIN, "arn:aws:iam::111111111111:role/ops/ADMIN"), CREATOR), False),
    ("a session, not a principal", (("arn:aws:sts::111111111111:assumed-role/admin/s",), CREATOR), False),
    ("a creator that is no ARN", ((ADMIN,), "gitops-deploy"), False),
]


def _admins(raw: dict[str, Any], value: tuple[tuple[str, ...], str | None]) -> None:
    admins, creator = value
    raw["cluster"]["admins"] = list(admins)
    if creator is not None:
        raw["cluster"]["creator"] = creator


def _admins_args(value: tuple[tuple[str, ...], str | None]) -> object:
    admins, creator = value
    return new_vpc_args(admin_principal_arns=list(admins), creator_principal_arn=creator)


def _kubernetes_args(version: str) -> object:
    # The platform hands the version to both: the cluster, and the Flux install it must carry.
    return new_vpc_args(kubernetes_version=version), InstallOptions(kubernetes_version=version)


# (Flux's timeout, readyTimeout): `up` must wait longer than Flux may, or not at all.
WAITS: list[Row] = [
    ("unset: timeout plus a margin", ("10m", None), True),
    ("longer", ("10m", "11m"), True),
    ("no wait", ("10m", "0s"), True),
    ("equal", ("10m", "10m"), False),
    ("shorter: prod's 10m against the old 5m default", ("10m", "5m"), False),
    ("a second longer", ("1m", "61s"), True),
    ("fractional, equal", ("1.5m", "90s"), False),
]

FIELDS: dict[str, SharedField] = {
    "nodeGroups[0] sizes": SharedField(_sizes, _sized_group, SIZES),
    "nodeGroups names": SharedField(
        _node_groups, lambda names: new_vpc_args(node_groups=[group(name) for name in names]), NAMES
    ),
    "nodeGroups[0].instanceTypes": SharedField(
        _key("cluster.nodeGroups.0.instanceTypes"),
        lambda types: new_vpc_args(node_groups=[group(instance_types=types)]),
        INSTANCE_TYPES,
    ),
    "vpc.availabilityZones": SharedField(
        _key("cluster.network.vpc.availabilityZones"),
        lambda zones: new_vpc_args(network=NewVpcArgs(cidr="10.0.0.0/16", availability_zones=zones)),
        ZONES,
    ),
    "existingVpc.privateSubnetIds": SharedField(
        _existing_vpc,
        lambda ids: new_vpc_args(network=ExistingVpcArgs(vpc_id=VPC_ID, private_subnet_ids=ids)),
        SUBNET_IDS,
    ),
    "flux.components": SharedField(_flux_components, _install_args, COMPONENTS),
    "flux.notifications": SharedField(
        _notifications,
        lambda lists: _install_args(
            lists, notifications=NotificationArgs(provider_type="slack", address=ADDRESS)
        ),
        NOTIFICATIONS,
    ),
    "flux.version": SharedField(
        _key("flux.version"), lambda version: bootstrap_args(version=version), VERSIONS
    ),
    "cluster.kubernetesVersion/EksClusterArgs+InstallOptions": SharedField(
        _key("cluster.kubernetesVersion"), _kubernetes_args, KUBERNETES_VERSIONS
    ),
    "cluster.admins+creator/EksClusterArgs": SharedField(_admins, _admins_args, ADMINS),
    "git.url": SharedField(_url, lambda url: bootstrap_args(url=url, known_hosts=_host_keys(url)), URLS),
    "git.knownHosts on port 2222/FluxBootstrapArgs": SharedField(
        _ported_host_keys, lambda hosts: bootstrap_args(url=PORTED_URL, known_hosts=hosts), PORTED_HOST_KEYS
    ),
    "flux.readyTimeout/SyncOptions": SharedField(
        _flux_waits, lambda waits: bootstrap_args(timeout=waits[0], ready_timeout=waits[1]), WAITS
    ),
    "git.repository/DeployKeyArgs": SharedField(
        _key("git.repository"), lambda name: DeployKeyArgs(repository=name), REPOSITORIES
    ),
    "git.repository/FleetRepositoryArgs": SharedField(
        _key("git.repository"),
        lambda name: FleetRepositoryArgs(repository=name, path="clusters/test"),
        REPOSITORIES,
    ),
    "git.branch/SyncOptions": SharedField(
        _key("git.branch"), lambda branch: bootstrap_args(branch=branch), BRANCHES
    ),
    "git.branch/FleetRepositoryArgs": SharedField(
        _key("git.branch"),
        lambda branch: FleetRepositoryArgs(repository="fleet", path="clusters/test", branch=branch),
        BRANCHES,
    ),
    "git.knownHosts/DeployKeyArgs": SharedField(
        _key("git.knownHosts"), lambda hosts: DeployKeyArgs(repository="fleet", known_hosts=hosts), HOST_KEYS
    ),
    "git.knownHosts/SourceSecretOptions": SharedField(
        _key("git.knownHosts"), lambda hosts: bootstrap_args(known_hosts=hosts), HOST_KEYS
    ),
}

ROWS = [
    pytest.param(field, value, valid, id=f"{field}: {label}")
    for field, shared in FIELDS.items()
    for label, value, valid in shared.rows
]


def _accepts(make: Callable[[], object]) -> bool:
    try:
        make()
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize(("field", "value", "valid"), ROWS)
def test_config_and_args_agree(minimal: dict[str, Any], field: str, value: Any, valid: bool) -> None:
    shared = FIELDS[field]
    shared.config(minimal, value)
    verdicts = {
        "config": _accepts(lambda: load_config(minimal, stack="test")),
        "args": _accepts(lambda: shared.args(value)),
    }
    assert verdicts == {"config": valid, "args": valid}
