"""The shared rules: the config, the component Args and the policy pack give every value the same verdict."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from gitops_infra import checks
from gitops_infra.components.eks_cluster import EksClusterArgs, NewVpcArgs, NodeGroupArgs
from gitops_infra.components.flux import FluxBootstrapArgs, GitHubAppSecretOptions, SyncOptions
from gitops_infra.config import load_config
from gitops_infra.errors import ConfigError
from gitops_infra.policy import rules

from .conftest import MINIMAL
from .flux.support import bootstrap_args

FLUX_CRD_DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
"""The OpenAPI pattern of ``interval``/``timeout`` in Flux 2.8's GitRepository and Kustomization CRDs."""


def _config_accepts(section: str, key: str, value: Any) -> bool:
    raw = copy.deepcopy(MINIMAL)
    raw[section][key] = value
    try:
        load_config(raw, stack="test")
    except ConfigError:
        return False
    return True


def _flux_args_accept(**overrides: Any) -> bool:
    try:
        bootstrap_args(**overrides)
    except ConfigError:
        return False
    return True


def _eks_args_accept(cidr: str) -> bool:
    try:
        EksClusterArgs(
            kubernetes_version="1.33",
            network=NewVpcArgs(cidr=cidr, availability_zones=["eu-west-1a", "eu-west-1b"]),
            node_groups=[NodeGroupArgs("system", ["t3.large"], 1, 3, 2)],
        )
    except ConfigError:
        return False
    return True


def _policy_accepts(duration: str) -> bool:
    try:
        rules.parse_duration(duration)
    except ValueError:
        return False
    return True


def test_the_duration_rule_is_the_crds_own_pattern() -> None:
    assert checks.GO_DURATION_PATTERN == FLUX_CRD_DURATION


@pytest.mark.parametrize(
    ("duration", "crd_accepts"),
    [
        ("1m30s", True),
        ("5m", True),
        ("1.5h", True),
        ("300ms", True),
        ("0s", True),
        # Go's time.ParseDuration takes these, the CRDs do not: the old config and policy disagreed on them.
        ("0", False),
        (".5m", False),
        ("1.m", False),
        ("5µs", False),
        ("10ns", False),
    ],
)
def test_config_args_and_policy_agree_with_the_crd_on_a_duration(duration: str, crd_accepts: bool) -> None:
    assert (re.fullmatch(FLUX_CRD_DURATION, duration) is not None) is crd_accepts
    _all_agree(duration, crd_accepts)


def _all_agree(duration: str, accepted: bool) -> None:
    verdicts = {
        "config": _config_accepts("flux", "interval", duration),
        "args": _flux_args_accept(interval=duration),
        "policy": _policy_accepts(duration),
    }
    assert verdicts == dict.fromkeys(verdicts, accepted)


@pytest.mark.parametrize(
    ("duration", "go_holds"), [("2562047h", True), ("2562048h", False), ("9" * 40 + "h", False)]
)
def test_a_duration_longer_than_go_can_hold_is_refused_everywhere_not_a_crash(
    duration: str, go_holds: bool
) -> None:
    # The CRD pattern takes it, and Flux's Go controller cannot parse it: it was an OverflowError here.
    assert re.fullmatch(FLUX_CRD_DURATION, duration)
    _all_agree(duration, go_holds)
    assert (checks.go_duration_problem(duration) is None) is go_holds


@pytest.mark.parametrize(
    ("toleration", "valid"),
    [
        ({"key": "CriticalAddonsOnly", "operator": "Exists"}, True),
        ({"key": "dedicated", "operator": "Equal", "value": "flux", "effect": "NoSchedule"}, True),
        ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
        (
            {"key": "CriticalAddonsOnly", "operator": "Exists", "value": "true"},
            False,
        ),  # Exists takes no value
        ({"operator": "Equal", "value": "x"}, False),  # an empty key needs Exists
        ({"value": "x"}, False),  # ... and the operator defaults to Equal
        ({"key": "k", "effect": "Always"}, False),
    ],
)
def test_config_and_args_validate_tolerations_as_kubernetes_does(
    toleration: dict[str, str], valid: bool
) -> None:
    verdicts = {
        "config": _config_accepts("flux", "tolerations", [toleration]),
        "args": _flux_args_accept(tolerations=[toleration]),
    }
    assert verdicts == {"config": valid, "args": valid}


