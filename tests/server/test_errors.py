"""Bad requests get a Kubernetes ``Status`` with upstream's code and reason — never a 500,
never a dead server, never a half-written object."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from kubegc.testing import Cluster


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session:
        yield session, cluster.url


CM = "/api/v1/namespaces/default/configmaps"

JSON = {"Content-Type": "application/json"}

CASES: list[Any] = [
    pytest.param("POST", CM, b"{not json", JSON, 400, "BadRequest", id="malformed-json"),
    pytest.param("POST", CM, b"[1,2]", JSON, 400, "BadRequest", id="body-not-object"),
    pytest.param("POST", CM, b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"}}', JSON,
                 400, "BadRequest", id="kind-mismatch"),
    pytest.param("POST", "/api/v1/namespaces/default/nopes", b"{}", JSON, 404, "NotFound",
                 id="unknown-resource"),
    pytest.param("GET", "/apis/nope.io/v1/things", None, {}, 404, "NotFound",
                 id="unknown-group"),
    pytest.param("GET", CM + "?labelSelector=a%20in%20(", None, {}, 400, "BadRequest",
                 id="bad-label-selector"),
    pytest.param("GET", CM + "?fieldSelector=spec.nope%3D1", None, {}, 400, "BadRequest",
                 id="unsupported-field-selector"),
    pytest.param("GET", CM + "?limit=abc", None, {}, 400, "BadRequest", id="bad-limit"),
    pytest.param("POST", CM, b"x: [", {"Content-Type": "application/yaml"}, 400, "BadRequest",
                 id="malformed-yaml"),
    pytest.param("POST", CM, b"{}", {"Content-Type": "application/x-nope"}, 415,
                 "UnsupportedMediaType", id="unknown-content-type"),
    pytest.param("POST", CM, b"k8s\x00\x0a\x02", {
        "Content-Type": "application/vnd.kubernetes.protobuf"}, 400, "BadRequest",
                 id="truncated-protobuf"),
    pytest.param("PATCH", CM + "/missing", b"{}", {
        "Content-Type": "application/merge-patch+json"}, 404, "NotFound", id="patch-missing"),
    pytest.param("PATCH", CM + "/missing", b"{}", {"Content-Type": "text/nope"}, 415,
                 "UnsupportedMediaType", id="patch-unknown-type"),
    pytest.param("DELETE", CM + "/missing", b"{oops", JSON, 400, "BadRequest",
                 id="delete-bad-options"),
    pytest.param("PUT", "/api/v1/namespaces/default/pods", b"{}", JSON, 405, "MethodNotAllowed",
                 id="put-collection"),
    pytest.param("POST", CM, b'{"metadata":{"name":"' + b"x" * 4 * 1024 * 1024 + b'"}}', JSON,
                 413, "RequestEntityTooLarge", id="too-large"),
    pytest.param("POST", CM, b"{}", {"Content-Type": "application/octet-stream"}, 415,
                 "UnsupportedMediaType", id="octet-stream"),
    pytest.param("GET", "/totally/unknown", None, {}, 404, "NotFound", id="unknown-path"),
]


@pytest.mark.parametrize(("method", "path", "body", "headers", "code", "reason"), CASES)
async def test_bad_requests_get_a_status(http: tuple[aiohttp.ClientSession, str], method: str,
                                         path: str, body: bytes | None,
                                         headers: dict[str, str], code: int,
                                         reason: str) -> None:
    session, url = http
    async with session.request(method, url + path, data=body, headers=headers) as resp:
        status = orjson.loads(await resp.read())
        assert (resp.status, status["kind"], status["status"], status["reason"], status["code"]) \
            == (code, "Status", "Failure", reason, code)
        assert status["message"]
    async with session.get(url + "/readyz") as alive:
        assert alive.status == 200
    async with session.get(url + CM) as listed:
        assert orjson.loads(await listed.read())["items"] == []  # nothing half-written
