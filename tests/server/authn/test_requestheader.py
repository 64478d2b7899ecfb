"""The requestheader authenticator (k8s.io/apiserver headerrequest): headers believed only
from a certificate of the requestheader CA with an allowed common name."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from kubegc.api.auth import ADMIN
from kubegc.api.authenticator import AuthenticationError
from kubegc.api.errors import StatusError
from kubegc.server.authn import Authentication, static_token
from kubegc.server.authn.requestheader import request_header_authenticator
from kubegc.server.authn.x509 import UNKNOWN_AUTHORITY, x509_authenticator
from kubegc.server.frontproxy import FrontProxy
from kubegc.server.http import Headers, Request
from kubegc.server.tls import CertificateAuthority, client_certificate, ensure_ca


def authority(tmp_path: Path, name: str) -> CertificateAuthority:
    return CertificateAuthority(*ensure_ca(tmp_path / f"{name}.crt", tmp_path / f"{name}.key",
                                           name))


def der(ca: CertificateAuthority, user: str) -> bytes:
    from cryptography import x509
    pem = client_certificate(ca, user).cert_pem
    return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


def request(cert: bytes | None, headers: dict[str, list[str]]) -> Request:
    items = {k.lower(): ", ".join(v) for k, v in headers.items()}
    repeated = {k.lower(): v for k, v in headers.items() if len(v) > 1}
    return Request("GET", "/api", Headers(items, repeated), peer_certificate=cert)


def proxy_of(ca: CertificateAuthority, names: tuple[str, ...]) -> FrontProxy:
    pem = ca.cert.public_bytes(serialization.Encoding.PEM)
    return FrontProxy(None, pem, names, ("X-Remote-User",), ("X-Remote-Group",),
                      ("X-Remote-Extra-",))


async def test_the_headers_of_an_allowed_front_proxy_are_the_user(tmp_path: Path) -> None:
    front, kubegc = authority(tmp_path, "front"), authority(tmp_path, "kubegc")
    authenticate = request_header_authenticator(proxy_of(front, ("front-proxy-client",)))
    assert authenticate is not None
    asserted = {"X-Remote-User": ["alice"], "X-Remote-Group": ["a", "b"],
                "X-Remote-Extra-Acme.com%2Fscopes": ["x", "y"]}
    user = await authenticate(request(der(front, "front-proxy-client"), asserted))
    assert user is not None and (user.name, user.groups) == ("alice", ("a", "b"))
    assert user.extra == {"acme.com/scopes": ("x", "y")}
    for cert, refusal in ((der(front, "someone-else"),
                           "x509: subject with cn=someone-else is not in the allowed list"),
                          (der(kubegc, "front-proxy-client"), UNKNOWN_AUTHORITY)):
        with pytest.raises(AuthenticationError, match=refusal):
            await authenticate(request(cert, asserted))
    assert await authenticate(request(None, asserted)) is None
    assert await authenticate(request(der(front, "front-proxy-client"), {})) is None
    kubegc_pem = kubegc.cert.public_bytes(serialization.Encoding.PEM)
    by_certificate = x509_authenticator(kubegc_pem)
    with pytest.raises(AuthenticationError, match=UNKNOWN_AUTHORITY):
        await by_certificate(request(der(front, "front-proxy-client"), {}))
    assert (await by_certificate(request(der(kubegc, "bob"), {}))).name == "bob"  # type: ignore[union-attr]


async def test_a_refused_certificate_is_a_401_unless_another_credential_is_accepted(
        tmp_path: Path) -> None:
    """union.NewFailOnError: no anonymous after a certificate's refusal; a token still
    counts."""
    front, kubegc = authority(tmp_path, "front"), authority(tmp_path, "kubegc")
    authentication = Authentication(
        request_authenticators=[x509_authenticator(kubegc.cert.public_bytes(
            serialization.Encoding.PEM))],
        token_authenticators=[static_token("t")], anonymous=True)
    with pytest.raises(StatusError) as refused:
        await authentication.authenticate(request(der(front, "front-proxy-client"), {}))
    assert refused.value.code == 401
    user = await authentication.authenticate(request(der(front, "front-proxy-client"),
                                                     {"Authorization": ["Bearer t"]}))
    assert user.name == ADMIN.name
    assert (await authentication.authenticate(request(None, {}))).name == "system:anonymous"


def test_no_requestheader_ca_no_authenticator(tmp_path: Path) -> None:
    assert request_header_authenticator(FrontProxy(None, None, (), (), (), ())) is None
