"""Bad input answered as kube-apiserver answers it: each request a fuzzer found answered
500 (or accepted), sent to a real ``kubegc serve`` over HTTPS, gets upstream's Status
(code, reason, message) and leaves the stored object as it was."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually

CM = "/api/v1/namespaces/{ns}/configmaps"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
JSON = "application/json"
YAML = "application/yaml"

DEEP = b'{"a":' * 5000 + b"1" + b"}" * 5000
BIG = b"99999999999999999999999"
NOT_AN_OBJECT_META = ("json: cannot unmarshal number into Go struct field ConfigMap.metadata "
                      "of type v1.ObjectMeta")

# (id, method, path under the ConfigMaps of the namespace, content type, body,
#  code, reason, text the message contains)
CASES: list[Any] = [
    pytest.param("PATCH", "/c1", MERGE, b'{"metadata":0}', 422, "Invalid",
                 ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",'
                 '\\"data\\":{\\"a\\":\\"b\\"},', id="merge-patch-metadata-0"),
    pytest.param("PATCH", "/c1", MERGE, b'{"metadata":0}', 422, "Invalid",
                 f'\\"metadata\\":0}}": {NOT_AN_OBJECT_META}', id="merge-patch-metadata-0-why"),
    pytest.param("PATCH", "/c1", STRATEGIC, b'{"metadata":"x"}', 422, "Invalid",
                 ' "" is invalid: patch: Invalid value: "map[metadata:x]": cannot restore '
                 "struct from: string", id="strategic-patch-metadata-string"),
    pytest.param("PATCH", "/c1", JSON_PATCH,
                 b'[{"op":"replace","path":"/metadata","value":1}]', 422, "Invalid",
                 "json: cannot unmarshal number into Go struct field ConfigMap.metadata of "
                 "type v1.ObjectMeta", id="json-patch-metadata-1"),
    pytest.param("PATCH", "/c1?fieldManager=t", APPLY,
                 b"apiVersion: v1\nkind: ConfigMap\nmetadata: true\n", 400, "BadRequest",
                 "failed to create typed patch object (/; /v1, Kind=ConfigMap): .metadata: "
                 "expected map, got &{true}", id="apply-metadata-true"),
    pytest.param("POST", "", JSON, b'{"metadata":0}', 400, "BadRequest",
                 f'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                 f"{NOT_AN_OBJECT_META}", id="create-metadata-0"),
    pytest.param("POST", "", JSON, b'{"metadata":{"name":"x","labels":{"a":{"b":1}}}}', 400,
                 "BadRequest", "json: cannot unmarshal object into Go struct field "
                 "ObjectMeta.metadata.labels of type string", id="create-label-object"),
    pytest.param("POST", "", JSON,
                 b'{"metadata":{"name":"x","ownerReferences":[{"apiVersion":"v1",'
                 b'"kind":"Pod","name":"p","uid":5}]}}', 400, "BadRequest",
                 "json: cannot unmarshal number into Go struct field "
                 "OwnerReference.metadata.ownerReferences.uid of type types.UID",
                 id="owner-uid-number"),
    pytest.param("POST", "", JSON,
                 b'{"metadata":{"name":"x","ownerReferences":[{"apiVersion":"v1",'
                 b'"kind":"Pod","name":"p","uid":"u","blockOwnerDeletion":"yes"}]}}', 400,
                 "BadRequest", "json: cannot unmarshal string into Go struct field "
                 "OwnerReference.metadata.ownerReferences.blockOwnerDeletion of type bool",
                 id="owner-block-owner-deletion-string"),
    pytest.param("POST", "", JSON, b'{"metadata":{"name":"x","creationTimestamp":"soon"}}',
                 400, "BadRequest", 'parsing time "soon" as "2006-01-02T15:04:05Z07:00": '
                 'cannot parse "soon" as "2006"', id="create-bad-timestamp"),
    pytest.param("POST", "", JSON, b'{"apiVersion":5}', 400, "BadRequest",
                 "the object provided is unrecognized (must be of type ConfigMap): couldn't "
                 "get version/kind; json parse error: json: cannot unmarshal number into Go "
                 "struct field .apiVersion of type string", id="api-version-number"),
    pytest.param("GET", "?limit=9223372036854775808", "", b"", 400, "BadRequest",
                 'strconv.ParseInt: parsing "9223372036854775808": value out of range',
                 id="limit-overflows-int64"),
    pytest.param("GET", "?limit=ten", "", b"", 400, "BadRequest",
                 'strconv.ParseInt: parsing "ten": invalid syntax', id="limit-not-a-number"),
    pytest.param("POST", "", YAML, b"a: " + b"[" * 5000 + b"]" * 5000, 400, "BadRequest",
                 "exceeded max depth", id="yaml-5000-deep"),
    pytest.param("POST", "", JSON,
                 b'{"metadata":{"name":"x","labels":' + b'{"a":' * 900 + b"1" + b"}" * 902,
                 400, "BadRequest", "exceeded max depth", id="json-labels-900-deep"),
    pytest.param("POST", "", YAML, b'metadata:\n  name: s1\ndata:\n  a: "\\ud800"\n', 400,
                 "BadRequest", "found invalid Unicode character escape code",
                 id="yaml-lone-surrogate"),
    # issue 26: an apply body in JSON nested past the limit (RecursionError, 500)
    pytest.param("PATCH", "/c1?fieldManager=t", APPLY, b'{"metadata":{"labels":' + DEEP + b"}}",
                 400, "BadRequest", "error decoding YAML: error converting YAML to JSON: yaml: "
                 "invalid character '{' exceeded max depth", id="apply-json-5000-deep"),
    pytest.param("PATCH", "/c1?fieldManager=t", APPLY, b"[" * 5000 + b"]" * 5000, 400,
                 "BadRequest", "exceeded max depth", id="apply-json-list-5000-deep"),
    *(pytest.param("PATCH", "/c1?fieldManager=t", patch_type,
                   b'{"metadata":{"labels":' + DEEP + b"}}", 400, "BadRequest",
                   "exceeded max depth", id=f"{name}-5000-deep")
      for name, patch_type in (("merge", MERGE), ("strategic", STRATEGIC))),
    pytest.param("PATCH", "/c1", JSON_PATCH,
                 b'[{"op":"add","path":"/data/x","value":' + DEEP + b"}]", 400, "BadRequest",
                 "exceeded max depth", id="json-patch-value-5000-deep"),
    pytest.param("PUT", "/c1", JSON, b'{"metadata":{"name":"c1"},"data":' + DEEP + b"}", 400,
                 "BadRequest", "exceeded max depth", id="update-5000-deep"),
    # nested just under the limit where a string is expected: the error's rendering of
    # the value walks it all (a RecursionError 500 on PUT .../scale)
    pytest.param("POST", "", JSON, b'{"apiVersion":' + b'{"a":' * 199 + b"1" + b"}" * 200,
                 400, "BadRequest", "json: cannot unmarshal object into Go struct field "
                 ".apiVersion of type string", id="api-version-199-deep"),
    pytest.param("PUT", "/c1", JSON, b'{"metadata":{"name":"c1"},"data":{"a":' + b'{"a":' * 197
                 + b"1" + b"}" * 199, 400, "BadRequest", "json: cannot unmarshal object into "
                 "Go struct field ConfigMap.data of type string", id="update-data-199-deep"),
    *(pytest.param("DELETE", "/c1", JSON, b'{"propagationPolicy":' + b'{"a":' * depth + b"1"
                   + b"}" * (depth + 1), 400, "BadRequest", "the object provided is "
                   "unrecognized (must be of type DeleteOptions): couldn't get version/kind; "
                   "json parse error: invalid character '{' exceeded max depth",
                   id=f"delete-options-{depth}-deep")
      for depth in (250, 1020, 5000)),
    # YAML whose scanner slows down with depth (1,500 levels: ~11 s): stopped as it is read
    pytest.param("PATCH", "/c1?fieldManager=t", APPLY, b"data: " + b"[" * 1500 + b"]" * 1500,
                 400, "BadRequest", "exceeded max depth", id="apply-yaml-1500-deep"),
    pytest.param("POST", "", YAML, b"data:\n" + b"".join(b" " * i + b"a:\n"
                                                       for i in range(1, 1500)), 400,
                 "BadRequest", "exceeded max depth", id="yaml-blocks-1500-deep"),
    # valid JSON that is not an object where one is expected
    *(pytest.param(method, path, content_type, body, 400, "BadRequest", text,
                   id=f"{method.lower()}-{content_type.split('/')[1]}-{body.decode()}")
      for body in (b"1", b'"s"', b"[1]")
      for method, path, content_type, text in (
          ("POST", "", JSON, "must be an object"),
          ("PUT", "/c1", JSON, "must be an object"),
          ("PATCH", "/c1?fieldManager=t", APPLY, "error decoding YAML: error unmarshaling "
           "JSON: while decoding JSON: json: cannot unmarshal"))),
    # an integer past 64 bits is a float64 to Go's decoders, then does not fit its field
    pytest.param("PATCH", "/c1", MERGE, b'{"data":{"b":' + BIG + b"}}", 422, "Invalid",
                 '\\"b\\":1e+23}', id="merge-patch-integer-past-64-bits"),
    pytest.param("PATCH", "/c1", JSON_PATCH,
                 b'[{"op":"add","path":"/data/b","value":' + BIG + b"}]", 422, "Invalid",
                 '\\"b\\":1e+23},\\"kind\\"', id="json-patch-integer-past-64-bits"),
    pytest.param("PATCH", "/c1?fieldManager=t", APPLY,
                 b"metadata:\n  labels:\n    a: " + BIG + b"\n", 400, "BadRequest",
                 ".metadata.labels: expected string, got &value.valueUnstructured{Value:1e+23}",
                 id="apply-integer-past-64-bits"),
    pytest.param("POST", "", YAML, b"metadata:\n  name: y\n  generation: " + BIG + b"\n", 400,
                 "BadRequest", "json: cannot unmarshal number 1e+23 into Go struct field "
                 "ObjectMeta.metadata.generation of type int64", id="yaml-integer-past-64-bits"),
    # a resourceVersion beyond uint64 does not parse (APIObjectVersioner.ParseResourceVersion)
    *(pytest.param("GET", path + "resourceVersion=" + rv, "", b"", 400, "BadRequest",
                   f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing '
                   f'"{rv}": {problem}', id=f"{what}-resource-version-{rv[:5]}")
      for rv, problem in (("99999999999999999999", "value out of range"),
                          ("-1", "invalid syntax"), ("abc", "invalid syntax"))
      for what, path in (("list", "?"), ("get", "/c1?"), ("watch", "?watch=1&"),
                         ("list-exact", "?resourceVersionMatch=Exact&"))),
]


@pytest.fixture
def configmap(server: Server, ns: str) -> str:
    status, body = server.http("POST", CM.format(ns=ns),
                               {"metadata": {"name": "c1"}, "data": {"a": "b"}},
                               headers={"Content-Type": JSON})
    assert status == 201, body
    return ns


@pytest.mark.parametrize(("method", "path", "content_type", "body", "code", "reason", "text"),
                         CASES)
def test_bad_input_answered_as_upstream(server: Server, configmap: str, method: str,
                                        path: str, content_type: str, body: bytes, code: int,
                                        reason: str, text: str) -> None:
    url = CM.format(ns=configmap) + path
    headers = {"Content-Type": content_type} if content_type else {}
    status, answer = server.http(method, url, body or None, headers=headers)
    status_body = json.loads(answer)
    assert (status, status_body["kind"], status_body["reason"], status_body["code"]) == (
        code, "Status", reason, code), answer
    assert text in status_body["message"], status_body["message"]
    # nothing half-written: the ConfigMap is as it was
    _, stored = server.http("GET", CM.format(ns=configmap) + "/c1")
    assert json.loads(stored)["data"] == {"a": "b"}


def test_json_lone_surrogate_is_replacement_character(server: Server, ns: str) -> None:
    """Go's JSON decoder reads a lone surrogate escape as U+FFFD; so does kubegc."""
    status, answer = server.http("POST", CM.format(ns=ns),
                                 b'{"metadata":{"name":"s"},"data":{"a":"\\ud800"}}',
                                 headers={"Content-Type": JSON})
    assert status == 201, answer
    assert json.loads(answer)["data"] == {"a": "\ufffd"}


