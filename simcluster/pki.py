"""The cluster's identity: a CA, the API server's serving certificate, the admin credentials and the
ServiceAccount token signing key, kept in one directory (`--pki-dir`).

A real cluster keeps its CA and signing keys across an etcd restore; so does simcluster: started on a
directory that already holds them, it reuses them, and a kubeconfig written earlier keeps working. Only the
serving certificate is reissued (by the same CA) when it does not cover the host simcluster listens on.
Keys are ECDSA P-256: fast to make (tests start many clusters) and what kube accepts for both TLS and ES256
ServiceAccount tokens.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import os
import secrets
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ADMIN_GROUP", "ADMIN_USER", "Pki", "load_or_create"]

ADMIN_USER = "kubernetes-admin"
ADMIN_GROUP = "system:masters"
_CA_NAME = "simcluster-ca"
_VALIDITY = timedelta(days=3650)
_FILES = ("ca.crt", "ca.key", "admin.crt", "admin.key", "sa.key", "admin.token")


@dataclass(frozen=True)
class Pki:
    directory: Path
    ca_pem: bytes
    serving_cert: Path
    serving_key: Path
    admin_cert_pem: bytes
    admin_key_pem: bytes
    #: a static token file entry (`--token-auth-file`) for the admin, for clients that send no certificate
    admin_token: str
    signing_key: ec.EllipticCurvePrivateKey

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def signing_key_id(self) -> str:
        """The `kid` of issued tokens: as kube derives it, a hash of the public key."""
        der = self.signing_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")

    def server_context(self) -> ssl.SSLContext:
        """TLS for the API server: its certificate, and client certificates verified against the CA if sent."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.serving_cert, self.serving_key)
        context.load_verify_locations(cadata=self.ca_pem.decode())
        context.verify_mode = ssl.CERT_OPTIONAL
        return context

    def client_context(self, *, admin: bool = True) -> ssl.SSLContext:
        """TLS for a client trusting the CA; with the admin client certificate unless `admin` is False."""
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        if admin:
            context.load_cert_chain(self.directory / "admin.crt", self.directory / "admin.key")
        return context

    def issue_client_cert(self, user: str, groups: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
        """A client certificate for `user` (CN) in `groups` (O), signed by the CA: (cert PEM, key PEM)."""
        ca_cert, ca_key = self._ca()
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _client_cert(ca_cert, ca_key, key, user, groups)
        return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)

    def _ca(self) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        cert = x509.load_pem_x509_certificate(self.ca_pem)
        key = serialization.load_pem_private_key((self.directory / "ca.key").read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return cert, key


def load_or_create(directory: Path, hosts: tuple[str, ...] = ()) -> Pki:
    """The PKI in `directory`: reused when it is there, made (and written) when it is not."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    present = [name for name in _FILES if (directory / name).exists()]
    if present and len(present) != len(_FILES):
        missing = sorted(set(_FILES) - set(present))
        raise ValueError(
            f"--pki-dir {directory} is incomplete (missing {', '.join(missing)}); empty it or fix it"
        )
    if not present:
        _create(directory)
    ca_pem = (directory / "ca.crt").read_bytes()
    ca_cert = x509.load_pem_x509_certificate(ca_pem)
    ca_key = _load_key(directory / "ca.key")
    names = tuple(dict.fromkeys(("127.0.0.1", "::1", "localhost", *hosts)))
    if not _serving_covers(directory, ca_cert, names):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _serving_cert(ca_cert, ca_key, key, names)
        _write(directory / "apiserver.key", _key_pem(key))
        _write(directory / "apiserver.crt", cert.public_bytes(serialization.Encoding.PEM))
    return Pki(
        directory=directory,
        ca_pem=ca_pem,
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        admin_cert_pem=(directory / "admin.crt").read_bytes(),
        admin_key_pem=(directory / "admin.key").read_bytes(),
        admin_token=(directory / "admin.token").read_text().strip(),
        signing_key=_load_key(directory / "sa.key"),
    )


def _create(directory: Path) -> None:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, _CA_NAME)])
    ca_cert = (
        _builder(name, name, ca_key, ca=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    admin_key = ec.generate_private_key(ec.SECP256R1())
    admin_cert = _client_cert(ca_cert, ca_key, admin_key, ADMIN_USER, (ADMIN_GROUP,))
    _write(directory / "ca.key", _key_pem(ca_key))
    _write(directory / "admin.key", _key_pem(admin_key))
    _write(directory / "admin.crt", admin_cert.public_bytes(serialization.Encoding.PEM))
    _write(directory / "sa.key", _key_pem(ec.generate_private_key(ec.SECP256R1())))
    _write(directory / "admin.token", (secrets.token_urlsafe(32) + "\n").encode())
    # the CA last: its presence marks a complete directory
    _write(directory / "ca.crt", ca_cert.public_bytes(serialization.Encoding.PEM))


def _client_cert(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    key: ec.EllipticCurvePrivateKey,
    user: str,
    groups: tuple[str, ...],
) -> x509.Certificate:
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    return _leaf(ca_cert, ca_key, key, subject, ExtendedKeyUsageOID.CLIENT_AUTH).sign(ca_key, hashes.SHA256())


def _serving_cert(
    ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, key: ec.EllipticCurvePrivateKey,
    names: tuple[str, ...],
) -> x509.Certificate:  # fmt: skip
    alt: list[x509.GeneralName] = []
    for value in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(value)))
        except ValueError:
            alt.append(x509.DNSName(value))
    for dns in (
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    ):
        alt.append(x509.DNSName(dns))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    builder = _leaf(ca_cert, ca_key, key, subject, ExtendedKeyUsageOID.SERVER_AUTH)
    return builder.add_extension(x509.SubjectAlternativeName(alt), critical=False).sign(
        ca_key, hashes.SHA256()
    )


def _leaf(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    key: ec.EllipticCurvePrivateKey,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
) -> x509.CertificateBuilder:
    return (
        _builder(subject, ca_cert.subject, key, ca=False)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, *, ca: bool
) -> x509.CertificateBuilder:
    """What every certificate here has: validity, basic constraints and key usage (a CA signs certificates)."""
    now = datetime.now(UTC)
    usage = x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=True, data_encipherment=False,
        key_agreement=False, key_cert_sign=ca, crl_sign=False, encipher_only=False, decipher_only=False,
    )  # fmt: skip
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(usage, critical=True)
    )


def _serving_covers(directory: Path, ca_cert: x509.Certificate, names: tuple[str, ...]) -> bool:
    """Whether the serving certificate there is the CA's and names every host (else it is reissued)."""
    cert_file, key_file = directory / "apiserver.crt", directory / "apiserver.key"
    if not cert_file.exists() or not key_file.exists():
        return False
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    if cert.issuer != ca_cert.subject or cert.not_valid_after_utc < datetime.now(UTC) + timedelta(days=1):
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (x509.ExtensionNotFound, ValueError, TypeError):
        return False
    have = {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)} | set(
        sans.get_values_for_type(x509.DNSName)
    )
    wanted = set()
    for value in names:
        try:
            wanted.add(str(ipaddress.ip_address(value)))
        except ValueError:
            wanted.add(value)
    return wanted <= have


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path}: not an ECDSA private key")
    return key


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
