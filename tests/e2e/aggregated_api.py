"""A tiny aggregated API server for tests: HTTPS on loopback with a self-signed
certificate, serving ``metrics.example.io/v1beta1`` as metrics-server serves
metrics.k8s.io: ``podmetrics`` (namespaced, get/list) and ``widgets`` (namespaced,
get/list; none exist, so a GET is 404). It records the requestheader user of each request
and can be stopped and started again on the same port (a backend going down and back).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

GROUP, VERSION = "metrics.example.io", "v1beta1"
RESOURCES = [
    {"name": "podmetrics", "singularName": "", "namespaced": True, "kind": "PodMetrics",
     "verbs": ["get", "list"]},
    {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget",
     "verbs": ["get", "list"]},
]


def self_signed(directory: Path, dns_name: str) -> tuple[Path, Path, bytes]:
    """(cert file, key file, cert PEM) of ``dns_name`` and 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_name)])
    now = datetime.datetime.now(datetime.UTC)

    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName(dns_name),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file, key_file = directory / "tls.crt", directory / "tls.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file, pem


class AggregatedAPI:
    def __init__(self, port: int, dns_name: str = "metrics-api.metrics.svc") -> None:
        self.port = port
        self.directory = Path(tempfile.mkdtemp(prefix="aggregated-api-"))
        self.cert_file, self.key_file, self.cert_pem = self_signed(self.directory, dns_name)
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.cert_pem).decode()

    def start(self) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                api.requests.append({"path": self.path,
                                     "user": self.headers.get("X-Remote-User"),
                                     "groups": self.headers.get_all("X-Remote-Group") or [],
                                     "authorization": self.headers.get("Authorization")})
                status, body = api.answer(self.path.partition("?")[0])
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ThreadingHTTPServer.allow_reuse_address = True
        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        base = f"/apis/{GROUP}/{VERSION}"
        if path == base:
            return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                         "groupVersion": f"{GROUP}/{VERSION}", "resources": RESOURCES}
        parts = path[len(base):].strip("/").split("/")
        if path.startswith(base + "/") and len(parts) in (1, 3) and parts[-1] in (
                "podmetrics", "widgets"):
            kind = "PodMetricsList" if parts[-1] == "podmetrics" else "WidgetList"
            return 200, {"kind": kind, "apiVersion": f"{GROUP}/{VERSION}",
                         "metadata": {}, "items": []}
        if path.startswith(base + "/") and len(parts) in (2, 4):
            return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "message": f'{parts[-2]} "{parts[-1]}" not found',
                         "reason": "NotFound", "code": 404,
                         "details": {"name": parts[-1], "group": GROUP, "kind": parts[-2]}}
        return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                     "message": "the server could not find the requested resource",
                     "reason": "NotFound", "code": 404}
