"""The front proxy's identity (kube-apiserver's ``--proxy-client-cert-file``,
``--proxy-client-key-file``, ``--requestheader-*``): the client certificate the aggregator
presents to every backend, and what a backend needs to trust it.

``FrontProxy`` is what the server uses: the certificate's files (None: none presented),
the CA that signed it and the header names, which the ``extension-apiserver-authentication``
ConfigMap publishes (``authentication_trust``). ``generated_front_proxy`` makes, in the
data directory's ``pki/``, the front-proxy CA and a client certificate it signs
(``front-proxy-ca.crt``, ``front-proxy-client.crt``: kubeadm's names and common names),
once; a restart reuses them, so a backend keeps trusting the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509

from kubegc.server.tls import (
    CertificateAuthority,
    client_certificate,
    ensure_ca,
    private_directory,
    write_private,
    write_public,
)
from kubegc.storage import DataDir

#: the client certificate is made again this long before it expires
_RENEW_BEFORE = timedelta(days=30)


@dataclass(frozen=True)
class FrontProxy:
    """The front proxy's certificate and the requestheader trust it asks of backends."""

    #: (certificate file, key file) presented to the backends; None: no certificate
    client_cert: tuple[Path, Path] | None
    #: the PEM of ``--requestheader-client-ca-file``; None: not published
    client_ca_pem: bytes | None
    allowed_names: tuple[str, ...]
    username_headers: tuple[str, ...]
    group_headers: tuple[str, ...]
    extra_headers_prefix: tuple[str, ...]


def _current(cert_path: Path, key_path: Path, ca: x509.Certificate) -> bool:
    """Whether the client certificate there is the CA's and not about to expire."""
    if not (cert_path.exists() and key_path.exists()):
        return False
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    return (cert.issuer == ca.subject
            and cert.not_valid_after_utc - _RENEW_BEFORE > datetime.now(UTC))


def generated_front_proxy(data_dir: Path, common_name: str) -> tuple[Path, Path, Path]:
    """Load or make the front-proxy CA and its client certificate for ``common_name`` in
    ``data_dir``'s ``pki/``: (certificate file, key file, CA file)."""
    files = DataDir(data_dir)
    private_directory(files.pki)
    ca_cert, ca_key = ensure_ca(files.front_proxy_ca_cert, files.front_proxy_ca_key,
                                "front-proxy-ca")
    cert_path, key_path = files.front_proxy_client_cert, files.front_proxy_client_key
    if not _current(cert_path, key_path, ca_cert):
        made = client_certificate(CertificateAuthority(ca_cert, ca_key), common_name,
                                  validity=min(timedelta(days=365),
                                               ca_cert.not_valid_after_utc - datetime.now(UTC)))
        write_private(key_path, made.key_pem)
        write_public(cert_path, made.cert_pem)
    return cert_path, key_path, files.front_proxy_ca_cert
