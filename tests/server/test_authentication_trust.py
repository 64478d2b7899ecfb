"""The extension-apiserver-authentication ConfigMap's data (kube-apiserver's
clusterauthenticationtrust ``getConfigMapDataFor`` and ``combinedClusterAuthenticationInfo``),
the front proxy kubegc makes (kubeadm's names), and its flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509

from kubegc.cli import build_parser
from kubegc.serve_options import serve_config
from kubegc.server.authentication_trust import combined, required_data
from kubegc.server.frontproxy import FrontProxy, generated_front_proxy
from kubegc.server.tls import ensure_ca
from kubegc.storage import DataDir


def pem(tmp_path: Path, name: str) -> str:
    ensure_ca(tmp_path / f"{name}.crt", tmp_path / f"{name}.key", name)
    return (tmp_path / f"{name}.crt").read_text()


def front_proxy(ca: str | None, names: tuple[str, ...] = ("front-proxy-client",)
                ) -> FrontProxy:
    return FrontProxy(None, ca.encode() if ca else None, names, ("X-Remote-User",),
                      ("X-Remote-Group",), ("X-Remote-Extra-",))


def test_no_requestheader_ca_publishes_the_client_ca_only(tmp_path: Path) -> None:
    client_ca = pem(tmp_path, "client")
    assert required_data(client_ca.encode(), front_proxy(None)) == {"client-ca-file": client_ca}


def test_another_servers_cas_and_names_are_kept(tmp_path: Path) -> None:
    ours, theirs = pem(tmp_path, "ours"), pem(tmp_path, "theirs")
    existing = combined({}, required_data(None, front_proxy(theirs, ("their-proxy",))))
    data = combined(existing, required_data(None, front_proxy(ours)))
    assert data["requestheader-client-ca-file"] == theirs + ours
    assert data["requestheader-allowed-names"] == '["their-proxy","front-proxy-client"]'
    assert data["requestheader-username-headers"] == '["X-Remote-User"]'
    assert combined(data, required_data(None, front_proxy(ours))) == data  # no change


def test_the_front_proxy_is_made_once_and_kept(tmp_path: Path) -> None:
    cert_file, key_file, ca_file = generated_front_proxy(tmp_path, "front-proxy-client")
    files = DataDir(tmp_path)
    assert (cert_file, key_file, ca_file) == (files.front_proxy_client_cert,
                                              files.front_proxy_client_key,
                                              files.front_proxy_ca_cert)
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    ca = x509.load_pem_x509_certificate(ca_file.read_bytes())
    cert.verify_directly_issued_by(ca)
    assert cert.subject.rfc4514_string() == "CN=front-proxy-client"
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    before = cert_file.read_bytes()
    generated_front_proxy(tmp_path, "front-proxy-client")
    assert cert_file.read_bytes() == before


def test_the_flags(tmp_path: Path) -> None:
    default = serve_config(build_parser().parse_args(["serve"])).request_header
    assert default.generated and default.allowed_names == ("front-proxy-client",)
    ca = tmp_path / "ca.crt"
    ca.write_text(pem(tmp_path, "fp"))
    given = serve_config(build_parser().parse_args([
        "serve", "--requestheader-client-ca-file", str(ca),
        "--requestheader-allowed-names", "", "--requestheader-username-headers",
        "X-Remote-User,X-User"])).request_header
    assert not given.generated and given.client_ca_file == ca
    assert given.allowed_names == () and given.username_headers == ("X-Remote-User", "X-User")
    with pytest.raises(ValueError, match="go together"):
        serve_config(build_parser().parse_args(["serve", "--proxy-client-cert-file", str(ca)]))
