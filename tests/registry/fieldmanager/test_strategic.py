"""Strategic merge patch.

The first tables replay cases of apimachinery's strategicpatch/patch_test.go against its
``MergeItem`` test type (rebuilt below as a patch schema): each case is (object, patch,
expected result), from the cases' two-way (original → modified) and three-way (current →
result) applications. The last tables exercise the built-in kinds' metadata, including the
patch kubectl's client-side apply sends for a Deployment.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubegc.api.errors import StatusError
from kubegc.registry.fieldmanager.strategic import UNSUPPORTED_MESSAGE, strategic_merge_patch
from kubegc.registry.fieldmanager.strategic_schema import FieldMeta, PatchSchema

_BY_NAME = FieldMeta(strategy="merge", merge_key="name", type="mergeItem")
MERGE_ITEM = PatchSchema({
    "mergeItem": {
        "mergingList": _BY_NAME,
        "nonMergingList": FieldMeta(type="mergeItem"),
        "mergingIntList": FieldMeta(strategy="merge"),
        "mergeItemPtr": _BY_NAME,
        "replacingItem": FieldMeta(strategy="replace"),
        "retainKeysMap": FieldMeta(strategy="retainKeys", type="retainKeysMergeItem"),
        "retainKeysMergingList": FieldMeta(
            strategy="merge,retainKeys", merge_key="name", type="mergeItem"),
    },
    "retainKeysMergeItem": {
        "mergingIntList": FieldMeta(strategy="merge"),
        "mergingList": _BY_NAME,
        "nonMergingList": FieldMeta(type="mergeItem"),
    },
})


def merge_item_patch(original: str, patch: str) -> Any:
    return strategic_merge_patch(yaml.safe_load(original) or {}, yaml.safe_load(patch) or {},
                                 schema=MERGE_ITEM, root="mergeItem")


MAPS_AND_SCALARS = [
    pytest.param("{name: 1}", "{value: 1}", "{name: 1, value: 1}", id="add-field"),
    pytest.param("{name: 1, other: a}", "{name: null, value: 1}", "{value: 1, other: a}",
                 id="null-deletes-field"),
    pytest.param("{name: a, other: a}", "{name: 1, value: 1, other: null}",
                 "{name: 1, value: 1}", id="nulls-delete-and-are-not-stored"),
    pytest.param("{simpleMap: {key1: a, key2: 1, other: a}}", "{simpleMap: {key1: 1, key2: null}}",
                 "{simpleMap: {key1: 1, other: a}}", id="nested-map-merges"),
    pytest.param("{simpleMap: {key1: 1, key2: 1}}", "{simpleMap: {$patch: delete}}",
                 "{simpleMap: {}}", id="patch-delete-empties-map"),
    pytest.param("{name: 1, value: 1}", "{$patch: replace}", "{}", id="patch-replace-whole-map"),
    pytest.param("{name: 1, value: 1}", "{other: a, $patch: replace}", "{other: a}",
                 id="patch-replace-with-content"),
    pytest.param("{name: 1}", "{}", "{name: 1}", id="empty-patch"),
    pytest.param("{nonMergingIntList: [1, 4]}", "{nonMergingIntList: [2, 3]}",
                 "{nonMergingIntList: [2, 3]}", id="untagged-list-replaced"),
    pytest.param("{replacingItem: {a: 1, b: 2}}", "{replacingItem: {c: 3}}",
                 "{replacingItem: {c: 3}}", id="replace-strategy-map"),
]

MERGING_LISTS = [
    pytest.param("{mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]}",
                 "{$setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}],"
                 " mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]}",
                 "{mergingList: [{name: 4, value: 4}, {name: 1, other: a},"
                 " {name: 2, value: 2, other: b}, {name: 3, value: 3}]}",
                 id="merge-lists-of-maps"),
    pytest.param("{mergingList: [{name: 1, other: a}, {name: 2, value: 3, other: b}]}",
                 "{$setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}],"
                 " mergingList: [{name: 2, value: 2}, {name: 3, value: 3}]}",
                 "{mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b},"
                 " {name: 3, value: 3}]}",
                 id="merge-lists-of-maps-with-conflict"),
    pytest.param("{mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2}]}",
                 "{$setElementOrder/mergingList: [{name: 1}, {name: 2}],"
                 " mergingList: [{name: 1, value: null}]}",
                 "{mergingList: [{name: 1, other: a}, {name: 2, value: 2}]}",
                 id="null-deletes-field-of-item"),
    pytest.param("{mergingList: [{name: 1}, {name: 2, other: b}]}",
                 "{$setElementOrder/mergingList: [{name: 2}],"
                 " mergingList: [{name: 1, $patch: delete}]}",
                 "{mergingList: [{name: 2, other: b}]}", id="patch-delete-item"),
    pytest.param("{mergingList: [{name: 2, other: b}]}",
                 "{$setElementOrder/mergingList: [{name: 2}],"
                 " mergingList: [{name: 1, $patch: delete}]}",
                 "{mergingList: [{name: 2, other: b}]}", id="delete-missing-item"),
    pytest.param("{mergingList: [{name: 1}, {name: 2, other: b}, {name: 4, other: c}]}",
                 "{$setElementOrder/mergingList: [{name: 2}, {name: 3}],"
                 " mergingList: [{name: 3}, {name: 1, $patch: delete}]}",
                 "{mergingList: [{name: 2, other: b}, {name: 4, other: c}, {name: 3}]}",
                 id="add-and-delete-items"),
    pytest.param("{mergingList: [{name: 1, other: a}, {name: 4, other: c}]}",
                 "{$setElementOrder/mergingList: [{name: 2}, {name: 3}],"
                 " mergingList: [{name: 2}, {name: 3}, {name: 1, $patch: delete}]}",
                 "{mergingList: [{name: 4, other: c}, {name: 2}, {name: 3}]}",
                 id="add-and-delete-items-with-conflict"),
    pytest.param("{mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3},"
                 " {name: 3}]}",
                 "{mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]}",
                 "{mergingList: [{name: 2, value: a}]}", id="delete-removes-all-duplicates"),
    pytest.param("{mergingList: [{name: 1}, {name: 2}]}", "{mergingList: [{$patch: replace}]}",
                 "{mergingList: []}", id="patch-replace-empties-list"),
    pytest.param("{mergingList: [{name: 1}, {name: 2}]}",
                 "{mergingList: [{name: 3, value: c}, {$patch: replace}]}",
                 "{mergingList: [{name: 3, value: c}]}", id="patch-replace-list"),
    pytest.param("{mergingList: []}", "{mergingList: []}", "{mergingList: []}",
                 id="merge-empty-lists"),
    pytest.param("{mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]}",
                 "{mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, other: x}]}",
                 "{mergingList: [{name: 3, value: c}, {name: 1, value: a},"
                 " {name: 2, value: b, other: x}]}", id="patch-order-wins"),
    pytest.param("{mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]}",
                 "{mergingList: [{name: 3, value: c}, {name: 1, value: a}]}",
                 "{mergingList: [{name: 2, value: b}, {name: 3, value: c}, {name: 1, value: a}]}",
                 id="patch-order-wins-around-server-items"),
    pytest.param("{mergingList: [{name: 1}, {name: 2}]}", "{mergingList: [{name: 3}]}",
                 "{mergingList: [{name: 3}, {name: 1}, {name: 2}]}",
                 id="new-item-without-order-goes-first"),
    pytest.param("{mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]},"
                 " {name: 2}]}",
                 "{$setElementOrder/mergingList: [{name: 1}, {name: 2}],"
                 " mergingList: [{name: 1, $setElementOrder/mergingList: [{name: 2}, {name: 1}],"
                 " mergingList: [{name: 1, value: 1}]}]}",
                 "{mergingList: [{name: 1, mergingList: [{name: 2, value: 2},"
                 " {name: 1, value: 1}]}, {name: 2}]}", id="nested-merging-list-with-order"),
    pytest.param("{mergingList: [{name: 1, other: a, nonMergingList: [{name: 1},"
                 " {name: 2, value: 2}]}]}",
                 "{mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}]}",
                 "{mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}]}",
                 id="untagged-list-in-item-replaced"),
    pytest.param("{mergeItemPtr: [{name: 1, other: a}, {name: 3}]}",
                 "{$setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}],"
                 " mergeItemPtr: [{name: 2}]}",
                 "{mergeItemPtr: [{name: 1, other: a}, {name: 2}, {name: 3}]}",
                 id="ordered-add-keeps-server-item-last"),
]

ORDER = [
    pytest.param("{mergingList: [{name: 1, other: a}, {name: 3, value: 3}, {name: 4, value: 4},"
                 " {name: 2, value: 2}, {name: 9}]}",
                 "{$setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]}",
                 "{mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3},"
                 " {name: 1, other: a}, {name: 9}]}", id="order-with-server-only-item"),
    pytest.param("{mergingList: [{name: 1, other: a}, {name: 2, value: 2}, {name: 7}, {name: 9},"
                 " {name: 8}, {name: 3, value: 3}, {name: 4, value: 4}]}",
                 "{$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]}",
                 "{mergingList: [{name: 2, value: 2}, {name: 1, other: a}, {name: 7}, {name: 9},"
                 " {name: 8}, {name: 4, value: 4}, {name: 3, value: 3}]}",
                 id="order-with-server-only-items-in-the-middle"),
    pytest.param("{mergingList: [{name: 1}, {name: 3}]}",
                 "{$setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}],"
                 " mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
                 "{mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
                 id="order-names-missing-item"),
    pytest.param("{mergingList: [{name: 1}, {name: 2, value: dup1}, {name: 3},"
                 " {name: 2, value: dup2}, {name: 4}]}",
                 "{$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3},"
                 " {name: 2}]}",
                 "{mergingList: [{name: 2, value: dup1}, {name: 2, value: dup2}, {name: 1},"
                 " {name: 4}, {name: 3}]}", id="order-with-duplicates"),
    pytest.param("{mergingIntList: [1, 4, 2]}",
                 "{$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}",
                 "{mergingIntList: [3, 1, 4, 2]}", id="int-list-add-in-order"),
    pytest.param("{mergingIntList: [1, 2, 9, 3, 4]}",
                 "{$setElementOrder/mergingIntList: [2, 1, 4, 3]}",
                 "{mergingIntList: [2, 1, 9, 4, 3]}", id="int-list-order-with-server-item"),
    pytest.param("{mergingIntList: [1, 3]}", "{$setElementOrder/mergingIntList: [3, 2, 1]}",
                 "{mergingIntList: [3, 1]}", id="int-list-order-names-missing-item"),
]

PRIMITIVE_LISTS = [
    pytest.param("{mergingIntList: [1, 2]}", "{mergingIntList: [2, 3]}",
                 "{mergingIntList: [1, 2, 3]}", id="merge-keeps-scalars-unique"),
    pytest.param("{mergingIntList: [1, 2, 3]}", "{mergingIntList: [3, 1]}",
                 "{mergingIntList: [2, 3, 1]}", id="merge-follows-patch-order"),
    pytest.param("{mergingIntList: [1, 2, 3, 3, 4]}",
                 "{$setElementOrder/mergingIntList: [1, 2],"
                 " $deleteFromPrimitiveList/mergingIntList: [3]}",
                 "{mergingIntList: [1, 2, 4]}", id="delete-from-primitive-list"),
    pytest.param("{mergingIntList: [1, 2, 3]}",
                 "{$setElementOrder/mergingIntList: [4, 2, 1], mergingIntList: [4],"
                 " $deleteFromPrimitiveList/mergingIntList: [3]}",
                 "{mergingIntList: [4, 2, 1]}", id="add-and-delete-in-order"),
    pytest.param("{mergingIntList: [1, 2]}", "{$deleteFromPrimitiveList/mergingIntList: [3]}",
                 "{mergingIntList: [1, 2]}", id="delete-absent-value"),
    pytest.param("{mergingIntList: null}", "{$deleteFromPrimitiveList/mergingIntList: [3]}",
                 "{mergingIntList: null}", id="delete-from-null-list"),
    pytest.param("{foo: [bar]}", "{$deleteFromPrimitiveList/mergingIntList: [3]}",
                 "{foo: [bar]}", id="delete-from-missing-list-adds-nothing"),
    pytest.param("{nonMergingIntList: [1, 2, 3]}",
                 "{$deleteFromPrimitiveList/nonMergingIntList: [2]}",
                 "{nonMergingIntList: [1, 3]}", id="delete-from-untagged-list"),
]

RETAIN_KEYS = [
    pytest.param("{retainKeysMap: {value: foo}}",
                 "{retainKeysMap: {$retainKeys: [other], other: bar}}",
                 "{retainKeysMap: {other: bar}}", id="clears-unlisted-field"),
    pytest.param("{retainKeysMap: {name: type1, value: foo}}",
                 "{retainKeysMap: {$retainKeys: [name, other], name: type2, other: bar}}",
                 "{retainKeysMap: {name: type2, other: bar}}", id="discriminated-union"),
    pytest.param("{retainKeysMap: {name: foo, value: bar, other: a}}",
                 "{retainKeysMap: {$retainKeys: [name], value: null}}",
                 "{retainKeysMap: {name: foo}}", id="deletes-and-clears"),
    pytest.param("{retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key3: c}}}",
                 "{retainKeysMap: {$retainKeys: [name, simpleMap, value],"
                 " simpleMap: {key2: b}}}",
                 "{retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key3: c,"
                 " key2: b}}}", id="nested-map-still-merges"),
    pytest.param("{retainKeysMap: {name: foo, value: a}}", "{retainKeysMap: {value: b}}",
                 "{retainKeysMap: {name: foo, value: b}}", id="no-directive-plain-merge"),
    pytest.param("{retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}",
                 "{retainKeysMergingList: [{name: foo, value: null}]}",
                 "{retainKeysMergingList: [{name: bar}, {name: foo}]}",
                 id="retain-keys-list-merges-by-name"),
]


def _cases(*tables: list[Any]) -> list[Any]:
    return [case for table in tables for case in table]


@pytest.mark.parametrize(("original", "patch", "expected"),
                         _cases(MAPS_AND_SCALARS, MERGING_LISTS, ORDER, PRIMITIVE_LISTS,
                                RETAIN_KEYS))
def test_upstream_cases(original: str, patch: str, expected: str) -> None:
    assert merge_item_patch(original, patch) == yaml.safe_load(expected)


ERRORS = [
    pytest.param("{mergingList: [{name: 1}, {name: 3}, {name: 2}]}",
                 "{$setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}],"
                 " mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
                 500, "", "doesn't match $setElementOrder list", id="order-mismatch"),
    pytest.param("{mergingIntList: [1, 3, 2]}",
                 "{$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3, 1]}",
                 500, "", "doesn't match", id="int-order-mismatch"),
    pytest.param("{mergingList: [{name: 1, value: a}]}", "{mergingList: [{value: b}]}",
                 500, "", "map: map[value:b] does not contain declared merge key: name",
                 id="missing-merge-key"),
    pytest.param("{mergingList: [{name: 1}]}", "{mergingList: [{name: 1, $patch: merge}]}",
                 500, "", "merging lists cannot yet be specified in the patch",
                 id="patch-merge-in-list"),
    pytest.param("{simpleMap: {a: 1}}", "{simpleMap: {$patch: merge}}",
                 500, "", "unknown patch type: merge in map: map[$patch:merge]",
                 id="patch-merge-in-map"),
    pytest.param("{simpleMap: {a: 1}}", "{simpleMap: {$patch: 5}}",  # %s of a float64
                 500, "", "unknown patch type: %!s(float64=5) in map: map[$patch:5]",
                 id="patch-number-in-map"),
    pytest.param("{simpleMap: {a: 1}}", "{simpleMap: {$patch: true}}",
                 500, "", "unknown patch type: %!s(bool=true) in map: map[$patch:true]",
                 id="patch-bool-in-map"),
    pytest.param("{retainKeysMap: {name: a}}",
                 "{retainKeysMap: {$retainKeys: [name], value: b}}",
                 400, "BadRequest", "invalid patch format of retainKeys",
                 id="retain-keys-missing-patched-field"),
    pytest.param("{retainKeysMap: {name: a}}", "{retainKeysMap: {$retainKeys: name}}",
                 400, "BadRequest", "invalid patch format of retainKeys",
                 id="retain-keys-not-a-list"),
    pytest.param("{mergingIntList: [1]}", "{$deleteFromPrimitiveList: [1]}",
                 400, "BadRequest", "invalid patch format of primitive list",
                 id="delete-list-without-field"),
    pytest.param("{mergingIntList: [1]}", "{$setElementOrder: [1]}",
                 400, "BadRequest", "invalid patch type of setElementOrder list",
                 id="order-without-field"),
    pytest.param("{mergingIntList: [[1]]}", "{mergingIntList: [[2]]}",
                 422, "Invalid", "the server rejected our request due to an error in our request",
                 id="list-of-lists"),
    pytest.param("{mergingIntList: [1]}", "{mergingIntList: [a]}",
                 500, "", "list element types are not identical: [[1] [a]]",
                 id="mixed-element-types"),
]


@pytest.mark.parametrize(("original", "patch", "code", "reason", "message"), ERRORS)
def test_upstream_errors(original: str, patch: str, code: int, reason: str,
                         message: str) -> None:
    with pytest.raises(StatusError) as caught:
        merge_item_patch(original, patch)
    assert (caught.value.code, caught.value.reason) == (code, reason)
    assert message in caught.value.message


def test_inputs_are_not_modified() -> None:
    original = {"mergingList": [{"name": 1}, {"name": 2}]}
    patch = {"$setElementOrder/mergingList": [{"name": 2}],
             "mergingList": [{"name": 1, "$patch": "delete"}]}
    snapshot = (repr(original), repr(patch))
    strategic_merge_patch(original, patch, schema=MERGE_ITEM, root="mergeItem")
    assert (repr(original), repr(patch)) == snapshot


def test_directives_do_not_leak_into_new_values() -> None:
    result = merge_item_patch(
        "{}", "{mergingList: [{name: 1, $setElementOrder/mergingList: [{name: 2}],"
              " simpleMap: {a: null, b: 1}}, {name: 2, $patch: delete}]}")
    assert result == {"mergingList": [{"name": 1, "simpleMap": {"b": 1}}]}


# --- built-in kinds -------------------------------------------------------------------------

def deployment(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "finalizers": ["a"]},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
             **container},
        ]}}},
    }


def test_kubectl_client_side_apply_keeps_ports() -> None:
    """The patch kubectl apply sends must not drop ports."""
    patch = {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                                          "{}\n"}},
             "spec": {"replicas": 3, "template": {"spec": {
                 "$setElementOrder/containers": [{"name": "nginx"}],
                 "containers": [{"image": "nginx:1.26", "name": "nginx"}]}}}}
    result = strategic_merge_patch(deployment(), patch, group="apps", kind="Deployment")
    expected = deployment()
    expected["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{}\n"}
    expected["spec"]["replicas"] = 3
    expected["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert result == expected


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return containers


BUILTIN = [
    pytest.param({"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "env": [{"name": "B", "value": "2"}]}]}}}},
        {"env": [{"name": "B", "value": "2"}]}, id="env-added-to-container"),
    pytest.param({"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "ports": [{"containerPort": 443}]}]}}}},
        {"ports": [{"containerPort": 443}, {"containerPort": 80}]},
        id="ports-merge-by-container-port"),
    pytest.param({"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "ports": [{"containerPort": 80, "$patch": "delete"}]}]}}}},
        {"ports": []}, id="port-deleted-by-key"),
    pytest.param({"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "volumeMounts": [{"mountPath": "/a", "name": "v"}]}]}}}},
        {"volumeMounts": [{"mountPath": "/a", "name": "v"}]}, id="volume-mount-added"),
]


@pytest.mark.parametrize(("patch", "container_changes"), BUILTIN)
def test_deployment_container_lists(patch: dict[str, Any],
                                    container_changes: dict[str, Any]) -> None:
    result = strategic_merge_patch(deployment(), patch, group="apps", kind="Deployment")
    assert _containers(result) == [{**_containers(deployment())[0], **container_changes}]


def test_new_container_is_prepended_without_order() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "sidecar"}]}}}}
    result = strategic_merge_patch(deployment(), patch, group="apps", kind="Deployment")
    assert [c["name"] for c in _containers(result)] == ["sidecar", "nginx"]


def test_tolerations_have_no_strategy_and_are_replaced() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"tolerations": [{"key": "a"}], "containers": [{"name": "c"}]}}
    result = strategic_merge_patch(pod, {"spec": {"tolerations": [{"key": "b"}]}},
                                   kind="Pod")
    assert result["spec"] == {"tolerations": [{"key": "b"}], "containers": [{"name": "c"}]}


@pytest.mark.parametrize(("patch", "expected"), [
    pytest.param({"metadata": {"finalizers": ["b"]}}, ["b", "a"], id="finalizer-added"),
    pytest.param({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, [],
                 id="finalizer-removed"),
    pytest.param({"metadata": {"finalizers": ["a"]}}, ["a"], id="finalizer-kept-once"),
])
def test_finalizers_merge_as_a_set(patch: dict[str, Any], expected: list[str]) -> None:
    result = strategic_merge_patch(deployment(), patch, group="apps", kind="Deployment")
    assert result["metadata"]["finalizers"] == expected


def test_owner_references_merge_by_uid() -> None:
    pod = {"metadata": {"name": "p", "ownerReferences": [{"uid": "1", "name": "a"}]}}
    patch = {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"},
                                              {"uid": "1", "$patch": "delete"}]}}
    result = strategic_merge_patch(pod, patch, kind="Pod")
    assert result["metadata"]["ownerReferences"] == [{"uid": "2", "name": "b"}]


def test_conditions_merge_by_type_in_status() -> None:
    node = {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                      {"type": "MemoryPressure", "status": "False"}]}}
    patch = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    result = strategic_merge_patch(node, patch, kind="Node")
    assert result["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                              {"type": "MemoryPressure", "status": "False"}]


def test_cronjob_pod_template_is_reached_through_job_template() -> None:
    cronjob = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "a", "env": [{"name": "X", "value": "1"}]}]}}}}}}
    patch = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "b"}]}}}}}}
    result = strategic_merge_patch(cronjob, patch, group="batch", kind="CronJob")
    containers = result["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "c", "image": "b", "env": [{"name": "X", "value": "1"}]}]


def test_deployment_strategy_retain_keys() -> None:
    obj = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = strategic_merge_patch(obj, patch, group="apps", kind="Deployment")
    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_custom_resource_is_unsupported_media_type() -> None:
    with pytest.raises(StatusError) as caught:
        strategic_merge_patch({}, {}, group="example.com", kind="Widget")
    assert (caught.value.code, caught.value.reason) == (415, "UnsupportedMediaType")
    assert caught.value.message == UNSUPPORTED_MESSAGE
