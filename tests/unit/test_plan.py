"""The offline plan: the real stack program under mocks, with no engine, passphrase or credentials."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from click.testing import CliRunner, Result

from gitops_infra.automation import COMPUTED, SECRET, StackOptions, offline_plan
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.config import plan_config

from ..support import REPO_ROOT, stack_project, write_project


@pytest.fixture(autouse=True)
def nothing_but_the_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No passphrase, no engine on PATH, no backend: what a fork's pull request job has."""
    for name in ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE", "PULUMI_BACKEND_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))


def _plan(*args: str) -> Result:
    return CliRunner().invoke(main, ["plan", *args])


def _project(tmp_path: Path, config: dict[str, object]) -> Path:
    """A project whose program is this repository's stack program, with the given stack config."""
    stack_project(tmp_path)
    (tmp_path / "Pulumi.test.yaml").write_text(yaml.safe_dump({"config": config}))
    return tmp_path


def _committed(stack: str) -> dict[str, object]:
    loaded: dict[str, dict[str, object]] = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())
    return loaded["config"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_prints_the_tree_of_the_committed_stacks(stack: str) -> None:
    result = _plan(stack, "--cwd", str(REPO_ROOT))

    assert result.exit_code == EXIT_OK, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Offline plan of stack {stack} (gitops-infra): ")
    assert "unknown, shown as <computed>" in result.stdout
    assert f"├── gitops-infra:index:EksCluster  gitops-{stack}" in result.stdout
    assert f"│   ├── eks:index:Cluster  gitops-{stack}-cluster" in result.stdout
    assert '  kubeconfig: "[secret]"' in result.stdout
    assert "Secrets planned with redacted placeholders: gitops-infra:githubToken" in result.stdout


def test_plan_json_is_one_document_with_the_graph() -> None:
    dev = _plan("dev", "--cwd", str(REPO_ROOT), "--json")
    prod = _plan("prod", "--cwd", str(REPO_ROOT), "--json")
    assert dev.exit_code == prod.exit_code == EXIT_OK

    plans = {name: json.loads(result.stdout) for name, result in (("dev", dev), ("prod", prod))}
    nats = {
        name: Counter(r["type"] for r in plan["resources"])["aws:ec2/natGateway:NatGateway"]
        for name, plan in plans.items()
    }
    assert nats == {"dev": 1, "prod": 3}
    by_name = {r["name"]: r for r in plans["dev"]["resources"]}
    assert by_name["gitops-dev-flux-git-auth"]["inputs"]["stringData"] == SECRET
    assert by_name["gitops-dev-fleet-deploy-key"]["parent"] == by_name["gitops-dev-fleet"]["urn"]
    assert by_name["gitops-dev"]["parent"] is None


def test_the_mocks_invent_nothing() -> None:
    plan = offline_plan("dev", options=StackOptions(work_dir=REPO_ROOT), config_step=plan_config)

    assert plan.outputs["oidcProviderArn"] == COMPUTED
    assert plan.outputs["deployKeyPublicKey"] == COMPUTED
    assert plan.outputs["kubeconfig"] == SECRET
    assert plan.outputs["clusterName"] == "gitops-dev"
    key = next(r for r in plan.resources if r.type == "github:index/repositoryDeployKey:RepositoryDeployKey")
    assert key.inputs["key"] == COMPUTED  # the public key exists only once the cloud made the key pair
    assert key.inputs["readOnly"] is True


def test_bad_config_exits_1_with_every_problem_and_no_traceback(tmp_path: Path) -> None:
    config = _committed("dev")
    cluster = config["gitops-infra:cluster"]
    assert isinstance(cluster, dict)
    cluster["nodeGroups"][0]["maxSize"] = 0
    config["gitops-infra:git"] = {"owner": "example-org"}

    result = _plan("test", "--cwd", str(_project(tmp_path, config)))

    assert result.exit_code == EXIT_ERROR
    assert result.stderr.startswith("ConfigError: invalid config for stack 'test' (2 problems):")
    assert "gitops-infra:cluster.nodeGroups[0].maxSize: must be >= minSize" in result.stderr
    assert "gitops-infra:git.repository: required" in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_a_secure_value_is_planned_as_a_secret_without_a_passphrase(tmp_path: Path) -> None:
    config = _committed("dev")
    config["gitops-infra:githubToken"] = {"secure": "v1:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0"}

    plan = offline_plan(
        "test", options=StackOptions(work_dir=_project(tmp_path, config)), config_step=plan_config
    )

    provider = next(r for r in plan.resources if r.type == "pulumi:providers:github")
    assert provider.inputs["token"] == SECRET
    assert "v1:bm90" not in json.dumps([dict(r.inputs) for r in plan.resources])


def test_unknown_stack_and_failing_program_are_clear_errors(tmp_path: Path) -> None:
    missing = _plan("staging", "--cwd", str(REPO_ROOT))
    assert missing.exit_code == EXIT_ERROR
    assert missing.stderr.startswith("StackNotFoundError: no Pulumi.staging.yaml in ")

    (tmp_path / "Pulumi.yaml").write_text("name: other\nruntime: python\n")
    (tmp_path / "Pulumi.test.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("raise ValueError('the program cannot run offline')\n")
    failing = _plan("test", "--cwd", str(tmp_path))
    assert failing.exit_code == EXIT_ERROR
    assert failing.stderr.startswith(
        "OperationFailedError: plan of stack 'test' failed: the program cannot run"
    )


def _by_name(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in plan["resources"]}


def test_plan_json_shows_dependencies_so_ordering_can_be_reviewed() -> None:
    result = _plan("prod", "--cwd", str(REPO_ROOT), "--json")
    assert result.exit_code == EXIT_OK, result.output
    resources = _by_name(json.loads(result.stdout))
    assert all(isinstance(r["depends_on"], list) for r in resources.values())
    assert all(isinstance(r["property_dependencies"], dict) for r in resources.values())

    def urn(name: str) -> str:
        return str(resources[name]["urn"])

    def waits_for(later: str, earlier: str) -> bool:
        return urn(earlier) in resources[later]["depends_on"]

    # Destroy runs this backwards: sync objects, then the controllers, then the namespace.
    assert waits_for("gitops-prod-flux-kustomization", "gitops-prod-flux-controllers")
    assert waits_for("gitops-prod-flux-kustomization", "gitops-prod-flux-git-repository")
    assert waits_for("gitops-prod-flux-git-repository", "gitops-prod-flux-controllers")
    assert waits_for("gitops-prod-flux-controllers", "gitops-prod-flux-namespace")
    assert waits_for("gitops-prod-flux-notification-provider", "gitops-prod-flux-notification-webhook")
    # Node groups wait for (and are destroyed before) their role's policy attachments.
    for group in ("gitops-prod-system", "gitops-prod-workloads"):
        for policy in ("worker", "cni", "ecr"):
            assert waits_for(group, f"gitops-prod-node-{policy}"), (group, policy)
        # Property dependencies say which input carries each one.
        assert resources[group]["property_dependencies"]["nodeRoleArn"] == [urn("gitops-prod-node-role")]
    assert waits_for("gitops-prod-k8s", "gitops-prod-system")
    # The prod endpoint: public, open only to the runners' range (item 1 of issue 9).
    cluster = resources["gitops-prod-cluster"]["inputs"]
    assert cluster["endpointPublicAccess"] is True
    assert cluster["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_plan_shows_the_provider_waiting_for_a_private_endpoints_rules(tmp_path: Path) -> None:
    config = _committed("dev")
    cluster: dict[str, Any] = dict(config["gitops-infra:cluster"])
    cluster["endpoint"] = {"access": "private", "allowedCidrs": ["10.100.0.0/16"]}
    cluster["network"] = {
        "existingVpc": {
            "vpcId": "vpc-0123456789abcdef0",
            "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        }
    }
    project = _project(tmp_path, {**config, "gitops-infra:cluster": cluster})
    result = _plan("test", "--cwd", str(project), "--json")
    assert result.exit_code == EXIT_OK, result.output
    resources = _by_name(json.loads(result.stdout))
    rule = resources["gitops-dev-endpoint-0"]
    assert rule["urn"] in resources["gitops-dev-k8s"]["depends_on"]


def test_github_app_keys_are_planned_as_secrets_and_shown_nowhere(tmp_path: Path) -> None:
    # The worst case: both PEMs written into the stack file in plaintext instead of `--secret`.
    flux_pem, provider_pem = "flux-app-pem-testonly-7c1e", "provider-app-pem-testonly-9d2f"
    config = _committed("dev")
    git = dict(config["gitops-infra:git"])  # type: ignore[call-overload]
    git.pop("deployKey", None)
    git["githubApp"] = {"appId": 1, "installationId": 2, "privateKey": "fluxAppKey"}
    config |= {
        "gitops-infra:git": {**git, "scaffold": True},
        "gitops-infra:github": {"appAuth": {"id": 3, "installationId": 4, "pemFile": "providerPem"}},
        "gitops-infra:fluxAppKey": flux_pem,
        "gitops-infra:providerPem": provider_pem,
    }
    project = _project(tmp_path, config)

    outputs = [
        _plan("test", "--cwd", str(project), *form) for form in ((), ("--json",), ("--format", "markdown"))
    ]

    assert [result.exit_code for result in outputs] == [EXIT_OK] * 3, outputs[0].output
    for result in outputs:
        assert flux_pem not in result.output and provider_pem not in result.output
    resources = _by_name(json.loads(outputs[1].stdout))
    assert resources["gitops-dev-flux-github-app-auth"]["inputs"]["stringData"] == SECRET
    assert resources["gitops-dev-github"]["inputs"]["appAuth"] == SECRET
    assert "token" not in resources["gitops-dev-github"]["inputs"]
    assert not [name for name in resources if "deploy-key" in name or name.endswith("-key")]


def test_a_github_app_on_an_enterprise_server_plans_its_clone_and_scaffold_on_that_server(
    tmp_path: Path,
) -> None:
    config = _committed("dev")
    git = dict(config["gitops-infra:git"])  # type: ignore[call-overload]
    git.pop("deployKey", None)
    # The IDs as digit strings, the form pulumi-github's own github:appAuth takes.
    git["githubApp"] = {
        "appId": "123456",
        "installationId": "7890123",
        "privateKey": "fluxAppKey",
        "baseUrl": "https://ghe.example.com/api/v3",
    }
    config |= {
        "gitops-infra:git": {**git, "scaffold": True},
        "gitops-infra:github": {"appAuth": {"id": "3", "installationId": "4", "pemFile": "providerPem"}},
    }
    project = _project(tmp_path, config)

    result = _plan("test", "--cwd", str(project), "--json")

    assert result.exit_code == EXIT_OK, result.output
    resources = _by_name(json.loads(result.stdout))
    (repository,) = [r for r in resources.values() if r["type"].endswith(":GitRepository")]
    assert repository["inputs"]["spec"]["url"] == "https://ghe.example.com/example-org/fleet"
    assert repository["inputs"]["spec"]["provider"] == "github"
    # The repository files the scaffold commits go to the same server, through the provider's API.
    assert resources["gitops-dev-github"]["inputs"]["baseUrl"] == "https://ghe.example.com/"
    assert resources["gitops-dev-github"]["inputs"]["appAuth"] == SECRET

    # A url on github.com would be the token of one GitHub presented to another: refused before the plan.
    config["gitops-infra:git"] = {**git, "url": "https://github.com/example-org/fleet"}
    refused = _plan("test", "--cwd", str(_project(tmp_path, config)))
    assert refused.exit_code == EXIT_ERROR
    assert "gitops-infra:git: url: must be on ghe.example.com" in refused.stderr
    assert "Traceback" not in refused.output


def test_a_mocked_run_walks_no_stack_and_leaves_pulumis_walker_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The mocked monitor throws the trace away; walking the stack for it was a fifth of a plan's CPU.
    from pulumi.runtime import resource

    from .harness import run

    walked: list[int] = []
    upstream = resource._get_stack_trace

    def walker() -> Any:
        walked.append(1)
        return upstream()

    # raising=True: a pulumi that renames the walker fails here, where the plan would quietly pay again.
    monkeypatch.setattr(resource, "_get_stack_trace", walker, raising=True)
    done = run(lambda: pulumi.ComponentResource("test:index:Thing", "thing"))
    assert [r.name for r in done.graph.resources] == ["thing"]
    assert walked == []
    assert resource._get_stack_trace is walker


def test_each_mocked_run_s_resources_hang_off_its_own_stack_whatever_ran_before() -> None:
    # set_mocks kept the process's first root stack: dev's components were parented to prod's stack.
    from .harness import run

    for stack in ("prod", "dev", "prod"):
        done = run(lambda: pulumi.ComponentResource("test:index:Thing", "thing"), stack=stack)
        (thing,) = done.graph.resources
        assert thing.parent == f"urn:pulumi:{stack}::gitops-infra::pulumi:pulumi:Stack::gitops-infra-{stack}"


def test_the_plan_lists_resources_in_one_order_whatever_order_they_registered_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under mocks, resources register as their inputs resolve, which varies from run to run: a plan a CI
    # job diffs, or posts to a pull request, must not change with it. Parents come before their children.
    from gitops_infra.automation import plan as plan_module
    from gitops_infra.automation._engine.recording import Graph

    options = StackOptions(work_dir=REPO_ROOT)
    as_run = offline_plan("dev", options=options, config_step=plan_config).resources
    real = plan_module.run_mocked

    def reversed_run(*args: Any, **kwargs: Any) -> Graph:
        graph = real(*args, **kwargs)
        return Graph(list(reversed(graph.resources)))

    monkeypatch.setattr(plan_module, "run_mocked", reversed_run)
    reversed_ = offline_plan("dev", options=options, config_step=plan_config).resources

    assert [r.urn for r in reversed_] == [r.urn for r in as_run]
    seen: set[str] = set()
    for resource in as_run:
        assert resource.parent is None or resource.parent in seen, resource.urn
        seen.add(resource.urn)


def test_the_plan_of_a_stack_with_tenants_lists_each_tenants_objects(tmp_path: Path) -> None:
    config = _committed("dev")
    config["gitops-infra:tenants"] = [
        {"name": "shop", "namespaces": ["shop", "shop-jobs"]},
        {
            "name": "ads",
            "source": {
                "repository": {
                    "url": "ssh://git@git.example.com/ads",
                    "knownHosts": "git.example.com ssh-ed25519 AAAA",
                    "deployKey": {"existing": {"privateKey": "adsKey"}},
                }
            },
        },
    ]  # adsKey is not in the file: the plan plans it with a placeholder, as any secret key
    project = _project(tmp_path, config)

    tree, as_json = _plan("test", "--cwd", str(project)), _plan("test", "--cwd", str(project), "--json")

    assert [tree.exit_code, as_json.exit_code] == [EXIT_OK, EXIT_OK], tree.output
    assert "gitops-infra:index:Tenant  gitops-dev-tenant-shop" in tree.stdout
    assert "gitops-infra:index:Tenant  gitops-dev-tenant-ads" in tree.stdout
    plan = json.loads(as_json.stdout)
    resources = _by_name(plan)
    shop = resources["gitops-dev-tenant-shop"]["urn"]
    assert sorted(r["type"] for r in plan["resources"] if r["parent"] == shop) == sorted(
        [
            "kubernetes:core/v1:Namespace",
            "kubernetes:core/v1:Namespace",
            "kubernetes:core/v1:ServiceAccount",
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            "kubernetes:core/v1:ConfigMapPatch",
            "kubernetes:core/v1:ConfigMapPatch",
            "kubernetes:core/v1:SecretPatch",
            "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",
            "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",
        ]
    )
    assert resources["gitops-dev-tenant-ads-git-auth"]["inputs"]["stringData"] == SECRET
    assert plan["outputs"]["tenants"][1] == {
        "name": "shop",
        "namespace": "shop",
        "namespaces": ["shop", "shop-jobs"],
        "kustomization": "shop",
    }


def test_a_plan_of_one_resource_says_one_resource(tmp_path: Path) -> None:
    write_project(tmp_path, "single")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\n\n\nclass One(pulumi.ComponentResource):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__('test:index:One', 'one')\n\n\nOne()\n"
    )
    (tmp_path / "Pulumi.test.yaml").write_text("config: {}\n")

    text = _plan("test", "--cwd", str(tmp_path))
    markdown = _plan("test", "--cwd", str(tmp_path), "--format", "markdown")

    assert [text.exit_code, markdown.exit_code] == [EXIT_OK, EXIT_OK], text.output
    assert text.stdout.splitlines()[0] == "Offline plan of stack test (single): 1 resource"
    assert "### Offline plan of `test`: 1 resource to create" in markdown.stdout
    assert "<summary>1 resource</summary>" in markdown.stdout
