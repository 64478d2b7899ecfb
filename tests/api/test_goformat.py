"""Go renderings of bad values, as upstream's ``field.Error`` prints them (the expected
strings are what Go's fmt prints for the same values)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import field_error, invalid
from kubegc.api.goformat import (
    field_value,
    go_float,
    go_quote,
    go_sharp_v,
    json_marshal,
    json_number,
)
from kubegc.registry.validation.objectmeta import (
    validate_delete_options,
    validate_finalizers,
    validate_new_finalizers_on_deleting,
    validate_owner_references,
)


@pytest.mark.parametrize(("value", "go_type", "expected"), [
    pytest.param("x", None, '"x"', id="string-quoted"),
    pytest.param('say "hi"\n', None, '"say \\"hi\\"\\n"', id="string-escaped"),
    pytest.param(None, None, '"null"', id="nil"),
    pytest.param(None, "*int64", '"null"', id="nil-pointer"),
    pytest.param(True, None, "true", id="bool"),
    pytest.param(-1, None, "-1", id="int"),
    pytest.param(30, "*int64", "30", id="pointer-dereferenced"),
    pytest.param(1.5, None, "1.5", id="float"),
    pytest.param({"a": "c"}, None, 'map[string]string{"a":"c"}', id="map-of-strings"),
    pytest.param({"b": "2", "a": "1"}, None, 'map[string]string{"a":"1", "b":"2"}',
                 id="map-keys-sorted"),
    pytest.param(["x"], None, '[]string{"x"}', id="slice-of-strings"),
    pytest.param(["x", "y"], None, '[]string{"x", "y"}', id="two-strings"),
    pytest.param([], "[]string", "[]string{}", id="empty-slice"),
    pytest.param(None, "[]string", "[]string(nil)", id="nil-slice"),
    pytest.param(["x", 1, True, None, 2.5], None,
                 '[]interface {}{"x", 1, true, interface {}(nil), 2.5}', id="slice-of-any"),
    pytest.param({"a": {"b": [1]}}, None,
                 'map[string]interface {}{"a":map[string]interface {}{"b":[]interface {}{1}}}',
                 id="nested"),
    pytest.param("uid-1", "types.UID", '"uid-1"', id="named-string"),
])
def test_field_value(value: Any, go_type: str | None, expected: str) -> None:
    assert field_value(value, go_type) == expected


def test_owner_reference_struct() -> None:
    ref = {"apiVersion": "v1", "kind": "Event", "name": "a", "uid": "u1"}
    assert field_value(ref, "v1.OwnerReference") == (
        'v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"a", UID:"u1", '
        "Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}")


def test_slice_of_structs_prints_pointers_as_addresses() -> None:
    refs = [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": True},
            {"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": "2", "controller": True,
             "blockOwnerDeletion": False}]
    text = go_sharp_v(refs, "[]v1.OwnerReference")
    assert text.startswith('[]v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"Pod", '
                           'Name:"a", UID:"1", Controller:(*bool)(0xc')
    assert text.count("v1.OwnerReference{") == 3 and text.count("(*bool)(0xc") == 3
    assert "BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{" in text
    assert "True" not in text and "'" not in text


@pytest.mark.parametrize(("value", "expected"), [
    (1.0, "1"), (0.5, "0.5"), (123456.0, "123456"), (1e6, "1e+06"), (1234567.0, "1.234567e+06"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (1.5e-7, "1.5e-07"), (-2.25, "-2.25"),
    (1e21, "1e+21"), (float("inf"), "+Inf"), (float("nan"), "NaN"), (-0.0, "-0"),
])
def test_go_float(value: float, expected: str) -> None:
    assert go_float(value) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", '"plain"'), ("tab\there", '"tab\\there"'), ("\x00\x7f", '"\\x00\\x7f"'),
    ("héllo ✓", '"héllo ✓"'), ("\u200b", '"\\u200b"'), ("back\\slash", '"back\\\\slash"'),
    ("\x85\xa0", '"\\u0085\\u00a0"'), ("\U0001f600\U000e0001", '"\U0001f600\\U000e0001"'),
    ("\ud800", '"\ufffd"'),  # Go's JSON decoder has made a lone surrogate U+FFFD
])
def test_go_quote(text: str, expected: str) -> None:
    assert go_quote(text) == expected


@pytest.mark.parametrize(("value", "go", "json"), [
    (1.5, "1.5", "1.5"), (2.0, "2", "2"), (-0.25, "-0.25", "-0.25"),
    (123456.0, "123456", "123456"), (1e6, "1e+06", "1000000"), (1234567.0, "1.234567e+06",
                                                                "1234567"),
    (0.0001, "0.0001", "0.0001"), (0.00001, "1e-05", "0.00001"), (1e-7, "1e-07", "1e-7"),
    (1.5e-10, "1.5e-10", "1.5e-10"), (1e20, "1e+20", "100000000000000000000"),
    (1e21, "1e+21", "1e+21"), (0.0, "0", "0"), (-0.0, "-0", "-0"),
])
def test_go_float_and_json_number(value: float, go: str, json: str) -> None:
    assert (go_float(value), json_number(value)) == (go, json)


def test_unstructured_values_print_their_dynamic_type() -> None:
    assert go_sharp_v({"b": [1, "x", None], "a": True}, "interface {}") == (
        'map[string]interface {}{"a":true, "b":[]interface {}{1, "x", interface {}(nil)}}')
    assert field_value({"a": "c"}, "interface {}") == 'map[string]interface {}{"a":"c"}'
    assert field_value("x", "interface {}") == '"x"'
    assert field_value(2.0, "interface {}") == "2"
    assert field_value(None, "interface {}") == '"null"'


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(None, "null", id="null"),
    pytest.param([1, 2.5, 1e21, True], "[1,2.5,1e+21,true]", id="numbers"),
    pytest.param({"b": {"y": None}, "a": []}, '{"a":[],"b":{"y":null}}', id="keys-sorted"),
    pytest.param('<a href="x">&\n\t\x01\x7f',
                 '"\\u003ca href=\\"x\\"\\u003e\\u0026\\n\\t\\u0001\x7f"',
                 id="html-and-control-escaped"),
    pytest.param("\b\f\u2028é", '"\\b\\f\\u2028é"', id="short-escapes-and-separators"),
])
def test_json_marshal(value: Any, expected: str) -> None:
    assert json_marshal(value) == expected


@pytest.mark.parametrize(("kind", "value", "detail", "expected"), [
    pytest.param("FieldValueInvalid", {"a": "c"}, "`selector` does not match template `labels`",
                 'Invalid value: map[string]string{"a":"c"}: `selector` does not match '
                 "template `labels`", id="invalid"),
    pytest.param("FieldValueNotSupported", ["x"], 'supported values: "All"',
                 'Unsupported value: []string{"x"}: supported values: "All"', id="not-supported"),
    pytest.param("FieldValueDuplicate", "web", "", 'Duplicate value: "web"', id="duplicate"),
    pytest.param("FieldValueRequired", None, "", "Required value", id="required-no-value"),
    pytest.param("FieldValueForbidden", "x", "not allowed", "Forbidden: not allowed",
                 id="forbidden-no-value"),
    pytest.param("FieldValueInvalid", False, "must be true", "Invalid value: false: must be true",
                 id="bool"),
])
def test_field_error_messages(kind: str, value: Any, detail: str, expected: str) -> None:
    assert field_error(kind, "spec.x", detail, value).message == expected


def _messages(causes: list[Any]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_validation_messages_read_as_upstream() -> None:
    assert _messages(validate_finalizers(["orphan", "foregroundDeletion"])) == [
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
        "finalizer orphan and foregroundDeletion cannot be both set"]
    assert _messages(validate_new_finalizers_on_deleting(["a/x"], ["a/x", "z/b", "a/b"])) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
        'being deleted, found new finalizers []string{"a/b", "z/b"}']
    assert _messages(validate_owner_references(
        [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}])) == [
        'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", '
        'Kind:"Event", Name:"e", UID:"1", Controller:(*bool)(nil), '
        "BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner"]
    assert _messages(validate_owner_references(
        [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": ""}])) == [
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']
    assert _messages(validate_delete_options({"propagationPolicy": "Nope"})) == [
        'propagationPolicy: Unsupported value: "Nope": supported values: "Foreground", '
        '"Background", "Orphan", "nil"']


def test_aggregate_of_several_causes() -> None:
    causes = validate_owner_references([
        {"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": "2", "controller": True},
        {"apiVersion": "v1", "kind": "Pod", "name": "c", "uid": "3", "controller": True}])
    message = invalid("ConfigMap", "", "c", causes).message
    assert message.startswith('ConfigMap "c" is invalid: [metadata.ownerReferences: Invalid '
                              "value: []v1.OwnerReference{v1.OwnerReference{")
    assert "for Pod/a and Pod/b" in message and "for Pod/a and Pod/c" in message
