"""kubeconfig loading into RestConfig, and writing files kubectl and the official client read."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubegc.client.kubeconfig import (
    KubeconfigError,
    load_kubeconfig,
    rest_config_from_dict,
    write_kubeconfig,
)

from .certs import Pki


def kubeconfig(*, server: str = "https://127.0.0.1:6443", cluster: dict[str, Any] | None = None,
               user: dict[str, Any] | None = None, namespace: str | None = None,
               current: str | None = "main") -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {}}],
        "contexts": [{"name": "main", "context": context},
                     {"name": "other", "context": {"cluster": "c", "user": "u",
                                                   "namespace": "elsewhere"}}],
        "current-context": current,
    }


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("user", "authorization"),
    [
        pytest.param({"token": "abc"}, "Bearer abc", id="token"),
        pytest.param({"username": "admin", "password": "pw"},
                     "Basic " + b64(b"admin:pw"), id="basic"),
        pytest.param({"auth-provider": {"name": "oidc", "config": {"id-token": "jwt"}}},
                     "Bearer jwt", id="oidc-id-token"),
        pytest.param({}, None, id="anonymous"),
    ],
)
def test_user_credentials_become_headers(user: dict[str, Any], authorization: str | None) -> None:
    config = rest_config_from_dict(kubeconfig(server="http://127.0.0.1:8080", user=user))
    assert config.headers.get("Authorization") == authorization
    assert config.server == "http://127.0.0.1:8080"
    assert config.ssl_context is None, "plain http needs no TLS"


def test_token_file_is_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    config = rest_config_from_dict(kubeconfig(user={"tokenFile": "token"}), base_dir=tmp_path)
    assert config.headers["Authorization"] == "Bearer from-file"


def test_exec_plugin_token_is_used(tmp_path: Path) -> None:
    script = (
        "import json, os; info = json.loads(os.environ['KUBERNETES_EXEC_INFO']);"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',"
        " 'status': {'token': os.environ['GREETING'] + '-' + info['kind']}}))"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                     "command": sys.executable, "args": ["-c", script],
                     "env": [{"name": "GREETING", "value": "hi"}]}}
    config = rest_config_from_dict(kubeconfig(user=user))
    assert config.headers["Authorization"] == "Bearer hi-ExecCredential"


def test_failing_exec_plugin_is_a_kubeconfig_error() -> None:
    user = {"exec": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}}
    with pytest.raises(KubeconfigError, match="failed"):
        rest_config_from_dict(kubeconfig(user=user))


@pytest.mark.parametrize(
    ("namespace", "context", "want"),
    [
        pytest.param("team-a", None, "team-a", id="context-namespace"),
        pytest.param(None, None, "default", id="default-namespace"),
        pytest.param("team-a", "other", "elsewhere", id="explicit-context"),
    ],
)
def test_context_selection_and_namespace(namespace: str | None, context: str | None,
                                         want: str) -> None:
    config = rest_config_from_dict(kubeconfig(namespace=namespace), context=context)
    assert config.namespace == want
    assert config.context == (context or "main")


@pytest.mark.parametrize(
    ("doc", "context", "message"),
    [
        pytest.param(kubeconfig(), "nope", "context 'nope' not found", id="unknown-context"),
        pytest.param(kubeconfig(current=None), None, "no context", id="no-current-context"),
        pytest.param(kubeconfig(server=""), None, "has no server", id="no-server"),
        pytest.param(kubeconfig(user={"auth-provider": {"name": "gcp", "config": {}}}), None,
                     "not supported", id="unsupported-auth-provider"),
    ],
)
def test_unusable_kubeconfigs_are_rejected(doc: dict[str, Any], context: str | None,
                                           message: str) -> None:
    with pytest.raises(KubeconfigError, match=message):
        rest_config_from_dict(doc, context=context)


def test_https_with_ca_data_trusts_only_that_ca(pki: Pki) -> None:
    config = rest_config_from_dict(kubeconfig(
        cluster={"certificate-authority-data": b64(pki.ca_pem), "tls-server-name": "kube"}))
    ctx = config.ssl_context
    assert ctx is not None
    assert ctx.verify_mode is ssl.CERT_REQUIRED and ctx.check_hostname
    assert [dict(x[0] for x in c["subject"])["commonName"] for c in ctx.get_ca_certs()] == [
        "kubegc-test-ca"]
    assert config.tls_server_name == "kube"


def test_ca_and_client_certificate_files(pki: Pki, tmp_path: Path) -> None:
    for name, data in {"ca.crt": pki.ca_pem, "admin.crt": pki.client_cert_pem,
                       "admin.key": pki.client_key_pem}.items():
        (tmp_path / name).write_bytes(data)
    doc = kubeconfig(cluster={"certificate-authority": "ca.crt"},
                     user={"client-certificate": "admin.crt", "client-key": "admin.key"})
    config = rest_config_from_dict(doc, base_dir=tmp_path)
    assert config.ssl_context is not None
    assert len(config.ssl_context.get_ca_certs()) == 1
    assert "Authorization" not in config.headers


def test_client_certificate_without_key_is_rejected(pki: Pki) -> None:
    doc = kubeconfig(user={"client-certificate-data": b64(pki.client_cert_pem)})
    with pytest.raises(KubeconfigError, match="together"):
        rest_config_from_dict(doc)


def test_insecure_skip_tls_verify_disables_verification() -> None:
    config = rest_config_from_dict(kubeconfig(cluster={"insecure-skip-tls-verify": True}))
    assert config.ssl_context is not None
    assert config.ssl_context.verify_mode is ssl.CERT_NONE
    assert not config.ssl_context.check_hostname


def test_file_lookup_honours_kubeconfig_env_then_home(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(yaml.safe_dump(kubeconfig(server="http://first")))
    second.write_text(yaml.safe_dump(kubeconfig(server="http://second")))
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "config").write_text(yaml.safe_dump(kubeconfig(server="http://home")))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    assert load_kubeconfig().server == "http://first"
    assert load_kubeconfig(str(second)).server == "http://second"
    monkeypatch.delenv("KUBECONFIG")
    assert load_kubeconfig().server == "http://home"
    assert load_kubeconfig(context="other").namespace == "elsewhere"


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_kubeconfig(str(tmp_path / "absent"))


def test_written_kubeconfig_round_trips_with_mode_0600(pki: Pki, tmp_path: Path) -> None:
    path = tmp_path / "sub" / "kubeconfig"
    write_kubeconfig(str(path), server="https://127.0.0.1:6443", ca_data=pki.ca_pem,
                     token="s3cret", insecure=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = load_kubeconfig(str(path))
    assert (config.server, config.namespace, config.context) == (
        "https://127.0.0.1:6443", "default", "kubegc")
    assert config.headers == {"Authorization": "Bearer s3cret"}
    assert config.ssl_context is not None and len(config.ssl_context.get_ca_certs()) == 1


def test_write_refuses_ca_with_insecure(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="insecure flag"):
        write_kubeconfig(str(tmp_path / "k"), server="https://x", ca_data=pki.ca_pem,
                         token=None, insecure=True)


@pytest.mark.parametrize(
    ("ca", "token", "insecure"),
    [
        pytest.param(True, "s3cret", False, id="ca-and-token"),
        pytest.param(False, None, True, id="insecure-anonymous"),
    ],
)
def test_official_python_client_accepts_written_file(pki: Pki, tmp_path: Path, ca: bool,
                                                     token: str | None, insecure: bool) -> None:
    from kubernetes import client, config

    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server="https://127.0.0.1:6443",
                     ca_data=pki.ca_pem if ca else None, token=token, insecure=insecure)
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=cfg)
    assert cfg.host == "https://127.0.0.1:6443"
    assert cfg.verify_ssl is (not insecure)
    if token:
        assert cfg.api_key == {"BearerToken": f"Bearer {token}"}  # 37.x key name
    if ca:
        assert Path(cfg.ssl_ca_cert).read_bytes() == pki.ca_pem


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_reads_written_file(pki: Pki, tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server="https://127.0.0.1:6443", ca_data=pki.ca_pem,
                     token="s3cret", insecure=False, namespace="team-a")
    out = subprocess.run(["kubectl", "config", "view", "--raw", "-o", "json",
                          "--kubeconfig", str(path)], capture_output=True, check=True,
                         timeout=60)
    view = json.loads(out.stdout)
    assert view["current-context"] == "kubegc"
    cluster = view["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]) == pki.ca_pem
    assert view["users"][0]["user"] == {"token": "s3cret"}
    assert view["contexts"][0]["context"]["namespace"] == "team-a"
