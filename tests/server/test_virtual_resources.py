"""Resources that are not stored: ``componentstatuses`` (read-only, computed) and
``bindings`` / ``pods/binding`` (create-only: they bind a pod to a node)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from kubegc.testing import Cluster

JSON = {"Content-Type": "application/json"}
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session:
        yield session, cluster.url


async def call(http: tuple[aiohttp.ClientSession, str], method: str, path: str,
               body: Any = None) -> tuple[int, Any, aiohttp.ClientResponse]:
    session, url = http
    data = None if body is None else orjson.dumps(body)
    async with session.request(method, url + path, data=data, headers=JSON) as resp:
        return resp.status, orjson.loads(await resp.read()), resp


async def test_component_statuses_are_listed_and_read(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, listed, resp = await call(http, "GET", "/api/v1/componentstatuses")
    assert status == 200 and listed["kind"] == "ComponentStatusList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["controller-manager",
                                                                "scheduler"]
    assert resp.headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'
    status, one, _ = await call(http, "GET", "/api/v1/componentstatuses/scheduler")
    assert status == 200 and one["conditions"] == [
        {"type": "Healthy", "status": "True", "message": "ok"}]
    status, missing, _ = await call(http, "GET", "/api/v1/componentstatuses/etcd-9")
    assert (status, missing["reason"]) == (404, "NotFound")


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/api/v1/componentstatuses"), ("DELETE", "/api/v1/componentstatuses/scheduler"),
    ("GET", "/api/v1/componentstatuses?watch=true"),
])
async def test_component_statuses_cannot_be_written_or_watched(
        http: tuple[aiohttp.ClientSession, str], method: str, path: str) -> None:
    status, body, _ = await call(http, method, path, {} if method == "POST" else None)
    assert (status, body["reason"]) == (405, "MethodNotAllowed")


async def _pod(http: tuple[aiohttp.ClientSession, str], name: str) -> dict[str, Any]:
    status, pod, _ = await call(http, "POST", PODS, {
        "metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert status == 201
    return pod  # type: ignore[no-any-return]


async def test_a_binding_assigns_the_pod_to_its_node(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    await _pod(http, "p")
    binding = {"apiVersion": "v1", "kind": "Binding",
               "metadata": {"name": "p", "annotations": {"a": "b"}},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    status, body, _ = await call(http, "POST", "/api/v1/namespaces/default/bindings", binding)
    assert (status, body) == (201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Success", "code": 201})
    _, pod, _ = await call(http, "GET", PODS + "/p")
    assert pod["spec"]["nodeName"] == "node-1"
    assert pod["metadata"]["annotations"] == {"a": "b"}
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]
    status, body, _ = await call(http, "POST", PODS + "/p/binding", binding)
    assert status == 409
    assert body["message"] == ('Operation cannot be fulfilled on pods/binding "p": pod p is '
                               'already assigned to node "node-1"')


@pytest.mark.parametrize(("path", "body", "code", "message"), [
    pytest.param(PODS + "/q/binding", {"metadata": {"name": "other"},
                                       "target": {"name": "n"}}, 400,
                 "name in URL does not match name in Binding object", id="name-mismatch"),
    pytest.param(PODS + "/q/binding", {"target": {"kind": "Pod", "name": "n"}}, 422,
                 'Binding "q" is invalid: target.kind: Unsupported value: "Pod": supported '
                 'values: "Node"', id="not-a-node"),
    pytest.param(PODS + "/nope/binding", {"target": {"name": "n"}}, 404,
                 'pods "nope" not found', id="no-pod"),
    pytest.param(PODS + "/q/binding", {"metadata": {"uid": "other"}, "target": {"name": "n"}},
                 409, "Precondition failed: uid in precondition: other", id="uid"),
])
async def test_a_bad_binding_binds_nothing(http: tuple[aiohttp.ClientSession, str], path: str,
                                           body: dict[str, Any], code: int,
                                           message: str) -> None:
    await _pod(http, "q")
    status, answer, _ = await call(http, "POST", path, body)
    assert status == code and message in answer["message"]
    _, pod, _ = await call(http, "GET", PODS + "/q")
    assert "nodeName" not in pod["spec"]
