"""``gitops-infra:secrets``, optional: the secret providers the platform runs beside SOPS.

- ``sealedSecrets``: the Sealed Secrets controller, with sealing keys the platform owns (Pulumi secrets,
  so a rebuilt cluster opens what was sealed before). ``rotations`` names the keys: each value makes one,
  every one decrypts, the last seals. Add a value (the month, say) to rotate; remove one only once
  nothing in git is sealed with its key. ``keySource`` says where the keys come from: ``generate`` (the
  stack makes them with pulumi-tls, protected from a destroy) or ``config`` (the secret config value
  ``sealedSecretsKeys``, each rotation's pair, which ``gitops-infra sealed-secrets keygen`` writes).
- ``externalSecrets``: the External Secrets Operator, reading AWS Secrets Manager in ``region`` through a
  ClusterSecretStore, as an IAM role allowed only the names under ``secretPrefix`` (and ``kmsKeyArn``).

SOPS keeps its keys (``flux.sops``, the secret ``sopsAgeKey``): it is how Flux decrypts the fleet, a
setting of Flux's, and a second spelling here would be one more thing to keep in step.

Both are off by default. The loaded config fills in what defaults to another section's value
(``with_stack_defaults``): ``externalSecrets.region`` from ``aws:region``, and ``secretPrefix`` from the
environment's name (``<environment>/``). ``secrets_problems`` checks what spans the providers and the
other sections.

Example::

    spec = SecretsSpec.model_validate({"sealedSecrets": {"enabled": True}})
    assert spec.sealed_secrets.namespace == "sealed-secrets" and spec.sealed_secrets.rotations == ("",)
    assert not spec.external_secrets.enabled
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field, StrictBool, field_validator

from gitops_infra import checks, defaults
from gitops_infra.config._fields import ConfigModel, DnsLabel, gate

__all__ = [
    "ExternalSecretsSpec",
    "SealedSecretsSpec",
    "SecretsSpec",
    "secrets_problems",
    "with_stack_defaults",
]


AWS_REGION_KEY = "aws:region"
"""The AWS provider's region: the default of ``externalSecrets.region``."""

Rotation = Annotated[str, Field(max_length=64)]


class SealedSecretsSpec(ConfigModel):
    """The Sealed Secrets controller (its chart ``version``, pinned) and the keys it seals with.

    ``rotations``: one key pair per value, each kept for decryption, the last one sealing new secrets,
    as the controller's own renewal keeps its old keys. The default, ``[""]``, is one key.
    ``keySource``: ``generate`` (the default: pulumi-tls makes each pair in the stack, and a destroy
    keeps them) or ``config`` (each pair comes from the secret ``sealedSecretsKeys``, by rotation).
    """

    enabled: StrictBool = False
    key_source: defaults.SealingKeySource = defaults.SealingKeySource.GENERATE
    namespace: DnsLabel = defaults.SEALED_SECRETS_NAMESPACE
    version: Annotated[str, gate(checks.chart_version_problem)] = defaults.SEALED_SECRETS_CHART_VERSION
    rotations: tuple[Rotation, ...] = ("",)

    @field_validator("rotations")
    @classmethod
    def _each_once_and_one_to_seal(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError('must name at least one key, the one that seals (the default is [""])')
        repeated = sorted({rotation for rotation in value if value.count(rotation) > 1})
        if repeated:
            raise ValueError(
                f"names a key twice ({', '.join(repr(r) for r in repeated)}): each value is one key"
            )
        return value


class ExternalSecretsSpec(ConfigModel):
    """The External Secrets Operator and its ClusterSecretStore for AWS Secrets Manager.

    ``region`` defaults to ``aws:region`` (one of the two is required when enabled); ``secretPrefix`` to
    ``<environment>/``. ``kmsKeyArn``, when the secrets are encrypted with a key of your own, is the one
    key the role may decrypt with. ``iamRole: false`` (only with ``cluster.existing``) makes no IAM role:
    the controller reads with the credentials of its environment, on a cluster outside AWS (the local
    stack, against moto).
    """

    enabled: StrictBool = False
    namespace: DnsLabel = defaults.EXTERNAL_SECRETS_NAMESPACE
    region: Annotated[str, gate(checks.aws_region_problem)] | None = None
    secret_prefix: Annotated[str, gate(checks.secret_prefix_problem)] | None = None
    kms_key_arn: Annotated[str, gate(checks.kms_key_arn_problem)] | None = None
    cluster_secret_store: DnsLabel = defaults.CLUSTER_SECRET_STORE
    iam_role: StrictBool = True


class SecretsSpec(ConfigModel):
    """The providers: ``sealedSecrets`` and ``externalSecrets``, each off unless ``enabled``."""

    sealed_secrets: SealedSecretsSpec = SealedSecretsSpec()
    external_secrets: ExternalSecretsSpec = ExternalSecretsSpec()


def with_stack_defaults(spec: SecretsSpec, *, environment: str, aws_region: object) -> SecretsSpec:
    """``spec`` with the defaults other keys give: ``region`` from ``aws_region`` (when it is a region),
    ``secretPrefix`` ``<environment>/``."""
    external = spec.external_secrets
    region = external.region
    if region is None and checks.aws_region_problem(aws_region) is None:
        region = str(aws_region)
    prefix = external.secret_prefix if external.secret_prefix is not None else f"{environment}/"
    return spec.model_copy(
        update={"external_secrets": external.model_copy(update={"region": region, "secret_prefix": prefix})}
    )


def secrets_problems(
    spec: SecretsSpec, *, project: str, platform_namespaces: Mapping[str, str], aws_region: object
) -> list[str]:
    """What spans the providers and the other sections, by key path (``<project>:secrets...``, or
    ``aws:region``): each enabled provider in a namespace of its own (``platform_namespaces``: namespace
    to the key that sets it), and External Secrets' region, from ``region`` or ``aws_region``, with the
    KMS key in it."""
    sealed, external = spec.sealed_secrets, spec.external_secrets
    owners = dict(platform_namespaces)
    problems: list[str] = []
    sealed_where, where = f"{project}:secrets.sealedSecrets", f"{project}:secrets.externalSecrets"
    for at, provider in ((sealed_where, sealed), (where, external)):
        if not provider.enabled:
            continue
        if provider.namespace in owners:
            problems.append(
                f"{at}.namespace: {provider.namespace!r} is also {owners[provider.namespace]}; "
                "each controller needs a namespace of its own"
            )
        else:
            owners[provider.namespace] = f"{at.partition(':')[2]}.namespace"
    if not external.enabled:
        return problems
    region = external.region
    if region is None and aws_region is not None and checks.aws_region_problem(aws_region) is None:
        region = str(aws_region)
    if region is None and aws_region is None:
        problems.append(
            f"{where}.region: required when externalSecrets is enabled and {AWS_REGION_KEY} is not set "
            "(the region of the Secrets Manager the store reads)"
        )
    elif region is None:
        problem = checks.aws_region_problem(aws_region)
        problems.append(f"{AWS_REGION_KEY}: {problem} (secrets.externalSecrets.region defaults to it)")
    key_region = None if external.kms_key_arn is None else checks.kms_key_region(external.kms_key_arn)
    if region is not None and key_region is not None and key_region != region:
        problems.append(
            f"{where}.kmsKeyArn: the key is in {key_region}, the store reads {region}: Secrets Manager "
            "encrypts with a key of its own region"
        )
    return problems
