"""Identities a front proxy asserts in headers (k8s.io/apiserver
``pkg/authentication/request/headerrequest``, kube-apiserver's ``--requestheader-*``): a
request whose client certificate the TLS layer verified, signed by the
``--requestheader-client-ca-file`` CA and with a common name in
``--requestheader-allowed-names`` (empty: any), is the user its headers say: the first
username header that has a value, every value of the group headers, and each header
under an extra prefix (``X-Remote-Extra-Scopes: a`` → extra ``scopes`` = ``["a"]``, the
key lower-cased and unescaped, as ``newExtra`` does). Without a username header it names
nobody and the request goes on to the other authenticators. A certificate of another CA or
common name is refused as ``NewDynamicCAVerifier`` refuses it (``AuthenticationError``):
the request may still be another authenticator's (kubegc's own client certificates, a
token), else it is a 401.
Runs first, as upstream's union puts it before the client-certificate authenticator.
"""

from __future__ import annotations

from urllib.parse import unquote

from kubegc.api.auth import UserInfo
from kubegc.api.authenticator import AuthenticationError
from kubegc.server.authn import RequestAuthenticator
from kubegc.server.authn.x509 import UNKNOWN_AUTHORITY, common_name, issued_by
from kubegc.server.frontproxy import FrontProxy
from kubegc.server.http import Request


def _first(request: Request, names: tuple[str, ...]) -> str:
    for name in names:
        for value in request.headers.getall(name):
            if value:
                return value
    return ""


def _extra(request: Request, prefixes: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    extra: dict[str, tuple[str, ...]] = {}
    for header in request.headers:
        for prefix in prefixes:
            if header.lower().startswith(prefix.lower()) and len(header) > len(prefix):
                key = unquote(header[len(prefix):].lower())
                extra[key] = (*extra.get(key, ()), *request.headers.getall(header))
    return extra


def request_header_authenticator(front_proxy: FrontProxy) -> RequestAuthenticator | None:
    """The authenticator of ``front_proxy``'s requestheader trust (None without a CA)."""
    ca_pem = front_proxy.client_ca_pem
    if not ca_pem:
        return None
    allowed = set(front_proxy.allowed_names)

    async def authenticate(request: Request) -> UserInfo | None:
        der = request.peer_certificate
        if der is None:
            return None
        if not issued_by(der, ca_pem):
            raise AuthenticationError(UNKNOWN_AUTHORITY)
        name = common_name(der)
        if allowed and name not in allowed:
            raise AuthenticationError(f"x509: subject with cn={name} is not in the allowed "
                                      f"list")
        user = _first(request, front_proxy.username_headers)
        if not user:
            return None
        groups = tuple(value for header in front_proxy.group_headers
                       for value in request.headers.getall(header))
        return UserInfo(user, groups=groups,
                        extra=_extra(request, front_proxy.extra_headers_prefix))

    return authenticate
