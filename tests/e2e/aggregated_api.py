"""A tiny aggregated API server for tests: HTTPS on loopback with a self-signed
certificate, serving ``metrics.example.io/v1beta1`` as metrics-server serves
metrics.k8s.io: ``podmetrics`` (namespaced, get/list) and ``widgets`` (namespaced,
get/list/watch/delete; ``add_widget`` adds one and sends its ADDED event to the watches
of its namespace and of all namespaces, ``delete_widget`` its DELETED event,
``end_watches`` ends them, ``watches_in`` counts those open), with its OpenAPI v2 and v3
(the Widget's schema). It records the requestheader
user of each request and can be stopped and started again on the same port (a backend
going down and back).

Given the ``extension-apiserver-authentication`` ConfigMap's data (``trust``), it
authenticates as a real aggregated server (k8s.io/apiserver's requestheader authenticator)
does: the requestheader headers named there are believed only from a client certificate
verified against ``requestheader-client-ca-file`` whose common name is one of
``requestheader-allowed-names``; any other request is refused 401.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime
import ipaddress
import json
import queue
import select
import socket
import ssl
import tempfile
import threading
import uuid
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
     "verbs": ["delete", "get", "list", "watch"]},
]
#: the Widget's schema, as the backend's OpenAPI (v2 and v3) gives it
WIDGET = "io.example.metrics.v1beta1.Widget"
WIDGET_SCHEMA = {
    "type": "object", "description": "A Widget is what the test backend serves.",
    "properties": {
        "apiVersion": {"type": "string", "description": "APIVersion of the object."},
        "kind": {"type": "string", "description": "Kind of the object."},
        "metadata": {"type": "object", "description": "Standard object's metadata."},
        "spec": {"type": "object", "description": "What the widget should be.",
                 "properties": {"size": {"type": "integer",
                                         "description": "How big the widget is."}}}},
    "x-kubernetes-group-version-kind": [{"group": GROUP, "version": VERSION,
                                         "kind": "Widget"}]}
_GVK = {"group": GROUP, "version": VERSION, "kind": "Widget"}
_WIDGET_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/widgets/{{name}}"
OPENAPI = {
    "/openapi/v2": {
        "swagger": "2.0", "info": {"title": "metrics-api", "version": "v0.1"},
        "paths": {_WIDGET_PATH: {"get": {
            "operationId": "readWidget", "produces": ["application/json"],
            "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": _GVK,
            "responses": {"200": {"description": "OK",
                                  "schema": {"$ref": f"#/definitions/{WIDGET}"}}}}}},
        "definitions": {WIDGET: WIDGET_SCHEMA}},
    "/openapi/v3": {"paths": {f"apis/{GROUP}/{VERSION}": {
        "serverRelativeURL": f"/openapi/v3/apis/{GROUP}/{VERSION}?hash=1"}}},
    f"/openapi/v3/apis/{GROUP}/{VERSION}": {
        "openapi": "3.0.0", "info": {"title": "metrics-api", "version": "v0.1"},
        "paths": {_WIDGET_PATH: {"get": {
            "operationId": "readWidget", "x-kubernetes-action": "get",
            "x-kubernetes-group-version-kind": _GVK, "responses": {"200": {
                "description": "OK", "content": {"application/json": {"schema": {
                    "$ref": f"#/components/schemas/{WIDGET}"}}}}}}}},
        "components": {"schemas": {WIDGET: WIDGET_SCHEMA}}},
}


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
    def __init__(self, port: int, dns_name: str = "metrics-api.metrics.svc",
                 trust: dict[str, str] | None = None) -> None:
        self.port = port
        self.trust = trust
        self.openapi = copy.deepcopy(OPENAPI)
        self.directory = Path(tempfile.mkdtemp(prefix="aggregated-api-"))
        self.cert_file, self.key_file, self.cert_pem = self_signed(self.directory, dns_name)
        self.requests: list[dict[str, Any]] = []
        self.widgets: dict[tuple[str, str], dict[str, Any]] = {}
        #: the open watches: (namespace, or "" for all, their events)
        self._watchers: list[tuple[str, queue.Queue[dict[str, Any] | None]]] = []
        self._lock = threading.Lock()
        self._connections: set[Any] = set()  # open keep-alive connections, closed by stop
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.cert_pem).decode()

    def watches_in(self, namespace: str) -> int:
        """The open watches of ``namespace`` ("": of all namespaces)."""
        with self._lock:
            return sum(1 for ns, _ in self._watchers if ns == namespace)

    def add_widget(self, namespace: str, name: str) -> dict[str, Any]:
        widget = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
                  "metadata": {"name": name, "namespace": namespace,
                               "uid": str(uuid.uuid4())}}
        with self._lock:
            self.widgets[(namespace, name)] = widget
        self._send(namespace, {"type": "ADDED", "object": widget})
        return widget

    def delete_widget(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            widget = self.widgets.pop((namespace, name), None)
        if widget is not None:
            self._send(namespace, {"type": "DELETED", "object": widget})
        return widget

    def _send(self, namespace: str, event: dict[str, Any]) -> None:
        with self._lock:
            for ns, watcher in self._watchers:
                if ns in ("", namespace):
                    watcher.put(event)

    def end_watches(self) -> None:
        with self._lock:
            for _, watcher in self._watchers:
                watcher.put(None)

    def start(self) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with api._lock:
                    api._connections.add(self.connection)

            def finish(self) -> None:
                with api._lock:
                    api._connections.discard(self.connection)
                super().finish()

            def do_GET(self) -> None:
                proxy = api.front_proxy(self.connection)
                api.requests.append({"path": self.path, "front_proxy": proxy,
                                     "user": self.headers.get("X-Remote-User"),
                                     "groups": self.headers.get_all("X-Remote-Group") or [],
                                     "authorization": self.headers.get("Authorization")})
                path, _, query = self.path.partition("?")
                if api.trust is not None and proxy is None:
                    api.reply(self, 401, {"kind": "Status", "apiVersion": "v1",
                                          "status": "Failure", "message": "Unauthorized",
                                          "reason": "Unauthorized", "code": 401})
                    return
                if "watch=true" in query.split("&"):
                    api.serve_watch(self, path)
                    return
                api.reply(self, *api.answer(path))

            def do_DELETE(self) -> None:
                proxy = api.front_proxy(self.connection)
                api.requests.append({"path": self.path, "front_proxy": proxy,
                                     "method": "DELETE",
                                     "user": self.headers.get("X-Remote-User")})
                parts = self.path.partition("?")[0].split("/")
                if api.trust is not None and proxy is None:
                    api.reply(self, 401, {"kind": "Status", "code": 401})
                    return
                if len(parts) == 8 and api.delete_widget(parts[5], parts[7]) is not None:
                    api.reply(self, 200, {"kind": "Status", "apiVersion": "v1",
                                          "status": "Success", "code": 200})
                    return
                api.reply(self, *api.answer(self.path.partition("?")[0]))

        ThreadingHTTPServer.allow_reuse_address = True
        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        if self.trust is not None:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(cadata=self.trust["requestheader-client-ca-file"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.end_watches()
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def front_proxy(self, connection: Any) -> str | None:
        """The common name of the verified front-proxy certificate, if allowed."""
        if self.trust is None:
            return None
        subject = dict(pair[0] for pair in (connection.getpeercert() or {}).get("subject", ()))
        name = subject.get("commonName")
        allowed = json.loads(self.trust.get("requestheader-allowed-names") or "[]")
        return name if name is not None and (not allowed or name in allowed) else None

    @staticmethod
    def reply(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def serve_watch(self, handler: BaseHTTPRequestHandler, path: str) -> None:
        """A chunked stream of the widgets' events until ``end_watches`` or the client's
        disconnect (seen as a readable socket that reads nothing)."""
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        namespace = path.split("/namespaces/")[1].split("/")[0] if "/namespaces/" in path else ""
        with self._lock:
            for (ns, _), widget in self.widgets.items():
                if namespace in ("", ns):
                    events.put({"type": "ADDED", "object": widget})
            self._watchers.append((namespace, events))
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.flush()
        try:
            while True:
                try:
                    event = events.get(timeout=0.05)
                except queue.Empty:
                    if _gone(handler.connection):
                        return
                    continue
                if event is None:
                    handler.wfile.write(b"0\r\n\r\n")
                    return
                data = json.dumps(event).encode() + b"\n"
                handler.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
                handler.wfile.flush()
        except OSError:
            return
        finally:
            handler.close_connection = True
            with self._lock:
                self._watchers.remove((namespace, events))

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        if path in self.openapi:
            return 200, self.openapi[path]
        base = f"/apis/{GROUP}/{VERSION}"
        if path == base:
            return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                         "groupVersion": f"{GROUP}/{VERSION}", "resources": RESOURCES}
        parts = path[len(base):].strip("/").split("/")
        if path.startswith(base + "/") and len(parts) in (1, 3) and parts[-1] in (
                "podmetrics", "widgets"):
            kind = "PodMetricsList" if parts[-1] == "podmetrics" else "WidgetList"
            items = [w for (ns, _), w in self.widgets.items()
                     if parts[-1] == "widgets" and (len(parts) == 1 or ns == parts[1])]
            return 200, {"kind": kind, "apiVersion": f"{GROUP}/{VERSION}",
                         "metadata": {}, "items": items}
        if path.startswith(base + "/") and len(parts) == 4 and (parts[1], parts[3]) in (
                self.widgets):
            return 200, self.widgets[(parts[1], parts[3])]
        if path.startswith(base + "/") and len(parts) in (2, 4):
            return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "message": f'{parts[-2]} "{parts[-1]}" not found',
                         "reason": "NotFound", "code": 404,
                         "details": {"name": parts[-1], "group": GROUP, "kind": parts[-2]}}
        return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                     "message": "the server could not find the requested resource",
                     "reason": "NotFound", "code": 404}


def _gone(connection: Any) -> bool:
    """Whether the client closed the connection: readable, yet nothing to read."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    connection.settimeout(0.01)
    try:
        return not connection.recv(1)
    except (TimeoutError, ssl.SSLWantReadError):
        return False
    except OSError:
        return True
    finally:
        connection.settimeout(None)
