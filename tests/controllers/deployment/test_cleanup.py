"""The Deployment's history limit (``cleanupDeployment``) against FakeClient: the oldest old
ReplicaSets beyond ``revisionHistoryLimit`` go, those still holding replicas (spec or
status) or behind their generation stay, and each DELETE is a Deletion naming
deployment-controller and the limit."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kubegc.api.clock import ManualClock
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.controller_ref_manager import REPLICASETS
from kubegc.controllers.deployment.sync import cleanup_deployment


def replica_set(name: str, revision: int, *, replicas: int = 0, status_replicas: int = 0,
                behind: bool = False) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "ns", "generation": 2,
                         "annotations": {"deployment.kubernetes.io/revision": str(revision)}},
            "spec": {"replicas": replicas},
            "status": {"replicas": status_replicas, "observedGeneration": 1 if behind else 2}}


async def test_the_oldest_empty_replica_sets_beyond_the_limit_are_deleted_and_recorded(
        ) -> None:
    client = FakeClient()
    sink = InMemoryDeletionSink()
    old = [client.add_object(REPLICASETS, rs) for rs in (
        replica_set("roll-1", 1), replica_set("roll-2", 2, status_replicas=1),
        replica_set("roll-3", 3, behind=True), replica_set("roll-4", 4),
        replica_set("roll-5", 5))]
    dc: Any = SimpleNamespace(client=client, clock=ManualClock(), deletions=sink,
                              component="deployment-controller")
    d = {"metadata": {"name": "roll", "namespace": "ns"}, "spec": {"revisionHistoryLimit": 1}}
    await cleanup_deployment(dc, list(reversed(old)), d)
    assert sorted(r["metadata"]["name"] for r in client.objects(REPLICASETS)) == [
        "roll-2", "roll-3", "roll-5"]
    assert [(x.deleter, x.reason, x.object.name) for x in sink] == [
        ("deployment-controller", "RevisionHistoryLimit", "roll-1"),
        ("deployment-controller", "RevisionHistoryLimit", "roll-4")]
    assert sink.deletions[0].message == (
        "ReplicaSet roll-1 (revision 1) was beyond revisionHistoryLimit 1 of Deployment roll: "
        "5 old ReplicaSets, the oldest with no replicas deleted first")
