"""A create's ``metadata.resourceVersion`` as upstream treats it: storage refuses only one
that parses as a non-zero integer (etcd3 ``store.Create``: ``ObjectResourceVersion`` is
``strconv.ParseUint``), as a 500 without a reason (``ErrResourceVersionSetOnCreate`` is
not a Status error); anything else is accepted and cleared."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from kubegc.testing import Cluster

CM = "/api/v1/namespaces/default/configmaps"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session:
        yield session, cluster.url


async def _create(http: tuple[aiohttp.ClientSession, str], name: str, rv: Any,
                  query: str = "") -> tuple[int, bytes]:
    session, url = http
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": name, "resourceVersion": rv}}
    async with session.post(url + CM + query, data=orjson.dumps(cm), headers=JSON) as resp:
        return resp.status, await resp.read()


@pytest.mark.parametrize("rv", ["v1", "0", "", "000", "-1", "+5", " 5", "5x", "1e3",
                                "18446744073709551616"])
async def test_a_resource_version_that_is_not_a_non_zero_integer_is_cleared(
        http: tuple[aiohttp.ClientSession, str], rv: str) -> None:
    status, body = await _create(http, "c", rv)
    assert status == 201, body
    created = orjson.loads(body)["metadata"]["resourceVersion"]
    assert created != rv and int(created) > 0
    session, url = http
    async with session.get(url + CM + "/c") as resp:
        assert orjson.loads(await resp.read())["metadata"]["resourceVersion"] == created


@pytest.mark.parametrize("rv", ["5", "007", "18446744073709551615"])
async def test_a_non_zero_integer_is_refused_as_storage_refuses_it(
        http: tuple[aiohttp.ClientSession, str], rv: str) -> None:
    status, body = await _create(http, "c", rv)
    assert status == 500
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    b'"message":"resourceVersion should not be set on objects to be created",'
                    b'"code":500}\n')
    session, url = http
    async with session.get(url + CM + "/c") as resp:
        assert resp.status == 404  # nothing was written


async def test_the_refusal_comes_after_validation_and_not_on_a_dry_run(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, body = await _create(http, "Bad_Name", "5")
    assert status == 422, body
    status, body = await _create(http, "c", "5", "?dryRun=All")
    assert status == 201, body


async def test_a_number_does_not_decode_into_object_meta(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, body = await _create(http, "c", 5)
    assert status == 400
    assert orjson.loads(body)["message"] == (  # the create handler's transformDecodeError
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        "json: cannot unmarshal number into Go struct field "
        "ObjectMeta.metadata.resourceVersion of type string")
