"""SealedSecrets under mocks: keys the platform owns, handed to a controller installed with pinned values."""

from __future__ import annotations

import pulumi
import pytest

from gitops_infra.components.sealed_secrets import (
    CONTROLLER_NAME,
    SEALED_SECRETS_CHART,
    SEALED_SECRETS_CHART_REPOSITORY,
    HeldKey,
    SealedSecrets,
    SealedSecretsArgs,
    key_secret_name,
)
from gitops_infra.defaults import (
    SEALED_SECRETS_CHART_VERSION,
    SEALED_SECRETS_KEY_LABEL,
    SEALED_SECRETS_VERSION,
)
from gitops_infra.errors import ConfigError

from .harness import MOCK_PRIVATE_KEY_PREFIX, Run, run

KEY = "tls:index/privateKey:PrivateKey"
CERT = "tls:index/selfSignedCert:SelfSignedCert"
SECRET = "kubernetes:core/v1:Secret"
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"


def build(args: SealedSecretsArgs) -> Run[SealedSecrets]:
    return run(
        lambda: SealedSecrets("sealing", args),
        outputs=lambda s: {"cert": s.cert, "certs": s.certs, "namespace": s.namespace},
    )


def test_one_rsa_4096_key_with_a_self_signed_cert_given_to_the_controller_as_its_active_key() -> None:
    result = build(SealedSecretsArgs())
    graph = result.graph
    (key,) = graph.of_type(KEY)
    assert key.inputs == {"algorithm": "RSA", "rsaBits": 4096}
    (cert,) = graph.of_type(CERT)
    assert cert.inputs["subject"] == {"commonName": "sealed-secret", "organization": "sealed-secret"}
    assert cert.inputs["validityPeriodHours"] == 87600 and cert.inputs["allowedUses"] == ["key_encipherment"]
    assert key.urn in cert.dependencies
    (secret,) = graph.of_type(SECRET)
    assert secret.input("metadata") == {
        "name": key_secret_name(""),
        "namespace": "sealed-secrets",
        "labels": {SEALED_SECRETS_KEY_LABEL: "active"},
    }
    assert secret.inputs["type"] == "kubernetes.io/tls"
    assert secret.inputs["stringData"]["tls.key"] == (f"{MOCK_PRIVATE_KEY_PREFIX}pem-{key.name}")
    assert secret.is_secret("stringData") or secret.is_secret("stringData.tls.key")
    assert secret.inputs["stringData"]["tls.crt"] == result.values["cert"].value
    # The cert is public: a stack output CI seals with.
    assert result.values["cert"].secret is False and result.values["certs"].value == [
        result.values["cert"].value
    ]


def test_the_controller_is_the_pinned_chart_with_renewal_off_and_starts_after_its_keys() -> None:
    graph = build(SealedSecretsArgs()).graph
    release = graph.one(RELEASE)
    assert (release.inputs["chart"], release.inputs["version"], release.inputs["name"]) == (
        SEALED_SECRETS_CHART,
        SEALED_SECRETS_CHART_VERSION,
        CONTROLLER_NAME,
    )
    assert release.inputs["repositoryOpts"] == {"repo": SEALED_SECRETS_CHART_REPOSITORY}
    assert release.inputs["namespace"] == "sealed-secrets" and release.inputs["createNamespace"] is False
    values = release.inputs["values"]
    assert values["keyrenewperiod"] == "0" and values["image"] == {"tag": SEALED_SECRETS_VERSION}
    assert values["fullnameOverride"] == CONTROLLER_NAME
    namespace, secret = graph.one(NAMESPACE), graph.one(SECRET)
    assert namespace.input("metadata.name") == "sealed-secrets"
    assert {namespace.urn, secret.urn} <= set(release.dependencies)
    assert namespace.urn in secret.dependencies


def test_a_rotation_adds_a_key_that_seals_and_keeps_the_old_one_named_as_it_was() -> None:
    one = build(SealedSecretsArgs()).graph
    result = build(SealedSecretsArgs(rotations=("", "2027-01")))
    two = result.graph
    assert len(two.of_type(KEY)) == 2 and len(two.of_type(SECRET)) == 2
    # The first key is the same resource and the same Secret as before the rotation.
    assert one.one(KEY).name in {key.name for key in two.of_type(KEY)}
    names = [secret.input("metadata.name") for secret in two.of_type(SECRET)]
    assert sorted(names) == sorted([key_secret_name(""), key_secret_name("2027-01")])
    # The newest seals; all are listed; the pod annotation changes, so the controller restarts to register it.
    certs = result.values["certs"].value
    assert len(certs) == 2 and result.values["cert"].value == certs[1]
    annotations = [
        graph.one(RELEASE).inputs["values"]["podAnnotations"]["gitops-infra.io/sealing-keys"]
        for graph in (one, two)
    ]
    assert annotations == [key_secret_name(""), f"{key_secret_name('')},{key_secret_name('2027-01')}"]
    # Dropping the first value renames nothing else.
    after = build(SealedSecretsArgs(rotations=("2027-01",))).graph
    assert [s.input("metadata.name") for s in after.of_type(SECRET)] == [key_secret_name("2027-01")]
    assert {k.name for k in after.of_type(KEY)} < {k.name for k in two.of_type(KEY)}


def test_with_the_controller_installed_elsewhere_only_the_keys_are_made() -> None:
    graph = build(SealedSecretsArgs(install_controller=False, namespace="kube-system")).graph
    assert graph.of_type(RELEASE) == [] and graph.of_type(NAMESPACE) == []
    assert graph.one(SECRET).input("metadata.namespace") == "kube-system"


def test_bad_args_are_named_each() -> None:
    with pytest.raises(ConfigError) as info:
        SealedSecretsArgs(namespace="Sealed", version="latest", rotations=("a", "a"))
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "SealedSecretsArgs.namespace",
        "SealedSecretsArgs.version",
        "SealedSecretsArgs.rotations",
    ]
    with pytest.raises(ConfigError, match=r"SealedSecretsArgs\.rotations: must name at least one key"):
        SealedSecretsArgs(rotations=())


def test_generated_keys_are_protected_so_a_destroy_keeps_them_and_held_keys_make_no_tls_resource() -> None:
    made = build(SealedSecretsArgs(rotations=("", "2027-01"))).result
    # Pulumi's protect: `gitops-infra destroy` (--exclude-protected) keeps them for the next cluster.
    assert [key._protect for key in made.keys] == [True, True]

    held = build(
        SealedSecretsArgs(
            keys={"": HeldKey(cert="CERT", private_key=pulumi.Output.secret("KEY"))}, install_controller=False
        )
    )
    assert held.graph.of_type(KEY) == [] and held.graph.of_type(CERT) == []
    (secret,) = held.graph.of_type(SECRET)
    assert secret.inputs["stringData"] == {"tls.crt": "CERT", "tls.key": "KEY"}
    assert held.values["cert"].value == "CERT"
    assert "KEY" not in repr(HeldKey(cert="CERT", private_key="KEY"))


def test_held_keys_must_match_the_rotations() -> None:
    with pytest.raises(ConfigError) as refused:
        SealedSecretsArgs(rotations=("", "2027-01"), keys={"": HeldKey(cert="C", private_key="K")})
    assert any("keys" in problem and "2027-01" in problem for problem in refused.value.problems)
