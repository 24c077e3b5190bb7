"""Config validation: valid stacks load, and every malformed config names its key path."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest

from gitops_infra import checks
from gitops_infra.components.deploy_key import KeyAlgorithm
from gitops_infra.components.eks_cluster import ALL_LOG_TYPES, EndpointAccess, NatGateways
from gitops_infra.components.flux import DEFAULT_COMPONENTS, FLUX_CHART_VERSION, FLUX_NAMESPACE, FluxComponent
from gitops_infra.config import load_config, load_stack_config, platform_name
from gitops_infra.defaults import FLUX_OPERATOR_FLUX_VERSION
from gitops_infra.errors import ConfigError

from .conftest import GITHUB_TEST_TOKEN, SOPS_TEST_KEY, stack_config
from .harness import run


def problems_of(raw: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    return info.value.problems


def test_dev_config_loads_with_its_values() -> None:
    config = load_config(stack_config("dev"), stack="dev")
    assert config.environment.name == "dev"
    assert config.cluster.network.vpc is not None
    assert config.cluster.network.vpc.nat_gateways is NatGateways.SINGLE
    assert config.cluster.endpoint.access is EndpointAccess.PUBLIC_AND_PRIVATE
    assert [g.name for g in config.cluster.node_groups] == ["system"]
    assert config.cluster.node_groups[0].desired == 2
    assert config.git.sync_url == "ssh://git@github.com/example-org/fleet"
    assert config.git.sync_path("dev") == "clusters/dev"
    assert config.flux.image_automation is False
    assert config.tags == {"owner": "platform-team", "team": "platform", "cost-center": "4200"}


def test_prod_config_loads_with_its_values() -> None:
    config = load_config(stack_config("prod"), stack="prod")
    assert config.cluster.network.vpc is not None
    assert config.cluster.network.vpc.nat_gateways is NatGateways.ONE_PER_AZ
    assert config.cluster.endpoint.access is EndpointAccess.PUBLIC_AND_PRIVATE
    assert config.cluster.endpoint.allowed_cidrs == ("203.0.113.0/24",)
    assert config.flux.node_selector == {"role": "system"}
    assert config.flux.image_automation is True
    assert config.flux.sops is True
    assert config.flux.notifications is not None
    assert config.flux.notifications.provider_type == "slack"


def test_defaults_are_the_named_constants(minimal: dict[str, Any]) -> None:
    config = load_config(minimal, stack="test")
    assert config.flux.namespace == FLUX_NAMESPACE
    assert config.flux.version == FLUX_CHART_VERSION
    assert config.flux.components == DEFAULT_COMPONENTS
    assert config.git.deploy_key.algorithm is KeyAlgorithm.ECDSA_P384
    assert config.git.branch == "main"
    assert config.cluster.log_types == ALL_LOG_TYPES
    assert config.cluster.node_groups[0].desired == 2  # min_size when desiredSize is not set
    assert config.environment.ingress_enabled is True
    assert config.tags == {"owner": "platform"}


def test_models_are_frozen(minimal: dict[str, Any]) -> None:
    config = load_config(minimal, stack="test")
    with pytest.raises(ValueError, match="frozen"):
        config.git.branch = "other"  # type: ignore[misc]


def test_prefixed_and_bare_keys_are_the_same_and_other_namespaces_are_ignored(
    minimal: dict[str, Any],
) -> None:
    prefixed = {f"gitops-infra:{key}": value for key, value in minimal.items()}
    prefixed["aws:region"] = "eu-west-1"
    assert load_config(prefixed, stack="test").cluster == load_config(minimal, stack="test").cluster


MALFORMED: list[tuple[str, Any, str]] = [
    # (dotted path into the bare config to set, the bad value, the key path the error must name)
    ("cluster.nodeGroups.0.maxSize", 1, "gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize"),
    ("cluster.nodeGroups.0.minSize", -1, "gitops-infra:cluster.nodeGroups[0].minSize:"),
    ("cluster.nodeGroups.0.maxSize", 0, "gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize"),
    ("cluster.nodeGroups.0.desiredSize", 9, "gitops-infra:cluster.nodeGroups[0].desiredSize:"),
    ("cluster.nodeGroups.0.instanceTypes", [], "gitops-infra:cluster.nodeGroups[0].instanceTypes:"),
    ("cluster.nodeGroups.0.name", "System_Nodes", "gitops-infra:cluster.nodeGroups[0].name:"),
    ("cluster.nodeGroups.0.capacityType", "CHEAP", "gitops-infra:cluster.nodeGroups[0].capacityType:"),
    (
        "cluster.nodeGroups.0.taints",
        [{"key": "k", "effect": "NoSchedule"}],
        "gitops-infra:cluster.nodeGroups[0].taints[0].effect:",
    ),
    ("cluster.nodeGroups", [], "gitops-infra:cluster.nodeGroups:"),
    ("cluster.kubernetesVersion", "latest", "gitops-infra:cluster.kubernetesVersion:"),
    ("cluster.admins", ["platform-admin"], "gitops-infra:cluster.admins[0]:"),
    ("cluster.endpoint.access", "public", "gitops-infra:cluster.endpoint.access:"),
    ("cluster.endpoint.allowedCidrs", ["10.0.0.0/33"], "gitops-infra:cluster.endpoint.allowedCidrs[0]:"),
    ("cluster.network.vpc.cidr", "10.0.0.0/24", "gitops-infra:cluster.network.vpc.cidr:"),
    (
        "cluster.network.vpc.availabilityZones",
        ["eu-west-1a"],
        "gitops-infra:cluster.network.vpc.availabilityZones:",
    ),
    ("cluster.network.vpc.natGateways", "two", "gitops-infra:cluster.network.vpc.natGateways:"),
    (
        "cluster.network.existingVpc",
        {"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": []},
        "gitops-infra:cluster.network.existingVpc.privateSubnetIds: needs subnets in at least two zones",
    ),
    ("cluster.logTypes", ["everything"], "gitops-infra:cluster.logTypes[0]:"),
    ("cluster.nodeGroup", [], "gitops-infra:cluster.nodeGroup: unknown key"),
    ("environment.baseDomain", "not a domain", "gitops-infra:environment.baseDomain:"),
    ("environment.serviceNamespace", "Apps", "gitops-infra:environment.serviceNamespace:"),
    ("environment.ingressEnabled", "sometimes", "gitops-infra:environment.ingressEnabled:"),
    ("git.owner", "acme/fleet", "gitops-infra:git.owner: must be a GitHub user or organization name"),
    ("git.path", "../elsewhere", "gitops-infra:git.path:"),
    ("git.deployKey.algorithm", "rsa", "gitops-infra:git.deployKey.algorithm:"),
    ("flux.components", ["helm-controller"], "gitops-infra:flux.components:"),
    ("flux.componentsExtra", ["image-reflector-controler"], "gitops-infra:flux.componentsExtra[0]:"),
    ("flux.interval", "ten minutes", "gitops-infra:flux.interval: must be a Go duration"),
    ("flux.version", "v2", "gitops-infra:flux.version:"),
    ("flux.notifications", {"providerType": "pager"}, "gitops-infra:flux.notifications.providerType:"),
    ("flux.sops", True, "gitops-infra:flux.sops: needs the secret gitops-infra:sopsAgeKey"),
]


def _set(raw: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    target: Any = raw
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
    target[parts[-1]] = value


@pytest.mark.parametrize(("path", "value", "expected"), MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_config_names_the_key(
    minimal: dict[str, Any], path: str, value: Any, expected: str
) -> None:
    _set(minimal, path, value)
    problems = problems_of(minimal)
    assert any(problem.startswith(expected) for problem in problems), problems


def test_enough_malformed_cases() -> None:
    assert len(MALFORMED) >= 15


@pytest.mark.parametrize("section", ["environment", "cluster", "git"])
def test_missing_section_is_named(minimal: dict[str, Any], section: str) -> None:
    del minimal[section]
    assert f"gitops-infra:{section}: required" in problems_of(minimal)


def test_every_problem_is_listed_at_once(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["nodeGroups"][0]["maxSize"] = 1
    minimal["environment"]["baseDomain"] = "nope"
    minimal["git"]["owner"] = "a/b"
    minimal["tags"] = {"aws:reserved": "x"}
    minimal["flux"]["timeout"] = "soon"
    minimal["githubTokn"] = "typo"
    problems = problems_of(minimal)
    assert len(problems) == 7
    assert {p.split(":")[1].split(" ")[0] for p in problems} == {
        "cluster.nodeGroups[0].maxSize",
        "environment.baseDomain",
        "git.owner",
        "tags.aws",
        "tags.owner",
        "flux.timeout",
        "githubTokn",
    }


def test_error_message_has_no_traceback_noise_and_names_the_stack(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["nodeGroups"][0]["maxSize"] = 1
    with pytest.raises(ConfigError) as info:
        load_config(minimal, stack="dev")
    assert info.value.stack == "dev"
    assert str(info.value).splitlines() == [
        "invalid config for stack 'dev' (1 problem):",
        "  - gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize",
    ]


def test_bad_values_are_never_echoed(minimal: dict[str, Any]) -> None:
    minimal["git"]["owner"] = "s3cr3t/value-that-must-not-leak"
    minimal["githubToken"] = {"not": "a string"}
    minimal["flux"]["sops"] = True
    with pytest.raises(ConfigError) as info:
        load_config(minimal, stack="t")
    assert "s3cr3t" not in str(info.value)
    assert any(problem.startswith("gitops-infra:git.owner:") for problem in info.value.problems)


def test_secrets_become_output_secrets_and_stay_out_of_repr(minimal: dict[str, Any]) -> None:
    minimal["githubToken"] = GITHUB_TEST_TOKEN
    minimal["sopsAgeKey"] = {"secure": "v1:ciphertext"}
    minimal["flux"]["sops"] = True

    def program() -> Any:
        return load_config(minimal, stack="test")

    result = run(
        program,
        outputs=lambda c: {"token": c.secrets.github_token, "age": c.secrets.sops_age_key},
    )
    assert result.values["token"].secret and result.values["token"].value == GITHUB_TEST_TOKEN
    assert result.values["age"].secret
    assert GITHUB_TEST_TOKEN not in repr(result.result)


def test_load_stack_config_reads_pulumi_config_and_its_secrets(minimal: dict[str, Any]) -> None:
    minimal["flux"]["sops"] = True
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in minimal.items()}
    config["gitops-infra:sopsAgeKey"] = SOPS_TEST_KEY
    result = run(
        load_stack_config,
        outputs=lambda c: {"age": c.secrets.sops_age_key},
        stack="test",
        config=config,
        secret_keys=["gitops-infra:sopsAgeKey"],
    )
    assert result.result.stack == "test"
    assert result.result.flux.sops is True
    assert result.result.secrets.github_token is None
    assert result.values["age"] == type(result.values["age"])(value=SOPS_TEST_KEY, secret=True)


def test_load_stack_config_reports_every_problem(minimal: dict[str, Any]) -> None:
    config = {"gitops-infra:environment": "not json", "gitops-infra:git": json.dumps(minimal["git"])}

    def program() -> Any:
        with pytest.raises(ConfigError) as info:
            load_stack_config(pulumi.Config("gitops-infra"))
        return info.value.problems

    problems = run(program, config=config).result
    assert problems == (
        "gitops-infra:environment: must be a structured value (a YAML mapping)",
        "gitops-infra:cluster: required",
        "gitops-infra:tags.owner: required: every AWS resource is tagged with the team that owns it",
    )


def test_flux_component_overlap_and_notification_controller(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {
        "components": ["source-controller", "kustomize-controller"],
        "componentsExtra": ["source-controller"],
        "notifications": {"providerType": "slack"},
    }
    problems = problems_of(minimal)
    assert "gitops-infra:flux.componentsExtra: repeats source-controller from components" in problems
    assert "gitops-infra:flux.notifications: need notification-controller in components" in problems


def test_image_automation_follows_components_extra(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {"componentsExtra": [FluxComponent.IMAGE_AUTOMATION_CONTROLLER.value]}
    assert load_config(minimal, stack="test").flux.image_automation is True


def test_existing_vpc_and_unique_names(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["network"] = {
        "existingVpc": {
            "vpcId": "vpc-0123456789abcdef0",
            "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        }
    }
    assert load_config(minimal, stack="t").cluster.network.existing_vpc is not None
    minimal["cluster"]["nodeGroups"].append(dict(minimal["cluster"]["nodeGroups"][0]))
    assert "gitops-infra:cluster.nodeGroups: node group names must be unique" in problems_of(minimal)


def test_both_or_neither_network_is_a_problem(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["network"] = {}
    assert "gitops-infra:cluster.network: set exactly one of vpc or existingVpc" in problems_of(minimal)


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["a"], "gitops-infra:tags: must be a mapping of tag names to strings"),
        ({"team": 7}, "gitops-infra:tags.team: must be a string of at most 256 characters"),
    ],
)
def test_tags_are_checked(minimal: dict[str, Any], tags: Any, expected: str) -> None:
    minimal["tags"] = tags
    assert expected in problems_of(minimal)


# -- what a real `pulumi up` would refuse ----------------------------------------------------------------

EXISTING_VPC = {
    "vpcId": "vpc-0123456789abcdef0",
    "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
}


def test_a_private_endpoint_on_a_vpc_this_stack_creates_is_refused_with_the_remedy(
    minimal: dict[str, Any],
) -> None:
    minimal["cluster"]["endpoint"] = {"access": "private", "allowedCidrs": ["10.100.0.0/16"]}
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:cluster.endpoint: access 'private' needs network.existingVpc")
    assert "public-and-private with allowedCidrs set to the runner's egress range" in problem

    minimal["cluster"]["network"] = {"existingVpc": EXISTING_VPC}
    assert load_config(minimal, stack="t").cluster.endpoint.access is EndpointAccess.PRIVATE


def test_scaling_is_ours_unless_an_autoscaler_owns_it(minimal: dict[str, Any]) -> None:
    assert load_config(minimal, stack="t").cluster.node_groups[0].scaling_managed_externally is False
    minimal["cluster"]["nodeGroups"][0]["scalingManagedExternally"] = True
    assert load_config(minimal, stack="t").cluster.node_groups[0].scaling_managed_externally is True


def test_names_aws_derives_must_fit_its_limits(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["name"] = "c" * 35
    config = load_config(minimal, stack="t")
    assert platform_name(config.environment, config.cluster) == "c" * 35
    minimal["cluster"]["name"] = "c" * 36
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:cluster.name: must be at most 35 characters")
    assert "<name>-cluster-eksRole-role" in problem

    # Without cluster.name the platform is gitops-<environment>: the key to change is still named.
    del minimal["cluster"]["name"]
    minimal["environment"]["name"] = "e" * 29
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:environment.name: with cluster.name unset")

    minimal["environment"]["name"] = "test"  # gitops-test: node groups may have 63 - 12 - 8 = 43
    minimal["cluster"]["nodeGroups"][0]["name"] = "g" * 44
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:cluster.nodeGroups[0].name: must be at most 43 characters")


def test_kubernetes_older_than_the_pinned_flux_supports_is_refused(minimal: dict[str, Any]) -> None:
    minimal["cluster"]["kubernetesVersion"] = "1.32"
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:cluster.kubernetesVersion: must be 1.33 or newer: Flux 2.8.5")
    minimal["cluster"]["kubernetesVersion"] = "1.33"
    assert load_config(minimal, stack="t").cluster.kubernetes_version == "1.33"
    # A chart version of the user's own is the user's to match with a cluster.
    minimal["cluster"]["kubernetesVersion"] = "1.31"
    minimal["flux"]["version"] = "2.16.0"
    assert load_config(minimal, stack="t").flux.version == "2.16.0"


def test_notifications_need_an_address_and_the_webhook_is_a_secret(minimal: dict[str, Any]) -> None:
    minimal["flux"]["notifications"] = {"providerType": "slack", "channel": "alerts"}
    [problem] = problems_of(minimal)
    assert problem.startswith("gitops-infra:flux.notifications: slack needs an address to post to")
    assert "pulumi config set --secret notificationWebhook" in problem

    minimal["notificationWebhook"] = {"secure": "v1:ciphertext"}
    config = load_config(minimal, stack="t")
    assert isinstance(config.secrets.notification_webhook, pulumi.Output)
    assert "notification_webhook" not in repr(config.secrets)

    # A token type needs a Secret the stack does not make; a webhook Secret would lack the token.
    minimal["flux"]["notifications"] = {"providerType": "github", "address": "https://github.com/acme/app"}
    problems = problems_of(minimal)
    assert any(
        p.startswith("gitops-infra:flux.notifications.providerType: github also needs a token")
        for p in problems
    )
    del minimal["notificationWebhook"]
    assert problems_of(minimal) == (
        "gitops-infra:flux.notifications.secretName: github needs a Secret holding its token "
        "(created outside this stack, for example SOPS-encrypted in the fleet repository)",
    )
    minimal["flux"]["notifications"]["secretName"] = "github-token"
    assert load_config(minimal, stack="t").flux.notifications is not None


def test_flux_node_selector_and_the_aws_profile_are_read(minimal: dict[str, Any]) -> None:
    minimal["flux"]["nodeSelector"] = {"role": "system"}
    minimal["aws:profile"] = "platform-deployer"
    config = load_config(minimal, stack="t")
    assert config.flux.node_selector == {"role": "system"}
    assert config.aws_profile == "platform-deployer"
    minimal["aws:profile"] = ""
    assert problems_of(minimal) == ("aws:profile: must be the name of an AWS profile",)


def test_the_role_the_aws_provider_assumes_is_read(minimal: dict[str, Any]) -> None:
    role = "arn:aws:iam::123456789012:role/deployer"
    minimal["aws:assumeRoles"] = [{"roleArn": "arn:aws:iam::123456789012:role/hop"}, {"roleArn": role}]
    assert load_config(minimal, stack="t").aws_role_arn == role  # a chain ends as its last role
    minimal["aws:assumeRoles"] = [{"roleArn": "arn:aws:iam::123456789012:user/someone"}]
    assert problems_of(minimal) == (
        "aws:assumeRoles[0].roleArn: must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)",
    )
    minimal["aws:assumeRoles"] = "deployer"
    assert problems_of(minimal) == ("aws:assumeRoles: must be a list of roles to assume, each with roleArn",)


def test_the_clusters_creator_is_named_once(minimal: dict[str, Any]) -> None:
    # Not "whoever runs this update": a colleague's run would bring the first creator's entry back.
    admin, creator = "arn:aws:iam::123456789012:role/admin", "arn:aws:iam::123456789012:role/deploy"
    minimal["cluster"]["admins"] = [admin]
    (problem,) = problems_of(minimal)
    assert problem.startswith("gitops-infra:cluster.creator: required when admins are listed")
    minimal["aws:assumeRoles"] = [{"roleArn": creator}]
    assert load_config(minimal, stack="t").cluster_creator == creator  # the role every deployer assumes
    minimal["cluster"]["creator"] = admin
    assert load_config(minimal, stack="t").cluster_creator == admin  # named wins over the assumed role


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("cluster.nodeGroups.0.minSize", True),  # lax pydantic read this as 1
        ("cluster.nodeGroups.0.maxSize", "3"),
        ("cluster.nodeGroups.0.diskSize", 50.5),
        ("flux.sops", "yes"),
        ("flux.networkPolicy", 1),
        ("environment.ingressEnabled", "true"),
    ],
)
def test_numbers_and_flags_are_strict(minimal: dict[str, Any], path: str, value: Any) -> None:
    _set(minimal, path, value)
    key = path.replace(".0.", "[0].")
    assert any(problem.startswith(f"gitops-infra:{key}:") for problem in problems_of(minimal))


# -- an existing cluster, an existing key, Flux installed elsewhere ---------------------------------------

EXISTING_KEY = {"privateKey": "fleetDeployKey", "publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA"}


def test_an_existing_cluster_needs_only_its_kubeconfig(minimal: dict[str, Any]) -> None:
    minimal["cluster"] = {"existing": {"kubeconfig": "homeKubeconfig"}}
    [problem] = problems_of(minimal)
    assert problem == (
        "gitops-infra:cluster.existing.kubeconfig: names the secret gitops-infra:homeKubeconfig, which is "
        "not set (pulumi config set --secret homeKubeconfig ...)"
    )
    minimal["homeKubeconfig"] = {"secure": "v1:ciphertext"}
    config = load_config(minimal, stack="t")
    assert isinstance(config.secrets.kubeconfig, pulumi.Output)
    assert platform_name(config.environment, config.cluster) == "gitops-test"
    # EKS settings beside `existing` are a mistake, named as such.
    minimal["cluster"]["kubernetesVersion"] = "1.33"
    assert problems_of(minimal) == ("gitops-infra:cluster.kubernetesVersion: unknown key",)


def test_a_secret_key_nothing_names_is_still_unknown(minimal: dict[str, Any]) -> None:
    minimal["homeKubeconfig"] = "stray"
    assert problems_of(minimal) == ("gitops-infra:homeKubeconfig: unknown key",)


def test_another_git_host_needs_its_host_keys_and_a_key_registered_there(minimal: dict[str, Any]) -> None:
    minimal["git"] = {"url": "ssh://git@git.example.com/platform/fleet.git"}
    problems = problems_of(minimal)
    assert (
        "gitops-infra:git.knownHosts: required for a git host other than github.com (its SSH host keys)"
        in problems
    )
    assert any(
        p.startswith("gitops-infra:git.owner: required to register the generated deploy key")
        for p in problems
    )

    minimal["git"] |= {
        "knownHosts": "git.example.com ssh-ed25519 AAAA",
        "deployKey": {"existing": EXISTING_KEY},
    }
    minimal["fleetDeployKey"] = {"secure": "v1:ciphertext"}
    config = load_config(minimal, stack="t")
    assert config.git.sync_url == "ssh://git@git.example.com/platform/fleet.git"
    assert isinstance(config.secrets.deploy_private_key, pulumi.Output)

    minimal["git"]["deployKey"]["rotation"] = "2026-02"
    assert problems_of(minimal) == (
        "gitops-infra:git.deployKey: algorithm and rotation are for a generated key; an existing key has "
        "neither",
    )


def test_flux_installed_elsewhere_takes_no_install_settings(minimal: dict[str, Any]) -> None:
    minimal["flux"] = {"install": "external"}
    assert load_config(minimal, stack="t").flux.install == "external"
    minimal["flux"] |= {"version": "2.18.3", "tolerations": [{"operator": "Exists"}]}
    assert problems_of(minimal) == (
        "gitops-infra:flux: tolerations, version: not used with install: external (the controllers are "
        "installed outside this stack)",
    )
    minimal["flux"] = {"install": "operator"}
    assert load_config(minimal, stack="t").flux.version == FLUX_OPERATOR_FLUX_VERSION


def test_with_the_operator_the_version_is_flux_s_and_one_the_operator_bundles(
    minimal: dict[str, Any],
) -> None:
    minimal["flux"] = {"install": "operator", "version": "2.8.5", "operatorInstall": "external"}
    flux = load_config(minimal, stack="t").flux
    assert (flux.version, flux.operator_install) == ("2.8.5", "external")
    minimal["flux"]["version"] = "2.18.3"  # the chart's version, not Flux's
    assert problems_of(minimal) == (
        "gitops-infra:flux.version: must be a Flux release the Flux Operator 0.59.0 bundles (2.2.3 to 2.9.5, "
        "such as 2.9.4)",
    )
    minimal["flux"] = {"install": "operator", "nodeSelector": {"pool": "system"}}
    assert load_config(minimal, stack="t").flux.node_selector == {"pool": "system"}
    minimal["flux"] = {"operatorInstall": "external"}
    assert problems_of(minimal) == ("gitops-infra:flux: operatorInstall: only used with install: operator",)


def test_the_local_stack_loads(minimal: dict[str, Any]) -> None:
    config = load_config(stack_config("local"), stack="local")
    assert config.flux.install == "external"
    assert config.git.deploy_key.existing is not None


def test_ready_timeout_defaults_to_flux_timeout_and_zero_turns_the_wait_off(minimal: dict[str, Any]) -> None:
    assert load_config(minimal, stack="test").flux.ready_timeout is None  # derived: timeout plus a margin
    minimal["flux"]["readyTimeout"] = "0s"
    assert load_config(minimal, stack="test").flux.ready_timeout == "0s"
    minimal["flux"]["readyTimeout"] = "5 minutes"
    assert next(p for p in problems_of(minimal) if "readyTimeout" in p).startswith(
        "gitops-infra:flux.readyTimeout: "
    )


def test_ready_timeout_must_outlast_flux_timeout(minimal: dict[str, Any]) -> None:
    # Prod's health checks may take Flux 10m; a 5m wait failed `up` while Flux was still waiting.
    minimal["flux"] |= {"timeout": "10m", "readyTimeout": "5m"}
    assert next(p for p in problems_of(minimal) if "readyTimeout" in p).startswith(
        "gitops-infra:flux.readyTimeout: must be longer than timeout (10m)"
    )
    minimal["flux"]["readyTimeout"] = "15m"
    assert load_config(minimal, stack="test").flux.ready_timeout == "15m"


def test_ready_timeout_is_at_most_a_day(minimal: dict[str, Any]) -> None:
    minimal["flux"]["readyTimeout"] = "24h"
    assert load_config(minimal, stack="test").flux.ready_timeout == "24h"
    # Far beyond a day the provider's whole seconds overflow its clock, and `up` would not wait at all.
    minimal["flux"]["readyTimeout"] = "2562047h"
    assert "gitops-infra:flux.readyTimeout: must be at most 24h" in problems_of(minimal)
    # Longer still, it is no duration Go can hold: that is said first.
    minimal["flux"]["readyTimeout"] = "99999999h"
    assert problems_of(minimal) == (
        "gitops-infra:flux.readyTimeout: must be at most 2562047h, the longest duration Go (and so Flux) "
        "can hold",
    )


def test_app_workloads_and_flux_need_namespaces_of_their_own(minimal: dict[str, Any]) -> None:
    minimal["environment"]["serviceNamespace"] = "flux-system"
    assert problems_of(minimal) == (
        "gitops-infra:environment.serviceNamespace: 'flux-system' is also flux.namespace; app workloads "
        "and Flux need namespaces of their own",
    )


# -- node group AMI types ------------------------------------------------------------------------------


def _second_group(minimal: dict[str, Any], ami_type: Any) -> None:
    first = minimal["cluster"]["nodeGroups"][0]
    minimal["cluster"]["nodeGroups"].append({**first, "name": "arm", "amiType": ami_type})


@pytest.mark.parametrize(
    ("ami_type", "al2023", "bottlerocket"),
    [
        ("AL2_x86_64", "AL2023_x86_64_STANDARD", "BOTTLEROCKET_x86_64"),
        ("AL2_ARM_64", "AL2023_ARM_64_STANDARD", "BOTTLEROCKET_ARM_64"),
        ("AL2_x86_64_GPU", "AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"),
    ],
)
@pytest.mark.parametrize("version", ["1.33", "1.34"])
def test_amazon_linux_2_from_kubernetes_1_33_on_is_refused_naming_the_group_and_its_successors(
    minimal: dict[str, Any], ami_type: str, al2023: str, bottlerocket: str, version: str
) -> None:
    # EKS publishes no AL2 AMI from 1.33 on, and refuses the node group only after the cluster is made.
    minimal["cluster"]["kubernetesVersion"] = version
    _second_group(minimal, ami_type)
    assert problems_of(minimal) == (
        "gitops-infra:cluster.nodeGroups[1].amiType: Amazon Linux 2 has no EKS AMI for Kubernetes 1.33 or "
        f"later, so EKS refuses it there: use {al2023} (Amazon Linux 2023) or {bottlerocket} (Bottlerocket)",
    )


def test_amazon_linux_2_is_judged_by_the_version_not_on_its_own() -> None:
    # The pinned Flux needs 1.33 anyway, so the config never gets here with an older one: the rule can.
    assert checks.ami_type_version_problem("AL2_x86_64", "1.32") is None
    assert checks.ami_type_version_problem("AL2_x86_64", "1.100") is not None  # numbers, not text
    assert checks.ami_type_version_problem("AL2_x86_64", "latest") is None  # the version's own problem
    assert checks.ami_type_version_problem("AL2023_x86_64_STANDARD", "1.33") is None


@pytest.mark.parametrize(
    ("ami_type", "expected"),
    [
        # A wrong case is the likely slip (x86_64, but ARM_64): say the spelling EKS takes.
        ("AL2023_X86_64_STANDARD", "must be written AL2023_x86_64_STANDARD: EKS's AMI types are case-sens"),
        ("bottlerocket_arm_64", "must be written BOTTLEROCKET_ARM_64: EKS's AMI types are case-sensitive"),
        ("CUSTOM", "CUSTOM is for a launch template with an AMI of its own, and the platform makes none"),
        ("UBUNTU_22_04", "must be an EKS AMI type, such as AL2023_x86_64_STANDARD, AL2023_ARM_64_STANDARD"),
        ("", "must be an EKS AMI type, such as AL2023_x86_64_STANDARD"),
        (["AL2023_x86_64_STANDARD"], "Input should be a valid string"),
    ],
)
def test_an_ami_type_eks_would_refuse_is_refused_by_its_key(
    minimal: dict[str, Any], ami_type: Any, expected: str
) -> None:
    _second_group(minimal, ami_type)
    (problem,) = problems_of(minimal)
    assert problem.startswith(f"gitops-infra:cluster.nodeGroups[1].amiType: {expected}"), problem


def test_every_ami_type_but_amazon_linux_2_loads_on_kubernetes_1_33(minimal: dict[str, Any]) -> None:
    group = minimal["cluster"]["nodeGroups"][0]
    for ami_type in checks.EKS_AMI_TYPES:
        group["amiType"] = ami_type
        if ami_type in checks.AL2_SUCCESSORS:
            assert problems_of(minimal), ami_type
        else:
            assert load_config(minimal, stack="test").cluster.node_groups[0].ami_type == ami_type


def test_the_ami_types_are_ekss_own(minimal: dict[str, Any]) -> None:
    # Each one the platform takes is in EKS's API model (botocore's), and so is each suggested successor.
    import gzip
    from pathlib import Path

    import botocore

    model = Path(botocore.__file__).parent / "data" / "eks" / "2017-11-01" / "service-2.json.gz"
    eks_types = set(json.loads(gzip.decompress(model.read_bytes()))["shapes"]["AMITypes"]["enum"])
    assert set(checks.EKS_AMI_TYPES) <= eks_types
    assert {successor for pair in checks.AL2_SUCCESSORS.values() for successor in pair} <= eks_types
    assert checks.CUSTOM_AMI_TYPE in eks_types and checks.CUSTOM_AMI_TYPE not in checks.EKS_AMI_TYPES


def test_load_stack_config_reads_github_base_url_from_the_github_namespace(minimal: dict[str, Any]) -> None:
    minimal["git"]["scaffold"] = True
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in minimal.items()}
    config["github:baseUrl"] = "https://ghe.example.com/"

    def program() -> Any:
        with pytest.raises(ConfigError) as info:
            load_stack_config(pulumi.Config("gitops-infra"))
        return info.value.problems

    (problem,) = run(program, config=config).result
    assert problem.startswith("github:baseUrl: is not read: the platform makes its own GitHub provider")
