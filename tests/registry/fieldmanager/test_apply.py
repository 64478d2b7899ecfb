"""Server-side apply and managedFields bookkeeping, as scenarios a kubectl user sees."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegc.api.errors import StatusError
from kubegc.registry.fieldmanager import fieldpath as fp
from kubegc.registry.fieldmanager._values import canonical
from kubegc.registry.fieldmanager.apply import (
    UPDATE,
    ManagedFieldsEntry,
    _root,
    _take_ownership,
    _without_managed_fields,
    apply,
    decode_managed_fields,
    encode_managed_fields,
    record_update,
)
from kubegc.registry.fieldmanager.strategic_schema import BUILTIN_SCHEMA

T0, T1, T2, T3 = (f"2024-05-01T00:0{i}:00Z" for i in range(4))
NGINX = 'k:{"name":"nginx"}'


def manifest(*, replicas: int = 1, image: str = "nginx:1.25", labels: dict[str, str] | None = None,
             env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "nginx", "image": image,
                                 "ports": [{"containerPort": 80}]}
    if env is not None:
        container["env"] = env
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default",
                     "labels": {"app": "web"} if labels is None else labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [container]}}},
    }


def managers(obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["manager"], e["operation"], e["time"]) for e in obj["metadata"]["managedFields"]]


def fields_of(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    fields: dict[str, Any] = entry["fieldsV1"]
    return fields


def updated(obj: dict[str, Any], manager: str, now: str, change: Any) -> dict[str, Any]:
    """``obj`` after a non-apply write by ``manager`` that runs ``change`` on a copy."""
    new = copy.deepcopy(obj)
    change(new)
    new["metadata"]["managedFields"] = record_update(obj, new, manager=manager, now=now)
    return new


def scale(replicas: int) -> Any:
    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["replicas"] = replicas
    return change


def test_create_records_the_applied_fields() -> None:
    obj = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    assert obj["spec"]["replicas"] == 1
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {}, "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {NGINX: {
                        ".": {}, "f:image": {}, "f:name": {},
                        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                            ".": {}, "f:containerPort": {}}},
                    }}},
                },
            },
        },
    }]


def test_reapplying_the_same_configuration_changes_nothing() -> None:
    first = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    again = apply(first, manifest(), manager="kubectl", force=False, now=T1)
    assert again == first


def test_apply_changes_only_what_the_configuration_sets() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live["status"] = {"replicas": 1}
    live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    obj = apply(live, manifest(image="nginx:1.26"), manager="kubectl", force=False, now=T1)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx:1.26", "imagePullPolicy": "Always",
                         "ports": [{"containerPort": 80}]}
    assert obj["status"] == {"replicas": 1}
    assert managers(obj) == [("kubectl", "Apply", T1)]


CONFLICTS = [
    pytest.param("Update", 'conflict with "other" using apps/v1', id="update-manager"),
    pytest.param("Apply", 'conflict with "other"', id="apply-manager"),
]


@pytest.mark.parametrize(("operation", "who"), CONFLICTS)
def test_changing_a_field_another_manager_owns_is_a_conflict(operation: str, who: str) -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    if operation == "Update":
        live = updated(live, "other", T1, scale(5))
    else:
        live = apply(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": {"name": "web"}, "spec": {"replicas": 5}},
                     manager="other", force=True, now=T1)
    with pytest.raises(StatusError) as caught:
        apply(live, manifest(replicas=3), manager="kubectl", force=False, now=T2)
    assert caught.value.to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"Apply failed with 1 conflict: {who}: .spec.replicas",
        "reason": "Conflict", "code": 409,
        "details": {"causes": [{"reason": "FieldManagerConflict", "message": who,
                                "field": ".spec.replicas"}]},
    }


def test_force_takes_ownership_from_the_other_manager() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live = updated(live, "other", T1, scale(5))
    assert fields_of(live, "other") == {"f:spec": {"f:replicas": {}}}
    obj = apply(live, manifest(replicas=3), manager="kubectl", force=True, now=T2)
    assert obj["spec"]["replicas"] == 3
    assert managers(obj) == [("kubectl", "Apply", T2)]
    assert "f:replicas" in fields_of(obj, "kubectl")["f:spec"]


def test_an_update_takes_the_fields_it_changes_from_the_applier() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live = updated(live, "hpa", T1, scale(5))
    assert "f:replicas" not in fields_of(live, "kubectl")["f:spec"]
    assert managers(live) == [("kubectl", "Apply", T0), ("hpa", "Update", T1)]


def test_setting_the_same_value_shares_ownership() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live = updated(live, "other", T1, scale(3))
    obj = apply(live, manifest(replicas=3), manager="kubectl", force=False, now=T2)
    assert "f:replicas" in fields_of(obj, "kubectl")["f:spec"]
    assert fields_of(obj, "other") == {"f:spec": {"f:replicas": {}}}


def test_several_conflicts_are_listed_by_manager() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)

    def edit(obj: dict[str, Any]) -> None:
        obj["spec"]["replicas"] = 5
        obj["metadata"]["labels"]["app"] = "other"
    live = updated(live, "editor", T1, edit)
    live = updated(live, "tweaker", T2, lambda o: o["spec"]["template"]["spec"][
        "containers"][0].update(image="busybox"))
    config = manifest(replicas=2, labels={"app": "mine"}, image="nginx:2")
    with pytest.raises(StatusError) as caught:
        apply(live, config, manager="kubectl", force=False, now=T3)
    assert caught.value.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "editor" using apps/v1:\n- .metadata.labels.app\n- .spec.replicas\n'
        'conflicts with "tweaker" using apps/v1:\n'
        '- .spec.template.spec.containers[name="nginx"].image')
    assert [c.field for c in caught.value.details.causes] == [
        ".metadata.labels.app", ".spec.replicas",
        '.spec.template.spec.containers[name="nginx"].image']


def _without_labels() -> dict[str, Any]:
    config = manifest()
    del config["metadata"]["labels"]
    return config


REMOVALS = [
    pytest.param(_without_labels(), ("metadata", "labels"), None, id="labels-left-out"),
    pytest.param(manifest(labels={}), ("metadata", "labels"), {}, id="labels-emptied"),
    pytest.param(manifest(), ("spec", "template", "spec", "containers", 0, "env"), None,
                 id="env-left-out"),
    pytest.param(manifest(env=[]), ("spec", "template", "spec", "containers", 0, "env"), None,
                 id="env-emptied"),
    pytest.param(manifest(env=[{"name": "B", "value": "2"}]),
                 ("spec", "template", "spec", "containers", 0, "env"),
                 [{"name": "B", "value": "2"}], id="env-item-replaced"),
]


@pytest.mark.parametrize(("config", "where", "expected"), REMOVALS)
def test_fields_left_out_of_the_configuration_are_removed(
        config: dict[str, Any], where: tuple[Any, ...], expected: Any) -> None:
    live = apply(None, manifest(env=[{"name": "A", "value": "1"}]), manager="kubectl",
                 force=False, now=T0)
    obj = apply(live, config, manager="kubectl", force=False, now=T1)
    value: Any = obj
    for step in where[:-1]:
        value = value[step]
    assert value.get(where[-1], expected) == expected


def test_removed_container_disappears_with_its_fields() -> None:
    two = manifest()
    two["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "s"})
    live = apply(None, two, manager="kubectl", force=False, now=T0)
    obj = apply(live, manifest(), manager="kubectl", force=False, now=T1)
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["nginx"]
    containers = fields_of(obj, "kubectl")["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert list(containers) == [NGINX]


def test_field_also_owned_by_another_manager_is_not_removed() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live = apply(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "web", "labels": {"app": "web"}}},
                 manager="labeller", force=False, now=T1)
    obj = apply(live, manifest(labels={}), manager="kubectl", force=False, now=T2)
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert fields_of(obj, "labeller") == {"f:metadata": {"f:labels": {"f:app": {}}}}


def test_fields_set_by_others_survive_a_reapply() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    live = updated(live, "controller", T1,
                   lambda o: o["metadata"].setdefault("annotations", {}).update(rev="1"))
    obj = apply(live, manifest(image="nginx:2"), manager="kubectl", force=False, now=T2)
    assert obj["metadata"]["annotations"] == {"rev": "1"}


def test_apply_to_custom_resource_treats_lists_as_atomic() -> None:
    config = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
              "spec": {"size": 1, "tags": ["a", "b"], "nested": {"x": 1}}}
    obj = apply(None, config, manager="me", force=False, now=T0)
    assert fields_of(obj, "me") == {"f:spec": {"f:nested": {"f:x": {}}, "f:size": {},
                                               "f:tags": {}}}


def test_item_without_its_key_is_rejected() -> None:
    config = manifest()
    del config["spec"]["template"]["spec"]["containers"][0]["name"]
    with pytest.raises(StatusError) as caught:
        apply(None, config, manager="kubectl", force=False, now=T0)
    assert caught.value.code == 500
    assert caught.value.message == (
        "failed to create typed patch object (apps/v1, Kind=Deployment): "
        ".spec.template.spec.containers: element 0: associative list with keys has an "
        'element that omits key field "name" (and doesn\'t have default value)')


def test_managed_fields_in_the_configuration_are_rejected() -> None:
    config = manifest()
    config["metadata"]["managedFields"] = []
    with pytest.raises(StatusError) as caught:
        apply(None, config, manager="kubectl", force=False, now=T0)
    assert (caught.value.code, caught.value.message) == (
        400, "metadata.managedFields must be nil")


def test_reset_fields_are_not_owned() -> None:
    config = {**manifest(), "status": {"replicas": 9}}
    obj = apply(None, config, manager="kubectl", force=False, now=T0, reset_fields=("status",))
    assert "f:status" not in fields_of(obj, "kubectl")


# --- record_update -------------------------------------------------------------------------

def test_create_by_an_update_manager_owns_everything_it_wrote() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "d", "labels": {"a": "1"}},
           "data": {"k": "v"}}
    assert record_update(None, obj, manager="kubectl-create", now=T0) == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:k": {}},
                     "f:metadata": {"f:labels": {".": {}, "f:a": {}}}},
    }]


def test_update_without_changes_keeps_entries_and_times() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    assert record_update(live, copy.deepcopy(live), manager="other", now=T1) == (
        live["metadata"]["managedFields"])


def test_removed_fields_leave_every_manager() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    obj = updated(live, "editor", T1, lambda o: o["metadata"].pop("labels"))
    assert "f:metadata" not in fields_of(obj, "kubectl")
    assert managers(obj) == [("kubectl", "Apply", T0)]


def test_client_can_reset_managed_fields_with_an_empty_list() -> None:
    live = apply(None, manifest(), manager="kubectl", force=False, now=T0)
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = []
    new["spec"]["replicas"] = 4
    assert record_update(live, new, manager="editor", now=T1) == []


def test_entries_sort_apply_first_then_by_time() -> None:
    live = updated({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                   "b-writer", T2, lambda o: o.update(data={"b": "1"}))
    live = updated(live, "a-writer", T3, lambda o: o["data"].update(a="1"))
    obj = apply(live, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"z": "1"}}, manager="z-applier", force=False, now=T1)
    assert managers(obj) == [("z-applier", "Apply", T1), ("b-writer", "Update", T2),
                             ("a-writer", "Update", T3)]


def test_kubectl_create_then_server_side_apply_conflicts_on_replicas() -> None:
    created = manifest()
    created["metadata"]["managedFields"] = record_update(None, created,
                                                         manager="kubectl-create", now=T0)
    with pytest.raises(StatusError) as caught:
        apply(created, manifest(replicas=3), manager="kubectl", force=False, now=T1)
    assert caught.value.message == ('Apply failed with 1 conflict: conflict with '
                                    '"kubectl-create" using apps/v1: .spec.replicas')
    same = apply(created, manifest(), manager="kubectl", force=False, now=T1)
    assert {e["manager"] for e in same["metadata"]["managedFields"]} == {
        "kubectl", "kubectl-create"}


# --- record_update on updates: the same output as the general algorithm ---------------------
# record_update edits the stored FieldsV1 documents in place of decoding every entry into a
# path set and re-rendering it. ``general_record_update`` is the algorithm it replaced: decode
# every entry, move the changed fields, re-encode the entries whose set changed.

def general_record_update(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str,
                          now: str, subresource: str = "") -> list[dict[str, Any]]:
    entries = decode_managed_fields(old)
    sent = (new.get("metadata") or {}).get("managedFields")
    stored = ((old or {}).get("metadata") or {}).get("managedFields")
    if sent is not None and canonical(sent) != canonical(stored):
        if not sent:
            return []
        entries = decode_managed_fields(new)
    root = _root(new, old, BUILTIN_SCHEMA)
    changes = fp.compare(_without_managed_fields(old or {}), _without_managed_fields(new),
                         BUILTIN_SCHEMA, root)
    identity = ManagedFieldsEntry(manager, UPDATE, str(new.get("apiVersion") or ""), now,
                                  subresource=subresource)
    mine = next((e for e in entries if e.identity == identity.identity), None)
    others = [e for e in entries if e is not mine]
    _take_ownership(others, changes, force=True)
    taken = changes.added | changes.modified
    if taken:
        if mine is None:
            mine = identity
        mine.fields = (mine.fields - changes.removed) | taken
        mine.time = now
    elif mine is not None:
        mine.fields -= changes.removed
    return encode_managed_fields([*others, *([mine] if mine else [])])


_KEYS = st.sampled_from(["name", "a", "b", "containerPort", "protocol", "port", "key",
                         "image", "containers", "ports", "env", "labels", "spec"])
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text("ab", max_size=2),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_KEYS, c, max_size=3),
    max_leaves=12)
_KINDS = st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("v1", "Service"),
                          ("v1", "ConfigMap"), ("example.com/v1", "Widget")])
_BODY_KEYS = ["spec", "status", "data", "x"]
_META_KEYS = ["name", "labels", "finalizers", "ownerReferences", "annotations", "uid"]


def _edited(data: st.DataObject, value: Any, depth: int = 0) -> Any:
    """``value`` with one random change somewhere inside (set, delete or recurse)."""
    if isinstance(value, dict) and value and depth < 4 and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _edited(data, value[key], depth + 1)}
    if isinstance(value, list) and value and depth < 4 and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(value) - 1))
        return [*value[:at], _edited(data, value[at], depth + 1), *value[at + 1:]]
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {k: v for k, v in value.items() if k != key}
    if isinstance(value, dict) and data.draw(st.booleans()):
        return {**value, data.draw(_KEYS): data.draw(_values)}
    return data.draw(_values)


def _unrendered(data: st.DataObject, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored entries a client may have written by hand: FieldsV1 that is not in the form
    record_update renders (keys out of order, non-empty leaves, no tree at all...)."""
    out = copy.deepcopy(entries)
    for entry in out:
        how = data.draw(st.sampled_from(["keep", "keep", "reverse", "leaf", "dot", "type",
                                         "none", "top-dot"]))
        tree = entry["fieldsV1"]
        if how == "reverse":
            entry["fieldsV1"] = _reversed(tree)
        elif how in ("leaf", "dot") and tree:
            node = tree
            while node and isinstance(node, dict):
                key = sorted(node)[-1]
                if not isinstance(node[key], dict) or not node[key]:
                    node[key] = 1 if how == "leaf" else {".": {}}
                    break
                node = node[key]
        elif how == "type":
            entry["fieldsType"] = "FieldsV2"
        elif how == "none":
            del entry["fieldsV1"]
        elif how == "top-dot":
            entry["fieldsV1"] = {".": {}, **tree}
    return out


