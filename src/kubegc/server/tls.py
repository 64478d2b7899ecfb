"""Serving credentials: a CA kept in the data directory's ``pki/``, a server certificate
it signs, and the bearer token clients must present; beside them the ServiceAccount
signing key (each path is ``kubegc.storage.DataDir``'s). Created once, reused on restart,
so an existing kubeconfig (and every ServiceAccount token issued) keeps working.

The CA also signs client certificates (``client_certificate``, what ``kubegc kubeconfig
--user`` and ``kubegc.testing`` mint, as ``kubeadm kubeconfig user`` does): the server asks
every TLS client for an optional certificate and verifies it against this CA alone
(``ServingCredentials.ssl_context``); ``server.authn.x509`` names its user."""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubegc.storage import DataDir
from kubegc.tokens.keys import (
    generate_key,
    load_private_key,
    private_key_pem,
    public_key_pem,
)

log = logging.getLogger(__name__)

_VALIDITY = timedelta(days=3650)


@dataclass(frozen=True)
class ServingCredentials:
    ca_cert_pem: bytes
    cert_path: Path
    key_path: Path
    token: str

    def ssl_context(self) -> ssl.SSLContext:
        """The server's TLS: its certificate, and an optional client certificate verified
        against kubegc's CA only (``cadata``: the system's CAs are never loaded, so no
        other authority can vouch for a user). kube-apiserver asks the same
        (``tls.RequestClientCert``) but verifies in its x509 authenticator, answering 401
        for a certificate it cannot verify; Python's ``ssl`` has no "ask without
        verifying", so here such a certificate fails the handshake
        (``tls: unknown certificate authority`` on the client's side). The composition root
        adds the front-proxy CA (``--requestheader-client-ca-file``); each authenticator
        then checks which CA signed the certificate (``authn.x509.issued_by``)."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH,
                                         cadata=self.ca_cert_pem.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_cert_chain(self.cert_path, self.key_path)
        return ctx


#: keys and the token: owner-only from their creation on; certificates: public, not writable
PRIVATE_MODE = 0o600
PUBLIC_MODE = 0o644


def write_private(path: Path, data: bytes) -> None:
    """Write a secret into a file created owner-only (never written, then restricted)."""
    _write_file(path, data, PRIVATE_MODE)


def write_public(path: Path, data: bytes) -> None:
    _write_file(path, data, PUBLIC_MODE)


def _write_file(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` into a new file created with ``mode`` (less what the umask takes
    away), then put it in place atomically."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _restrict(path: Path) -> None:
    """An existing secret file made readable by others (an older kubegc did that)."""
    if path.exists() and path.stat().st_mode & 0o077:
        os.chmod(path, PRIVATE_MODE)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@dataclass(frozen=True)
class CertificateAuthority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def load_ca(data_dir: Path) -> CertificateAuthority | None:
    """The CA a kubegc serving from ``data_dir`` keeps, or None when it has none (it
    never served TLS there); never creates one."""
    found = _load_ca(DataDir(data_dir))
    return None if found is None else CertificateAuthority(*found)


def _load_ca(files: DataDir) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    return load_ca_files(files.ca_cert, files.ca_key)


def load_ca_files(cert_path: Path, key_path: Path
                  ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The CA kept in ``cert_path`` and ``key_path``, or None when either is missing."""
    if not (cert_path.exists() and key_path.exists()):
        return None
    _restrict(key_path)
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), None)
    return (cert, key) if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _ca(files: DataDir) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    return ensure_ca(files.ca_cert, files.ca_key, "kubegc-ca")


