"""``SealedSecrets``: the Sealed Secrets controller, sealing with keys the platform owns.

Each value of ``rotations`` is one key pair, given to the controller as a ``kubernetes.io/tls`` Secret
labelled ``sealedsecrets.bitnami.com/sealed-secrets-key: active`` in its namespace. The pairs come from
one of two places:

- made here by pulumi-tls (the default: RSA 4096, a self-signed cert, as the controller makes its own),
  held in Pulumi's state as secrets. The keys and certs are protected (``protect=True``, Pulumi's mark for
  what must outlive a destroy): ``pulumi destroy`` refuses while they are there, and ``gitops-infra
  destroy`` deletes everything else and keeps them, so the next ``up``, on a new cluster too, hands the
  controller the same keys. Dropping a rotation's key for good takes ``pulumi state unprotect`` first.
- given (``keys``, by rotation): pairs kept outside the stack's resources, such as the secret config value
  ``sealedSecretsKeys`` (``gitops-infra sealed-secrets keygen`` makes them). No tls resource is made; a
  destroy removes only the key Secrets from the cluster, and the pairs stay where they are held.
 The controller registers every such key when it starts and decrypts with all of them; it seals
with the newest cert. So a rotation adds a value: the new key seals from then on, and what the old keys
sealed still opens, as after the controller's own renewal. A value removed drops its key, for good.

The controller is installed by its Helm chart (``SEALED_SECRETS_CHART_VERSION``) with pinned values: its
own key renewal off (a key it made would live only in the cluster), the image of
``SEALED_SECRETS_VERSION``, the name kubeseal expects (``sealed-secrets-controller``), and a pod
annotation holding the keys' names, so that a rotation restarts it and it registers the new key. The
release waits for the key Secrets: started without one, the controller would make a key of its own.
With ``install_controller=False`` (a controller installed outside the platform, in ``namespace``) only
the keys are made; that controller must be restarted, or run ``--watch-for-secrets``, to see a new one.

The Kubernetes provider comes from the caller, through ``opts``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from gitops_infra import checks
from gitops_infra._lazy import sdk
from gitops_infra.components._args import Problems
from gitops_infra.defaults import (
    SEALED_SECRETS_CHART_VERSION,
    SEALED_SECRETS_KEY_LABEL,
    SEALED_SECRETS_NAMESPACE,
    SEALED_SECRETS_VERSION,
)

if TYPE_CHECKING:
    import pulumi_tls as tls
else:
    tls = sdk("pulumi_tls")

__all__ = [
    "CONTROLLER_NAME",
    "SEALED_SECRETS_CHART",
    "SEALED_SECRETS_CHART_REPOSITORY",
    "HeldKey",
    "SealedSecrets",
    "SealedSecretsArgs",
    "controller_values",
    "key_secret_name",
]

TYPE_TOKEN = "gitops-infra:index:SealedSecrets"
SEALED_SECRETS_CHART = "sealed-secrets"
SEALED_SECRETS_CHART_REPOSITORY = "https://bitnami-labs.github.io/sealed-secrets"
CONTROLLER_NAME = "sealed-secrets-controller"
"""The controller's Deployment and Service: what ``kubeseal --controller-name`` looks for by default."""
KEYS_ANNOTATION = "gitops-infra.io/sealing-keys"
KEY_VALIDITY_HOURS = 10 * 365 * 24
"""The controller's own ``--key-ttl`` default: ten years."""
RELEASE_TIMEOUT_SECONDS = 300


def key_secret_name(rotation: str) -> str:
    """The Secret holding the key of ``rotation``: named by a digest of it, so the names are DNS labels
    whatever the value, and removing one value renames no other key."""
    return f"sealed-secrets-key-{hashlib.sha256(rotation.encode()).hexdigest()[:10]}"


def controller_values(rotations: Sequence[str]) -> dict[str, Any]:
    """The chart's pinned values."""
    return {
        "fullnameOverride": CONTROLLER_NAME,
        "image": {"tag": SEALED_SECRETS_VERSION},
        # "0" (quoted, as the chart says) turns renewal off: the platform's keys are the only ones.
        "keyrenewperiod": "0",
        "podAnnotations": {KEYS_ANNOTATION: ",".join(key_secret_name(r) for r in rotations)},
    }


@dataclass(frozen=True)
class HeldKey:
    """A key pair held outside the stack's resources: its self-signed ``cert`` and its ``private_key``, PEM.
    The private key should be a secret (``pulumi.Output.secret``); the cert is public."""

    cert: pulumi.Input[str] = field(repr=False)
    private_key: pulumi.Input[str] = field(repr=False)