def test_null_fields_decode_to_zero_values(server: Server, ns: str) -> None:
    """A null struct field is absent, a null label value the empty string (Go's zero
    values), instead of reaching validation as nulls."""
    status, answer = server.http(
        "POST", CM.format(ns=ns),
        b'{"metadata":{"name":"n","labels":{"a":null},"annotations":null},"data":null}',
        headers={"Content-Type": JSON})
    assert status == 201, answer
    created = json.loads(answer)
    assert created["metadata"]["labels"] == {"a": ""}
    assert "annotations" not in created["metadata"] and "data" not in created


def test_an_object_etcd_would_refuse_is_refused_on_every_backend(server: Server,
                                                                  ns: str) -> None:
    """Past etcd's 1.5 MiB request limit (a valid Pod with a 1.6 MB variable): 413 with
    etcd's text, and nothing stored (kubegc here runs on SQLite)."""
    pod = {"metadata": {"name": "huge"}, "spec": {"containers": [
        {"name": "c", "image": "i", "env": [{"name": "E", "value": "x" * 1_600_000}]}]}}
    status, answer = server.http("POST", f"/api/v1/namespaces/{ns}/pods", pod,
                                 headers={"Content-Type": JSON})
    body = json.loads(answer)
    assert (status, body["reason"], body["message"]) == (
        413, "RequestEntityTooLarge", "etcdserver: request is too large")
    assert server.http("GET", f"/api/v1/namespaces/{ns}/pods/huge")[0] == 404


