"""A StatefulSet's ControllerRevisions against FakeClient: one per template, owned by the
set, numbered, trimmed to ``revisionHistoryLimit`` (each trimmed one a Deletion), a
rollback re-numbering the old revision, orphans adopted; and the pod deletions it
records (scale down, failed pods, rolling update)."""

from __future__ import annotations

import json
from typing import Any

from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.history import (
    CONTROLLER_REVISION_HASH_LABEL,
    CONTROLLER_REVISIONS,
    hash_controller_revision,
    template_patch,
)
from kubegc.controllers.history.controller_history import _fnv32
from kubegc.controllers.statefulset.stateful_set import StatefulSetController

from ..workload_harness import (
    PODS,
    eventually,
    fake_kubelet,
    objects,
    quiet,
    running,
    set_pod_phase,
)
from .test_stateful_set import STS, stateful_set


def recording(sink: InMemoryDeletionSink) -> type[StatefulSetController]:
    class Recording(StatefulSetController):
        def __init__(self, ctx: ControllerContext[Any]) -> None:
            super().__init__(ctx, deletions=sink)

    return Recording


def revisions(client: FakeClient) -> list[Obj]:
    return sorted(objects(client, CONTROLLER_REVISIONS), key=lambda r: r["revision"])


def image_of(revision: Obj) -> str:
    return str(revision["data"]["spec"]["template"]["spec"]["containers"][0]["image"])


async def set_image(client: FakeClient, image: str) -> None:
    stored = client.stored(STS, "web", namespace="ns")
    assert stored is not None
    stored["spec"]["template"]["spec"]["containers"][0]["image"] = image
    await client.update(STS, stored, namespace="ns")


def rolled_to(client: FakeClient, image: str, replicas: int) -> bool:
    pods = objects(client, PODS)
    status = (client.stored(STS, "web", namespace="ns") or {}).get("status") or {}
    return (len(pods) == replicas and all(
        p["spec"]["containers"][0]["image"] == image and not p["metadata"].get(
            "deletionTimestamp") for p in pods)
        and status.get("currentRevision") == status.get("updateRevision"))


def test_hash_is_fnv32_of_the_patch_then_the_collision_count() -> None:
    # FNV-1 (32 bit) test vectors: upstream's fnv.New32, not New32a
    assert _fnv32(b"") == 0x811C9DC5 and _fnv32(b"a") == 0x050C5D7E
    assert _fnv32(b"foobar") == 0x31F0B262
    patch = template_patch({"spec": {"template": {"metadata": {"labels": {"a": "<b>"}}}}})
    assert patch == ('{"spec":{"template":{"$patch":"replace","metadata":{"labels":'
                     '{"a":"\\u003cb\\u003e"}}}}}')
    assert hash_controller_revision(patch, 0) != hash_controller_revision(patch, 1)
    assert hash_controller_revision(patch, 0) == hash_controller_revision(patch, 0)


async def test_each_template_is_a_revision_and_history_is_trimmed_to_the_limit() -> None:
    client = FakeClient()
    sink = InMemoryDeletionSink()
    sts = client.add_object(STS, stateful_set(2, revisionHistoryLimit=2))
    async with running(recording(sink), client) as ssc, fake_kubelet(client):
        await eventually(lambda: rolled_to(client, "nginx", 2))
        for version in range(2, 6):
            await set_image(client, f"nginx:{version}")
            await eventually(lambda v=version: rolled_to(client, f"nginx:{v}", 2),  # type: ignore[misc]
                             what=f"rolled to nginx:{version}")
        await eventually(lambda: len(revisions(client)) == 3)
        await quiet(ssc)
    kept = revisions(client)
    assert [r["revision"] for r in kept] == [3, 4, 5]
    assert [image_of(r) for r in kept] == ["nginx:3", "nginx:4", "nginx:5"]
    newest = kept[-1]
    hash_ = newest["metadata"]["labels"][CONTROLLER_REVISION_HASH_LABEL]
    assert newest["metadata"]["name"] == f"web-{hash_}"
    assert newest["metadata"]["labels"] == {"app": "db", CONTROLLER_REVISION_HASH_LABEL: hash_}
    assert newest["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
         "uid": sts["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert newest["data"] == json.loads(template_patch(client.stored(STS, "web",
                                                                     namespace="ns") or {}))
    assert hash_ == hash_controller_revision(template_patch(
        client.stored(STS, "web", namespace="ns") or {}), 0)
    status = (client.stored(STS, "web", namespace="ns") or {})["status"]
    assert status["currentRevision"] == status["updateRevision"] == newest["metadata"]["name"]
    assert {p["metadata"]["labels"]["controller-revision-hash"]
            for p in objects(client, PODS)} == {newest["metadata"]["name"]}
    trimmed = [d for d in sink if d.reason == "RevisionHistoryLimit"]
    assert [(d.deleter, d.object.kind) for d in trimmed] == [
        ("statefulset-controller", "ControllerRevision")] * 2
    assert "revisionHistoryLimit 2 of StatefulSet web" in trimmed[0].message
    assert {d.reason for d in sink} == {"RevisionHistoryLimit", "RollingUpdate"}