@pytest.mark.parametrize(
    ("cidr", "valid"),
    [("10.0.0.0/16", True), ("10.0.0.0/20", True), ("10.0.0.0/24", False), ("10.0.0.1/16", False)],
)
def test_config_and_args_agree_on_the_vpc_size(cidr: str, valid: bool) -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["cluster"]["network"]["vpc"]["cidr"] = cidr
    try:
        load_config(raw, stack="test")
        config_ok = True
    except ConfigError:
        config_ok = False
    assert (config_ok, _eks_args_accept(cidr)) == (valid, valid)


@pytest.mark.parametrize(
    ("path", "valid"),
    [("clusters/dev", True), ("/clusters/dev", False), ("clusters/../x", False), ("clusters/my dev", False)],
)
def test_config_and_args_agree_on_the_sync_path(path: str, valid: bool) -> None:
    verdicts = {"config": _config_accepts("git", "path", path), "args": _flux_args_accept(path=path)}
    assert verdicts == {"config": valid, "args": valid}


def test_the_longest_cluster_name_is_derived_from_the_longest_iam_role() -> None:
    # pulumi-eks: ServiceRole `${N}-cluster-eksRole` holds Role `${...}-role`, auto-named with 8 characters.
    longest = checks.max_cluster_component_name()
    assert (
        len(f"{'n' * longest}-cluster-eksRole-role") + checks.AUTONAME_SUFFIX_LENGTH
        == checks.IAM_ROLE_NAME_MAX
    )
    assert longest == 35
    assert checks.cluster_component_name_problem("n" * 35) is None
    assert "at most 35" in str(checks.cluster_component_name_problem("n" * 36))
    # An EKS node group `<cluster>-<group>`, auto-named, has 63 characters at most.
    assert checks.max_node_group_name("gitops-dev") == 63 - len("gitops-dev-") - 8
    assert checks.node_group_name_problem("gitops-dev", "g" * 44) is None
    assert checks.node_group_name_problem("gitops-dev", "g" * 45) is not None


@pytest.mark.parametrize(
    ("version", "floor", "ok"), [("1.33", "1.33", True), ("1.34", "1.33", True), ("1.32", "1.33", False)]
)
def test_kubernetes_version_floor_compares_numbers_not_text(version: str, floor: str, ok: bool) -> None:
    assert (checks.kubernetes_version_problem(version, floor) is None) is ok
    assert checks.kubernetes_version_problem("1.100", "1.33") is None  # "1.100" < "1.33" as text


def _verdict(make: Any) -> bool:
    try:
        make()
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize(
    ("ami_type", "version", "valid"),
    [
        ("AL2023_x86_64_STANDARD", "1.33", True),
        ("AL2023_ARM_64_STANDARD", "1.34", True),
        ("BOTTLEROCKET_x86_64_NVIDIA", "1.33", True),
        ("WINDOWS_CORE_2022_x86_64", "1.33", True),
        ("AL2_x86_64", "1.33", False),  # EKS has no AL2 AMI from 1.33 on
        ("AL2_ARM_64", "1.35", False),
        ("AL2023_X86_64_STANDARD", "1.33", False),  # EKS's AMI types are case-sensitive
        ("CUSTOM", "1.33", False),  # a launch template's AMI, and the platform makes no launch template
        ("ubuntu", "1.33", False),
    ],
)
def test_config_and_args_agree_on_a_node_groups_ami_type(ami_type: str, version: str, valid: bool) -> None:
    raw = copy.deepcopy(MINIMAL)
    raw["cluster"]["kubernetesVersion"] = version
    raw["cluster"]["nodeGroups"][0]["amiType"] = ami_type
    group = NodeGroupArgs("system", ["t3.large"], 1, 3, 2, ami_type=ami_type)
    zones = ["eu-west-1a", "eu-west-1b"]
    network = NewVpcArgs(cidr="10.0.0.0/16", availability_zones=zones)
    verdicts = {
        "config": _verdict(lambda: load_config(raw, stack="test")),
        "args": _verdict(lambda: EksClusterArgs(version, network=network, node_groups=[group])),
    }
    assert verdicts == {"config": valid, "args": valid}


