"""OpenAPI v2: the Swagger 2.0 document built from the v3 data, its gnostic protobuf form
(read back here by the field numbers of gnostic's ``OpenAPIv2.proto``, as kubectl reads
it), and how ``/openapi/v2`` is served (negotiation, ETag, 304)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from kubegc.api.resources import Catalog, ResourceInfo, Subresource
from kubegc.registry import builtin_catalog
from kubegc.server.openapi import document_hash, openapi_v3_group_version
from kubegc.server.openapi_v2 import custom_resource_schema_v2, openapi_v2
from kubegc.server.openapi_v2_proto import encode_document, to_yaml
from kubegc.server.protobuf import LENGTH_DELIMITED, iter_fields
from kubegc.testing import Cluster

WIDGET = ResourceInfo(group="example.com", versions=("v1",), resource="widgets",
                      kind="Widget", namespaced=True, custom=True,
                      subresources=(Subresource("status"),))
PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _catalog() -> Catalog:
    catalog = builtin_catalog()
    catalog.add(WIDGET)
    return catalog


# -- the document ----------------------------------------------------------------------------


def _schemas(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for key in ("properties", "patternProperties"):
            for sub in (value.get(key) or {}).values():
                yield from _schemas(sub)
        for key in ("items", "additionalProperties"):
            yield from _schemas(value.get(key))
        for sub in value.get("allOf") or ():
            yield from _schemas(sub)


def test_every_definition_is_one_kubectls_v2_model_parser_accepts() -> None:
    """kube-openapi util/proto rejects a $ref with a type or properties, a reference to
    an unknown model, an array without exactly one item schema and several types."""
    doc = openapi_v2(_catalog())
    definitions = doc["definitions"]
    for name, definition in definitions.items():
        for s in _schemas(definition):
            if "$ref" in s:
                assert s["$ref"].removeprefix("#/definitions/") in definitions, (name, s)
                assert "type" not in s and "properties" not in s, name
            if s.get("type") == "array":
                assert isinstance(s.get("items"), dict), name
            assert not isinstance(s.get("type"), list), name
            assert "default" not in s and "nullable" not in s, name
            assert not ("allOf" in s and len(s["allOf"]) == 1), name
    assert b"#/components/" not in orjson.dumps(doc)


def test_paths_are_the_v3_paths_in_swagger_2_form() -> None:
    doc = openapi_v2(_catalog())
    v3 = openapi_v3_group_version(_catalog(), "apps", "v1")
    assert v3 is not None
    item = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    assert set(v3["paths"]) <= set(doc["paths"])
    patch = doc["paths"][item]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps", "kind": "Deployment", "version": "v1"}
    assert patch["consumes"] == ["application/json-patch+json", "application/merge-patch+json",
                                 "application/strategic-merge-patch+json",
                                 "application/apply-patch+yaml"]
    body, *query = patch["parameters"]
    assert body == {"name": "body", "in": "body", "required": True, "schema": {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    [field_validation] = [q for q in query if q["name"] == "fieldValidation"]
    assert (field_validation["in"], field_validation["type"]) == ("query", "string")
    assert patch["responses"]["200"] == {"description": "OK", "schema": {
        "$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}}
    assert [p["name"] for p in doc["paths"][item]["parameters"]] == [
        "name", "namespace", "pretty"]
    assert doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["metadata"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                       "contributors/devel/sig-architecture/api-conventions.md#metadata"}
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status" in doc["paths"]


WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "required": ["size", "color"], "properties": {
            "size": {"type": "integer", "default": 1, "minimum": 0},
            "color": {"type": "string", "nullable": True},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                      "properties": {"a": {"type": "string"}}},
            "port": {"x-kubernetes-int-or-string": True,
                     "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "example": ["x"]},
            "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                         "properties": {"spec": {"type": "object"}}},
        }},
    },
}


def test_a_crd_schema_follows_upstreams_v2_rules() -> None:
    out = custom_resource_schema_v2(WIDGET, "v1", WIDGET_SCHEMA)
    spec = out["properties"]["spec"]
    assert spec["required"] == ["size"]  # a nullable field is not required in v2
    assert spec["properties"]["size"] == {"type": "integer", "minimum": 0}  # default pruned
    assert spec["properties"]["color"] == {}  # nullable: untyped
    assert spec["properties"]["extra"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec["properties"]["port"] == {"x-kubernetes-int-or-string": True}  # anyOf dropped
    assert spec["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    template = spec["properties"]["template"]
    assert set(template["properties"]) == {"spec", "apiVersion", "kind", "metadata"}
    assert template["required"] == ["kind", "apiVersion"]
    assert set(out["properties"]) == {"spec", "metadata", "apiVersion", "kind"}
    assert out["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert WIDGET_SCHEMA["properties"]["spec"]["required"] == ["size", "color"]  # unchanged


@pytest.mark.parametrize("raw", [None, {"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                        "properties": {"spec": {"type": "object"}}}])
def test_a_crd_that_preserves_unknown_fields_is_just_an_object(raw: Any) -> None:
    assert custom_resource_schema_v2(WIDGET, "v1", raw) == {
        "type": "object", "x-kubernetes-group-version-kind": [
            {"group": "example.com", "kind": "Widget", "version": "v1"}]}


# -- protobuf ----------------------------------------------------------------------------------


def _messages(data: bytes, number: int) -> list[bytes]:
    return [f.value for f in iter_fields(data)
            if f.number == number and f.wire_type == LENGTH_DELIMITED
            and isinstance(f.value, bytes)]


def _one(data: bytes, number: int) -> bytes:
    found = _messages(data, number)
    return found[0] if found else b""


def _string(data: bytes, number: int) -> str:
    return _one(data, number).decode()


def _vendor(data: bytes, number: int) -> dict[str, Any]:
    """NamedAny{1: name, 2: Any{2: yaml}} entries, read back as kubectl does."""
    return {_string(e, 1): yaml.safe_load(_string(_one(e, 2), 2))
            for e in _messages(data, number)}


def _supports_field_validation(document: bytes, gvk: dict[str, str]) -> bool:
    """kubectl 1.27's supportsQueryParam on the protobuf Document: paths(8) → path(2) →
    PathItem.patch(8) → Operation{vendor_extension 13, parameters 8 → ParametersItem.
    parameter 1 → Parameter.non_body_parameter 2 → query_parameter_sub_schema 3 → name 4}."""
    for named in _messages(_one(document, 8), 2):
        patch = _one(_one(named, 2), 8)
        if _vendor(patch, 13).get("x-kubernetes-group-version-kind") == gvk:
            return any(_string(_one(_one(_one(p, 1), 2), 3), 4) == "fieldValidation"
                       for p in _messages(patch, 8))
    return False


def test_the_protobuf_document_reads_as_kubectl_reads_it() -> None:
    doc = openapi_v2(_catalog(), {("example.com", "v1", "Widget"): WIDGET_SCHEMA})
    data = encode_document(doc)
    assert _string(data, 1) == "2.0"
    assert _string(_one(data, 2), 2) == "1.33"  # info.version
    for gvk in ({"group": "apps", "kind": "Deployment", "version": "v1"},
                {"group": "", "kind": "Namespace", "version": "v1"},
                {"group": "example.com", "kind": "Widget", "version": "v1"}):
        assert _supports_field_validation(data, gvk), gvk
    definitions = {_string(d, 1): _one(d, 2) for d in _messages(_one(data, 9), 1)}
    assert list(definitions) == list(doc["definitions"])
    pod = definitions["io.k8s.api.core.v1.Pod"]
    assert _vendor(pod, 31)["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "Pod", "version": "v1"}]
    assert [t.decode() for t in _messages(_one(pod, 22), 1)] == ["object"]  # TypeItem
    properties = {_string(p, 1): _one(p, 2) for p in _messages(_one(pod, 25), 1)}
    assert _string(properties["spec"], 1) == "#/definitions/io.k8s.api.core.v1.PodSpec"
    spec = {_string(p, 1): _one(p, 2) for p in _messages(
        _one(definitions["io.k8s.api.core.v1.PodSpec"], 25), 1)}
    assert _vendor(spec["containers"], 31) == {"x-kubernetes-patch-merge-key": "name",
                                               "x-kubernetes-patch-strategy": "merge"}
    assert [r.decode() for r in _messages(definitions["io.k8s.api.core.v1.PodSpec"], 19)] == [
        "containers"]


def test_present_but_empty_messages_are_written() -> None:
    """kubectl tells ``properties: {}`` (a kind) from no properties (a map) by presence."""
    doc = {"definitions": {"a": {"type": "object", "properties": {}},
                           "b": {"type": "object", "additionalProperties": False}}}
    definitions = {_string(d, 1): _one(d, 2) for d in _messages(
        _one(encode_document(doc), 9), 1)}
    assert [f.number for f in iter_fields(definitions["a"])] == [22, 25]
    assert [(f.number, f.value) for f in iter_fields(_one(definitions["b"], 21))] == [(2, 0)]


@pytest.mark.parametrize("value", [
    [{"group": "", "kind": "Pod", "version": "v1"}], {"group": "apps", "kind": "Deployment"},
    "merge", "yes", "", "1", "a: b", "-x", "with \"quotes\"\nand lines", True, 3, None, [],
    {}, [["a"], {"b": [1, {"c": "d"}]}], "é & <",
])
def test_yaml_reads_back_as_the_json_value(value: Any) -> None:
    assert yaml.safe_load(to_yaml(value)) == value


def test_yaml_is_block_style() -> None:
    assert to_yaml([{"group": "", "kind": "Pod", "version": "v1"}]) == (
        '- group: ""\n  kind: Pod\n  version: v1\n')
    assert to_yaml({"a": {"b": "c"}}) == "a:\n    b: c\n"


# -- serving -----------------------------------------------------------------------------------


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession(
            auto_decompress=False) as session:
        yield session, cluster.url


async def test_v2_answers_json_or_protobuf_with_one_etag(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    async with session.get(url + "/openapi/v2") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "application/json"
        doc = orjson.loads(await resp.read())
        etag = resp.headers["Etag"]
    assert doc["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in doc["definitions"]
    assert etag.startswith('"') and len(etag) == 130 and resp.headers["Vary"] == "Accept"
    for accept in (PROTOBUF, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                   f"{PROTOBUF}, application/json;q=0.5"):
        async with session.get(url + "/openapi/v2", headers={"Accept": accept}) as resp:
            assert resp.headers["Content-Type"] == (
                "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
            assert resp.headers["Etag"] == etag
            assert encode_document(doc) == await resp.read()
    async with session.get(url + "/openapi/v2", headers={"Accept": "text/html"}) as resp:
        assert resp.status == 406 and await resp.read() == b""


async def test_a_matching_if_none_match_is_not_modified(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    for path, accept in (("/openapi/v2", PROTOBUF), ("/openapi/v3", "application/json"),
                         ("/openapi/v3/apis/apps/v1", "application/json")):
        async with session.get(url + path, headers={"Accept": accept}) as resp:
            etag = resp.headers["Etag"]
            modified = resp.headers["Last-Modified"]
        async with session.get(url + path, headers={"Accept": accept,
                                                    "If-None-Match": f'"x", {etag}'}) as resp:
            assert resp.status == 304 and await resp.read() == b""
            assert resp.headers["Etag"] == etag and "Content-Length" not in resp.headers
        async with session.get(url + path, headers={"If-Modified-Since": modified}) as resp:
            assert resp.status == 304
        async with session.get(url + path, headers={"If-None-Match": '"other"'}) as resp:
            assert resp.status == 200 and await resp.read()


async def test_a_v3_documents_etag_is_the_hash_its_index_links(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    async with session.get(url + "/openapi/v3") as resp:
        link = orjson.loads(await resp.read())["paths"]["apis/apps/v1"]["serverRelativeURL"]
    async with session.get(url + link) as resp:
        body = await resp.read()
        assert resp.headers["Etag"] == '"' + link.partition("hash=")[2] + '"'
    assert link.endswith(document_hash(orjson.loads(body)))


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "schema": {"openAPIV3Schema": WIDGET_SCHEMA}}]}}


async def test_a_crd_enters_and_leaves_the_v2_document(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http

    async def definitions() -> tuple[str, dict[str, Any]]:
        async with session.get(url + "/openapi/v2") as resp:
            return resp.headers["Etag"], orjson.loads(await resp.read())["definitions"]

    before, defs = await definitions()
    assert "com.example.v1.Widget" not in defs
    crds = url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    async with session.post(crds, data=orjson.dumps(CRD),
                            headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
    during, defs = await definitions()
    assert during != before
    assert defs["com.example.v1.Widget"]["properties"]["spec"]["required"] == ["size"]
    assert "com.example.v1.WidgetList" in defs
    async with session.delete(crds + "/widgets.example.com") as resp:
        assert resp.status == 200
    deadline = time.monotonic() + 10  # the cleanup finalizer: gone once its CRs are
    while "com.example.v1.Widget" in defs and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        after, defs = await definitions()
    assert "com.example.v1.Widget" not in defs and after == before
