"""``kubegc kubeconfig --user``: a kubeconfig with a client certificate signed by the data
directory's CA (as ``kubeadm kubeconfig user``), to stdout or ``-o``; every error one line
that says what to do. The server's side (kubectl as that user) is tests/e2e."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID

from kubegc.cli import main
from kubegc.client.kubeconfig import write_kubeconfig
from kubegc.server.tls import serving_credentials

SERVER = "https://127.0.0.1:6443"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data directory as ``kubegc serve`` leaves it: the CA and the admin kubeconfig."""
    directory = tmp_path / "kubegc"
    creds = serving_credentials(directory, ["127.0.0.1"])
    write_kubeconfig(str(directory / "kubeconfig"), server=SERVER, ca_data=creds.ca_cert_pem,
                     token=creds.token, insecure=False)
    return directory


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["kubeconfig", *args])
    out, err = capsys.readouterr()
    return code, out, err


def certificate(doc: dict[str, object]) -> x509.Certificate:
    user = doc["users"][0]["user"]  # type: ignore[index]
    return x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))


def test_the_kubeconfig_goes_to_stdout(capsys: pytest.CaptureFixture[str],
                                       data_dir: Path) -> None:
    code, out, err = run(capsys, "--user", "jane", "--group", "dev", "--group", "qa",
                         "--data-dir", str(data_dir), "--expiration", "24h")
    assert (code, err) == (0, "")
    doc = yaml.safe_load(out)
    assert doc["current-context"] == "jane@kubegc"
    assert doc["contexts"][0]["context"] == {"cluster": "kubegc", "user": "jane",
                                             "namespace": "default"}
    assert doc["clusters"][0]["cluster"]["server"] == SERVER
    assert base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]) == (
        (data_dir / "pki" / "ca.crt").read_bytes())
    cert = certificate(doc)
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == [
        "jane"]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "dev", "qa"]
    left = cert.not_valid_after_utc - datetime.now(UTC)
    assert timedelta(hours=23) < left <= timedelta(hours=24)


def test_the_kubeconfig_goes_to_a_private_file(capsys: pytest.CaptureFixture[str],
                                               data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "jane.conf"
    code, out, err = run(capsys, "--user", "jane", "--data-dir", str(data_dir), "-o",
                         str(target))
    assert (code, out, err) == (0, "", "")
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    cert = certificate(yaml.safe_load(target.read_text()))
    assert timedelta(days=364) < cert.not_valid_after_utc - datetime.now(UTC)  # kubeadm's year


def test_without_a_ca_it_says_how_to_get_one(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    code, out, err = run(capsys, "--user", "jane", "--data-dir", str(tmp_path / "none"))
    assert (code, out) == (1, "")
    assert err == (f"kubegc kubeconfig: no kubegc CA in {tmp_path / 'none' / 'pki'}: start "
                   f"kubegc once with TLS on that data directory (kubegc serve --data-dir "
                   f"{tmp_path / 'none'}), or pass --data-dir\n")


def test_without_the_admin_kubeconfig_it_asks_for_the_server(
        capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    (data_dir / "kubeconfig").unlink()
    code, _, err = run(capsys, "--user", "jane", "--data-dir", str(data_dir))
    assert (code, err) == (1, f"kubegc kubeconfig: cannot take the server's address from "
                              f"{data_dir / 'kubeconfig'} (it is missing): pass --server "
                              "https://HOST:PORT\n")
    code, out, _ = run(capsys, "--user", "jane", "--data-dir", str(data_dir), "--server",
                       "https://kubegc.example:6443")
    assert code == 0
    assert yaml.safe_load(out)["clusters"][0]["cluster"]["server"] == (
        "https://kubegc.example:6443")


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--user", ""], 1, "kubegc kubeconfig: user name must not be empty"),
    (["--user", "jane", "--group", " dev"], 1,
     "kubegc kubeconfig: group name ' dev' must not begin or end with a blank"),
    (["--user", "j" * 70], 1, f"kubegc kubeconfig: user name '{'j' * 70}' is 70 characters "
                              "long: a certificate's subject holds at most 64 (X.509)"),
    (["--user", "jane", "--expiration", "0s"], 2,
     "kubegc kubeconfig: --expiration must be positive"),
    (["--user", "jane", "--expiration", "200000h"], 1, "would outlive kubegc's CA"),
])
def test_what_cannot_be_made_is_one_line(capsys: pytest.CaptureFixture[str], data_dir: Path,
                                         args: list[str], code: int, message: str) -> None:
    got, out, err = run(capsys, *args, "--data-dir", str(data_dir))
    assert (got, out) == (code, "")
    assert err.count("\n") == 1 and message in err


def test_a_duration_that_is_not_one_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                                     data_dir: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["kubeconfig", "--user", "jane", "--expiration", "soon"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid duration 'soon'" in err
