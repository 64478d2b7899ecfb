"""A small HTTPS admission webhook server on loopback for the e2e tests: a thread serving
``http.server`` over TLS with a certificate of its own CA (for ``127.0.0.1``, ``localhost``
and any Service DNS names asked), each path answered by a Python function of the
AdmissionReview, every review received kept for the test to read."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: a path's answer: the response part of the review (``uid`` filled in), from the request
Handler = Callable[[dict[str, Any]], dict[str, Any]]


def _pki(dns_names: list[str]) -> tuple[bytes, bytes, bytes]:
    """(CA PEM, server certificate PEM, server key PEM)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook-test-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(
              digital_signature=True, key_cert_sign=True, crl_sign=True,
              content_commitment=False, key_encipherment=False, data_encipherment=False,
              key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName("localhost"),
                                     x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    names += [x509.DNSName(n) for n in dns_names]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return (ca.public_bytes(serialization.Encoding.PEM),
            cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def allow(request: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True}


def deny(message: str, code: int = 403) -> Handler:
    def handler(request: dict[str, Any]) -> dict[str, Any]:
        return {"allowed": False, "status": {"code": code, "message": message}}
    return handler


def patch(ops: list[dict[str, Any]]) -> Handler:
    """Allow, with a JSONPatch."""
    encoded = base64.b64encode(json.dumps(ops).encode()).decode()

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        return {"allowed": True, "patchType": "JSONPatch", "patch": encoded}
    return handler


class WebhookServer:
    """Start with ``start()``; ``handlers[path]`` answers ``POST path``; ``reviews[path]``
    holds what was received; ``delay[path]`` seconds are slept before answering."""

    def __init__(self, dns_names: list[str] | None = None) -> None:
        self.ca_pem, cert, key = _pki(dns_names or [])
        self.handlers: dict[str, Handler] = {}
        self.reviews: dict[str, list[dict[str, Any]]] = {}
        self.delay: dict[str, float] = {}
        self._tmp = tempfile.TemporaryDirectory()
        cert_file, key_file = Path(self._tmp.name, "tls.crt"), Path(self._tmp.name, "tls.key")
        cert_file.write_bytes(cert)
        key_file.write_bytes(key)
        self._ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ctx.load_cert_chain(cert_file, key_file)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.socket = self._ctx.wrap_socket(self._httpd.socket, server_side=True)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_pem).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def client_config(self, path: str) -> dict[str, Any]:
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._tmp.cleanup()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.reviews.setdefault(path, []).append(body)
                time.sleep(outer.delay.get(path, 0))
                handler = outer.handlers.get(path)
                if handler is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                response = dict(handler(body["request"]))
                response["uid"] = body["request"]["uid"]
                data = json.dumps({"apiVersion": "admission.k8s.io/v1",
                                   "kind": "AdmissionReview", "response": response}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass

        return _Handler
