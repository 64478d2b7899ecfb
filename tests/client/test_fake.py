"""FakeClient: the in-memory Client used by informer and controller unit tests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.fake import FakeClient, builtin_api_resources
from kubegc.client.interface import (
    APIResource,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)

PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")


def pod(name: str, namespace: str = "ns1", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, **meta}, "spec": {"x": 1}}


async def test_create_fills_identity_and_global_resource_versions() -> None:
    client = FakeClient(clock=ManualClock())
    p = await client.create(PODS, pod("a"))
    d = await client.create(DEPLOYMENTS, {"metadata": {"name": "d"}}, namespace="ns1")
    assert p["kind"] == "Pod" and p["apiVersion"] == "v1"
    assert d["kind"] == "Deployment" and d["apiVersion"] == "apps/v1"
    assert p["metadata"]["uid"] and p["metadata"]["uid"] != d["metadata"]["uid"]
    assert p["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert (p["metadata"]["resourceVersion"], d["metadata"]["resourceVersion"]) == ("1", "2")
    assert d["metadata"]["namespace"] == "ns1"


async def test_create_keeps_a_given_uid_and_rejects_duplicates() -> None:
    client = FakeClient()
    created = await client.create(PODS, pod("a", uid="u-1"))
    assert created["metadata"]["uid"] == "u-1"
    with pytest.raises(errors.StatusError) as err:
        await client.create(PODS, pod("a"))
    assert errors.is_already_exists(err.value)
    assert err.value.message == 'pods "a" already exists'


async def test_get_missing_is_upstream_not_found() -> None:
    with pytest.raises(errors.StatusError) as err:
        await FakeClient().get(DEPLOYMENTS, "d", namespace="ns1")
    assert err.value.code == 404
    assert err.value.message == 'deployments.apps "d" not found'


async def test_returned_objects_are_copies() -> None:
    client = FakeClient()
    created = await client.create(PODS, pod("a"))
    created["spec"]["x"] = 99
    got = await client.get(PODS, "a", namespace="ns1")
    got["metadata"]["name"] = "mutated"
    assert client.stored(PODS, "a", namespace="ns1")["spec"]["x"] == 1  # type: ignore[index]


async def test_update_with_stale_resource_version_conflicts() -> None:
    client = FakeClient()
    created = await client.create(PODS, pod("a"))
    await client.update(PODS, created)
    with pytest.raises(errors.StatusError) as err:
        await client.update(PODS, created)
    assert errors.is_conflict(err.value)
    assert err.value.message.endswith(errors.OBJECT_MODIFIED)


@pytest.mark.parametrize(
    ("patch_type", "patch", "want_owner_uids", "want_finalizers"),
    [
        pytest.param(PatchType.MERGE, {"metadata": {"ownerReferences": [{"uid": "u2"}]}},
                     ["u2"], ["f1"], id="merge-replaces-lists"),
        pytest.param(PatchType.MERGE, {"metadata": {"finalizers": None}},
                     ["u1", "u2"], [], id="merge-null-deletes"),
        pytest.param(PatchType.STRATEGIC,
                     {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "u1"}]}},
                     ["u2"], ["f1"], id="strategic-delete-by-uid"),
        pytest.param(PatchType.STRATEGIC, {"metadata": {"finalizers": ["f2"]}},
                     ["u1", "u2"], ["f1", "f2"], id="strategic-finalizers-union"),
        pytest.param(PatchType.STRATEGIC, {"metadata": {"$deleteFromPrimitiveList/finalizers":
                                                        ["f1"]}},
                     ["u1", "u2"], [], id="strategic-delete-from-primitive-list"),
        pytest.param(PatchType.JSON, [{"op": "remove", "path": "/metadata/ownerReferences/0"},
                                      {"op": "add", "path": "/metadata/finalizers/-",
                                       "value": "f~/x"}],
                     ["u2"], ["f1", "f~/x"], id="json-patch"),
        pytest.param(PatchType.JSON, [{"op": "test", "path": "/metadata/finalizers/0",
                                       "value": "f1"},
                                      {"op": "replace", "path": "/metadata/finalizers",
                                       "value": []}],
                     ["u1", "u2"], [], id="json-patch-test-then-replace"),
    ],
)
async def test_patch_types(patch_type: PatchType, patch: Any, want_owner_uids: list[str],
                           want_finalizers: list[str]) -> None:
    client = FakeClient()
    await client.create(PODS, pod("a", ownerReferences=[{"uid": "u1"}, {"uid": "u2"}],
                                  finalizers=["f1"]))
    patched = await client.patch(PODS, "a", patch, namespace="ns1", patch_type=patch_type)
    assert [r["uid"] for r in patched["metadata"].get("ownerReferences", [])] == want_owner_uids
    assert sorted(patched["metadata"].get("finalizers", [])) == want_finalizers
    assert patched["metadata"]["resourceVersion"] == "2"


async def test_patch_errors_are_the_servers() -> None:
    client = FakeClient()
    widgets = GroupVersionResource("example.com", "v1", "widgets")
    client.add_object(widgets, {"kind": "Widget", "metadata": {"name": "w", "namespace": "ns1"}})
    with pytest.raises(errors.StatusError) as err:
        await client.patch(widgets, "w", {"spec": {}}, namespace="ns1",
                           patch_type=PatchType.STRATEGIC)
    assert err.value.code == 415, "no strategic merge patch for custom resources"
    applied = await client.patch(widgets, "new", {"apiVersion": "example.com/v1",
                                                  "kind": "Widget", "spec": {"a": 1}},
                                 namespace="ns1", patch_type=PatchType.APPLY,
                                 field_manager="me")
    assert applied["metadata"]["name"] == "new" and applied["spec"] == {"a": 1}


async def test_failed_json_patch_test_is_invalid() -> None:
    client = FakeClient()
    await client.create(PODS, pod("a"))
    with pytest.raises(errors.StatusError) as err:
        await client.patch(PODS, "a", [{"op": "test", "path": "/spec/x", "value": 2}],
                           namespace="ns1", patch_type=PatchType.JSON)
    assert err.value.code == 422


async def test_delete_without_finalizers_removes_and_returns_success() -> None:
    client = FakeClient()
    created = await client.create(PODS, pod("a"))
    status = await client.delete(PODS, "a", namespace="ns1")
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"]["uid"] == created["metadata"]["uid"]
    assert client.stored(PODS, "a", namespace="ns1") is None


async def test_delete_with_finalizers_marks_then_finalizer_removal_removes() -> None:
    client = FakeClient(clock=ManualClock())
    await client.create(PODS, pod("a", finalizers=["example.com/hold"]))
    marked = await client.delete(PODS, "a", namespace="ns1")
    assert marked["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z"
    again = await client.delete(PODS, "a", namespace="ns1")
    assert again["metadata"] == marked["metadata"], "a second delete writes nothing"
    await client.patch(PODS, "a", {"metadata": {"finalizers": None}}, namespace="ns1")
    assert client.stored(PODS, "a", namespace="ns1") is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(DeleteOptions(preconditions_uid="other"),
                     'Operation cannot be fulfilled on pods "a": Precondition failed: UID in '
                     "precondition: other, UID in object meta: u-a", id="uid"),
        pytest.param(DeleteOptions(preconditions_resource_version="7"),
                     'Operation cannot be fulfilled on pods "a": Precondition failed: '
                     "ResourceVersion in precondition: 7, ResourceVersion in object meta: 1",
                     id="resource-version"),
    ],
)
async def test_delete_preconditions(options: DeleteOptions, message: str) -> None:
    client = FakeClient()
    await client.create(PODS, pod("a", uid="u-a"))
    with pytest.raises(errors.StatusError) as err:
        await client.delete(PODS, "a", namespace="ns1", options=options)
    assert errors.is_conflict(err.value)
    assert err.value.message == message


async def test_list_filters_and_pages() -> None:
    client = FakeClient()
    for i, ns in enumerate(["ns1", "ns1", "ns2", "ns1"]):
        client.add_object(PODS, pod(f"p{i}", ns, labels={"app": "web" if i < 3 else "db"}))
    assert [p["metadata"]["name"] for p in (await client.list(PODS, namespace="ns1"))["items"]] \
        == ["p0", "p1", "p3"]
    web = await client.list(PODS, options=ListOptions(label_selector="app=web"))
    assert [p["metadata"]["name"] for p in web["items"]] == ["p0", "p1", "p2"]
    by_name = await client.list(PODS, options=ListOptions(field_selector="metadata.name=p3"))
    assert [p["metadata"]["name"] for p in by_name["items"]] == ["p3"]
    first = await client.list(PODS, options=ListOptions(limit=3))
    assert first["kind"] == "PodList"
    assert first["metadata"]["remainingItemCount"] == 1
    rest = await client.list(PODS, options=ListOptions(
        limit=3, continue_=first["metadata"]["continue"]))
    assert len(first["items"]) + len(rest["items"]) == 4
    assert "continue" not in rest["metadata"]
    assert rest["metadata"]["resourceVersion"] == "4"


async def collect(stream: Any, n: int) -> list[WatchEvent]:
    out = []
    async for event in stream:
        out.append(event)
        if len(out) == n:
            break
    await stream.aclose()
    return out


async def test_watch_from_empty_version_starts_with_synthetic_adds() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a"))
    stream = client.watch(PODS, namespace="ns1")
    first = await stream.__anext__()
    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "a")
    await client.delete(PODS, "a", namespace="ns1")
    deleted = await stream.__anext__()
    assert (deleted.type, deleted.object["metadata"]["resourceVersion"]) == ("DELETED", "2")
    await stream.aclose()
    assert client.watcher_count() == 0


async def test_watch_from_a_version_replays_history_after_it() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a"))
    client.add_object(PODS, pod("b"))
    await client.patch(PODS, "a", {"spec": {"x": 2}}, namespace="ns1")
    events = await collect(client.watch(PODS, options=WatchOptions(resource_version="1")), 2)
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"), ("MODIFIED", "a")]


async def test_watch_below_compaction_is_an_expired_error_event() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a"))
    client.add_object(PODS, pod("b"))
    client.compact()
    events = [e async for e in client.watch(PODS, options=WatchOptions(resource_version="1"))]
    assert [e.type for e in events] == ["ERROR"]
    assert events[0].object["code"] == 410
    assert events[0].object["reason"] == "Expired"


async def test_test_controls_end_or_expire_open_watches() -> None:
    client = FakeClient()
    closed = asyncio.create_task(collect(client.watch(PODS), 10))
    expired = asyncio.create_task(collect(client.watch(DEPLOYMENTS), 10))
    bookmarked = asyncio.create_task(collect(
        client.watch(DEPLOYMENTS, options=WatchOptions(allow_bookmarks=True)), 1))
    await asyncio.sleep(0)
    assert client.watcher_count() == 3
    client.send_bookmark(DEPLOYMENTS)
    assert [e.type for e in await bookmarked] == ["BOOKMARK"]
    client.close_watches(PODS)
    assert await closed == []
    client.expire_watches()
    assert [e.type for e in await expired] == ["ERROR"], "no bookmarks unless asked for"


async def test_actions_are_recorded_as_strings() -> None:
    client = FakeClient()
    client.add_object(DEPLOYMENTS, {"metadata": {"name": "deployment1", "namespace": "ns1"}})
    client.add_object(NAMESPACES, {"metadata": {"name": "ns1"}})
    await client.get(DEPLOYMENTS, "deployment1", namespace="ns1")
    await client.get(NAMESPACES, "ns1")
    await client.list(PODS)
    await client.patch(DEPLOYMENTS, "deployment1", {"status": {}}, namespace="ns1",
                       subresource="status")
    await client.delete(DEPLOYMENTS, "deployment1", namespace="ns1")
    await client.discover()
    assert client.actions == [
        "get apps/v1 deployments ns1/deployment1",
        "get v1 namespaces ns1",
        "list v1 pods",
        "patch apps/v1 deployments/status ns1/deployment1",
        "delete apps/v1 deployments ns1/deployment1",
    ]
    assert client.action_log[3].body == {"status": {}}
    assert client.action_log[3].patch_type is PatchType.MERGE
    client.clear_actions()
    assert client.actions == [] and client.action_log == []


async def test_fail_next_raises_once_for_the_matching_call() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a"))
    client.add_object(PODS, pod("b"))
    boom = errors.internal_error("boom")
    client.fail_next("get", boom, gvr=PODS, name="b")
    await client.get(PODS, "a", namespace="ns1")
    with pytest.raises(errors.StatusError) as err:
        await client.get(PODS, "b", namespace="ns1")
    assert err.value is boom
    await client.get(PODS, "b", namespace="ns1")
    assert client.actions == ["get v1 pods ns1/a", "get v1 pods ns1/b", "get v1 pods ns1/b"]


async def test_respond_to_get_overrides_the_tracker() -> None:
    client = FakeClient()
    answer = pod("ghost", uid="u-ghost")
    client.respond_to_get(PODS, "ghost", answer, namespace="ns1")
    assert (await client.get(PODS, "ghost", namespace="ns1"))["metadata"]["uid"] == "u-ghost"
    client.respond_to_get(PODS, "gone", errors.not_found(errors.GroupResource("", "pods"), "x"),
                          namespace="ns1")
    with pytest.raises(errors.StatusError):
        await client.get(PODS, "gone", namespace="ns1")


async def test_discovery_returns_what_is_registered() -> None:
    client = FakeClient(resources=[APIResource("", "v1", "pods", "Pod", True)])
    widgets = APIResource("example.com", "v1", "widgets", "Widget", True)
    client.register(widgets)
    assert [r.resource for r in await client.discover()] == ["pods", "widgets"]
    client.unregister(widgets.gvr)
    assert [r.resource for r in await client.discover()] == ["pods"]
    client.fail_next("discover", errors.StatusError(503, "ServiceUnavailable", "down"))
    with pytest.raises(errors.StatusError):
        await client.discover()
    assert any(r.gvr == DEPLOYMENTS for r in builtin_api_resources())