GADGETS = f"g{uuid.uuid4().hex[:6]}.example.com"


@pytest.fixture(scope="module")
def gadgets(server: Server) -> Iterator[str]:
    """A CRD whose spec keeps unknown fields: numbers there are stored as decoded."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{GADGETS}"},
           "spec": {"group": GADGETS, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True},
                            "count": {"type": "integer"}}}}}]}}
    status, answer = server.http("POST", "/apis/apiextensions.k8s.io/v1/"
                                 "customresourcedefinitions", crd, headers={"Content-Type": JSON})
    assert status == 201, answer
    eventually(lambda: server.http("GET", f"/apis/{GADGETS}/v1/gadgets")[0] == 200)
    yield f"/apis/{GADGETS}/v1/namespaces/{{ns}}/gadgets"
    server.http("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                f"gadgets.{GADGETS}")


@pytest.mark.parametrize(("content_type", "body"), [
    pytest.param(MERGE, b'{"spec":{"b":' + BIG + b"}}", id="merge"),
    pytest.param(JSON_PATCH, b'[{"op":"add","path":"/spec/b","value":' + BIG + b"}]",
                 id="json-patch"),
    pytest.param(APPLY, b'{"apiVersion":"%s/v1","kind":"Gadget","spec":{"b":%s}}', id="apply"),
    pytest.param(APPLY, b"apiVersion: %s/v1\nkind: Gadget\nspec:\n  b: %s\n", id="apply-yaml"),
])
def test_an_integer_past_64_bits_is_a_float64(server: Server, ns: str, gadgets: str,
                                              content_type: str, body: bytes) -> None:
    """Go's decoders read an integer no int64 holds as a float64: kept under a field that
    preserves unknown fields (instead of a 500 "Integer exceeds 64-bit range"), refused
    under an integer field with the schema's message."""
    collection = gadgets.format(ns=ns)
    status, answer = server.http("POST", collection, {
        "apiVersion": f"{GADGETS}/v1", "kind": "Gadget", "metadata": {"name": "g"},
        "spec": {"a": 1}}, headers={"Content-Type": JSON})
    assert status == 201, answer
    if b"%s" in body:
        body = body % (GADGETS.encode(), BIG)
    status, answer = server.http("PATCH", collection + "/g?fieldManager=t", body,
                                 headers={"Content-Type": content_type})
    assert status == 200, answer
    assert json.loads(answer)["spec"]["b"] == 1e23
    status, answer = server.http("PATCH", collection + "/g?fieldManager=t",
                                 b'{"count":' + BIG + b"}", headers={"Content-Type": MERGE})
    refused = json.loads(answer)
    assert (status, refused["reason"]) == (422, "Invalid"), answer
    assert refused["message"] == (f'Gadget.{GADGETS} "g" is invalid: count: Invalid value: '
                                  '"number": count in body must be of type integer: "number"')


