"""Create / get / update / list / watch with Kubernetes metadata semantics."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.registry import Registry, WatchRequest
from kubegc.storage import MemoryKV, SqliteKV

from ..conftest import manifest, target


async def test_create_fills_metadata(registry: Registry) -> None:
    created = await registry.create(target(registry, "configmaps"), manifest("configmaps", "c1"))
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] and meta["resourceVersion"]
    assert meta["namespace"] == "default"
    assert (created["apiVersion"], created["kind"]) == ("v1", "ConfigMap")


async def test_generate_name(registry: Registry) -> None:
    created = await registry.create(target(registry, "configmaps"),
                                    {"metadata": {"generateName": "web-"}})
    assert created["metadata"]["name"].startswith("web-")
    assert len(created["metadata"]["name"]) == len("web-") + 5


async def test_create_existing_is_already_exists(registry: Registry) -> None:
    t = target(registry, "configmaps")
    await registry.create(t, manifest("configmaps", "c1"))
    with pytest.raises(StatusError) as e:
        await registry.create(t, manifest("configmaps", "c1"))
    assert (e.value.code, e.value.reason, e.value.message) == (
        409, "AlreadyExists", 'configmaps "c1" already exists')


@pytest.mark.parametrize(("resource", "body", "message"), [
    ("configmaps", {"metadata": {"name": "Bad_Name"}}, 'ConfigMap "Bad_Name" is invalid: '
     'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'),
    ("pods", {"metadata": {"name": "p"}, "spec": {}}, 'Pod "p" is invalid: spec.containers: '
     "Required value"),
    ("deployments", {"metadata": {"name": "d"}, "spec": {"template": {}}},
     'Deployment.apps "d" is invalid'),
    ("configmaps", {"metadata": {"name": "c", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": "2", "controller": True}]}},
     'Only one reference can have Controller set to true. Found "true" in references for '
     "Pod/a and Pod/b"),
    ("configmaps", {"metadata": {"name": "c", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Event", "name": "a", "uid": "1"}]}},
     "is disallowed from being an owner"),
    ("configmaps", {"metadata": {"name": "c", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": ""}]}}, "uid must not be empty"),
    ("configmaps", {"metadata": {"name": "c", "finalizers": ["orphan", "foregroundDeletion"]}},
     "finalizer orphan and foregroundDeletion cannot be both set"),
], ids=["name", "pod-containers", "deployment-selector", "two-controllers", "event-owner",
        "empty-uid", "both-gc-finalizers"])
async def test_validation(registry: Registry, resource: str, body: dict[str, Any],
                          message: str) -> None:
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, resource), body)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert message in e.value.message


async def test_update_conflict_and_no_op(registry: Registry) -> None:
    t = target(registry, "configmaps")
    created = await registry.create(t, manifest("configmaps", "c1"))
    same, _ = await registry.update(t, "c1", created)
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    changed = dict(created, data={"a": "b"})
    updated, _ = await registry.update(t, "c1", changed)
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    with pytest.raises(StatusError) as e:
        await registry.update(t, "c1", dict(created, data={"a": "c"}))
    assert e.value.code == 409 and e.value.message == (
        'Operation cannot be fulfilled on configmaps "c1": the object has been modified; please '
        "apply your changes to the latest version and try again")


async def test_generation_bumps_on_spec_change_only(registry: Registry) -> None:
    t = target(registry, "deployments")
    created = await registry.create(t, manifest("deployments", "d"))
    assert created["metadata"]["generation"] == 1
    labelled = dict(created, metadata={**created["metadata"], "labels": {"a": "b"}})
    after_label, _ = await registry.update(t, "d", labelled)
    assert after_label["metadata"]["generation"] == 1
    spec = dict(after_label["spec"], replicas=5)
    after_spec, _ = await registry.update(t, "d", dict(after_label, spec=spec))
    assert after_spec["metadata"]["generation"] == 2


async def test_status_is_a_separate_subresource(registry: Registry) -> None:
    t = target(registry, "deployments")
    created = await registry.create(t, manifest("deployments", "d"))
    with_status = dict(created, status={"replicas": 3})
    main, _ = await registry.update(t, "d", with_status)
    assert "replicas" not in main.get("status", {})
    status, _ = await registry.update(t, "d", with_status, subresource="status")
    assert status["status"]["replicas"] == 3


async def test_list_selectors_and_paging(registry: Registry) -> None:
    t = target(registry, "configmaps")
    for i in range(7):
        await registry.create(t, {"metadata": {"name": f"c{i}", "labels": {
            "parity": "even" if i % 2 == 0 else "odd"}}})
    even = await registry.list(t, label_selector="parity=even")
    assert [i["metadata"]["name"] for i in even["items"]] == ["c0", "c2", "c4", "c6"]
    named = await registry.list(t, field_selector="metadata.name=c3")
    assert [i["metadata"]["name"] for i in named["items"]] == ["c3"]
    names: list[str] = []
    token = ""
    while True:
        page = await registry.list(t, limit=3, continue_=token)
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert names == [f"c{i}" for i in range(7)]


async def test_watch_from_resource_version_and_initial_events(registry: Registry) -> None:
    t = target(registry, "configmaps")
    first = await registry.create(t, manifest("configmaps", "c1"))
    watch = registry.watch(t, WatchRequest(resource_version="0"))
    await watch.start()
    batches = watch.batches()
    initial = await anext(batches)
    assert [(c.type, c.object["metadata"]["name"]) for c in initial] == [("ADDED", "c1")]
    await registry.create(t, manifest("configmaps", "c2"))
    await registry.delete(t, "c1", {})
    seen: list[tuple[str, str]] = []
    while len(seen) < 2:
        batch = await asyncio.wait_for(anext(batches), 5)
        seen += [(c.type, c.object["metadata"]["name"]) for c in batch]
    assert seen == [("ADDED", "c2"), ("DELETED", "c1")]
    watch.close()
    resumed = registry.watch(t, WatchRequest(resource_version=first["metadata"][
        "resourceVersion"]))
    await resumed.start()
    batch = await asyncio.wait_for(anext(resumed.batches()), 5)
    assert [(c.type, c.object["metadata"]["name"]) for c in batch] == seen
    resumed.close()


async def test_watch_label_selector_turns_updates_into_added_and_deleted(
        registry: Registry) -> None:
    t = target(registry, "configmaps")
    created = await registry.create(t, manifest("configmaps", "c1"))
    watch = registry.watch(t, WatchRequest(
        label_selector="x=1", resource_version=created["metadata"]["resourceVersion"]))
    await watch.start()
    batches = watch.batches()
    labelled, _ = await registry.update(t, "c1", dict(created, metadata={
        **created["metadata"], "labels": {"x": "1"}}))
    await registry.update(t, "c1", dict(labelled, metadata={**labelled["metadata"],
                                                             "labels": {"x": "2"}}))
    seen: list[str] = []
    while len(seen) < 2:
        seen += [c.type for c in await asyncio.wait_for(anext(batches), 5)]
    assert seen == ["ADDED", "DELETED"]
    watch.close()


async def test_secret_string_data_is_merged_into_data(registry: Registry) -> None:
    t = target(registry, "secrets")
    created = await registry.create(t, {"metadata": {"name": "s"}, "data": {"a": "YQ=="},
                                        "stringData": {"b": "bee"}})
    assert created["data"] == {"a": "YQ==", "b": "YmVl"}
    assert "stringData" not in created and created["type"] == "Opaque"


async def test_server_side_apply_create_then_apply_prunes_dropped_fields(
        registry: Registry) -> None:
    t = target(registry, "configmaps")
    first = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},' \
            b'"data":{"a":"1","b":"2"}}'
    created, was_created = await registry.patch(t, "ssa", "application/apply-patch+yaml", first,
                                                field_manager="kubectl")
    assert was_created
    assert [(m["manager"], m["operation"]) for m in created["metadata"]["managedFields"]] == [
        ("kubectl", "Apply")]
    second = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"a":"1"}}'
    applied, _ = await registry.patch(t, "ssa", "application/apply-patch+yaml", second,
                                      field_manager="kubectl")
    assert applied["data"] == {"a": "1"}


async def test_patch_that_empties_finalizers_of_a_deleting_object_answers_the_patched_object(
        registry: Registry) -> None:
    t = target(registry, "configmaps")
    await registry.create(t, {"metadata": {"name": "fin", "finalizers": ["a.io/x"]}})
    await registry.delete(t, "fin", {})
    result, _ = await registry.patch(t, "fin", "application/json-patch+json",
                                     b'[{"op":"remove","path":"/metadata/finalizers"}]')
    assert "finalizers" not in result["metadata"]  # kubectl prints "patched", not "(no change)"
    with pytest.raises(StatusError) as e:
        await registry.get(t, "fin")
    assert e.value.code == 404


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
async def test_a_list_by_name_in_every_namespace_selects_by_key(
        clock: ManualClock, tmp_path: Path, storage: str) -> None:
    """``metadata.name=x`` across namespaces (the root CA publisher's LIST at every start)
    is answered from the keys ending with ``/x`` (``KV.range(key_suffix=...)``), with the
    same answers: paged by ``limit``, with a label selector beside it, and never an object
    whose namespace and name only end like ``.../x``."""
    kv = MemoryKV() if storage == "memory" else SqliteKV(tmp_path / "kv.db")
    registry = Registry(kv, clock=clock)
    await registry.start()
    try:
        for ns in ("a", "b", "c", "x"):
            await registry.create(target(registry, "namespaces"), {"metadata": {"name": ns}})
            for name in ("root", "xroot", "other"):
                await registry.create(target(registry, "configmaps", ns), {"metadata": {
                    "name": name, "labels": {"ns": ns}}})
        every = target(registry, "configmaps", "")

        async def names(**options: Any) -> list[str]:
            listed = await registry.list(every, **options)
            return [f"{i['metadata']['namespace']}/{i['metadata']['name']}"
                    for i in listed["items"]]

        assert await names(field_selector="metadata.name=root") == [
            "a/root", "b/root", "c/root", "x/root"]
        assert await names(field_selector="metadata.name=x/root") == []
        assert await names(field_selector="metadata.name=root", label_selector="ns!=b") == [
            "a/root", "c/root", "x/root"]
        first = await registry.list(every, field_selector="metadata.name=root", limit=3)
        assert [i["metadata"]["namespace"] for i in first["items"]] == ["a", "b", "c"]
        rest = await registry.list(every, field_selector="metadata.name=root", limit=3,
                                   continue_=first["metadata"]["continue"])
        assert [i["metadata"]["namespace"] for i in rest["items"]] == ["x"]
        assert "continue" not in rest["metadata"]
    finally:
        await registry.stop()
        await kv.close()


async def test_a_watch_by_name_in_every_namespace_decodes_that_name_alone(
        registry: Registry) -> None:
    """A watch of ``metadata.name=x`` in every namespace leaves the events of other keys
    undecoded (the key's last segment is the name) and sees its own."""
    every = target(registry, "configmaps", "")
    seed = await registry.create(target(registry, "configmaps"), manifest("configmaps", "seed"))
    watch = registry.watch(every, WatchRequest(field_selector="metadata.name=pick",
                                               resource_version=seed["metadata"][
                                                   "resourceVersion"]))
    await watch.start()
    batches = watch.batches()
    other = await registry.create(target(registry, "configmaps"), manifest("configmaps",
                                                                           "other"))
    await registry.create(target(registry, "configmaps"), manifest("configmaps", "pick"))
    batch = await asyncio.wait_for(anext(batches), 5)
    assert [(c.type, c.object["metadata"]["name"]) for c in batch] == [("ADDED", "pick")]
    assert int(other["metadata"]["resourceVersion"]) not in registry.cache.decoded.revisions()
    watch.close()
