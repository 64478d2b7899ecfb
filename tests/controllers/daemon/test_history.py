"""A DaemonSet's ControllerRevisions and rolling update against FakeClient: one revision
per template, labelled with the pods' hash, owned by the set; a template change rolls out
one node at a time (maxUnavailable 1); history trimmed to ``revisionHistoryLimit``, each
trimmed revision and each deleted pod a Deletion naming its rule."""

from __future__ import annotations

from typing import Any

from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.daemon.daemon_controller import DaemonSetsController
from kubegc.controllers.daemon.update import max_unavailable, template_hash
from kubegc.controllers.history import CONTROLLER_REVISIONS

from ..workload_harness import NODES, PODS, eventually, fake_kubelet, objects, quiet, running
from .test_daemon_controller import DS, daemon_set, node


def recording(sink: InMemoryDeletionSink) -> type[DaemonSetsController]:
    class Recording(DaemonSetsController):
        def __init__(self, ctx: ControllerContext[Any]) -> None:
            super().__init__(ctx, deletions=sink)

    return Recording


def revisions(client: FakeClient) -> list[Obj]:
    return sorted(objects(client, CONTROLLER_REVISIONS), key=lambda r: r["revision"])


def rolled_to(client: FakeClient, image: str, nodes: int) -> bool:
    pods = [p for p in objects(client, PODS) if not p["metadata"].get("deletionTimestamp")]
    return len(pods) == nodes and all(p["spec"]["containers"][0]["image"] == image
                                      for p in pods)


async def set_image(client: FakeClient, image: str) -> None:
    stored = client.stored(DS, "agent", namespace="ns")
    assert stored is not None
    stored["spec"]["template"]["spec"]["containers"][0]["image"] = image
    await client.update(DS, stored, namespace="ns")


def test_max_unavailable_is_an_int_or_a_percentage_rounded_up() -> None:
    def ds(value: object) -> Obj:
        return {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": value}}}}

    assert max_unavailable({}, 10) == 1
    assert max_unavailable(ds(3), 10) == 3
    assert max_unavailable(ds("25%"), 10) == 3
    assert max_unavailable(ds("0%"), 10) == 1  # with no surge, never 0


async def test_a_template_change_rolls_out_and_history_is_trimmed() -> None:
    client = FakeClient()
    sink = InMemoryDeletionSink()
    for name in ("n1", "n2"):
        client.add_object(NODES, node(name))
    body = daemon_set()
    body["spec"]["revisionHistoryLimit"] = 1
    ds = client.add_object(DS, body)
    async with running(recording(sink), client) as dsc, fake_kubelet(client):
        await eventually(lambda: rolled_to(client, "nginx", 2))
        [first] = revisions(client)
        for version in (2, 3, 4):
            await set_image(client, f"nginx:{version}")
            await eventually(lambda v=version: rolled_to(client, f"nginx:{v}", 2),  # type: ignore[misc]
                             what=f"rolled to nginx:{version}")
        await eventually(lambda: [r["revision"] for r in revisions(client)] == [3, 4])
        await quiet(dsc)
    hash_ = first["metadata"]["labels"]["controller-revision-hash"]
    assert first["metadata"]["name"] == f"agent-{hash_}"
    assert first["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
         "uid": ds["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    newest = revisions(client)[-1]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in objects(
        client, PODS)} == {newest["metadata"]["labels"]["controller-revision-hash"]}
    trimmed = [d for d in sink if d.reason == "RevisionHistoryLimit"]
    assert trimmed[0].object.name == first["metadata"]["name"]
    assert len(trimmed) == 2 and trimmed[0].deleter == "daemonset-controller"
    assert "revisionHistoryLimit 1 of DaemonSet agent" in trimmed[0].message
    rolled = [d for d in sink if d.reason == "RollingUpdate"]
    assert len(rolled) == 6 and all(d.object.kind == "Pod" for d in rolled)


async def test_pods_on_nodes_that_should_not_run_it_are_recorded() -> None:
    client = FakeClient()
    sink = InMemoryDeletionSink()
    client.add_object(NODES, node("n1"))
    client.add_object(DS, daemon_set())
    async with running(recording(sink), client) as dsc:
        await eventually(lambda: len(objects(client, PODS)) == 1)
        n1 = client.stored(NODES, "n1")
        assert n1 is not None
        n1["spec"]["taints"] = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
        await client.update(NODES, n1)
        await eventually(lambda: not objects(client, PODS))
        await quiet(dsc)
    [deletion] = list(sink)
    assert (deletion.reason, deletion.deleter) == ("NodeNotEligible", "daemonset-controller")
    assert deletion.message == ("node n1 should no longer run DaemonSet agent (its "
                                "nodeSelector, a taint it does not tolerate, or the node "
                                "being deleted)")


async def test_a_name_taken_by_another_revision_bumps_the_collision_count() -> None:
    client = FakeClient()
    client.add_object(NODES, node("n1"))
    ds = client.add_object(DS, daemon_set())
    hash_ = template_hash(ds)
    client.add_object(CONTROLLER_REVISIONS, {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": f"agent-{hash_}", "namespace": "ns",
                     "labels": {"app": "agent", "controller-revision-hash": hash_}},
        "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1})
    async with running(recording(InMemoryDeletionSink()), client) as dsc:
        await eventually(lambda: len(revisions(client)) == 2, what="a second revision")
        await eventually(lambda: len(objects(client, PODS)) == 1)
        await quiet(dsc)
    status = (client.stored(DS, "agent", namespace="ns") or {})["status"]
    assert status["collisionCount"] == 1
    # the squatter matches the selector: adopted, as an old revision (controlledHistories)
    assert all(r["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"]
               for r in revisions(client))
    [current] = [r for r in revisions(client) if r["metadata"]["name"] != f"agent-{hash_}"]
    assert current["revision"] == 2
    [pod] = objects(client, PODS)
    assert pod["metadata"]["labels"]["controller-revision-hash"] == current["metadata"][
        "labels"]["controller-revision-hash"] != hash_