def ensure_ca(cert_path: Path, key_path: Path, common_name: str
              ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The CA kept in ``cert_path`` and ``key_path``, created (named ``common_name``) when
    it is not there yet."""
    found = load_ca_files(cert_path, key_path)
    if found is not None:
        return found
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    write_private(key_path, _key_pem(key))
    write_public(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _server_cert(files: DataDir, hosts: list[str], ca: x509.Certificate,
                 ca_key: ec.EllipticCurvePrivateKey) -> tuple[Path, Path]:
    cert_path, key_path = files.server_cert, files.server_key
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.DNSName("kubernetes"),
                                    x509.DNSName("kubernetes.default.svc")]
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    if cert_path.exists() and key_path.exists():
        existing = x509.load_pem_x509_certificate(cert_path.read_bytes())
        try:
            current = set(existing.extensions.get_extension_for_class(
                x509.SubjectAlternativeName).value)
        except x509.ExtensionNotFound:
            current = set()
        if existing.issuer == ca.subject and set(sans) <= current:
            _restrict(key_path)
            return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubegc-apiserver")]))
        .issuer_name(ca.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    write_private(key_path, _key_pem(key))
    write_public(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def _token(files: DataDir) -> str:
    path = files.token
    if path.exists():
        _restrict(path)
        token = path.read_text().strip()
        if token:
            return token
    token = secrets.token_urlsafe(32)
    write_private(path, token.encode())
    return token


def service_account_key(data_dir: Path) -> bytes:
    """The PEM of the ServiceAccount signing key kept in ``data_dir``'s ``pki/`` (made on
    first use, owner-only from its creation; a copy of ``pki/`` shares it with the other
    servers of a cluster, as it shares the CA)."""
    files = DataDir(data_dir)
    private_directory(files.pki)
    key_path = files.service_account_key
    if key_path.exists():
        _restrict(key_path)
        pem = key_path.read_bytes()
        try:
            load_private_key(pem)
            return pem
        except ValueError as e:  # replaced: the tokens it signed no longer verify
            log.warning("%s cannot be read (%s): a new ServiceAccount key replaces it",
                        key_path, e)
    key = generate_key()
    pem = private_key_pem(key)
    write_private(key_path, pem)
    write_public(files.service_account_public_key, public_key_pem(key))
    return pem


def private_directory(directory: Path) -> None:
    """Create ``directory`` owner-only (0700), or take others' access away from it."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory.stat().st_mode & 0o077:
        os.chmod(directory, 0o700)


def serving_credentials(data_dir: Path, hosts: list[str]) -> ServingCredentials:
    """Load or create, in ``data_dir``'s ``pki/``, the CA, the server certificate for
    ``hosts`` and the token."""
    files = DataDir(data_dir)
    private_directory(files.pki)
    ca, ca_key = _ca(files)
    cert_path, key_path = _server_cert(files, [*hosts, "127.0.0.1"], ca, ca_key)
    return ServingCredentials(ca.public_bytes(serialization.Encoding.PEM), cert_path, key_path,
                              _token(files))


#: X.509's upper bounds (RFC 5280 appendix A: ub-common-name, ub-organization-name)
MAX_NAME_LENGTH = 64
#: what ``kubeadm kubeconfig user`` gives a client certificate (``--validity-period``)
CLIENT_CERT_VALIDITY = timedelta(days=365)


class ClientCertificateError(ValueError):
    """A client certificate cannot be made as asked (the message says why)."""


def check_subject_name(what: str, name: str) -> None:
    """A user or group name a certificate's subject can carry: not empty, at most 64
    characters, no control characters, no blank at either end (a name that differs from
    what RBAC's bindings say only by a space would match none of them)."""
    if not name:
        raise ClientCertificateError(f"{what} name must not be empty")
    if name != name.strip():
        raise ClientCertificateError(f"{what} name {name!r} must not begin or end with "
                                     "a blank")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise ClientCertificateError(f"{what} name {name!r} must not hold control "
                                     "characters")
    if len(name) > MAX_NAME_LENGTH:
        raise ClientCertificateError(
            f"{what} name {name!r} is {len(name)} characters long: a certificate's "
            f"subject holds at most {MAX_NAME_LENGTH} (X.509)")


@dataclass(frozen=True)
class ClientCertificate:
    cert_pem: bytes
    key_pem: bytes
    not_after: datetime


def client_certificate(ca: CertificateAuthority, user: str, groups: tuple[str, ...] = (),
                       *, validity: timedelta = CLIENT_CERT_VALIDITY,
                       now: datetime | None = None) -> ClientCertificate:
    """A certificate for ``user`` in ``groups`` signed by ``ca`` (kubeadm's
    ``kubeconfig user``: CN = the user, one O per group, ``clientAuth`` usage), which
    kubegc's x509 authenticator reads back as that user (``CommonNameUserConversion``).
    It may not outlive the CA: a client could not be verified past the CA's end."""
    check_subject_name("user", user)
    for group in groups:
        check_subject_name("group", group)
    if validity <= timedelta(0):
        raise ClientCertificateError("the certificate's validity must be positive")
    start = now or datetime.now(UTC)
    not_after = start + validity
    if not_after > ca.cert.not_valid_after_utc:
        raise ClientCertificateError(
            f"a certificate valid until {not_after:%Y-%m-%d %H:%M} UTC would outlive "
            f"kubegc's CA (valid until {ca.cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC): "
            "ask for a shorter expiration")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
                         x509.NameAttribute(NameOID.COMMON_NAME, user)])
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(ca.cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(start - timedelta(minutes=5)).not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=False, crl_sign=False,
            content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            ca.key.public_key()), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    return ClientCertificate(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key),
                             not_after)
