"""RestClient against a small in-process aiohttp API server (TLS, auth, errors, watch,
discovery, gzip), plus kubectl and the official client reading a written kubeconfig."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions, ListOptions, PatchType, WatchOptions
from kubegc.client.kubeconfig import RestConfig, load_kubeconfig, write_kubeconfig
from kubegc.client.rest import RestClient

from .certs import Pki

PODS = GroupVersionResource("", "v1", "pods")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
TOKEN = "s3cret"

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-kubegc", "gitCommit": "abc",
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23",
           "compiler": "gc", "platform": "linux/amd64"}


def resource_list(gv: str, *entries: tuple[str, str, bool]) -> dict[str, Any]:
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
        {"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
         "verbs": ["get", "list", "watch"], **({"shortNames": ["po"]} if name == "pods" else {})}
        for name, kind, namespaced in entries]}


DISCOVERY: dict[str, Any] = {
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/api/v1": resource_list("v1", ("pods", "Pod", True), ("pods/status", "Pod", True),
                             ("namespaces", "Namespace", False)),
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "apps", "versions": [{"groupVersion": "apps/v1beta1", "version": "v1beta1"},
                                      {"groupVersion": "apps/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}},
        {"name": "metrics.k8s.io", "versions": [
            {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
         "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}},
    ]},
    "/apis/apps/v1": resource_list("apps/v1", ("deployments", "Deployment", True)),
    "/apis/apps/v1beta1": resource_list("apps/v1beta1", ("deployments", "Deployment", True)),
}


def status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Failure", "message": message, "reason": reason,
                              "code": code}, status=code)


def line(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode() + b"\n"


BIG = line({"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {
    "name": "big", "resourceVersion": "5"}, "data": "x" * 300_000}})
SMALL = line({"type": "MODIFIED", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {
    "name": "small", "resourceVersion": "6"}}})
EXPIRED = line({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "code": 410,
                                            "reason": "Expired", "status": "Failure",
                                            "message": "too old resource version: 1 (4)"}})
#: An event type no server sends today: skipped with a warning, as client-go's reflector does.
UNKNOWN = line({"type": "TELEPORTED", "object": {"metadata": {"name": "elsewhere"}}})
#: The watch body, cut at awkward places: mid-line, mid-UTF-8-free JSON, blank keep-alive line.
WATCH_PIECES = [BIG[:7], BIG[7:150_000], BIG[150_000:-2], BIG[-2:] + SMALL[:9], SMALL[9:],
                b"\n", UNKNOWN, EXPIRED[:-1], EXPIRED[-1:]]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    client_cn: str | None


class FakeApiServer:
    """Answers discovery, echoes resource requests, streams a watch; records every request."""

    def __init__(self, *, token: str | None = None) -> None:
        self.token = token
        self.seen: list[Seen] = []
        self.compressed = False
        self.app = web.Application(middlewares=[self._record_and_authenticate])
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.runner = web.AppRunner(self.app)

    async def start(self, ssl_context: ssl.SSLContext | None = None) -> str:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=ssl_context)
        await site.start()
        port = self.runner.addresses[0][1]
        return f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]

    @web.middleware
    async def _record_and_authenticate(
        self, request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        raw = await request.read()
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        cn = dict(x[0] for x in peer["subject"]).get("commonName") if peer else None
        self.seen.append(Seen(request.method, request.path, dict(request.query),
                              dict(request.headers), json.loads(raw) if raw else None, cn))
        bearer = request.headers.get("Authorization") == f"Bearer {self.token}"
        authorized = cn is not None or bearer
        if self.token is not None and not authorized:
            return status(401, "Unauthorized", "Unauthorized")
        return await handler(request)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in ("/version", "/version/"):  # the official client asks with the slash
            return web.json_response(VERSION)
        if path in DISCOVERY:
            return web.json_response(DISCOVERY[path])
        if path.startswith("/apis/metrics.k8s.io"):
            return web.Response(status=503, text="service unavailable")
        if request.query.get("watch") == "true":
            return await self._watch(request)
        name = path.rsplit("/", 1)[-1]
        if name == "missing":
            return status(404, "NotFound", 'pods "missing" not found')
        if name == "broken":
            return web.Response(status=500, text="<html>oops</html>", content_type="text/html")
        if name == "teapot":
            return web.Response(status=418)
        if name == "forbidden-watch":
            return status(403, "Forbidden", "no")
        if request.method == "POST" and (self.seen[-1].body or {}).get("metadata", {}).get(
                "name") == "taken":
            return web.Response(status=409, text="conflict")
        echo = {"method": request.method, "path": path, "query": dict(request.query),
                "contentType": request.headers.get("Content-Type"), "body": self.seen[-1].body}
        response = web.json_response({"kind": "Echo", "apiVersion": "v1", "echo": echo})
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            response.enable_compression(web.ContentCoding.gzip)
            self.compressed = True
        return response

    async def _watch(self, request: web.Request) -> web.StreamResponse:
        if "/forbidden-watch/" in request.path:
            return status(403, "Forbidden", 'pods is forbidden: User "x" cannot watch')
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for piece in WATCH_PIECES:
            await response.write(piece)
        await response.write_eof()
        return response


def server_tls(pki: Pki, tmp: Path) -> ssl.SSLContext:
    (tmp / "srv.crt").write_bytes(pki.server_cert_pem)
    (tmp / "srv.key").write_bytes(pki.server_key_pem)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp / "srv.crt", tmp / "srv.key")
    ctx.load_verify_locations(cadata=pki.ca_pem.decode())
    ctx.verify_mode = ssl.CERT_OPTIONAL  # client certificates are checked when offered
    return ctx


@pytest.fixture
async def http() -> AsyncIterator[tuple[FakeApiServer, RestClient]]:
    server = FakeApiServer()
    url = await server.start()
    client = RestClient(RestConfig(server=url))
    yield server, client
    await client.close()
    await server.runner.cleanup()


@pytest.fixture
async def https(pki: Pki, tmp_path: Path) -> AsyncIterator[tuple[FakeApiServer, str]]:
    server = FakeApiServer(token=TOKEN)
    url = await server.start(server_tls(pki, tmp_path))
    yield server, url
    await server.runner.cleanup()


Call = Callable[[RestClient], Awaitable[Any]]


@pytest.mark.parametrize(
    ("call", "method", "path", "query", "content_type", "body"),
    [
        pytest.param(lambda c: c.get(PODS, "a", namespace="ns1"),
                     "GET", "/api/v1/namespaces/ns1/pods/a", {}, None, None, id="get-namespaced"),
        pytest.param(lambda c: c.get(NAMESPACES, "ns1", namespace="ignored"),
                     "GET", "/api/v1/namespaces/ns1", {}, None, None, id="get-cluster-scoped"),
        pytest.param(lambda c: c.list(DEPLOYMENTS),
                     "GET", "/apis/apps/v1/deployments", {}, None, None, id="list-all-namespaces"),
        pytest.param(lambda c: c.list(PODS, namespace="ns1", options=ListOptions(
            label_selector="app=web", field_selector="metadata.name=a", limit=500,
            continue_="tok", resource_version="0")),
                     "GET", "/api/v1/namespaces/ns1/pods",
                     {"labelSelector": "app=web", "fieldSelector": "metadata.name=a",
                      "limit": "500", "continue": "tok", "resourceVersion": "0"}, None, None,
                     id="list-options"),
        pytest.param(lambda c: c.create(PODS, {"metadata": {"name": "a", "namespace": "ns1"}}),
                     "POST", "/api/v1/namespaces/ns1/pods", {}, "application/json",
                     {"metadata": {"name": "a", "namespace": "ns1"}}, id="create-ns-from-object"),
        pytest.param(lambda c: c.update(PODS, {"metadata": {"name": "a"}, "status": {}},
                                        namespace="ns1", subresource="status"),
                     "PUT", "/api/v1/namespaces/ns1/pods/a/status", {}, "application/json",
                     {"metadata": {"name": "a"}, "status": {}}, id="update-subresource"),
        pytest.param(lambda c: c.patch(DEPLOYMENTS, "d", {"spec": {}}, namespace="ns1"),
                     "PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d", {},
                     "application/merge-patch+json", {"spec": {}}, id="patch-merge"),
        pytest.param(lambda c: c.patch(DEPLOYMENTS, "d", [{"op": "remove", "path": "/x"}],
                                       namespace="ns1", patch_type=PatchType.JSON),
                     "PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d", {},
                     "application/json-patch+json", [{"op": "remove", "path": "/x"}],
                     id="patch-json"),
        pytest.param(lambda c: c.patch(DEPLOYMENTS, "d", {"kind": "Deployment"},
                                       namespace="ns1", patch_type=PatchType.APPLY,
                                       field_manager="kubegc", force=True),
                     "PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d",
                     {"fieldManager": "kubegc", "force": "true"},
                     "application/apply-patch+yaml", {"kind": "Deployment"}, id="patch-apply"),
        pytest.param(lambda c: c.delete(PODS, "a", namespace="ns1", options=DeleteOptions(
            propagation_policy="Foreground", preconditions_uid="u1")),
                     "DELETE", "/api/v1/namespaces/ns1/pods/a", {}, "application/json",
                     {"kind": "DeleteOptions", "apiVersion": "v1",
                      "propagationPolicy": "Foreground", "preconditions": {"uid": "u1"}},
                     id="delete-with-options"),
        pytest.param(lambda c: c.delete_collection(
            PODS, namespace="ns1", options=DeleteOptions(propagation_policy="Background"),
            list_options=ListOptions(label_selector="app=web")),
                     "DELETE", "/api/v1/namespaces/ns1/pods", {"labelSelector": "app=web"},
                     "application/json",
                     {"kind": "DeleteOptions", "apiVersion": "v1",
                      "propagationPolicy": "Background"}, id="delete-collection"),
    ],
)
async def test_requests_have_kubernetes_paths_and_bodies(
    http: Any, call: Call, method: str, path: str, query: dict[str, str],
    content_type: str | None, body: Any,
) -> None:
    _, client = http
    reply = await call(client)
    assert reply["echo"] == {"method": method, "path": path, "query": query,
                             "contentType": content_type, "body": body}


async def test_scope_discovery_is_fetched_once_per_group_version(http: Any) -> None:
    server, client = http
    await client.get(PODS, "a", namespace="ns1")
    await client.get(PODS, "b", namespace="ns1")
    await client.get(NAMESPACES, "ns1")
    assert server.paths() == ["/api/v1", "/api/v1/namespaces/ns1/pods/a",
                              "/api/v1/namespaces/ns1/pods/b", "/api/v1/namespaces/ns1"]
    assert server.seen[1].headers["Accept"] == "application/json"
    assert server.seen[1].headers["User-Agent"].startswith("kubegc/")


async def test_unknown_resource_is_not_found_without_a_request(http: Any) -> None:
    server, client = http
    with pytest.raises(StatusError) as err:
        await client.get(GroupVersionResource("apps", "v1", "widgets"), "w", namespace="ns1")
    assert (err.value.code, err.value.reason) == (404, "NotFound")
    assert err.value.message == "the server could not find the requested resource"
    assert server.paths() == ["/apis/apps/v1"]


async def test_discovery_is_legacy_and_skips_failing_group_versions(http: Any) -> None:
    server, client = http
    found = await client.discover()
    assert [(r.group, r.version, r.resource, r.namespaced) for r in found] == [
        ("", "v1", "pods", True),
        ("", "v1", "namespaces", False),
        ("apps", "v1", "deployments", True),  # preferred version first
        ("apps", "v1beta1", "deployments", True),
    ]
    assert found[0].short_names == ("po",) and found[0].kind == "Pod"
    assert client.failed_group_versions == ["metrics.k8s.io/v1beta1"]
    assert set(server.paths()) == {"/api", "/apis", "/api/v1", "/apis/apps/v1",
                                   "/apis/apps/v1beta1", "/apis/metrics.k8s.io/v1beta1"}


@pytest.mark.parametrize(
    ("call", "code", "reason", "message"),
    [
        pytest.param(lambda c: c.get(PODS, "missing", namespace="ns1"), 404, "NotFound",
                     'pods "missing" not found', id="status-body"),
        pytest.param(lambda c: c.get(PODS, "broken", namespace="ns1"), 500, "InternalError",
                     'an error on the server ("<html>oops</html>") has prevented the request '
                     "from succeeding (get pods broken)", id="html-500"),
        pytest.param(lambda c: c.get(PODS, "teapot", namespace="ns1"), 418, "",
                     "the server responded with the status code 418 but did not return more "
                     "information (get pods teapot)", id="unknown-code"),
        pytest.param(lambda c: c.create(DEPLOYMENTS, {"metadata": {"name": "taken"}},
                                        namespace="ns1"), 409, "AlreadyExists",
                     "the server reported a conflict (post deployments.apps)",
                     id="plain-409-on-post"),
        pytest.param(lambda c: c.version(), None, None, None, id="no-error"),
    ],
)
async def test_errors_become_status_errors(http: Any, call: Call, code: int | None,
                                           reason: str | None, message: str | None) -> None:
    _, client = http
    if code is None:
        assert (await call(client))["gitVersion"] == "v1.32.0-kubegc"
        return
    with pytest.raises(StatusError) as err:
        await call(client)
    assert (err.value.code, err.value.reason, err.value.message) == (code, reason, message)


async def test_watch_streams_events_across_partial_chunks(http: Any) -> None:
    server, client = http
    options = WatchOptions(resource_version="4", allow_bookmarks=True, timeout_seconds=300,
                           label_selector="app=web")
    events = [e async for e in client.watch(PODS, namespace="ns1", options=options)]
    assert [(e.type, e.object.get("metadata", {}).get("name")) for e in events] == [
        ("ADDED", "big"), ("MODIFIED", "small"), ("ERROR", None)]
    assert len(events[0].object["data"]) == 300_000
    assert (events[2].object["code"], events[2].object["reason"]) == (410, "Expired")
    watch = server.seen[-1]
    assert watch.path == "/api/v1/namespaces/ns1/pods"
    assert watch.query == {"watch": "true", "resourceVersion": "4", "allowWatchBookmarks": "true",
                           "timeoutSeconds": "300", "labelSelector": "app=web"}


async def test_watch_skips_an_event_type_it_does_not_know(
        http: Any, caplog: pytest.LogCaptureFixture) -> None:
    _, client = http
    events = [e async for e in client.watch(PODS, namespace="ns1")]
    assert "TELEPORTED" not in [e.type for e in events]
    assert "/api/v1/namespaces/ns1/pods: unable to understand watch event 'TELEPORTED'" in (
        caplog.text)


async def test_watch_refused_by_the_server_raises(http: Any) -> None:
    _, client = http
    with pytest.raises(StatusError) as err:
        async for _ in client.watch(PODS, namespace="forbidden-watch"):
            pass
    assert err.value.code == 403


async def test_gzip_responses_are_decoded(http: Any) -> None:
    server, client = http
    reply = await client.list(PODS, namespace="ns1")
    assert reply["echo"]["path"] == "/api/v1/namespaces/ns1/pods"
    assert "gzip" in server.seen[-1].headers["Accept-Encoding"]
    assert server.compressed


async def test_session_is_lazy_and_reopens_after_close(http: Any) -> None:
    _, client = http
    await client.version()
    await client.close()
    assert (await client.version())["major"] == "1"


async def test_tls_with_custom_ca_and_bearer_token(https: Any, pki: Pki, tmp_path: Path) -> None:
    server, url = https
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server=url, ca_data=pki.ca_pem, token=TOKEN, insecure=False)
    async with RestClient(load_kubeconfig(str(path))) as client:
        assert (await client.get(PODS, "a", namespace="ns1"))["echo"]["method"] == "GET"
    assert server.seen[-1].headers["Authorization"] == f"Bearer {TOKEN}"
    assert server.seen[-1].client_cn is None


async def test_tls_wrong_token_is_unauthorized(https: Any, pki: Pki, tmp_path: Path) -> None:
    _, url = https
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server=url, ca_data=pki.ca_pem, token="wrong", insecure=False)
    async with RestClient(load_kubeconfig(str(path))) as client:
        with pytest.raises(StatusError) as err:
            await client.version()
    assert (err.value.code, err.value.reason) == (401, "Unauthorized")


async def test_tls_unknown_ca_fails_and_insecure_skips_verification(https: Any,
                                                                   tmp_path: Path) -> None:
    _, url = https
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server=url, ca_data=None, token=TOKEN, insecure=False)
    async with RestClient(load_kubeconfig(str(path))) as client:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await client.version()
    write_kubeconfig(str(path), server=url, ca_data=None, token=TOKEN, insecure=True)
    async with RestClient(load_kubeconfig(str(path))) as client:
        assert (await client.version())["major"] == "1"


async def test_tls_client_certificate_authenticates(https: Any, pki: Pki) -> None:
    server, url = https
    ca = base64.b64encode(pki.ca_pem).decode()
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "x",
           "clusters": [{"name": "x",
                         "cluster": {"server": url, "certificate-authority-data": ca}}],
           "users": [{"name": "x", "user": {
               "client-certificate-data": base64.b64encode(pki.client_cert_pem).decode(),
               "client-key-data": base64.b64encode(pki.client_key_pem).decode()}}],
           "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kubeconfig"
        path.write_text(json.dumps(doc))  # JSON is YAML
        config = load_kubeconfig(str(path))
    async with RestClient(config) as client:
        await client.version()
    assert server.seen[-1].client_cn == "admin"
    assert "Authorization" not in server.seen[-1].headers


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
async def test_kubectl_talks_to_the_server_with_a_written_kubeconfig(
        https: Any, pki: Pki, tmp_path: Path) -> None:
    server, url = https
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server=url, ca_data=pki.ca_pem, token=TOKEN, insecure=False)
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(path), "--cache-dir", str(tmp_path / "cache"),
        "get", "--raw", "/api/v1/namespaces/ns1/pods/a",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out)["echo"]["path"] == "/api/v1/namespaces/ns1/pods/a"
    assert server.seen[-1].headers["Authorization"] == f"Bearer {TOKEN}"


async def test_official_python_client_talks_to_the_server(https: Any, pki: Pki,
                                                          tmp_path: Path) -> None:
    from kubernetes import client, config

    server, url = https
    path = tmp_path / "kubeconfig"
    write_kubeconfig(str(path), server=url, ca_data=pki.ca_pem, token=TOKEN, insecure=False)

    def get_version() -> str:
        cfg = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=cfg)
        with client.ApiClient(cfg) as api:
            return str(client.VersionApi(api).get_code().git_version)

    assert await asyncio.to_thread(get_version) == "v1.32.0-kubegc"
    assert server.seen[-1].headers["Authorization"] == f"Bearer {TOKEN}"
