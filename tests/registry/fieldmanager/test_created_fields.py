"""``created_fields``' memo: objects of one template share the work, never the result."""

from __future__ import annotations

from typing import Any

import orjson

from kubegc.registry.fieldmanager.created_fields import created_fields
from kubegc.registry.fieldmanager.strategic_schema import BUILTIN_SCHEMA


def _pod(name: str, image: str = "nginx") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "web", "image": image,
                                     "ports": [{"containerPort": 80}]}]}}


def test_equal_specs_give_equal_but_independent_documents() -> None:
    first = created_fields(_pod("a"), BUILTIN_SCHEMA, "Pod")
    hits = BUILTIN_SCHEMA.memo.hits
    second = created_fields(_pod("b"), BUILTIN_SCHEMA, "Pod")
    assert BUILTIN_SCHEMA.memo.hits > hits
    assert second["f:spec"] == first["f:spec"]
    assert second["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    second["f:spec"]["f:containers"].clear()  # a caller editing its document ...
    third = created_fields(_pod("c"), BUILTIN_SCHEMA, "Pod")
    assert third["f:spec"] == first["f:spec"]  # ... changes nobody else's


def test_a_different_spec_is_walked_again() -> None:
    base = created_fields(_pod("a"), BUILTIN_SCHEMA, "Pod")
    other = _pod("a")
    other["spec"]["containers"][0]["env"] = [{"name": "X", "value": "1"}]
    got = created_fields(other, BUILTIN_SCHEMA, "Pod")
    container = got["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container["f:env"] == {'k:{"name":"X"}': {".": {}, "f:name": {}, "f:value": {}}}
    assert got != base


def test_the_same_json_under_another_type_is_not_confused() -> None:
    spec = {"containers": [{"name": "web", "image": "nginx"}]}
    as_pod = created_fields({"kind": "Pod", "spec": spec}, BUILTIN_SCHEMA, "Pod")
    unknown = created_fields({"kind": "Thing", "spec": spec}, BUILTIN_SCHEMA, "")
    assert 'k:{"name":"web"}' in as_pod["f:spec"]["f:containers"]
    assert unknown["f:spec"]["f:containers"] == {}  # an untyped list is atomic


def test_fragments_encode_to_the_same_document() -> None:
    """For a caller that only encodes the result (the store's create), a memoized subtree
    comes back pre-encoded: the JSON is the same as the decoded document's."""
    created_fields(_pod("a"), BUILTIN_SCHEMA, "Pod")  # fills the memo
    plain = created_fields(_pod("b"), BUILTIN_SCHEMA, "Pod")
    encoded = created_fields(_pod("b"), BUILTIN_SCHEMA, "Pod", fragments=True)
    assert isinstance(encoded["f:spec"], orjson.Fragment)
    assert orjson.loads(orjson.dumps(encoded)) == plain


def test_metadata_is_shared_by_shape_not_by_label_values() -> None:
    """``f:metadata`` depends on label and annotation keys, not their values: Pods whose
    labels differ only in value (a StatefulSet's pod-name) share the work."""
    first = _pod("a")
    first["metadata"]["annotations"] = {"note": "x"}
    created_fields(first, BUILTIN_SCHEMA, "Pod")
    hits = BUILTIN_SCHEMA.memo.hits
    second = _pod("b")  # label app=b instead of app=a
    second["metadata"]["annotations"] = {"note": "y"}
    got = created_fields(second, BUILTIN_SCHEMA, "Pod")
    assert BUILTIN_SCHEMA.memo.hits >= hits + 2  # metadata and spec
    assert got["f:metadata"] == {"f:annotations": {".": {}, "f:note": {}},
                                 "f:labels": {".": {}, "f:app": {}}}
    other_keys = _pod("c")
    other_keys["metadata"]["labels"] = {"tier": "web"}
    assert created_fields(other_keys, BUILTIN_SCHEMA, "Pod")["f:metadata"] == {
        "f:labels": {".": {}, "f:tier": {}}}


def test_owner_references_and_finalizers_are_part_of_the_metadata_shape() -> None:
    def with_owner(uid: str) -> dict[str, Any]:
        pod = _pod("a")
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o",
                                               "uid": uid}]
        pod["metadata"]["finalizers"] = [f"f/{uid}"]
        return pod

    one = created_fields(with_owner("u1"), BUILTIN_SCHEMA, "Pod")["f:metadata"]
    two = created_fields(with_owner("u2"), BUILTIN_SCHEMA, "Pod")["f:metadata"]
    assert 'k:{"uid":"u1"}' in one["f:ownerReferences"] and 'v:"f/u1"' in one["f:finalizers"]
    assert 'k:{"uid":"u2"}' in two["f:ownerReferences"] and 'v:"f/u2"' in two["f:finalizers"]


def test_a_label_map_with_a_non_scalar_value_is_not_reduced_to_its_keys() -> None:
    """Only scalar values are leaves whatever they are: a (bad) map value has members."""
    plain = _pod("a")
    plain["metadata"]["annotations"] = {"x": "1"}
    nested = _pod("a")
    nested["metadata"]["annotations"] = {"x": {"y": "1"}}
    assert created_fields(plain, BUILTIN_SCHEMA, "Pod")["f:metadata"]["f:annotations"] == {
        ".": {}, "f:x": {}}
    assert created_fields(nested, BUILTIN_SCHEMA, "Pod")["f:metadata"]["f:annotations"] == {
        ".": {}, "f:x": {".": {}, "f:y": {}}}


def test_empty_top_level_maps_set_no_field() -> None:
    """``spec: {}``, ``status: {}`` (what protobuf bodies carry for empty messages) are Go's
    zero structs, omitted from typed objects: they own nothing, as upstream."""
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": {"a": "b"}},
          "spec": {}, "status": {}}
    assert created_fields(ns, BUILTIN_SCHEMA, "ConditionedObject") == {
        "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}
