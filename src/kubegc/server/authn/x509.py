"""Client certificates (k8s.io/apiserver ``pkg/authentication/request/x509``): the user of
a request whose TLS handshake verified a client certificate against kubegc's CA.

Verification is the TLS layer's (``server.tls.ServingCredentials.ssl_context``: an
optional client certificate, checked against kubegc's CA alone, for ``clientAuth``
usage and validity), so this authenticator only converts what was verified, as
``CommonNameUserConversion`` does: the subject's common name is the user, each
organization a group, and the certificate's SHA-256 its credential id. A certificate
without a common name names nobody: the request goes on to the bearer token, or anonymous.
"""

from __future__ import annotations

import functools
import hashlib

from cryptography import x509
from cryptography.x509.oid import NameOID

from kubegc.api.auth import UserInfo
from kubegc.server.authn import RequestAuthenticator
from kubegc.server.http import Request

#: ``user.CredentialIDKey``: the extra that says which credential authenticated the user
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
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


def x509_authenticator() -> RequestAuthenticator:
    """The request authenticator of the client certificate a TLS handshake verified."""

    async def authenticate(request: Request) -> UserInfo | None:
        der = request.peer_certificate
        return common_name_user(der) if der is not None else None

    return authenticate
