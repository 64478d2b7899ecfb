"""RFC 6902 JSON patch with kube-apiserver's (evanphx/json-patch v4) behaviour and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry.fieldmanager.json_patch import (
    MAX_OPERATIONS,
    JSONPatchError,
    apply_json_patch,
    decode_json_patch,
)

POD = {"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"items": ["x", "y", "z"]}}


def patched(*ops: dict[str, Any], doc: dict[str, Any] | None = None) -> Any:
    return apply_json_patch(POD if doc is None else doc, list(ops))


APPLIES = [
    pytest.param({"op": "add", "path": "/metadata/labels/b", "value": "2"},
                 {"a": "1", "b": "2"}, "/metadata/labels", id="add-member"),
    pytest.param({"op": "add", "path": "/metadata/labels/a", "value": "9"},
                 {"a": "9"}, "/metadata/labels", id="add-replaces-member"),
    pytest.param({"op": "add", "path": "/spec/items/1", "value": "new"},
                 ["x", "new", "y", "z"], "/spec/items", id="add-inserts-at-index"),
    pytest.param({"op": "add", "path": "/spec/items/-", "value": "end"},
                 ["x", "y", "z", "end"], "/spec/items", id="add-dash-appends"),
    pytest.param({"op": "add", "path": "/spec/items/3", "value": "end"},
                 ["x", "y", "z", "end"], "/spec/items", id="add-at-length-appends"),
    pytest.param({"op": "add", "path": "/spec/items/-1", "value": "end"},
                 ["x", "y", "z", "end"], "/spec/items", id="add-negative-index"),
    pytest.param({"op": "remove", "path": "/spec/items/0"},
                 ["y", "z"], "/spec/items", id="remove-item"),
    pytest.param({"op": "remove", "path": "/spec/items/-1"},
                 ["x", "y"], "/spec/items", id="remove-negative-index"),
    pytest.param({"op": "remove", "path": "/metadata/labels/a"},
                 {}, "/metadata/labels", id="remove-member"),
    pytest.param({"op": "replace", "path": "/spec/items/2", "value": "Z"},
                 ["x", "y", "Z"], "/spec/items", id="replace-item"),
    pytest.param({"op": "replace", "path": "/metadata/labels/new", "value": "v"},
                 {"a": "1", "new": "v"}, "/metadata/labels", id="replace-missing-member-sets"),
    pytest.param({"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/b"},
                 {"b": "1"}, "/metadata/labels", id="move-member"),
    pytest.param({"op": "move", "from": "/spec/items/0", "path": "/spec/items/-"},
                 ["y", "z", "x"], "/spec/items", id="move-item"),
    pytest.param({"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"},
                 {"a": "1"}, "/metadata/annotations", id="copy-member"),
    pytest.param({"op": "add", "path": "/metadata/annotations", "value": {"x~y/z": "1"}},
                 {"x~y/z": "1"}, "/metadata/annotations", id="add-object"),
]


def _at(doc: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


@pytest.mark.parametrize(("op", "expected", "where"), APPLIES)
def test_operations(op: dict[str, Any], expected: Any, where: str) -> None:
    assert _at(patched(op), where) == expected


def test_pointer_escapes() -> None:
    doc = {"metadata": {"annotations": {"example.com/a~b": "old"}}}
    result = patched({"op": "replace", "path": "/metadata/annotations/example.com~1a~0b",
                      "value": "new"}, doc=doc)
    assert result["metadata"]["annotations"] == {"example.com/a~b": "new"}


def test_replace_root_swaps_document() -> None:
    assert patched({"op": "replace", "path": "", "value": {"kind": "X"}}) == {"kind": "X"}


def test_operations_apply_in_order_and_original_is_untouched() -> None:
    before = json.dumps(POD)
    result = patched({"op": "test", "path": "/metadata/name", "value": "p"},
                     {"op": "add", "path": "/metadata/labels/b", "value": "2"},
                     {"op": "remove", "path": "/metadata/labels/a"})
    assert result["metadata"]["labels"] == {"b": "2"}
    assert json.dumps(POD) == before


@pytest.mark.parametrize("op", [
    pytest.param({"op": "test", "path": "/metadata/name", "value": "p"}, id="equal-string"),
    pytest.param({"op": "test", "path": "/spec/items", "value": ["x", "y", "z"]}, id="equal-list"),
    pytest.param({"op": "test", "path": "/metadata/missing", "value": None},
                 id="null-matches-missing"),
])
def test_test_operation_passes(op: dict[str, Any]) -> None:
    assert patched(op) == POD


FAILS = [
    pytest.param({"op": "test", "path": "/metadata/name", "value": "q"},
                 "testing value /metadata/name failed", id="test-different-value"),
    pytest.param({"op": "test", "path": "/spec/items/0", "value": 1},
                 "testing value /spec/items/0 failed", id="test-different-type"),
    pytest.param({"op": "add", "path": "/missing/labels/b", "value": "2"},
                 "add operation does not apply: doc is missing path: /missing/labels/b",
                 id="add-under-missing-parent"),
    pytest.param({"op": "add", "path": "/spec/items/5", "value": "x"},
                 "Unable to access invalid index: 5", id="add-out-of-range"),
    pytest.param({"op": "remove", "path": "/metadata/labels/zz"},
                 "Unable to remove nonexistent key: zz", id="remove-missing-member"),
    pytest.param({"op": "remove", "path": "/spec/items/3"},
                 "Unable to access invalid index: 3", id="remove-out-of-range"),
    pytest.param({"op": "replace", "path": "/spec/items/7", "value": "x"},
                 "Unable to access invalid index: 7", id="replace-out-of-range"),
    pytest.param({"op": "move", "from": "/metadata/nothing", "path": "/metadata/x"},
                 "Unable to remove nonexistent key: nothing", id="move-missing-source"),
    pytest.param({"op": "frobnicate", "path": "/a"}, "Unexpected kind: frobnicate",
                 id="unknown-op"),
    pytest.param({"path": "/a"}, "Unexpected kind: unknown", id="missing-op"),
    pytest.param({"op": "add", "value": 1}, "operation missing path field", id="missing-path"),
    pytest.param({"op": "add", "path": "/spec/items/x", "value": 1}, "invalid syntax",
                 id="bad-index"),
]


@pytest.mark.parametrize(("op", "detail"), FAILS)
def test_operation_that_does_not_apply_is_422(op: dict[str, Any], detail: str) -> None:
    with pytest.raises(StatusError) as caught:
        patched({"op": "add", "path": "/metadata/labels/first", "value": "1"}, op)
    assert caught.value.to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid", "code": 422,
    }
    assert isinstance(caught.value.__cause__, JSONPatchError)
    assert detail in str(caught.value.__cause__)


def test_too_many_operations_is_413() -> None:
    ops = [{"op": "test", "path": "/metadata/name", "value": "p"}] * (MAX_OPERATIONS + 1)
    with pytest.raises(StatusError) as caught:
        apply_json_patch(POD, ops)
    assert (caught.value.code, caught.value.reason) == (413, "RequestEntityTooLarge")
    assert caught.value.message == ("Request entity too large: The allowed maximum operations "
                                    "in a JSON patch is 10000, got 10001")


DECODE_ERRORS = [
    pytest.param(b"", "error decoding patch: unexpected end of JSON input", id="empty"),
    pytest.param(b"[{", "error decoding patch: unexpected end of JSON input", id="truncated"),
    pytest.param(b"x", "error decoding patch: invalid character 'x' looking for beginning of value",
                 id="not-json"),
    pytest.param(b'[{"op":"add"} {}]',
                 "error decoding patch: invalid character '{' after array element",
                 id="missing-comma"),
    pytest.param(b'{"op":"add"}',
                 "error decoding patch: json: cannot unmarshal object into Go value of type "
                 "[]handlers.jsonPatchOp", id="object-body"),
    pytest.param(b"[1]",
                 "error decoding patch: json: cannot unmarshal number into Go value of type "
                 "handlers.jsonPatchOp", id="number-operation"),
    pytest.param(b'[{"op": 1}]',
                 "error decoding patch: json: cannot unmarshal number into Go struct field "
                 "jsonPatchOp.op of type string", id="op-not-string"),
]


@pytest.mark.parametrize(("body", "message"), DECODE_ERRORS)
def test_undecodable_body_is_400(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        decode_json_patch(body)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400, "BadRequest", message)


def test_decode_null_is_no_operation() -> None:
    assert decode_json_patch(b"null") == []
    assert decode_json_patch(b'[{"op":"add","path":"/a","value":1}]') == [
        {"op": "add", "path": "/a", "value": 1}]
