"""RFC 7386 JSON merge patch (RFC appendix A examples plus evanphx's null handling)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry.fieldmanager.merge_patch import apply_merge_patch, decode_merge_patch

CASES = [
    pytest.param({"a": "b"}, {"a": "c"}, {"a": "c"}, id="replace-value"),
    pytest.param({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, id="add-key"),
    pytest.param({"a": "b"}, {"a": None}, {}, id="null-deletes"),
    pytest.param({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, id="null-deletes-one"),
    pytest.param({"a": ["b"]}, {"a": "c"}, {"a": "c"}, id="array-replaced-by-scalar"),
    pytest.param({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}, id="scalar-replaced-by-array"),
    pytest.param({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}},
                 id="nested-merge"),
    pytest.param({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}, id="arrays-replace-whole"),
    pytest.param({"e": None}, {"a": 1}, {"e": None, "a": 1}, id="existing-null-kept"),
    pytest.param({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}},
                 id="nested-nulls-of-added-value-dropped"),
    pytest.param({"a": "x"}, {"a": {"b": None, "c": 1}}, {"a": {"c": 1}},
                 id="nulls-dropped-when-replacing-scalar"),
    pytest.param({"a": {"b": 1}}, {"a": [None, {"c": None}]}, {"a": [None, {"c": None}]},
                 id="non-object-replacing-object-taken-as-is"),
    pytest.param({"metadata": {"labels": {"a": "1"}}},
                 {"metadata": {"labels": {"b": "2"}}},
                 {"metadata": {"labels": {"a": "1", "b": "2"}}}, id="kubectl-label"),
]


@pytest.mark.parametrize(("original", "patch", "expected"), CASES)
def test_merge(original: dict[str, Any], patch: dict[str, Any],
               expected: dict[str, Any]) -> None:
    before = json.dumps([original, patch])
    assert apply_merge_patch(original, patch) == expected
    assert json.dumps([original, patch]) == before


@pytest.mark.parametrize(("body", "message"), [
    pytest.param(b"[1]", "error decoding patch: json: cannot unmarshal array into Go value of "
                 "type map[string]interface {}", id="array"),
    pytest.param(b'"x"', "error decoding patch: json: cannot unmarshal string into Go value of "
                 "type map[string]interface {}", id="string"),
    pytest.param(b'{"a":}', "error decoding patch: invalid character '}' looking for beginning "
                 "of value", id="syntax"),
    pytest.param(b'{"a":1', "error decoding patch: unexpected end of JSON input", id="truncated"),
    pytest.param(b"null", "Invalid JSON Patch", id="null"),
])
def test_undecodable_body_is_400(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        decode_merge_patch(body)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400, "BadRequest", message)


def test_decode_object() -> None:
    assert decode_merge_patch(b'{"spec":{"replicas":3}}') == {"spec": {"replicas": 3}}
