"""Which stacks `destroy` treats as prod: the environment read as Pulumi reads it, failing closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitops_infra.automation import StackOptions
from gitops_infra.automation._state.target import StackTarget
from gitops_infra.automation.teardown import prod_environment

from ..support import fake_engine, write_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_engine(write_project(tmp_path, "p"))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "p")
    return tmp_path


PROD = "environment 'prod'"
UNREADABLE = "its environment cannot be read"


@pytest.mark.parametrize(
    ("stack_file", "expected"),
    [
        pytest.param("config:\n  p:environment: {name: prod}\n", PROD, id="the namespaced mapping"),
        pytest.param("config:\n  p:environment: {name: dev}\n", None, id="a dev mapping"),
        # What slipped past: Pulumi reads a bare key in the project's namespace.
        pytest.param("config:\n  environment: {name: prod}\n", PROD, id="a bare key"),
        # ... and `pulumi config set environment '{"name":"prod"}'` (no --path) writes JSON text.
        pytest.param('config:\n  p:environment: \'{"name": "prod"}\'\n', PROD, id="JSON text"),
        pytest.param(
            'config:\n  environment: \'{"name": "Production"}\'\n', "environment 'Production'", id="bare JSON"
        ),
        pytest.param('config:\n  p:environment: \'{"name": "dev"}\'\n', None, id="dev JSON text"),
        # Both spellings at once: either one naming prod is enough.
        pytest.param("config:\n  p:environment: {name: dev}\n  environment: {name: prod}\n", PROD, id="both"),
        # There, but unreadable: prod (fail closed).
        pytest.param("config:\n  p:environment: 'prod'\n", UNREADABLE, id="text, not JSON"),
        pytest.param("config:\n  p:environment: '[1, 2]'\n", UNREADABLE, id="JSON, not a mapping"),
        pytest.param("config:\n  p:environment:\n    secure: AAABAB==\n", UNREADABLE, id="a secret"),
        pytest.param("config:\n  p:environment: {name: [prod]}\n", UNREADABLE, id="a name that is no text"),
        pytest.param("config: [p:environment]\n", UNREADABLE, id="a config that is no mapping"),
        # Not there at all: the stack's own name decides (dev here).
        pytest.param("config: {}\n", None, id="absent"),
        pytest.param("config:\n  p:environment: {baseDomain: x}\n", None, id="no name"),
    ],
)
def test_prod_is_read_as_pulumi_reads_the_environment(
    project: Path, stack_file: str, expected: str | None
) -> None:
    (project / "Pulumi.dev.yaml").write_text(stack_file)
    reason = prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project)))
    assert reason == expected if expected != UNREADABLE else (reason or "").startswith(UNREADABLE)


def test_the_projects_own_default_counts_and_the_stack_name_too(project: Path) -> None:
    settings = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").write_text(settings + "config:\n  p:environment:\n    value: {name: prod}\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    assert prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project))) == PROD
    (project / "Pulumi.dev.yaml").write_text("config:\n  p:environment: {name: dev}\n")  # the stack's wins
    assert prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project))) is None
    (project / "Pulumi.yaml").write_text(settings)
    (project / "Pulumi.production.yaml").write_text("config: {}\n")
    target = StackTarget.resolve("production", StackOptions(work_dir=project))
    assert prod_environment(target) == "stack name 'production'"


# Layouts in which the engine reads the stack's settings elsewhere, or otherwise, than beside Pulumi.yaml in
# the mapping form: each file, by its path, and the reason destroy must give (issue 44, item 1).
PRODUCTION = "environment 'production'"
ENGINE_LAYOUTS: dict[str, tuple[dict[str, str], str]] = {
    # ProjectStackPath: <stackConfigDir>/Pulumi.<stack><ext>.
    "stackConfigDir": (
        {
            "Pulumi.yaml": "name: p\nruntime: python\nstackConfigDir: stacks\n",
            "stacks/Pulumi.dev.yaml": "config:\n  p:environment: {name: production}\n",
        },
        PRODUCTION,
    ),
    # ... stackConfigDir's old spelling, a text config: (RewriteConfigPathIntoStackConfigDir).
    "a text config: names the directory": (
        {
            "Pulumi.yaml": "name: p\nruntime: python\nconfig: stacks\n",
            "stacks/Pulumi.dev.yaml": "config:\n  p:environment: {name: production}\n",
        },
        PRODUCTION,
    ),
    # ... the project file's extension: a Pulumi.yml project's stack file is Pulumi.dev.yml.
    "a Pulumi.yml project beside a stale Pulumi.dev.yaml": (
        {
            "Pulumi.yml": "name: p\nruntime: python\n",
            "Pulumi.dev.yml": "config:\n  p:environment: {name: production}\n",
            "Pulumi.dev.yaml": "config:\n  p:environment: {name: dev}\n",
        },
        PRODUCTION,
    ),
    # findProjectInDir tries .json first: a Pulumi.json is the project, and its stack file Pulumi.dev.json.
    "a Pulumi.json beside a Pulumi.yaml": (
        {
            "Pulumi.json": '{"name": "p", "runtime": "python"}',
            "Pulumi.yaml": "name: p\nruntime: python\n",
            "Pulumi.dev.json": '{"config": {"p:environment": {"name": "production"}}}',
            "Pulumi.dev.yaml": "config:\n  p:environment: {name: dev}\n",
        },
        PRODUCTION,
    ),
    # The project's short-form default (RewriteShorthandConfigValues), namespaced or bare.
    "a short-form project default": (
        {"Pulumi.yaml": 'name: p\nruntime: python\nconfig:\n  p:environment: \'{"name": "production"}\'\n'},
        PRODUCTION,
    ),
    "a bare short-form project default": (
        {
            "Pulumi.yaml": 'name: p\nruntime: python\nconfig:\n  environment: \'{"name": "production"}\'\n',
            "Pulumi.dev.yaml": "config: {}\n",
        },
        PRODUCTION,
    ),
    # config.ParseKey: <ns>:config:<name> is <ns>:<name>.
    "the old <ns>:config:<name> key": (
        {
            "Pulumi.yaml": "name: p\nruntime: python\n",
            "Pulumi.dev.yaml": "config:\n  p:config:environment: {name: production}\n",
        },
        PRODUCTION,
    ),
    # An ESC environment may set it: that cannot be told from the files.
    "an imported ESC environment": (
        {
            "Pulumi.yaml": "name: p\nruntime: python\n",
            "Pulumi.dev.yaml": "environment: [team/dev]\nconfig:\n  p:environment: {name: dev}\n",
        },
        UNREADABLE,
    ),
    # What the engine refuses cannot be told either.
    "a config key the engine refuses": (
        {"Pulumi.yaml": "name: p\nruntime: python\n", "Pulumi.dev.yaml": "config:\n  a:b:c: 1\n"},
        UNREADABLE,
    ),
}


def _layout(root: Path, files: dict[str, str]) -> None:
    fake_engine(root)
    (root / "Pulumi.yaml").unlink()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize("layout", sorted(ENGINE_LAYOUTS))
def test_a_prod_stack_is_refused_without_confirm_wherever_the_engine_reads_its_settings(
    project: Path, layout: str
) -> None:
    from gitops_infra.automation import destroy
    from gitops_infra.errors import ConfirmationRequiredError

    files, expected = ENGINE_LAYOUTS[layout]
    _layout(project, files)
    reason = prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project)))
    assert reason == expected if expected != UNREADABLE else (reason or "").startswith(UNREADABLE), reason
    with pytest.raises(ConfirmationRequiredError, match=r"stack 'dev' is prod \("):
        destroy("dev", options=StackOptions(work_dir=project))


def test_the_stack_file_the_engine_reads_wins_over_a_stale_one_of_another_extension(project: Path) -> None:
    # The other way round: a dev stack is not made prod by a file the engine does not read.
    _layout(
        project,
        {
            "Pulumi.yml": "name: p\nruntime: python\n",
            "Pulumi.dev.yml": "config:\n  p:environment: {name: dev}\n",
            "Pulumi.dev.yaml": "config:\n  p:environment: {name: production}\n",
            "stacks/Pulumi.dev.yml": "config:\n  p:environment: {name: production}\n",
        },
    )
    assert prod_environment(StackTarget.resolve("dev", StackOptions(work_dir=project))) is None


# -- the drain and the sweep: which clusters, read from the state ------------------------------------------

PROVIDER = "urn:pulumi:dev::p::pulumi:providers:kubernetes::"
CLUSTER = "urn:pulumi:dev::p::eks:index:Cluster::dev"
AWS = "urn:pulumi:dev::p::pulumi:providers:aws::default_7_0_0"


def _provider(name: str, kubeconfig: str, sources: list[str], **extra: object) -> dict[str, object]:
    return {
        "urn": PROVIDER + name,
        "id": f"{name}-id",
        "type": "pulumi:providers:kubernetes",
        "inputs": {"kubeconfig": kubeconfig},
        "propertyDependencies": {"kubeconfig": sources},
        **extra,
    }


def _deployment(*resources: dict[str, object]) -> dict[str, object]:
    made = [
        {"urn": CLUSTER, "type": "eks:index:Cluster"},
        {
            "urn": "urn:pulumi:dev::p::pulumi:pulumi:StackReference::infra",
            "type": "pulumi:pulumi:StackReference",
        },
    ]
    return {"resources": [*made, *resources]}


def test_a_cluster_is_the_stack_s_when_its_provider_s_kubeconfig_comes_from_a_resource_of_the_stack() -> None:
    from gitops_infra.automation._cluster.drain import owned_clusters

    deployment = _deployment(
        _provider("made", "made: 1\n", [CLUSTER]),
        _provider("again", "made: 1\n", [CLUSTER]),  # pulumi-eks's own provider for the same cluster: once
        _provider("existing", "existing: 1\n", []),  # cluster.existing: a kubeconfig from config
        _provider("referenced", "ref: 1\n", ["urn:pulumi:dev::p::pulumi:pulumi:StackReference::infra"]),
        _provider("elsewhere", "gone: 1\n", ["urn:pulumi:dev::p::eks:index:Cluster::not-in-this-state"]),
        _provider("deleted", "old: 1\n", [CLUSTER], delete=True),  # pending delete from a replace
    )
    assert [a.kubeconfig for a in owned_clusters(deployment)] == ["made: 1\n"]
    assert owned_clusters(_deployment(_provider("existing", "existing: 1\n", []))) == ()
    assert owned_clusters({}) == ()


def test_the_sweep_takes_each_eks_cluster_s_name_region_and_the_profile_of_its_aws_provider() -> None:
    from gitops_infra.automation.teardown import _eks_clusters, _Made

    def eks(name: str, arn: object, provider: str = f"{AWS}::id") -> dict[str, object]:
        return {
            "urn": f"urn:pulumi:dev::p::aws:eks/cluster:Cluster::{name}",
            "type": "aws:eks/cluster:Cluster",
            "outputs": {"name": name, "arn": arn},
            "provider": provider,
        }

    deployment = {
        "resources": [
            {"urn": AWS, "type": "pulumi:providers:aws", "inputs": {"region": "us-east-1", "profile": "ops"}},
            eks("dev-eks", "arn:aws:eks:eu-west-1:123456789012:cluster/dev-eks"),
            eks("no-arn", None),  # not known yet: the provider's region
            eks("dev-eks", "arn:aws:eks:eu-west-1:123456789012:cluster/dev-eks"),  # once
            {**eks("going", "arn:aws:eks:eu-west-1:1:cluster/going"), "delete": True},
            eks("", "arn:aws:eks:eu-west-1:1:cluster/x"),  # no name: nothing to look for
        ]
    }
    assert _eks_clusters(deployment) == (
        _Made("dev-eks", "eu-west-1", "ops", account="123456789012"),
        _Made("no-arn", "us-east-1", "ops"),
    )


def _secret(value: object) -> dict[str, object]:
    """A secret as ``pulumi stack export --show-secrets`` writes it: its plaintext is JSON."""
    return {
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        "plaintext": json.dumps(value),
    }


DEPLOYER = "arn:aws:iam::222222222222:role/deployer"
JUMP = "arn:aws:iam::333333333333:role/jump"
UNREADABLE_CHAIN = "the AWS provider's {} cannot be read: a list of roles, each with roleArn, was expected"


@pytest.mark.parametrize(
    ("inputs", "roles", "problem"),
    [
        pytest.param({}, (), None, id="no role"),
        # pulumi-aws v7's aws:assumeRoles, as the engine keeps a provider's object input: JSON text.
        pytest.param(
            {
                "assumeRoles": json.dumps(
                    [{"roleArn": JUMP}, {"roleArn": DEPLOYER, "externalId": "x-1", "sessionName": "ci"}]
                )
            },
            ((JUMP, None, None), (DEPLOYER, "x-1", "ci")),
            None,
            id="a chain, in order",
        ),
        # A Python program's `aws.Provider(assume_roles=[{...}])` plain dict keeps its snake_case keys.
        pytest.param(
            {"assumeRoles": json.dumps([{"role_arn": DEPLOYER, "external_id": "x-1", "session_name": "ci"}])},
            ((DEPLOYER, "x-1", "ci"),),
            None,
            id="snake_case",
        ),
        pytest.param(
            {"assumeRoles": _secret(json.dumps([{"roleArn": DEPLOYER, "externalId": "x-1"}]))},
            ((DEPLOYER, "x-1", None),),
            None,
            id="a secret",
        ),
        pytest.param({"assumeRoles": [{"roleArn": DEPLOYER}]}, ((DEPLOYER, None, None),), None, id="a list"),
        # pulumi-aws v6's single aws:assumeRole.
        pytest.param(
            {"assumeRole": json.dumps({"roleArn": DEPLOYER})}, ((DEPLOYER, None, None),), None, id="v6"
        ),
        pytest.param({"assumeRoles": "[{"}, (), "assumeRoles", id="not JSON"),
        pytest.param({"assumeRoles": json.dumps([{"externalId": "x"}])}, (), "assumeRoles", id="no roleArn"),
        pytest.param({"assumeRoles": json.dumps([{"roleArn": 5}])}, (), "assumeRoles", id="no text"),
        pytest.param({"assumeRoles": json.dumps(["x"])}, (), "assumeRoles", id="no mapping"),
        pytest.param({"assumeRole": json.dumps(7)}, (), "assumeRole", id="v6, no mapping"),
    ],
)
def test_the_sweep_takes_the_role_chain_of_the_cluster_s_aws_provider(
    inputs: dict[str, object], roles: tuple[tuple[str, str | None, str | None], ...], problem: str | None
) -> None:
    from gitops_infra.automation.teardown import _eks_clusters, _swept

    deployment = {
        "resources": [
            {"urn": AWS, "type": "pulumi:providers:aws", "inputs": {"region": "eu-west-1", **inputs}},
            {
                "urn": "urn:pulumi:dev::p::aws:eks/cluster:Cluster::dev-eks",
                "type": "aws:eks/cluster:Cluster",
                "outputs": {"name": "dev-eks", "arn": "arn:aws:eks:eu-west-1:222222222222:cluster/dev-eks"},
                "provider": f"{AWS}::id",
            },
        ]
    }
    (made,) = _eks_clusters(deployment)
    assert made.account == "222222222222"
    assert [(r.role_arn, r.external_id, r.session_name) for r in made.roles] == list(roles)
    assert made.unreadable == (UNREADABLE_CHAIN.format(problem) if problem else None)
    assert "x-1" not in repr(made)  # an external ID is never shown
    if problem:  # the sweep cannot look, and says so, without asking AWS anything
        (swept,) = _swept((made,))
        assert (swept.error, swept.clean, swept.account) == (made.unreadable, False, None)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_drain_timeout_that_is_no_positive_number_of_seconds_is_refused_before_anything_runs(
    project: Path, timeout: float
) -> None:
    from gitops_infra.automation import destroy
    from gitops_infra.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"drain_timeout: .* must be a finite number of seconds, above 0"):
        destroy("dev", options=StackOptions(work_dir=project), drain_timeout=timeout)


def test_an_unreachable_cluster_stops_the_drain_with_no_credential_in_the_error() -> None:
    import socket

    from gitops_infra.automation._cluster.drain import drain_clusters
    from gitops_infra.automation._cluster.kube import Access
    from gitops_infra.errors import DrainError

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    kubeconfig = (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: s3cr3t-t0ken-value}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    with pytest.raises(DrainError) as raised:
        drain_clusters((Access(kubeconfig, None),), stack="dev", timeout=30)
    message = str(raised.value)
    assert message.startswith("cannot drain the cluster of stack 'dev' before destroying it: ")
    assert "Nothing was destroyed" in message and "--no-drain" in message
    assert "s3cr3t" not in message and raised.value.remaining == ()


# -- the command: what it prints, and its exit code ----------------------------------------------------------


def _destroyed(**fields: object) -> object:
    from gitops_infra.automation import DestroyResult

    return DestroyResult(stack="dev", changes={"delete": 3}, version=2, commit=None, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sweeps", "code"),
    [
        pytest.param((), 0, id="no EKS cluster"),
        pytest.param("clean", 0, id="nothing left"),
        pytest.param("orphan", 2, id="an orphan"),
        pytest.param("error", 2, id="the sweep could not look"),
    ],
)
def test_destroy_exits_2_when_the_sweep_finds_orphans_or_cannot_look(
    project: Path, monkeypatch: pytest.MonkeyPatch, sweeps: object, code: int
) -> None:
    import json

    from click.testing import CliRunner

    from gitops_infra import automation
    from gitops_infra.automation import Orphan, SweepResult
    from gitops_infra.cli import main

    found = {
        "clean": (SweepResult("dev-eks", "eu-west-1"),),
        "orphan": (
            SweepResult(
                "dev-eks",
                "eu-west-1",
                orphans=(Orphan("arn:aws:ec2:eu-west-1:1:volume/vol-1", "ec2:volume", {}, "x=y"),),
            ),
        ),
        "error": (SweepResult("dev-eks", "eu-west-1", error="no AWS credentials"),),
    }.get(sweeps, ())  # type: ignore[call-overload]
    calls: list[dict[str, object]] = []

    def destroy(stack: str, **kwargs: object) -> object:
        calls.append(kwargs)
        return _destroyed(sweeps=found)

    monkeypatch.setattr(automation, "destroy", destroy)
    result = CliRunner().invoke(
        main, ["destroy", "dev", "--yes", "--json", "--drain-timeout", "90s", "--cwd", str(project)]
    )
    assert result.exit_code == code, result.output
    document = json.loads(result.stdout)
    assert document["clean"] is (code == 0)
    assert calls[0]["drain"] is True and calls[0]["drain_timeout"] == 90.0


def test_no_drain_is_passed_on_with_a_warning_and_a_bad_timeout_is_a_usage_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from gitops_infra import automation
    from gitops_infra.cli import main

    calls: list[dict[str, object]] = []
    monkeypatch.setattr(automation, "destroy", lambda stack, **kw: calls.append(kw) or _destroyed())
    runner = CliRunner()
    skipped = runner.invoke(main, ["destroy", "dev", "--yes", "--no-drain", "--cwd", str(project)])
    assert skipped.exit_code == 0, skipped.output
    assert "warning: --no-drain: the cluster is not drained" in skipped.stderr
    assert calls[-1]["drain"] is False
    for bad in ("soon", "0s", "-5m"):
        refused = runner.invoke(
            main, ["destroy", "dev", "--yes", "--drain-timeout", bad, "--cwd", str(project)]
        )
        assert refused.exit_code == 1, (bad, refused.output)  # a usage error, as the CLI says every one
        assert "UsageError: Invalid value for '--drain-timeout'" in refused.stderr, refused.output
    assert len(calls) == 1  # nothing ran for a bad timeout
