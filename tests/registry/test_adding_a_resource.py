"""Adding a resource is one storage module plus one registration line, and a subresource
the same (docs/architecture.md, "How to add..."): the worked example.

The storages below stand where a new module under ``kubegc/registry/groups/<group>/`` would;
``registry.install`` stands for the registration line in that group's ``resources()``.
Everything else — the routes the server answers (404 for a path no interface serves, 405
for a method), discovery's verbs and subresources, OpenAPI's operations, the authorizer's
verb — follows from the interfaces the storage implements, checked here over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any, ClassVar

import aiohttp
import orjson
import pytest

from kubegc.api.auth import request_user
from kubegc.api.resources import GroupVersionKind, ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Creater, NamedCreater, Resource, WriteOptions
from kubegc.registry.generic.target import Target
from kubegc.testing import Cluster

JSON = {"Content-Type": "application/json"}


# --- the new module: a create-only resource (as the review APIs are) -------------------


class WhoAmIREST(Creater):
    """``POST /apis/example.kubegc.io/v1/whoamis``: who the requester is; nothing stored."""

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Obj:
        user = request_user()
        return {"apiVersion": "example.kubegc.io/v1", "kind": "WhoAmI", "metadata": {},
                "status": {"user": user.name if user else ""}}


WHOAMIS = ResourceInfo(group="example.kubegc.io", versions=("v1",), resource="whoamis",
                       kind="WhoAmI", namespaced=False)


# --- the new module: a subresource (as pods/binding and serviceaccounts/token are) -----


class EchoREST(NamedCreater):
    """``POST .../pods/<name>/echo``: the pod's name and what was sent, back."""

    kind: ClassVar[GroupVersionKind | None] = GroupVersionKind("example.kubegc.io", "v1", "Echo")

    async def create_named(self, t: Target, name: str, obj: Obj, options: WriteOptions) -> Obj:
        return {"apiVersion": "example.kubegc.io/v1", "kind": "Echo",
                "metadata": {"name": name, "namespace": t.namespace}, "said": obj.get("say")}


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session:
        registry = cluster.cluster.registry
        assert registry is not None
        # the registration lines: one entry in a group's resources(), one in a subresource map
        registry.install(Resource(WHOAMIS, WhoAmIREST()))
        pods = registry.resource("", "pods")
        assert pods is not None
        registry.install(replace(pods, subresources={**pods.subresources, "echo": EchoREST()}))
        yield session, cluster.url


async def call(http: tuple[aiohttp.ClientSession, str], method: str, path: str,
               body: Any = None) -> tuple[int, Any]:
    session, url = http
    data = None if body is None else orjson.dumps(body)
    async with session.request(method, url + path, data=data, headers=JSON) as resp:
        return resp.status, orjson.loads(await resp.read())


async def test_a_create_only_resource_is_served_as_its_interface_says(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, answer = await call(http, "POST", "/apis/example.kubegc.io/v1/whoamis", {})
    assert (status, answer["status"]) == (201, {"user": "system:unsecured"})
    status, body = await call(http, "GET", "/apis/example.kubegc.io/v1/whoamis")
    assert (status, body["reason"]) == (405, "MethodNotAllowed")  # a served path, no Lister
    status, body = await call(http, "GET", "/apis/example.kubegc.io/v1/whoamis/me")
    assert (status, body["reason"]) == (404, "NotFound")  # no interface serves an item
    status, listed = await call(http, "GET", "/apis/example.kubegc.io/v1")
    assert [(r["name"], r["verbs"]) for r in listed["resources"]] == [("whoamis", ["create"])]


async def test_a_subresource_is_served_and_discovered(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    assert (await call(http, "POST", "/api/v1/namespaces/default/pods", pod))[0] == 201
    status, echoed = await call(http, "POST", "/api/v1/namespaces/default/pods/p/echo",
                                {"say": "hi"})
    assert (status, echoed["metadata"], echoed["said"]) == (
        201, {"name": "p", "namespace": "default"}, "hi")
    status, body = await call(http, "GET", "/api/v1/namespaces/default/pods/p/echo")
    assert (status, body["reason"]) == (405, "MethodNotAllowed")
    _, core = await call(http, "GET", "/api/v1")
    echo = {r["name"]: r for r in core["resources"]}["pods/echo"]
    assert (echo["kind"], echo["group"], echo["verbs"]) == ("Echo", "example.kubegc.io",
                                                            ["create"])