async def test_going_back_to_an_old_template_renumbers_its_revision() -> None:
    client = FakeClient()
    client.add_object(STS, stateful_set(1))
    async with running(recording(InMemoryDeletionSink()), client) as ssc, fake_kubelet(client):
        await eventually(lambda: rolled_to(client, "nginx", 1))
        await set_image(client, "nginx:2")
        await eventually(lambda: rolled_to(client, "nginx:2", 1))
        first = revisions(client)[0]["metadata"]["name"]
        await set_image(client, "nginx")  # kubectl rollout undo
        await eventually(lambda: rolled_to(client, "nginx", 1))
        await eventually(lambda: [r["revision"] for r in revisions(client)] == [2, 3])
        await quiet(ssc)
    assert revisions(client)[-1]["metadata"]["name"] == first
    assert (client.stored(STS, "web", namespace="ns") or {})["status"][
        "updateRevision"] == first


async def test_orphaned_revisions_are_adopted_by_a_new_set() -> None:
    client = FakeClient()
    client.add_object(STS, stateful_set(1))
    async with running(recording(InMemoryDeletionSink()), client) as ssc:
        await eventually(lambda: len(revisions(client)) == 1)
        await quiet(ssc)
    [revision] = revisions(client)
    revision["metadata"]["ownerReferences"] = []
    client.update_object(CONTROLLER_REVISIONS, revision)
    stored = client.stored(STS, "web", namespace="ns") or {}
    await client.delete(STS, "web", namespace="ns")
    stored["metadata"] = {"name": "web", "namespace": "ns", "generation": 1}
    del stored["status"]
    again = client.add_object(STS, stored)
    async with running(recording(InMemoryDeletionSink()), client) as ssc:
        await eventually(lambda: [r["metadata"].get("ownerReferences", [{}])[0].get("uid")
                                  for r in revisions(client)] == [again["metadata"]["uid"]])
        await quiet(ssc)
    assert [r["metadata"]["name"] for r in revisions(client)] == [revision["metadata"]["name"]]


async def test_pod_deletions_are_recorded_with_their_rule() -> None:
    client = FakeClient()
    sink = InMemoryDeletionSink()
    client.add_object(STS, stateful_set(2, podManagementPolicy="Parallel"))
    async with running(recording(sink), client) as ssc, fake_kubelet(client):
        await eventually(lambda: rolled_to(client, "nginx", 2))
        pod = client.stored(PODS, "web-1", namespace="ns")
        assert pod is not None
        set_pod_phase(client, pod, "Failed")
        await eventually(lambda: any(d.reason == "PodFailed" for d in sink))
        await eventually(lambda: rolled_to(client, "nginx", 2))
        stored = client.stored(STS, "web", namespace="ns")
        assert stored is not None
        stored["spec"]["replicas"] = 1
        await client.update(STS, stored, namespace="ns")
        await eventually(lambda: rolled_to(client, "nginx", 1))
        await quiet(ssc)
    assert [(d.reason, d.object.name, d.deleter) for d in sink] == [
        ("PodFailed", "web-1", "statefulset-controller"),
        ("ScaleDown", "web-1", "statefulset-controller")]
    assert sink.deletions[0].message == ("pod web-1 of StatefulSet web had phase Failed: "
                                         "deleted to be created again")
    assert sink.deletions[1].message == ("the ordinal of pod web-1 was outside [0, 1) "
                                         "(spec.replicas 1) of StatefulSet web: the highest "
                                         "ordinal goes first")


async def test_a_revision_it_cannot_understand_is_nobodys() -> None:
    client = FakeClient()
    client.add_object(CONTROLLER_REVISIONS, {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "web-bad", "namespace": "ns", "labels": {"app": "db"}},
        "data": "x", "revision": "x"})
    client.add_object(STS, stateful_set(1))
    async with running(recording(InMemoryDeletionSink()), client) as ssc:
        await eventually(lambda: len(revisions_named(client)) == 2)
        await quiet(ssc)
    bad = client.stored(CONTROLLER_REVISIONS, "web-bad", namespace="ns")
    assert bad is not None and not bad["metadata"].get("ownerReferences")


def revisions_named(client: FakeClient) -> list[str]:
    return sorted(r["metadata"]["name"] for r in objects(client, CONTROLLER_REVISIONS))
