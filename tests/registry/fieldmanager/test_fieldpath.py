"""Field sets of server-side apply: FieldsV1 encoding, path strings, walks over objects."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegc.registry.fieldmanager import fieldpath as fp
from kubegc.registry.fieldmanager.apply import _root
from kubegc.registry.fieldmanager.created_fields import created_fields
from kubegc.registry.fieldmanager.fieldpath import (
    Path,
    applied_set,
    compare,
    decode_fields,
    encode_fields,
    locate,
    path_string,
)
from kubegc.registry.fieldmanager.strategic_schema import BUILTIN_SCHEMA

CONTAINERS = ("f:spec", "f:containers")
NGINX = (*CONTAINERS, 'k:{"name":"nginx"}')


def test_encode_marks_members_with_children_by_a_dot() -> None:
    paths = {NGINX, (*NGINX, "f:image"), ("f:metadata", "f:finalizers", 'v:"a"')}
    encoded = encode_fields(paths)
    assert encoded == {
        "f:metadata": {"f:finalizers": {'v:"a"': {}}},
        "f:spec": {"f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}}}},
    }
    assert list(encoded["f:spec"]["f:containers"]['k:{"name":"nginx"}']) == [".", "f:image"]
    assert decode_fields(encoded) == paths


@pytest.mark.parametrize(("path", "text"), [
    pytest.param(("f:spec", "f:replicas"), ".spec.replicas", id="fields"),
    pytest.param((*NGINX, "f:image"), '.spec.containers[name="nginx"].image', id="key"),
    pytest.param(("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}'),
                 '.spec.ports[port=80,protocol="TCP"]', id="multi-key"),
    pytest.param(("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]',
                 id="set-value"),
    pytest.param(("f:a", "i:2"), ".a[2]", id="index"),
])
def test_path_string(path: Path, text: str) -> None:
    assert path_string(path) == text


POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "finalizers": ["a", "b"]},
       "spec": {"containers": [{"name": "nginx", "ports": [{"containerPort": 80}],
                                "resources": {}}],
                "tolerations": [{"key": "k"}]}}


def test_applied_set_of_a_pod() -> None:
    assert applied_set(POD, BUILTIN_SCHEMA, "Pod") == {
        ("f:metadata", "f:finalizers", 'v:"a"'), ("f:metadata", "f:finalizers", 'v:"b"'),
        NGINX, (*NGINX, "f:name"), (*NGINX, "f:resources"),
        (*NGINX, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'),
        (*NGINX, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}', "f:containerPort"),
        ("f:spec", "f:tolerations"),
    }


def test_locate_finds_items_by_key_with_defaults() -> None:
    slot = locate(POD, (*NGINX, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'),
                  BUILTIN_SCHEMA, "Pod")
    assert slot is not None and slot.get() == {"containerPort": 80}
    assert locate(POD, (*NGINX, "f:image"), BUILTIN_SCHEMA, "Pod") is None


def _pod(**changes: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                           "spec": {"containers": [{"name": "nginx", "image": "a"}]}}
    pod["spec"].update(changes)
    return pod


def test_compare_reports_added_modified_removed() -> None:
    old = _pod(nodeName="n1")
    new = _pod(containers=[{"name": "nginx", "image": "b"}, {"name": "side"}],
               securityContext={"runAsUser": 1})
    changes = compare(old, new, BUILTIN_SCHEMA, "Pod")
    side = (*CONTAINERS, 'k:{"name":"side"}')
    assert changes.added == {side, (*side, "f:name"), ("f:spec", "f:securityContext"),
                             ("f:spec", "f:securityContext", "f:runAsUser")}
    assert changes.modified == {(*NGINX, "f:image")}
    assert changes.removed == {("f:spec", "f:nodeName")}


# A create's managedFields are built in one walk (created_fields.created_fields); they must be
# exactly what the general comparison produces, for any object shape.
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text("ab", max_size=2),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(
        ["name", "a", "containerPort", "protocol", "port", "key", "type", "image",
         "containers", "ports", "env", "template", "spec", "metadata", "labels"]), c,
        max_size=3),
    max_leaves=15)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("v1", "Service"),
                        ("v1", "ConfigMap"), ("example.com/v1", "Widget"), ("batch/v1", "Job")]),
       st.dictionaries(st.sampled_from(["spec", "status", "data", "x"]), _values, max_size=4),
       st.dictionaries(st.sampled_from(["name", "labels", "finalizers", "ownerReferences",
                                        "uid", "annotations", "generation"]), _values,
                       max_size=3))
def test_created_fields_equal_the_general_comparison(
        gvk: tuple[str, str], body: dict[str, Any], meta: dict[str, Any]) -> None:
    obj = {"apiVersion": gvk[0], "kind": gvk[1], **body, "metadata": meta}
    general = fp.compare({}, obj, BUILTIN_SCHEMA, _root(obj, None, BUILTIN_SCHEMA)).added
    expected = fp.encode_fields(general - fp.STRIPPED) if general - fp.STRIPPED else {}
    got = created_fields(obj, BUILTIN_SCHEMA, _root(obj, None, BUILTIN_SCHEMA))
    assert orjson.dumps(got) == orjson.dumps(expected)


# An update edits a stored FieldsV1 document (fieldpath.edited_fields) instead of decoding
# and re-rendering it; the result must be exactly the rendering of the edited set.
_paths = st.lists(st.sampled_from(["f:a", "f:b", "f:c", 'k:{"name":"x"}', 'v:"y"', "i:0"]),
                  min_size=1, max_size=4).map(tuple)


@settings(max_examples=400, deadline=None)
@given(st.sets(_paths, max_size=8), st.sets(_paths, max_size=4), st.sets(_paths, max_size=4),
       st.booleans())
def test_edited_fields_equal_rendering_the_edited_set(
        members: set[Path], removed: set[Path], added: set[Path], reverse: bool) -> None:
    stored = encode_fields(members)
    if reverse:  # not as encode_fields renders it: the result must be rendered afresh
        stored = _reversed(stored)
    before = orjson.dumps(stored)
    edited = fp.edited_fields(stored, removed, added)
    assert orjson.dumps(stored) == before
    if (members - removed) | added == members:
        assert edited is stored
    else:
        assert orjson.dumps(edited) == orjson.dumps(encode_fields((members - removed) | added))
    assert fp.has_members(edited) == bool((members - removed) | added)
    assert all(fp.is_member(stored, p) == (p in members) for p in removed | added)


def _reversed(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: _reversed(tree[k]) for k in reversed(tree)}


def test_labels_given_as_a_list_do_not_share_the_memo_of_a_map_of_the_same_keys() -> None:
    """Found by the property above (in a full run, where the memo is shared): ``f:metadata``
    was memoized with labels reduced to the list of their keys, which is also what
    ``labels: ["a"]`` (a list, no field below) looks like, so ``{"a": None}`` then got
    ``f:labels`` without ``f:a``."""
    for labels in (["a"], {"a": None}, {"a": "x"}, ["a"]):
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": labels}}
        root = _root(obj, None, BUILTIN_SCHEMA)
        general = fp.compare({}, obj, BUILTIN_SCHEMA, root).added
        expected = fp.encode_fields(general - fp.STRIPPED) if general - fp.STRIPPED else {}
        assert orjson.dumps(created_fields(obj, BUILTIN_SCHEMA, root)) == orjson.dumps(expected)
