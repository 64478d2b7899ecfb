"""kubeconfig files: read one into a ``RestConfig``, or write one kubectl accepts.

``load_kubeconfig(path=None, context=None)`` reads ``path``, else the first file named in
``$KUBECONFIG``, else ``~/.kube/config`` (files are not merged), and resolves the chosen
context (default: ``current-context``) into a ``RestConfig``:
  * cluster: ``server``, ``certificate-authority`` / ``certificate-authority-data`` (then
    only that CA is trusted), ``insecure-skip-tls-verify``, ``tls-server-name``;
  * user: ``token`` / ``tokenFile`` (bearer), ``username``/``password`` (basic),
    ``client-certificate(-data)`` + ``client-key(-data)``, an ``exec`` credential plugin
    (run once, at load time; its token is not refreshed), or an ``auth-provider`` that
    carries an ``id-token``/``access-token``;
  * context: ``namespace`` (default ``"default"``).
Relative file paths are relative to the kubeconfig's directory, as kubectl resolves them.
Raises ``FileNotFoundError`` for a missing file and ``KubeconfigError`` for anything
unusable in it.

``kubeconfig_document`` makes a one-cluster/one-user/one-context kubeconfig (a token or a
client certificate), ``save_kubeconfig`` writes one (mode 0600), ``write_kubeconfig`` both.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_NAMESPACE = "default"
EXEC_TIMEOUT = 60.0  # seconds an exec credential plugin may take


class KubeconfigError(ValueError):
    """The kubeconfig is malformed or asks for something this loader cannot do."""


@dataclass
class RestConfig:
    """How to reach and authenticate to one API server.

    ``ssl_context`` is None for ``http://`` servers. ``headers`` carries the
    ``Authorization`` header when the user has a token or a password.
    """

    server: str
    ssl_context: ssl.SSLContext | None = None
    headers: dict[str, str] = field(default_factory=dict)
    namespace: str = DEFAULT_NAMESPACE
    context: str = ""
    tls_server_name: str = ""


@dataclass
class _Credentials:
    headers: dict[str, str] = field(default_factory=dict)
    cert_pem: bytes | None = None
    key_pem: bytes | None = None


def default_kubeconfig_path() -> Path:
    """``$KUBECONFIG``'s first entry, else ``~/.kube/config``."""
    for entry in os.environ.get("KUBECONFIG", "").split(os.pathsep):
        if entry:
            return Path(entry).expanduser()
    return Path.home() / ".kube" / "config"


def load_kubeconfig(path: str | None = None, context: str | None = None) -> RestConfig:
    """Read a kubeconfig file and resolve ``context`` (see the module docstring)."""
    file = Path(path).expanduser() if path else default_kubeconfig_path()
    doc = yaml.safe_load(file.read_text())
    if not isinstance(doc, dict):
        raise KubeconfigError(f"{file}: not a kubeconfig")
    return rest_config_from_dict(doc, context=context, base_dir=file.parent)


def rest_config_from_dict(
    doc: dict[str, Any], *, context: str | None = None, base_dir: Path | None = None,
) -> RestConfig:
    """Resolve a parsed kubeconfig document (``base_dir`` anchors relative paths)."""
    base = base_dir or Path.cwd()
    name = context or str(doc.get("current-context") or "")
    if not name:
        raise KubeconfigError("no context given and no current-context set")
    ctx = _named(doc, "contexts", "context", name)
    cluster = _named(doc, "clusters", "cluster", str(ctx.get("cluster") or ""))
    user_name = str(ctx.get("user") or "")
    user = _named(doc, "users", "user", user_name) if user_name else {}
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeconfigError(f"cluster of context {name!r} has no server")
    creds = _credentials(user, base)
    return RestConfig(
        server=server.rstrip("/"),
        ssl_context=_ssl_context(cluster, creds, base) if server.startswith("https") else None,
        headers=creds.headers,
        namespace=str(ctx.get("namespace") or DEFAULT_NAMESPACE),
        context=name,
        tls_server_name=str(cluster.get("tls-server-name") or ""),
    )


def kubeconfig_document(
    *, server: str, ca_data: bytes | None, token: str | None = None, insecure: bool = False,
    name: str = "kubegc", namespace: str = DEFAULT_NAMESPACE, user: str | None = None,
    client_certificate: bytes | None = None, client_key: bytes | None = None,
) -> dict[str, Any]:
    """A kubeconfig with one cluster, user and context. All are called ``name``, unless
    ``user`` names the user: then the context is ``user@name`` (as ``kubeadm kubeconfig
    user`` names them). The user's credential is ``token``, or ``client_certificate`` and
    ``client_key`` (PEM, embedded as ``client-certificate-data``/``client-key-data``).

    ``ca_data`` is the PEM of the CA that signed the server certificate; kubectl refuses a
    CA together with ``insecure``, so that combination raises ``ValueError``.
    """
    if insecure and ca_data:
        raise ValueError(
            "specifying a root certificates file with the insecure flag is not allowed")
    if (client_certificate is None) != (client_key is None):
        raise ValueError("a client certificate needs its key")
    cluster: dict[str, Any] = {"server": server}
    if ca_data:
        cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    credential: dict[str, Any] = {"token": token} if token else {}
    if client_certificate is not None and client_key is not None:
        credential = {"client-certificate-data": base64.b64encode(client_certificate).decode(),
                      "client-key-data": base64.b64encode(client_key).decode()}
    user_name = user or name
    context = f"{user}@{name}" if user else name
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user_name, "user": credential}],
        "contexts": [{"name": context, "context": {"cluster": name, "user": user_name,
                                                   "namespace": namespace}}],
        "current-context": context,
    }