def test_apply_json_with_a_lone_surrogate_reads_it_as_go_does(server: Server,
                                                               configmap: str) -> None:
    """An apply body in JSON with a lone surrogate escape: U+FFFD, as Go's JSON decoder
    makes it (no 500 "surrogates not allowed")."""
    status, answer = server.http(
        "PATCH", CM.format(ns=configmap) + "/c2?fieldManager=t",
        b'{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"\\ud800"}}',
        headers={"Content-Type": APPLY})
    assert status == 201, answer
    assert json.loads(answer)["data"] == {"a": "\ufffd"}


def test_strategic_merge_of_mixed_element_types_is_upstreams_500(server: Server,
                                                                   ns: str) -> None:
    """``sliceElementType`` refuses a list whose items are of several types with an error
    ``interpretStrategicMergePatchError`` passes through: kube-apiserver answers a 500 with
    no reason (``StatusReasonUnknown``), and so does kubegc — without a traceback."""
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    pods = f"/api/v1/namespaces/{ns}/pods"
    assert server.http("POST", pods, pod, headers={"Content-Type": JSON})[0] == 201
    status, answer = server.http("PATCH", pods + "/p", b'{"spec":{"containers":[1,"a"]}}',
                                 headers={"Content-Type": STRATEGIC})
    assert status == 500
    body = json.loads(answer)
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": body["message"], "code": 500}
    assert body["message"].startswith("list element types are not identical: [[map[image:i ")
    assert body["message"].endswith("] [1 a]]")


def test_a_scale_nested_to_the_limit_is_refused_not_crashed(server: Server, ns: str) -> None:
    """A Scale whose apiVersion is a map nested just under the nesting limit: the 400 of
    its decoding, whose message renders the value (Go's ``%#v``) however deep."""
    rc = {"metadata": {"name": "r"}, "spec": {"replicas": 0, "selector": {"app": "r"},
          "template": {"metadata": {"labels": {"app": "r"}},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    rcs = f"/api/v1/namespaces/{ns}/replicationcontrollers"
    assert server.http("POST", rcs, rc, headers={"Content-Type": JSON})[0] == 201
    status, answer = server.http(
        "PUT", rcs + "/r/scale", b'{"apiVersion":' + b'{"a":' * 199 + b"1" + b"}" * 200,
        headers={"Content-Type": JSON})
    refused = json.loads(answer)
    assert (status, refused["reason"]) == (400, "BadRequest"), answer
    assert refused["message"].startswith(
        'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal object '
        "into Go struct field Scale.apiVersion of type string")
