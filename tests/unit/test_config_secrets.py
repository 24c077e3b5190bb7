"""``gitops-infra:secrets``: the providers load with their defaults, and each bad value names its key path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gitops_infra import checks, defaults
from gitops_infra.config import SecretsSpec, load_config, load_stack_config, plan_config
from gitops_infra.errors import ConfigError

from .harness import run

EXTERNAL = "gitops-infra:secrets.externalSecrets"
KMS_KEY = "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def problems_of(raw: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, stack="test")
    return info.value.problems


def with_secrets(
    minimal: dict[str, Any], region: str | None = "eu-west-1", **providers: Any
) -> dict[str, Any]:
    raw = {**minimal, "secrets": providers}
    return raw if region is None else {**raw, "aws:region": region}


def test_both_are_off_by_default_and_take_their_defaults(minimal: dict[str, Any]) -> None:
    for raw in (minimal, with_secrets(minimal), {**minimal, "secrets": None}):
        spec = load_config(raw, stack="test").secret_providers
        assert not spec.sealed_secrets.enabled and not spec.external_secrets.enabled
    spec = load_config(with_secrets(minimal, sealedSecrets={"enabled": True}), stack="test").secret_providers
    sealed = spec.sealed_secrets
    assert sealed.enabled and sealed.namespace == defaults.SEALED_SECRETS_NAMESPACE
    assert sealed.version == defaults.SEALED_SECRETS_CHART_VERSION and sealed.rotations == ("",)


def test_external_secrets_takes_its_region_from_aws_and_its_prefix_from_the_environment(
    minimal: dict[str, Any],
) -> None:
    raw = with_secrets(minimal, externalSecrets={"enabled": True})
    external = load_config(raw, stack="test").secret_providers.external_secrets
    assert (external.region, external.secret_prefix) == ("eu-west-1", "test/")
    assert external.namespace == defaults.EXTERNAL_SECRETS_NAMESPACE
    assert external.cluster_secret_store == defaults.CLUSTER_SECRET_STORE and external.kms_key_arn is None
    # Its own values win, and need no aws:region.
    raw = with_secrets(
        minimal,
        region=None,
        externalSecrets={
            "enabled": True,
            "region": "us-east-2",
            "secretPrefix": "platform/test/",
            "kmsKeyArn": KMS_KEY.replace("eu-west-1", "us-east-2"),
            "clusterSecretStore": "aws",
            "namespace": "eso",
        },
    )
    external = load_config(raw, stack="test").secret_providers.external_secrets
    assert (external.region, external.secret_prefix, external.cluster_secret_store) == (
        "us-east-2",
        "platform/test/",
        "aws",
    )


def test_every_setting_of_both_loads(minimal: dict[str, Any]) -> None:
    raw = with_secrets(
        minimal,
        sealedSecrets={
            "enabled": True,
            "namespace": "sealing",
            "version": "2.19.4",
            "rotations": ["", "2027-01"],
        },
        externalSecrets={"enabled": True, "kmsKeyArn": KMS_KEY},
    )
    spec = load_config(raw, stack="test").secret_providers
    assert spec.sealed_secrets.rotations == ("", "2027-01") and spec.sealed_secrets.namespace == "sealing"
    assert spec.external_secrets.kms_key_arn == KMS_KEY


@pytest.mark.parametrize(
    ("providers", "expected"),
    [
        (
            {
                "sealedSecrets": {"enabled": True, "namespace": "vault"},
                "externalSecrets": {"enabled": True, "namespace": "vault"},
            },
            f"{EXTERNAL}.namespace: 'vault' is also secrets.sealedSecrets.namespace; "
            "each controller needs a namespace of its own",
        ),
        (
            {"sealedSecrets": {"enabled": True, "namespace": "flux-system"}},
            "gitops-infra:secrets.sealedSecrets.namespace: 'flux-system' is also flux.namespace; "
            "each controller needs a namespace of its own",
        ),
        (
            {"externalSecrets": {"enabled": True, "namespace": "apps"}},
            "gitops-infra:secrets.externalSecrets.namespace: 'apps' is also environment.serviceNamespace; "
            "each controller needs a namespace of its own",
        ),
        (
            {"externalSecrets": {"enabled": True, "secretPrefix": "*"}},
            f"{EXTERNAL}.secretPrefix: must name a prefix such as prod/, not be empty or hold '*' or '?': "
            "the policy grants <prefix>*, so the role could read every secret of the account",
        ),
        (
            {"externalSecrets": {"enabled": True, "kmsKeyArn": KMS_KEY.replace("eu-west-1", "us-east-1")}},
            f"{EXTERNAL}.kmsKeyArn: the key is in us-east-1, the store reads eu-west-1: "
            "Secrets Manager encrypts with a key of its own region",
        ),
        (
            {"sealedSecrets": {"rotations": []}},
            "gitops-infra:secrets.sealedSecrets.rotations: must name at least one key, the one that seals "
            '(the default is [""])',
        ),
        (
            {"sealedSecrets": {"rotations": ["", "2027-01", ""]}},
            "gitops-infra:secrets.sealedSecrets.rotations: names a key twice (''): each value is one key",
        ),
    ],
    ids=[
        "same-namespace",
        "flux-namespace",
        "service-namespace",
        "star-prefix",
        "kms-region",
        "no-key",
        "twice",
    ],
)
def test_a_bad_setting_is_named_by_its_key_path(
    minimal: dict[str, Any], providers: dict[str, Any], expected: str
) -> None:
    assert problems_of(with_secrets(minimal, **providers)) == (expected,)


def test_a_missing_region_is_named_by_its_key_path(minimal: dict[str, Any]) -> None:
    raw = with_secrets(minimal, region=None, externalSecrets={"enabled": True})
    assert problems_of(raw) == (
        f"{EXTERNAL}.region: required when externalSecrets is enabled and aws:region is not set "
        "(the region of the Secrets Manager the store reads)",
    )
    assert problems_of({**raw, "aws:region": "Ireland"}) == (
        "aws:region: must be an AWS region such as eu-west-1 (secrets.externalSecrets.region defaults to it)",
    )
    # Only External Secrets needs one.
    assert load_config(with_secrets(minimal, region=None, sealedSecrets={"enabled": True}), stack="test")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("secretPrefix", "", "must name a prefix such as prod/"),
        ("secretPrefix", "prod/*", "must name a prefix such as prod/"),
        ("secretPrefix", "prod/?", "must name a prefix such as prod/"),
        ("secretPrefix", "prod secrets/", "must be the start of a Secrets Manager name"),
        ("secretPrefix", 7, "Input should be a valid string"),
        ("region", "eu-west", "must be an AWS region such as eu-west-1"),
        ("kmsKeyArn", "arn:aws:kms:eu-west-1:111111111111:alias/secrets", "must be a KMS key ARN"),
        ("clusterSecretStore", "AWS", "must be a DNS label"),
        ("enabled", "yes", "Input should be a valid boolean"),
        ("refresh", "1h", "unknown key"),
    ],
)
def test_a_bad_value_of_external_secrets_is_named_by_its_key(
    minimal: dict[str, Any], key: str, value: Any, expected: str
) -> None:
    (problem,) = problems_of(with_secrets(minimal, externalSecrets={"enabled": True, key: value}))
    assert problem.startswith(f"gitops-infra:secrets.externalSecrets.{key}: {expected}")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("namespace", "Sealed", "must be a DNS label"),
        ("version", "latest", "must be a version major.minor.patch"),
        ("rotations", ["x" * 65], "String should have at most 64 characters"),
        ("keyrenewperiod", "0", "unknown key"),
    ],
)
def test_a_bad_value_of_sealed_secrets_is_named_by_its_key(
    minimal: dict[str, Any], key: str, value: Any, expected: str
) -> None:
    (problem,) = problems_of(with_secrets(minimal, sealedSecrets={"enabled": True, key: value}))
    assert problem.startswith(f"gitops-infra:secrets.sealedSecrets.{key}") and expected in problem


def test_a_provider_that_is_off_claims_no_namespace(minimal: dict[str, Any]) -> None:
    raw = with_secrets(
        minimal,
        region=None,
        sealedSecrets={"namespace": "flux-system"},
        externalSecrets={"namespace": "flux-system"},
    )
    assert load_config(raw, stack="test").secret_providers.sealed_secrets.namespace == "flux-system"


def test_a_tenant_cannot_take_an_enabled_provider_s_namespace(minimal: dict[str, Any]) -> None:
    raw = with_secrets(minimal, sealedSecrets={"enabled": True})
    raw["tenants"] = [{"name": "sealed-secrets"}]
    assert problems_of(raw) == (
        "gitops-infra:tenants[0].name: as its namespace (namespaces is unset), is "
        "secrets.sealedSecrets.namespace, the platform's own namespace",
    )
    raw["secrets"] = {}
    assert load_config(raw, stack="test").tenants[0].name == "sealed-secrets"


def test_the_offline_plan_checks_the_section(minimal: dict[str, Any]) -> None:
    raw = with_secrets(minimal, externalSecrets={"enabled": True})
    good = {key if ":" in key else f"gitops-infra:{key}": value for key, value in raw.items()}
    assert plan_config(good, "gitops-infra", "test")["gitops-infra:secrets"] == raw["secrets"]
    bad = {**good, "gitops-infra:secrets": {"externalSecrets": {"enabled": True, "secretPrefix": "*"}}}
    with pytest.raises(ConfigError, match=r"secrets\.externalSecrets\.secretPrefix"):
        plan_config(bad, "gitops-infra", "test")


def test_a_running_program_reads_the_section_and_aws_region(minimal: dict[str, Any]) -> None:
    raw = {**minimal, "secrets": {"externalSecrets": {"enabled": True}}}
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in raw.items()}
    result = run(load_stack_config, stack="test", config={**config, "aws:region": "eu-central-1"})
    assert result.result.secret_providers.external_secrets.region == "eu-central-1"

    def program() -> Any:
        with pytest.raises(ConfigError) as info:
            load_stack_config()
        return info.value.problems

    (problem,) = run(program, stack="test", config=config).result
    assert problem.startswith("gitops-infra:secrets.externalSecrets.region: required")


def test_the_model_alone_leaves_what_other_keys_default() -> None:
    spec = SecretsSpec.model_validate({"externalSecrets": {"enabled": True}})
    assert spec.external_secrets.region is None and spec.external_secrets.secret_prefix is None


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (
            checks.secret_prefix_problem,
            ["prod/", "team_a+b=c.d@e-f/"],
            ["", "*", "a*", "?", "é/", None, "x" * 257],
        ),
        (
            checks.aws_region_problem,
            ["eu-west-1", "us-gov-west-1", "ap-southeast-4"],
            ["eu-west", "EU-WEST-1", None],
        ),
        (
            checks.kms_key_arn_problem,
            [KMS_KEY, "arn:aws:kms:eu-west-1:111111111111:key/mrk-1234abcd"],
            ["arn:aws:kms:eu-west-1:111111111111:alias/x", "1234abcd", KMS_KEY + "\n"],
        ),
    ],
)
def test_the_shared_checks(check: Any, good: list[Any], bad: list[Any]) -> None:
    assert [value for value in good if check(value) is not None] == []
    assert [value for value in bad if check(value) is None] == []


def _sealed_program_problems(minimal: dict[str, Any], keys: str | None, **sealed: Any) -> Any:
    raw = {**minimal, "secrets": {"sealedSecrets": {"enabled": True, **sealed}}}
    config = {f"gitops-infra:{key}": json.dumps(value) for key, value in raw.items()}
    if keys is not None:
        config["gitops-infra:sealedSecretsKeys"] = keys

    def program() -> Any:
        try:
            return load_stack_config()
        except ConfigError as exc:
            return exc.problems

    secret = ["gitops-infra:sealedSecretsKeys"] if keys is not None else []
    return run(program, stack="test", config=config, secret_keys=secret).result


def test_held_sealing_keys_are_read_and_checked_by_the_running_program(minimal: dict[str, Any]) -> None:
    from gitops_infra.automation.sealing_keys import new_sealing_key_pair

    cert, key = new_sealing_key_pair()
    good = json.dumps({"": {"cert": cert, "privateKey": key}})
    loaded = _sealed_program_problems(minimal, good, keySource="config")
    assert list(loaded.secrets.sealed_secrets_keys) == [""]
    assert key.splitlines()[1] not in repr(loaded)

    (missing,) = _sealed_program_problems(minimal, None, keySource="config")
    assert missing.startswith("gitops-infra:secrets.sealedSecrets.keySource: 'config' needs the secret")
    (unused,) = _sealed_program_problems(minimal, good)  # keySource: generate, the default
    assert unused.startswith("gitops-infra:sealedSecretsKeys: is set, but")
    problems = _sealed_program_problems(minimal, good, keySource="config", rotations=["", "2027-01"])
    assert problems == (
        "gitops-infra:sealedSecretsKeys['2027-01']: has no key pair: make one with "
        "`gitops-infra sealed-secrets keygen STACK --rotation 2027-01`",
    )
    (bad,) = _sealed_program_problems(
        minimal, json.dumps({"": {"cert": cert, "privateKey": "x"}}), keySource="config"
    )
    assert bad == "gitops-infra:sealedSecretsKeys[''].privateKey: is not a PEM private key"