APP = {"appId": 1, "installationId": 2, "privateKey": "fluxAppKey"}


def _app_config(app: dict[str, Any], url: str | None = None) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["git"] = {**raw["git"], "githubApp": {**APP, **app}, **({"url": url} if url is not None else {})}
    raw["fluxAppKey"] = "mock-app-pem"
    return raw


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (123456, True),
        ("123456", True),  # pulumi-github's own github:appAuth takes the ID as a string
        (str(2**63 - 1), True),
        (str(2**63), False),
        ("0", False),
        (0, False),
        (-1, False),
        ("-1", False),
        (True, False),
        (1.0, False),
        ("12a", False),
        (" 1", False),
        ("", False),
    ],
)
def test_config_and_args_agree_on_a_github_app_id(value: Any, valid: bool) -> None:
    raw = _app_config({"appId": value})
    verdicts = {
        "config": _verdict(lambda: load_config(raw, stack="test")),
        "args": _verdict(lambda: GitHubAppSecretOptions(app_id=value, installation_id=2, private_key="k")),
    }
    assert verdicts == {"config": valid, "args": valid}


@pytest.mark.parametrize(
    ("base_url", "url", "valid"),
    [
        ("https://ghe.example.com/api/v3", "https://ghe.example.com/acme/fleet", True),
        ("https://ghe.example.com/api/v3", "https://github.com/acme/fleet", False),
        (None, "https://ghe.example.com/acme/fleet", False),
        (None, "https://github.com/acme/fleet", True),
        ("https://api.octo.ghe.com", "https://octo.ghe.com/acme/fleet", True),
        ("https://api.github.com", "https://ghe.example.com/acme/fleet", False),
        ("http://ghe.example.com/api/v3", "https://ghe.example.com/acme/fleet", False),
    ],
)
def test_config_and_args_agree_on_the_github_an_app_fetches_from(
    base_url: str | None, url: str, valid: bool
) -> None:
    raw = _app_config({"baseUrl": base_url} if base_url is not None else {}, url)

    def args() -> object:
        source = GitHubAppSecretOptions(app_id=1, installation_id=2, private_key="k", base_url=base_url)
        return FluxBootstrapArgs(source=source, sync=SyncOptions(url=url, path="clusters/test"))

    verdicts = {"config": _verdict(lambda: load_config(raw, stack="test")), "args": _verdict(args)}
    assert verdicts == {"config": valid, "args": valid}


@pytest.mark.parametrize(
    ("api_url", "host"),
    [
        (None, "github.com"),
        ("https://api.github.com", "github.com"),
        ("https://api.github.com/", "github.com"),
        ("https://ghe.example.com/api/v3", "ghe.example.com"),
        ("https://GHE.example.com:443/api/v3/", "ghe.example.com"),
        ("https://ghe.example.com:8443/api/v3", "ghe.example.com:8443"),
        ("https://api.octo.ghe.com", "octo.ghe.com"),
        # An Enterprise Server whose own name starts with api. serves its API under /api/v3: keep the name.
        ("https://api.corp.example.com/api/v3", "api.corp.example.com"),
    ],
)
def test_the_github_an_api_serves_is_told_apart_as_flux_does(api_url: str | None, host: str) -> None:
    assert checks.github_host(api_url) == host
