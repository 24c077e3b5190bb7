"""The shared rules: the config, the component Args and the policy pack give every value the same verdict."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from gitops_infra import checks
from gitops_infra.components.eks_cluster import EksClusterArgs, NewVpcArgs, NodeGroupArgs
from gitops_infra.config import load_config
from gitops_infra.errors import ConfigError
from gitops_infra.policy import rules

from .conftest import MINIMAL
from .test_flux import bootstrap_args

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
