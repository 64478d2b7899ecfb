"""Client certificates (k8s.io/apiserver ``pkg/authentication/request/x509``): the user of
a request whose TLS handshake verified a client certificate against kubegc's CA.

Verification is the TLS layer's (``server.tls.ServingCredentials.ssl_context``: an
optional client certificate, checked against kubegc's CA, for ``clientAuth`` usage and
validity; the front-proxy CA is trusted there too, for ``authn.requestheader``), so this
authenticator only checks that kubegc's CA signed it (``--client-ca-file``: a
front-proxy certificate names no user) and converts it, as ``CommonNameUserConversion``
does: the subject's common name is the user, each
organization a group, and the certificate's SHA-256 its credential id. A certificate
without a common name names nobody: the request goes on to the bearer token, or anonymous.
"""

from __future__ import annotations

import functools
import hashlib

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID

from kubegc.api.auth import UserInfo
from kubegc.api.authenticator import AuthenticationError
from kubegc.server.authn import RequestAuthenticator
from kubegc.server.http import Request

#: ``user.CredentialIDKey``: the extra that says which credential authenticated the user
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
#: Go's error for a certificate no CA of the verifier signed
UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"
#: certificates converted and kept (a client presents the same one on every request)
_CACHED = 1024


def _values(name: x509.Name, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(a.value) for a in name.get_attributes_for_oid(oid)]


@functools.lru_cache(maxsize=_CACHED)
def common_name_user(der: bytes) -> UserInfo | None:
    """``CommonNameUserConversion`` of a verified certificate (DER): CN → name (the last
    one, as Go's ``pkix.Name`` keeps it), O → groups, ``X509SHA256=<hex>`` → the
    credential id; None without a common name."""
    cert = x509.load_der_x509_certificate(der)
    names = _values(cert.subject, NameOID.COMMON_NAME)
    if not names or not names[-1]:
        return None
    groups = tuple(_values(cert.subject, NameOID.ORGANIZATION_NAME))
    credential = "X509SHA256=" + hashlib.sha256(der).hexdigest()
    return UserInfo(names[-1], groups=groups, extra={CREDENTIAL_ID_KEY: (credential,)})


@functools.lru_cache(maxsize=_CACHED)
def issued_by(der: bytes, ca_pem: bytes) -> bool:
    """Whether a (verified) certificate was signed by the CA ``ca_pem`` (one of its
    certificates), not by another CA the TLS layer trusts."""
    cert = x509.load_der_x509_certificate(der)
    for ca in x509.load_pem_x509_certificates(ca_pem):
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except (ValueError, TypeError, InvalidSignature):
            continue
    return False


def common_name(der: bytes) -> str:
    names = _values(x509.load_der_x509_certificate(der).subject, NameOID.COMMON_NAME)
    return names[-1] if names else ""


def x509_authenticator(ca_pem: bytes | None = None) -> RequestAuthenticator:
    """The request authenticator of the client certificate a TLS handshake verified
    (signed by ``ca_pem``, when given)."""

    async def authenticate(request: Request) -> UserInfo | None:
        der = request.peer_certificate
        if der is None:
            return None
        if ca_pem is not None and not issued_by(der, ca_pem):
            raise AuthenticationError(UNKNOWN_AUTHORITY)
        return common_name_user(der)

    return authenticate
