"""Client certificates: what kubegc's CA signs (``client_certificate``, kubeadm's
``kubeconfig user``), what the TLS server lets through (verified against the CA alone), and
the user the x509 authenticator reads from it (``CommonNameUserConversion``)."""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubegc.api.auth import UserInfo
from kubegc.server.authn import Authentication
from kubegc.server.authn.x509 import CREDENTIAL_ID_KEY, common_name_user, x509_authenticator
from kubegc.server.http import Request, Response
from kubegc.server.tls import (
    CertificateAuthority,
    ClientCertificate,
    ClientCertificateError,
    client_certificate,
    load_ca,
    serving_credentials,
)

from ..http.harness import TIMEOUT, RawClient, serving


@pytest.fixture
def ca(tmp_path: Path) -> CertificateAuthority:
    serving_credentials(tmp_path, ["127.0.0.1"])
    found = load_ca(tmp_path)
    assert found is not None
    return found


def der(cert: ClientCertificate) -> bytes:
    return x509.load_pem_x509_certificate(cert.cert_pem).public_bytes(
        serialization.Encoding.DER)


def test_the_common_name_is_the_user_and_each_organization_a_group(
        ca: CertificateAuthority) -> None:
    cert = client_certificate(ca, "jane", ("dev", "qa", "system:masters"))
    parsed = x509.load_pem_x509_certificate(cert.cert_pem)
    assert parsed.issuer == ca.cert.subject
    usage = parsed.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    body = der(cert)
    assert common_name_user(body) == UserInfo(
        "jane", groups=("dev", "qa", "system:masters"),
        extra={CREDENTIAL_ID_KEY: (f"X509SHA256={hashlib.sha256(body).hexdigest()}",)})


def _self_signed(subject: x509.Name) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(1).not_valid_before(now)
            .not_valid_after(now + timedelta(hours=1)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)


@pytest.mark.parametrize(("subject", "expected"), [
    pytest.param([], None, id="no-common-name-names-nobody"),
    pytest.param([(NameOID.ORGANIZATION_NAME, "dev")], None, id="groups-without-a-user"),
    pytest.param([(NameOID.COMMON_NAME, "first"), (NameOID.COMMON_NAME, "last")],
                 ("last", ()), id="the-last-common-name-as-go-keeps-it"),
])
def test_conversion_of_unusual_subjects(subject: list[tuple[x509.ObjectIdentifier, str]],
                                        expected: tuple[str, tuple[str, ...]] | None) -> None:
    user = common_name_user(_self_signed(x509.Name(
        [x509.NameAttribute(oid, value) for oid, value in subject])))
    assert (None if user is None else (user.name, user.groups)) == expected


@pytest.mark.parametrize(("user", "groups", "message"), [
    ("", (), "user name must not be empty"),
    (" jane", (), "user name ' jane' must not begin or end with a blank"),
    ("jane", ("dev\n",), "group name 'dev\\n' must not begin or end with a blank"),
    ("ja\x00ne", (), "user name 'ja\\x00ne' must not hold control characters"),
    ("j" * 65, (), f"user name '{'j' * 65}' is 65 characters long: a certificate's subject "
                   "holds at most 64 (X.509)"),
    ("jane", ("",), "group name must not be empty"),
])
def test_names_a_certificate_cannot_carry(ca: CertificateAuthority, user: str,
                                          groups: tuple[str, ...], message: str) -> None:
    with pytest.raises(ClientCertificateError) as refused:
        client_certificate(ca, user, groups)
    assert str(refused.value) == message


def test_a_certificate_may_not_outlive_the_ca(ca: CertificateAuthority) -> None:
    with pytest.raises(ClientCertificateError, match="would outlive kubegc's CA"):
        client_certificate(ca, "jane", validity=timedelta(days=365 * 20))
    with pytest.raises(ClientCertificateError, match="validity must be positive"):
        client_certificate(ca, "jane", validity=timedelta(0))
    cert = client_certificate(ca, "jane", validity=timedelta(hours=2))
    assert timedelta(hours=1) < cert.not_after - datetime.now(UTC) <= timedelta(hours=2)


# -- through the TLS server --------------------------------------------------------------


def _client_context(ca_pem: bytes, tmp_path: Path,
                    cert: ClientCertificate | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    if cert is not None:
        (tmp_path / "c.crt").write_bytes(cert.cert_pem)
        (tmp_path / "c.key").write_bytes(cert.key_pem)
        ctx.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
    return ctx


async def test_the_server_sees_the_verified_certificate_and_names_its_user(
        tmp_path: Path) -> None:
    creds = serving_credentials(tmp_path / "server", ["127.0.0.1"])
    ca = load_ca(tmp_path / "server")
    assert ca is not None
    authentication = Authentication(request_authenticators=[x509_authenticator()],
                                    anonymous=True)
    users: list[UserInfo] = []

    async def handler(request: Request) -> Response:
        users.append(await authentication.authenticate(request))
        return Response(text="ok")

    cert = client_certificate(ca, "jane", ("dev",))
    async with serving(handler, ssl_context=creds.ssl_context()) as server:
        for presented in (cert, None):
            client = await RawClient.connect(
                server.port, ssl_context=_client_context(creds.ca_cert_pem, tmp_path, presented))
            for _ in range(2):  # every request of the connection is the certificate's
                assert (await client.request("GET", "/")).status == 200
            await client.close()
    assert [u.name for u in users] == ["jane", "jane", "system:anonymous", "system:anonymous"]
    assert users[0].groups == ("dev", "system:authenticated")


async def test_a_certificate_of_another_ca_fails_the_handshake(tmp_path: Path) -> None:
    """Python's ``ssl`` verifies an optional client certificate during the handshake (Go's
    apiserver verifies it later and answers 401): the connection is closed without an
    answer, and the handler never runs."""
    creds = serving_credentials(tmp_path / "server", ["127.0.0.1"])
    serving_credentials(tmp_path / "other", ["127.0.0.1"])
    other = load_ca(tmp_path / "other")
    assert other is not None
    called: list[str] = []

    async def handler(request: Request) -> Response:
        called.append(request.path)
        return Response(text="ok")

    async with serving(handler, ssl_context=creds.ssl_context()) as server:
        ctx = _client_context(creds.ca_cert_pem, tmp_path, client_certificate(other, "mallory",
                                                                              ("system:masters",)))
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", server.port, ssl=ctx, server_hostname="127.0.0.1"), TIMEOUT)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), TIMEOUT)  # EOF or a TLS alert
        writer.close()
    assert answer == b"" and called == []