def write_kubeconfig(
    path: str, *, server: str, ca_data: bytes | None, token: str | None, insecure: bool,
    name: str = "kubegc", namespace: str = DEFAULT_NAMESPACE,
) -> None:
    """Write a kubeconfig with one cluster, user and context, all called ``name``
    (``kubeconfig_document``), owner-only."""
    save_kubeconfig(path, kubeconfig_document(server=server, ca_data=ca_data, token=token,
                                              insecure=insecure, name=name,
                                              namespace=namespace))


def save_kubeconfig(path: str | Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``path`` atomically, created owner-only (0600): it holds a
    credential."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        yaml.safe_dump(doc, out, sort_keys=False)
    os.replace(tmp, target)


def _named(doc: dict[str, Any], section: str, field_name: str, name: str) -> dict[str, Any]:
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(field_name) or {}
            if not isinstance(value, dict):
                raise KubeconfigError(f"{section} entry {name!r} is malformed")
            return value
    raise KubeconfigError(f"{field_name} {name!r} not found in kubeconfig")


def _data_or_file(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    """``<key>-data`` (base64) or the file named by ``<key>``."""
    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(data)
    path = entry.get(key)
    return (base / Path(str(path)).expanduser()).read_bytes() if path else None


def _credentials(user: dict[str, Any], base: Path) -> _Credentials:
    creds = _Credentials(
        cert_pem=_data_or_file(user, "client-certificate", base),
        key_pem=_data_or_file(user, "client-key", base),
    )
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (base / str(user["tokenFile"])).read_text().strip()
    if not token and isinstance(user.get("auth-provider"), dict):
        config = user["auth-provider"].get("config") or {}
        token = config.get("id-token") or config.get("access-token")
        if not token:
            raise KubeconfigError(
                f"auth-provider {user['auth-provider'].get('name')!r} is not supported")
    if not token and isinstance(user.get("exec"), dict):
        status = _run_exec_plugin(user["exec"], base)
        token = status.get("token")
        if status.get("clientCertificateData"):
            creds.cert_pem = str(status["clientCertificateData"]).encode()
            creds.key_pem = str(status.get("clientKeyData") or "").encode()
    if token:
        creds.headers["Authorization"] = f"Bearer {token}"
    elif user.get("username"):
        basic = f"{user['username']}:{user.get('password') or ''}".encode()
        creds.headers["Authorization"] = "Basic " + base64.b64encode(basic).decode()
    return creds


def _run_exec_plugin(spec: dict[str, Any], base: Path) -> dict[str, Any]:
    """Run a client-go exec credential plugin once and return its ``status``."""
    command = str(spec.get("command") or "")
    if not command:
        raise KubeconfigError("exec plugin without command")
    if os.sep in command and not os.path.isabs(command):
        command = str(base / command)
    api_version = str(spec.get("apiVersion") or "client.authentication.k8s.io/v1")
    env = dict(os.environ)
    env.update({str(e["name"]): str(e["value"]) for e in spec.get("env") or []})
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}})
    result = subprocess.run(
        [command, *[str(a) for a in spec.get("args") or []]], env=env, capture_output=True,
        timeout=EXEC_TIMEOUT, check=False,
    )
    if result.returncode != 0:
        raise KubeconfigError(
            f"exec plugin {command} failed ({result.returncode}): {result.stderr.decode()}")
    status = json.loads(result.stdout).get("status") or {}
    if not isinstance(status, dict):
        raise KubeconfigError(f"exec plugin {command} returned no status")
    return status


def _ssl_context(cluster: dict[str, Any], creds: _Credentials, base: Path) -> ssl.SSLContext:
    ca = _data_or_file(cluster, "certificate-authority", base)
    ctx = ssl.create_default_context(cadata=ca.decode() if ca else None)
    if cluster.get("insecure-skip-tls-verify"):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if creds.cert_pem and creds.key_pem:
        # ssl only loads a client certificate from files: write them privately, briefly.
        with tempfile.TemporaryDirectory(prefix="kubegc-tls-") as tmp:
            cert, key = Path(tmp) / "client.crt", Path(tmp) / "client.key"
            cert.write_bytes(creds.cert_pem)
            key.touch(0o600)
            key.write_bytes(creds.key_pem)
            ctx.load_cert_chain(cert, key)
    elif creds.cert_pem or creds.key_pem:
        raise KubeconfigError("client certificate and client key must be given together")
    return ctx
