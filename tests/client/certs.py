"""A throwaway PKI for TLS tests: a self-signed CA, a server certificate for 127.0.0.1 and
localhost, and a client certificate (CN=admin, O=system:masters), all PEM."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    ca_pem: bytes
    server_cert_pem: bytes
    server_key_pem: bytes
    client_cert_pem: bytes
    client_key_pem: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
          issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool,
          extensions: list[x509.ExtensionType]) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    for ext in extensions:
        builder = builder.add_extension(ext, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_pki() -> Pki:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubegc-test-ca")])
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True, extensions=[
        x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                      content_commitment=False, key_encipherment=False,
                      data_encipherment=False, key_agreement=False, encipher_only=False,
                      decipher_only=False),
        x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
    ])
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _cert(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]), server_key,
        ca_name, ca_key, ca=False, extensions=[
            x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
        ])
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _cert(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "admin"),
                   x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters")]),
        client_key, ca_name, ca_key, ca=False, extensions=[
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
        ])
    pem = serialization.Encoding.PEM
    return Pki(ca.public_bytes(pem), server.public_bytes(pem), _key_pem(server_key),
               client.public_bytes(pem), _key_pem(client_key))