def _reversed(tree: Any) -> Any:
    if not isinstance(tree, dict):
        return tree
    return {k: _reversed(tree[k]) for k in reversed(tree)}


@settings(max_examples=300, deadline=None)
@given(_KINDS,
       st.dictionaries(st.sampled_from(_BODY_KEYS), _values, max_size=3),
       st.dictionaries(st.sampled_from(_META_KEYS), _values, max_size=3),
       st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["", "status"]),
                          st.sampled_from(["update", "update", "apply", "replace"])),
                min_size=1, max_size=5),
       st.data())
def test_record_update_equals_the_general_algorithm(
        gvk: tuple[str, str], body: dict[str, Any], meta: dict[str, Any],
        writes: list[tuple[str, str, str]], data: st.DataObject) -> None:
    live: dict[str, Any] = {"apiVersion": gvk[0], "kind": gvk[1], **body, "metadata": meta}
    live["metadata"] = {**meta, "managedFields": record_update(None, live, manager="c",
                                                               now=T0)}
    for step, (manager, subresource, how) in enumerate(writes):
        now = data.draw(st.sampled_from([T0, T1, T2, T3, ""]), label=f"time {step}")
        if how == "apply":
            config = {"apiVersion": gvk[0], "kind": gvk[1],
                      "metadata": {"name": "n"}, **data.draw(st.dictionaries(
                          st.sampled_from(_BODY_KEYS), _values, max_size=2))}
            with contextlib.suppress(StatusError):  # an item without its key
                live = apply(live, config, manager=manager, force=True, now=now)
            continue
        stored = live["metadata"].get("managedFields")
        if stored and data.draw(st.booleans(), label=f"hand-written {step}"):
            live["metadata"]["managedFields"] = _unrendered(data, stored)
        if how == "replace":
            new = {"apiVersion": gvk[0], "kind": gvk[1], **data.draw(st.dictionaries(
                st.sampled_from(_BODY_KEYS), _values, max_size=3)), "metadata": data.draw(
                    st.dictionaries(st.sampled_from(_META_KEYS), _values, max_size=3))}
        else:
            key = data.draw(st.sampled_from([*_BODY_KEYS, "metadata"]), label=f"edit {step}")
            new = {**live, key: _edited(data, live.get(key))}
            if not isinstance(new["metadata"], dict):
                new["metadata"] = {}
        sent = data.draw(st.sampled_from(["none", "same", "empty", "fewer"]),
                         label=f"sent {step}")
        new["metadata"] = {k: v for k, v in new["metadata"].items() if k != "managedFields"}
        if sent == "same" and stored is not None:
            new["metadata"]["managedFields"] = copy.deepcopy(live["metadata"]["managedFields"])
        elif sent == "empty":
            new["metadata"]["managedFields"] = []
        elif sent == "fewer" and stored:
            new["metadata"]["managedFields"] = copy.deepcopy(stored[1:])
        before = orjson.dumps([live, new])
        expected = general_record_update(copy.deepcopy(live), copy.deepcopy(new),
                                         manager=manager, now=now, subresource=subresource)
        got = record_update(live, new, manager=manager, now=now, subresource=subresource)
        assert orjson.dumps(got) == orjson.dumps(expected)
        assert orjson.dumps([live, new]) == before  # neither argument is modified
        live = {**new, "metadata": {**new["metadata"], "managedFields": got}}
