"""The local cluster's PKI: a throwaway CA, and the certificates and keys its control plane runs with.

:meth:`Pki.make` writes, in one directory, the CA, the API server's serving certificate, the admin's client
certificate (group ``system:masters``) and the service-account signing key pair. Every key is ECDSA
P-256; every certificate is valid from five minutes before it was made, for two days. :func:`issue` adds a
serving certificate for another loopback service (the GitHub App stand-in), from the same CA, so that
Flux's controllers trust it as they trust the API server.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from ._project import require_local_extra

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
except ModuleNotFoundError:
    require_local_extra()  # names the `local` extra when that is what is missing
    raise

__all__ = ["Pki", "issue"]


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None = None,
    *,
    ca: bool = False,
    san: list[x509.GeneralName] | None = None,
    client: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    if not ca:
        usage = (
            x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.oid.ExtendedKeyUsageOID.SERVER_AUTH
        )
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _name(common: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


@dataclass(frozen=True)
class Pki:
    """Where :meth:`make` wrote each PEM file (each readable by its owner only)."""

    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    admin_cert: Path
    admin_key: Path
    service_account_key: Path
    service_account_pub: Path

    @classmethod
    def make(cls, directory: Path, service_range: str) -> Pki:
        """A new PKI in ``directory`` (which must not exist yet). The API server's certificate names
        ``localhost``, ``127.0.0.1`` and, for pods that reach it by its Service, ``kubernetes.default.svc``
        and the first address of ``service_range``."""
        directory.mkdir(parents=True)
        ca_key = _key()
        ca_name = _name("gitops-infra-local-ca")
        ca = _certificate(ca_name, ca_key, ca=True)
        first_service_ip = next(ipaddress.IPv4Network(service_range).hosts())
        server_key = _key()
        server = _certificate(
            _name("kube-apiserver"),
            server_key,
            (ca_name, ca_key),
            san=[
                x509.DNSName("localhost"),
                x509.DNSName("kubernetes.default.svc"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.IPAddress(first_service_ip),
            ],
        )
        admin_key = _key()
        admin = _certificate(_name("admin", "system:masters"), admin_key, (ca_name, ca_key), client=True)
        service_account_key = _key()
        files = {
            "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
            "ca.key": _pem(ca_key),
            "server.crt": server.public_bytes(serialization.Encoding.PEM),
            "server.key": _pem(server_key),
            "admin.crt": admin.public_bytes(serialization.Encoding.PEM),
            "admin.key": _pem(admin_key),
            "sa.key": _pem(service_account_key),
            "sa.pub": service_account_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
        }
        for name, content in files.items():
            (directory / name).write_bytes(content)
            (directory / name).chmod(0o600)
        return cls(
            ca_cert=directory / "ca.crt",
            ca_key=directory / "ca.key",
            server_cert=directory / "server.crt",
            server_key=directory / "server.key",
            admin_cert=directory / "admin.crt",
            admin_key=directory / "admin.key",
            service_account_key=directory / "sa.key",
            service_account_pub=directory / "sa.pub",
        )


def issue(pki: Pki, directory: Path, name: str) -> tuple[Path, Path]:
    """A serving certificate for ``127.0.0.1`` issued by ``pki``'s CA, and its key: ``<name>.crt`` and
    ``<name>.key`` in ``directory``."""
    ca = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = _key()
    san: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = _certificate(_name(name), key, (ca.subject, ca_key), san=san)
    directory.mkdir(parents=True, exist_ok=True)
    paths = directory / f"{name}.crt", directory / f"{name}.key"
    paths[0].write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(_pem(key))
    paths[1].chmod(0o600)
    return paths
