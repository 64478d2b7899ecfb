"""Structural schemas of custom resources: pruning, defaulting and validation with
kube-apiserver's messages. The validation tables marked "upstream" are
apiextensions-apiserver's own (pkg/apiserver/validation/validation_test.go,
TestValidateCustomResource); the rest follow kube-openapi's message formats."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubegc.registry.structural import compile_schema, default, prune, validate, validate_status


def _errors(schema: dict[str, Any], obj: dict[str, Any]) -> set[str]:
    return {f"{c.field}: {c.message}" for c in validate(obj, compile_schema(schema))}


def _field(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"field": props}}


_ANY_VALUES: tuple[Any, ...] = (None, "foo", 42, True, 1.2, [], {})
NOT_NULLABLE = _field(type="object")
NULLABLE = _field(type="object", nullable=True)
INT_OR_STRING = _field(**{"x-kubernetes-int-or-string": True})
INT_OR_STRING_ANY_OF = _field(**{"nullable": True, "x-kubernetes-int-or-string": True,
                                 "anyOf": [{"type": "integer"}, {"type": "string"}]})
INT_OR_STRING_ALL_OF = _field(**{"nullable": True, "x-kubernetes-int-or-string": True,
                                 "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]})
ENUM = _field(type="object", required=["nestedint", "nestedstring"], properties={
    "nestedint": {"type": "integer", "enum": [1, 2]},
    "nestedstring": {"type": "string", "enum": ["a", "b"]}})


def _type_error(path: str, expected: str, actual: str) -> str:
    return (f'{path}: Invalid value: "{actual}": {path} in body must be of type {expected}: '
            f'"{actual}"')


ANY_OF = '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)'
ALL_OF = ('<nil>: Invalid value: "": "field" must validate all the schemas (allOf). '
          "None validated")


@pytest.mark.parametrize(("schema", "obj", "expected"), [
    # upstream: "!nullable"
    *[pytest.param(NOT_NULLABLE, {"field": v}, {_type_error("field", "object", t)},
                   id=f"not-nullable-{t}")
      for v, t in (("foo", "string"), (42, "integer"), (True, "boolean"), (1.2, "number"),
                   ([], "array"), (None, "null"))],
    pytest.param(NOT_NULLABLE, {"field": {}}, set(), id="not-nullable-ok"),
    # upstream: "nullable", "nullable and no type"
    pytest.param(NULLABLE, {"field": None}, set(), id="nullable-null"),
    pytest.param(NULLABLE, {"field": 42}, {_type_error("field", "object", "integer")},
                 id="nullable-integer"),
    *[pytest.param(_field(nullable=True), {"field": v}, set(), id=f"no-type-{i}")
      for i, v in enumerate(_ANY_VALUES)],
    # upstream: "x-kubernetes-int-or-string"
    pytest.param(INT_OR_STRING, {"field": 42}, set(), id="int-or-string-int"),
    pytest.param(INT_OR_STRING, {"field": "foo"}, set(), id="int-or-string-string"),
    *[pytest.param(INT_OR_STRING, {"field": v}, {_type_error("field", "integer,string", t)},
                   id=f"int-or-string-{t}")
      for v, t in ((None, "null"), (True, "boolean"), (1.2, "number"), ({}, "object"),
                   ([], "array"))],
    # upstream: "nullable, x-kubernetes-int-or-string and user-provided anyOf" / "... allOf"
    pytest.param(INT_OR_STRING_ANY_OF, {"field": None}, set(), id="any-of-null"),
    pytest.param(INT_OR_STRING_ANY_OF, {"field": True}, {
        ANY_OF, _type_error("field", "integer,string", "boolean"),
        _type_error("field", "integer", "boolean")}, id="any-of-boolean"),
    pytest.param(INT_OR_STRING_ALL_OF, {"field": 1.2}, {
        ALL_OF, ANY_OF, _type_error("field", "integer,string", "number"),
        _type_error("field", "integer", "number")}, id="all-of-number"),
    pytest.param(INT_OR_STRING_ALL_OF, {"field": "foo"}, set(), id="all-of-ok"),
    # upstream: "required field"
    pytest.param({"type": "object", "required": ["field"], "properties": {"field": {
        "type": "object", "required": ["nested"], "properties": {"nested": {}}}}},
        {"test": "a"}, {"field: Required value"}, id="required"),
    pytest.param({"type": "object", "required": ["field"], "properties": {"field": {
        "type": "object", "required": ["nested"], "properties": {"nested": {}}}}},
        {"field": {}}, {"field.nested: Required value"}, id="required-nested"),
    # upstream: "enum"
    pytest.param(ENUM, {"field": {}}, {"field.nestedint: Required value",
                                       "field.nestedstring: Required value"}, id="enum-required"),
    pytest.param(ENUM, {"field": {"nestedint": "x", "nestedstring": True}}, {
        _type_error("field.nestedint", "integer", "string"),
        'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
        _type_error("field.nestedstring", "string", "boolean"),
        'field.nestedstring: Unsupported value: true: supported values: "a", "b"'}, id="enum"),
    pytest.param(ENUM, {"field": {"nestedint": 2.0, "nestedstring": "b"}}, set(),
                 id="enum-integral-float"),
    # upstream: "maxProperties", "maxItems", "maxLength"
    pytest.param({"type": "object", "properties": {"fieldX": {"type": "object",
                                                              "maxProperties": 2}}},
                 {"fieldX": {"a": True, "b": True, "c": True}},
                 {"fieldX: Too many: 3: must have at most 2 items"}, id="max-properties"),
    pytest.param({"type": "object", "properties": {"fieldX": {"type": "array", "maxItems": 2}}},
                 {"fieldX": ["a", "b", "c"]}, {"fieldX: Too many: 3: must have at most 2 items"},
                 id="max-items"),
    pytest.param({"type": "object", "properties": {"fieldX": {"type": "string",
                                                              "maxLength": 2}}},
                 {"fieldX": "abc"}, {"fieldX: Too long: may not be more than 2 bytes"},
                 id="max-length"),
])
def test_upstream_validation_table(schema: dict[str, Any], obj: dict[str, Any],
                                   expected: set[str]) -> None:
    assert _errors(schema, obj) == expected


SPEC = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
    "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1.5,
              "multipleOf": 0.25},
    "step": {"type": "integer", "multipleOf": 5},
    "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 3},
    "at": {"type": "string", "format": "date-time"},
    "big": {"type": "integer", "format": "int32"},
    "tags": {"type": "array", "minItems": 1, "uniqueItems": True,
             "items": {"type": "string"}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"},
               "minProperties": 1},
    "mode": {"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "pattern": "a"}]},
    "notX": {"type": "string", "not": {"enum": ["x"]}},
}}}}


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param({"replicas": 0}, 'spec.replicas: Invalid value: 0: spec.replicas in body '
                 "should be greater than or equal to 1", id="minimum"),
    pytest.param({"replicas": 11}, "spec.replicas: Invalid value: 11: spec.replicas in body "
                 "should be less than or equal to 10", id="maximum"),
    pytest.param({"replicas": 2.0}, None, id="integral-float-is-an-integer"),
    pytest.param({"replicas": 2.5}, _type_error("spec.replicas", "integer", "number"),
                 id="float-is-not-an-integer"),
    pytest.param({"ratio": 1.5}, "spec.ratio: Invalid value: 1.5: spec.ratio in body should "
                 "be less than 1.5", id="exclusive-maximum"),
    pytest.param({"ratio": 0}, None, id="integer-is-a-number"),
    pytest.param({"ratio": 1}, "spec.ratio: Invalid value: 1: spec.ratio in body should be "
                 "less than 1", id="integer-against-a-truncated-bound-as-upstream"),
    pytest.param({"ratio": 0.3}, "spec.ratio: Invalid value: 0.3: spec.ratio in body should "
                 "be a multiple of 0.25", id="multiple-of-float"),
    pytest.param({"step": 7}, "spec.step: Invalid value: 7: spec.step in body should be a "
                 "multiple of 5", id="multiple-of-integer"),
    pytest.param({"name": "ab"}, 'spec.name: Invalid value: "ab": spec.name in body should '
                 "be at least 3 chars long", id="min-length"),
    pytest.param({"name": "ABC"}, 'spec.name: Invalid value: "ABC": spec.name in body should '
                 "match '^[a-z]+$'", id="pattern"),
    pytest.param({"at": "yesterday"}, 'spec.at: Invalid value: "yesterday": spec.at in body '
                 'must be of type date-time: "yesterday"', id="date-time"),
    pytest.param({"at": "2024-02-29T23:59:59.5+01:00"}, None, id="date-time-ok"),
    pytest.param({"big": 1 << 40}, None, id="int32-format-is-not-validated-upstream"),
    pytest.param({"tags": []}, "spec.tags: Invalid value: 0: spec.tags in body should have at "
                 "least 1 items", id="min-items"),
    pytest.param({"tags": ["a", "a"]}, 'spec.tags: Invalid value: "": spec.tags in body '
                 "shouldn't contain duplicates", id="unique-items"),
    pytest.param({"labels": {"a": 1}}, _type_error("spec.labels.a", "string", "integer"),
                 id="additional-properties"),
    pytest.param({"labels": {}}, "spec.labels: Invalid value: 0: spec.labels in body should "
                 "have at least 1 properties", id="min-properties"),
    pytest.param({"mode": "a"}, '<nil>: Invalid value: "": "spec.mode" must validate one and '
                 "only one schema (oneOf). Found 2 valid alternatives", id="one-of-two"),
    pytest.param({"mode": "ba"}, None, id="one-of-one"),
    pytest.param({"mode": "b"}, {'<nil>: Invalid value: "": "spec.mode" must validate one and '
                 "only one schema (oneOf). Found none valid",
                 'spec.mode: Unsupported value: "b": supported values: "a"'}, id="one-of-none"),
    pytest.param({"notX": "x"}, '<nil>: Invalid value: "": "spec.notX" must not validate the '
                 "schema (not)", id="not"),
])
def test_kube_openapi_messages(spec: dict[str, Any], expected: str | set[str] | None) -> None:
    want = expected if isinstance(expected, set) else {expected} if expected else set()
    assert _errors(SPEC, {"spec": spec}) == want


def test_errors_keep_the_objects_order_and_the_checks_order() -> None:
    causes = validate({"spec": {"replicas": "x", "name": 5}}, compile_schema(SPEC))
    assert [c.field for c in causes] == ["spec.replicas", "spec.name"]
    assert [c.reason for c in causes] == ["FieldValueTypeInvalid", "FieldValueTypeInvalid"]


LISTS = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "ports": {"type": "array", "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"], "items": {
                  "type": "object", "properties": {"name": {"type": "string"},
                                                   "port": {"type": "integer"}}}},
    "routes": {"type": "array", "x-kubernetes-list-type": "map",
               "x-kubernetes-list-map-keys": ["host", "path"], "items": {
                   "type": "object", "properties": {"host": {"type": "string"},
                                                    "path": {"type": "string"}}}},
    "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                 "x-kubernetes-preserve-unknown-fields": True},
}}}}


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param({"tags": ["a", "b", "a", "a"]}, {'spec.tags[2]: Duplicate value: "a"'},
                 id="set"),
    pytest.param({"ports": [{"name": "http", "port": 1}, {"name": "http", "port": 2}]},
                 {'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}'},
                 id="map"),
    pytest.param({"ports": [{"port": 1}, {"port": 2}]},
                 {"spec.ports[1]: Duplicate value: map[string]interface {}{}"},
                 id="map-without-key"),
    pytest.param({"routes": [{"host": "a", "path": "/"}, {"host": "a", "path": "/"}]},
                 {'spec.routes[1]: Duplicate value: map[string]interface {}{"host":"a", '
                  '"path":"/"}'}, id="map-two-keys"),
    pytest.param({"ports": ["x"]}, {
        _type_error("spec.ports[0]", "object", "string"),
        'spec.ports[0]: Invalid value: "x": must be an object for an array of list-type map'},
        id="map-of-non-objects"),
    pytest.param({"template": {"metadata": {"name": "x"}}}, {
        "spec.template.apiVersion: Required value: must not be empty",
        "spec.template.kind: Required value: must not be empty"}, id="embedded-resource"),
    pytest.param({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "labels": {"a": 1}}}}, {
        'spec.template.metadata.labels.a: Invalid value: 1: must be a string'},
        id="embedded-metadata"),
])
def test_list_types_and_embedded_resources(spec: dict[str, Any], expected: set[str]) -> None:
    assert _errors(LISTS, {"spec": spec}) == expected


RATCHETED = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "size": {"type": "integer", "maximum": 3},
    "name": {"type": "string", "maxLength": 3},
    "ports": {"type": "array", "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {
                  "name": {"type": "string"}, "port": {"type": "integer", "maximum": 100}}}},
    "tags": {"type": "array", "x-kubernetes-list-type": "set",
             "items": {"type": "string", "maxLength": 2}},
    "atomic": {"type": "array", "items": {"type": "integer", "maximum": 1}},
}}}}


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param({"size": 5, "name": "a"}, {"size": 5, "name": "b"}, set(),
                 id="unchanged-field-not-revalidated"),
    pytest.param({"size": 5}, {"size": 6}, {"spec.size"}, id="changed-field-validated"),
    pytest.param({"name": "long"}, {"name": "long", "size": 9}, {"spec.size"},
                 id="new-field-validated"),
    pytest.param({"ports": [{"name": "a", "port": 500}, {"name": "b", "port": 1}]},
                 {"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 500}]}, set(),
                 id="map-list-items-by-key"),
    pytest.param({"ports": [{"name": "a", "port": 500}]},
                 {"ports": [{"name": "a", "port": 501}]}, {"spec.ports[0].port"},
                 id="map-list-item-changed"),
    pytest.param({"tags": ["long"]}, {"tags": ["x", "long"]}, set(), id="set-items-by-value"),
    pytest.param({"atomic": [5]}, {"atomic": [5, 0]}, {"spec.atomic[0]"},
                 id="atomic-list-items-uncorrelated"),
])
def test_validation_ratchets_unchanged_values(old: dict[str, Any], new: dict[str, Any],
                                              expected: set[str]) -> None:
    schema = compile_schema(RATCHETED)
    causes = validate({"spec": new}, schema, {"spec": old})
    assert {c.field for c in causes} == expected


def test_list_invariants_are_not_checked_on_update_when_the_old_object_broke_them() -> None:
    schema = compile_schema(RATCHETED)
    old = {"spec": {"tags": ["a", "a"], "ports": []}}
    new = {"spec": {"tags": ["a", "a", "b"], "ports": [{"name": "x"}, {"name": "x"}]}}
    assert validate(new, schema, old) == []
    assert {c.field for c in validate(new, schema, {"spec": {}})} == {
        "spec.tags[1]", "spec.ports[1]"}
    assert {c.field for c in validate_status(new, schema, old)} == set()


def test_status_is_validated_against_the_status_schema() -> None:
    schema = compile_schema({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}})
    obj = {"spec": {"size": "big"}, "status": {"ready": "yes"}}
    # as upstream: the path is under status, the message relative to the status schema,
    # and the (unchanged) spec is not validated
    assert [f"{c.field}: {c.message}" for c in validate_status(obj, schema)] == [
        'status.ready: Invalid value: "string": ready in body must be of type boolean: '
        '"string"']
    assert {c.field for c in validate(obj, schema)} == {"spec.size", "status.ready"}


PRUNED = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "value": {"type": "string"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"known": {"type": "object", "properties": {
                     "a": {"type": "string"}}}}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object"}}},
        "maybe": {"type": "string", "nullable": True},
        "never": {"type": "string"},
    }},
}}


def test_pruning_drops_what_the_schema_does_not_specify() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "bogus": 1, "labels": {"a": "b"}},
        "spec": {"replicas": 1, "colour": "blue",
                 "items": [{"name": "a", "extra": 1}],
                 "labels": {"k": {"value": "v", "other": 2}},
                 "free": {"anything": {"x": 1}, "known": {"a": "b", "z": 1}},
                 "template": {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "p", "nope": True}, "spec": {"x": 1},
                              "status": {}},
                 "maybe": None, "never": None},
        "status": {"anything": True},
    }
    unknown = prune(obj, compile_schema(PRUNED))
    assert unknown == ["spec.colour", "spec.free.known.z", "spec.items[0].extra",
                       "spec.labels.k.other", "spec.template.spec.x", "spec.template.status",
                       "status", "metadata.bogus", "spec.template.metadata.nope"]  # sorted, then
    # the unknown metadata fields (root first), as upstream's pruning and ObjectMeta coercion
    assert obj == {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "labels": {"a": "b"}},
        "spec": {"replicas": 1, "items": [{"name": "a"}], "labels": {"k": {"value": "v"}},
                 "free": {"anything": {"x": 1}, "known": {"a": "b"}},
                 "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {}},
                 "maybe": None},  # "never": null is dropped, silently (not nullable)
    }


def test_preserve_unknown_fields_at_the_root_keeps_everything() -> None:
    obj = {"metadata": {"name": "w"}, "spec": {"x": [1, {"y": 2}]}, "other": 1}
    before = copy.deepcopy(obj)
    schema = compile_schema({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    assert prune(obj, schema) == []
    assert obj == before


DEFAULTS: dict[str, Any] = {"type": "object", "properties": {"spec": {
    "type": "object", "default": {},
    "properties": {
        "replicas": {"type": "integer", "default": 1},
        "strategy": {"type": "object", "default": {"type": "Rolling"}, "properties": {
            "type": {"type": "string"}, "maxSurge": {"type": "integer", "default": 25}}},
        "ports": {"type": "array", "items": {"type": "object", "default": {"port": 80},
                                             "properties": {
                                                 "port": {"type": "integer"},
                                                 "protocol": {"type": "string",
                                                              "default": "TCP"}}}},
        "nullable": {"type": "string", "nullable": True, "default": "x"},
    }}}}


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param(None, {"replicas": 1, "strategy": {"type": "Rolling", "maxSurge": 25},
                        "nullable": "x"}, id="absent-spec-defaulted-and-nested-defaults"),
    pytest.param({"replicas": 3, "strategy": {"type": "Recreate"}, "nullable": None},
                 {"replicas": 3, "strategy": {"type": "Recreate", "maxSurge": 25},
                  "nullable": None}, id="set-values-kept-nullable-null-kept"),
    pytest.param({"replicas": None, "ports": [None, {"port": 8080}]},
                 {"replicas": 1, "strategy": {"type": "Rolling", "maxSurge": 25},
                  "nullable": "x",
                  "ports": [{"port": 80, "protocol": "TCP"},
                            {"port": 8080, "protocol": "TCP"}]},
                 id="non-nullable-nulls-and-list-items"),
])
def test_defaulting(spec: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    obj: dict[str, Any] = {} if spec is None else {"spec": spec}
    schema = compile_schema(DEFAULTS)
    default(obj, schema)
    assert obj["spec"] == expected
    assert DEFAULTS["properties"]["spec"]["properties"]["strategy"]["default"] == {
        "type": "Rolling"}  # defaults are copied, never shared