@dataclass(frozen=True)
class SealedSecretsArgs:
    """Inputs of ``SealedSecrets``: the controller's ``namespace`` (made here unless the controller is
    installed elsewhere), the chart ``version``, and ``rotations``, one key each, the last sealing.

    ``keys``, when given, holds each rotation's pair (:class:`HeldKey`), and no key is made here; empty (the
    default), pulumi-tls makes them, protected from a destroy.
    """

    namespace: str = SEALED_SECRETS_NAMESPACE
    rotations: Sequence[str] = ("",)
    version: str = SEALED_SECRETS_CHART_VERSION
    install_controller: bool = True
    labels: Mapping[str, str] = field(default_factory=dict)
    keys: Mapping[str, HeldKey] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = Problems("SealedSecretsArgs")
        problems.gate("namespace", checks.dns_label_problem, self.namespace)
        problems.gate("version", checks.chart_version_problem, self.version)
        rotations = list(self.rotations)
        problems.check(bool(rotations), "rotations", "must name at least one key, the one that seals")
        problems.check(len(set(rotations)) == len(rotations), "rotations", "names a key twice")
        problems.check(all(len(r) <= 64 for r in rotations), "rotations", "each is at most 64 characters")
        if self.keys:
            missing = [repr(r) for r in rotations if r not in self.keys]
            extra = [repr(r) for r in self.keys if r not in rotations]
            problems.check(not missing, "keys", f"has no pair for rotation {', '.join(missing)}")
            problems.check(not extra, "keys", f"holds a pair for no rotation: {', '.join(extra)}")
        problems.raise_if_any()


class SealedSecrets(pulumi.ComponentResource):
    """The controller and its keys: see the module docstring."""

    namespace: pulumi.Output[str]
    cert: pulumi.Output[str]
    """The cert that seals (the last rotation's), PEM: public, for ``kubeseal --cert``."""
    certs: pulumi.Output[list[str]]
    """Every key's cert, in ``rotations`` order."""
    keys: list[tls.PrivateKey]
    """The keys made here (none when they are given)."""
    key_secrets: list[k8s.core.v1.Secret]
    controller: k8s.helm.v3.Release | None

    def __init__(
        self, name: str, args: SealedSecretsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespace: pulumi.Resource | None = None
        if args.install_controller:
            namespace = k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, labels=dict(args.labels)),
                opts=child,
            )
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=[namespace] if namespace else [])
        self.keys, certs, self.key_secrets = [], [], []
        for rotation in args.rotations:
            held = args.keys.get(rotation)
            if held is None:
                key = _made_key(name, rotation, child)
                self.keys.append(key[0])
                cert_pem, key_pem = key[1], key[0].private_key_pem
            else:
                cert_pem, key_pem = (
                    pulumi.Output.from_input(held.cert),
                    pulumi.Output.secret(held.private_key),
                )
            certs.append(cert_pem)
            self.key_secrets.append(_key_secret(name, rotation, args, cert_pem, key_pem, in_namespace))
        self.controller = None
        if args.install_controller:
            self.controller = k8s.helm.v3.Release(
                f"{name}-controller",
                name=CONTROLLER_NAME,
                chart=SEALED_SECRETS_CHART,
                version=args.version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=SEALED_SECRETS_CHART_REPOSITORY),
                namespace=args.namespace,
                create_namespace=False,
                values=controller_values(args.rotations),
                cleanup_on_fail=True,
                timeout=RELEASE_TIMEOUT_SECONDS,
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*([namespace] if namespace else []), *self.key_secrets]
                ),
            )
        self.namespace = pulumi.Output.from_input(args.namespace)
        self.certs = pulumi.Output.all(*certs).apply(lambda values: [str(v) for v in values])
        self.cert = certs[-1]
        self.register_outputs({"namespace": self.namespace, "cert": self.cert, "certs": self.certs})


def _suffix(rotation: str) -> str:
    return key_secret_name(rotation).rsplit("-", 1)[1]


def _made_key(
    name: str, rotation: str, child: pulumi.ResourceOptions
) -> tuple[tls.PrivateKey, pulumi.Output[str]]:
    """The key of ``rotation`` and its cert, made by pulumi-tls; both protected, so that a destroy keeps
    them (what they sealed is in git, and must open on the next cluster too)."""
    suffix = _suffix(rotation)
    kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=True))
    key = tls.PrivateKey(f"{name}-key-{suffix}", algorithm="RSA", rsa_bits=4096, opts=kept)
    subject = tls.SelfSignedCertSubjectArgs(common_name="sealed-secret", organization="sealed-secret")
    cert = tls.SelfSignedCert(
        f"{name}-cert-{suffix}",
        private_key_pem=key.private_key_pem,
        subject=subject,
        validity_period_hours=KEY_VALIDITY_HOURS,
        # The key only wraps each secret's session key (RSA-OAEP): key encipherment, nothing else. (The
        # controller's own certs say encipher-only, which x509 allows only beside key agreement.)
        allowed_uses=["key_encipherment"],
        opts=kept,
    )
    return key, cert.cert_pem


def _key_secret(
    name: str,
    rotation: str,
    args: SealedSecretsArgs,
    cert_pem: pulumi.Input[str],
    key_pem: pulumi.Input[str],
    in_namespace: pulumi.ResourceOptions,
) -> k8s.core.v1.Secret:
    """The Secret that hands the pair of ``rotation`` to the controller."""
    return k8s.core.v1.Secret(
        f"{name}-key-secret-{_suffix(rotation)}",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=key_secret_name(rotation),
            namespace=args.namespace,
            labels={**args.labels, SEALED_SECRETS_KEY_LABEL: "active"},
        ),
        type="kubernetes.io/tls",
        string_data={"tls.crt": cert_pem, "tls.key": key_pem},
        opts=in_namespace,
    )
