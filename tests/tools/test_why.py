"""kubegc why: from kubegc's DeletionRecords (live) or from Events (a cluster without them)."""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions
from kubegc.testing import Cluster
from kubegc.tools.why import explain

from .conftest import inventory_of
from .lab import kubegc, kubegc_json

CM = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")


def body(kind: str, name: str, *refs: dict[str, Any], finalizers: tuple[str, ...] = ()
         ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "ownerReferences": list(refs)}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": kind, "metadata": meta}


def ref(obj: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"], **extra}


def test_why_follows_the_chain_of_records() -> None:
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            root = await c.create(CM, body("ConfigMap", "root"), namespace="default")
            mid = await c.create(SECRETS, body("Secret", "mid", ref(root, blockOwnerDeletion=True)),
                                 namespace="default")
            await c.create(CM, body("ConfigMap", "leaf", ref(mid, blockOwnerDeletion=True)),
                           namespace="default")
            await c.create(CM, body("ConfigMap", "stray", {**ref(root), "uid": "nope"}),
                           namespace="default")
            await c.delete(CM, "root", namespace="default",
                           options=DeleteOptions(propagation_policy="Foreground"))
        cluster.run(build())
        cluster.settle()
        kc = str(cluster.kubeconfig)
        leaf = kubegc_json("why", "configmap/leaf", "--kubeconfig", kc)
        stray = kubegc_json("why", "cm/stray", "--kubeconfig", kc)
        root = kubegc_json("why", "configmap/root", "--kubeconfig", kc)
    assert leaf["exists"] is False and leaf["evidence"] == "DeletionRecords"
    assert "deleted by the garbage collector" in leaf["conclusion"]
    (entry,) = [e for e in leaf["entries"] if e["action"] == "delete"]
    assert entry["reason"] == "OwnerWaitingForeground"
    assert entry["owners"][0]["name"] == "mid"
    (cause,) = leaf["causes"]  # why did mid go? because root was deleted in the foreground
    assert cause["object"]["name"] == "mid"
    assert "OwnerWaitingForeground" in cause["conclusion"]
    # "nope" never existed: the owner is absent, not "recreated" (issue: a made-up uid was
    # reported as OwnerRecreated)
    assert stray["entries"][0]["reason"] == "OwnerAbsent"
    assert "no object with the referenced uid" in stray["entries"][0]["message"]
    assert stray["causes"] == []  # a uid that never existed explains nothing more
    assert "not by a kubegc component" in root["conclusion"]  # root: deleted by request
    # ... and the collector's part in it: it removed the foregroundDeletion finalizer
    assert "remove-finalizer" in root["conclusion"]
    assert "DELETE sent at" in leaf["conclusion"]  # a DELETE's time, not the removal's


def test_why_of_a_terminating_object_is_the_doctor_answer() -> None:
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            await c.create(CM, body("ConfigMap", "held", finalizers=("x.io/hold",)),
                           namespace="default")
            await c.delete(CM, "held", namespace="default")
        cluster.run(build())
        report = kubegc_json("why", "configmap/held", "--kubeconfig", str(cluster.kubeconfig))
    assert report["exists"] and report["state"]["status"] == "Terminating"
    (finding,) = report["findings"]
    assert finding["kind"] == "Deleting"  # for less than --stuck-after: not stuck yet
    assert finding["finalizers"][0]["finalizer"] == "x.io/hold"


async def test_why_without_records_reads_events_and_says_they_expire() -> None:
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "gone.1", "namespace": "a", "uid": "e1"},
             "involvedObject": {"kind": "ConfigMap", "name": "gone", "namespace": "a",
                                "uid": "g1"},
             "reason": "OwnerRefInvalidNamespace", "type": "Warning", "message": "m",
             "lastTimestamp": "2026-01-01T00:05:00Z"}
    inv = await inventory_of([event])
    from kubegc.client.dump import DumpClient

    report = await explain(DumpClient([event]), inv, None, kind="ConfigMap", name="gone",
                           namespace="a")
    assert report.evidence == "Events"
    assert [e.action for e in report.entries] == ["OwnerRefInvalidNamespace"]
    assert "expire" in report.notes[0]
    assert "the events below are all that is left" in report.conclusion


CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = GroupVersionResource("example.com", "v1", "widgets")
WIDGET_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "widgets.example.com"},
              "spec": {"group": "example.com", "scope": "Namespaced",
                       "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                 "listKind": "WidgetList"},
                       "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                           "openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_why_of_a_kind_the_cluster_does_not_serve_is_an_error() -> None:
    """As tree and plan: it used to answer "deleted by a request", exit 0."""
    with Cluster() as cluster:
        kc = str(cluster.kubeconfig)
        for tool in (("why",), ("tree",), ("plan", "delete")):
            code, out, err = kubegc(*tool, "widget/x", "--kubeconfig", kc)
            assert (code, out) == (1, ""), (tool, out)
            assert 'the server doesn\'t have a resource type "widget"' in err


def test_why_still_explains_an_object_whose_crd_was_deleted() -> None:
    """A kind no longer served is explained by the DeletionRecords that name it."""
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            await c.create(CRDS, WIDGET_CRD)
            await cluster.asettle()
            await c.create(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                     "metadata": {"name": "w", "ownerReferences": [
                                         {"apiVersion": "v1", "kind": "ConfigMap",
                                          "name": "gone", "uid": "gone-uid"}]}},
                           namespace="default")
        cluster.run(build())
        cluster.settle()
        cluster.run(cluster.client.delete(CRDS, "widgets.example.com"))
        cluster.settle()
        report = kubegc_json("why", "widget/w", "--kubeconfig", str(cluster.kubeconfig))
    assert "deleted by the garbage collector" in report["conclusion"]
    assert report["entries"][0]["object"]["kind"] == "Widget"


def test_why_of_an_object_being_deleted_says_who_deletes_it() -> None:
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            await c.create(CM, body("ConfigMap", "by-user", finalizers=("x.io/hold",)),
                           namespace="default")
            await c.delete(CM, "by-user", namespace="default")
            await c.create(CM, body("ConfigMap", "by-gc", {"apiVersion": "v1",
                                                           "kind": "ConfigMap", "name": "gone",
                                                           "uid": "gone-uid"},
                                    finalizers=("x.io/hold",)), namespace="default")
            await c.create(CM, body("ConfigMap", "kept"), namespace="default")
        cluster.run(build())
        cluster.settle()
        kc = str(cluster.kubeconfig)
        by_user = kubegc_json("why", "configmap/by-user", "--kubeconfig", kc)
        by_gc = kubegc_json("why", "configmap/by-gc", "--kubeconfig", kc)
        kept = kubegc_json("why", "configmap/kept", "--kubeconfig", kc)
    assert by_user["exists"] and "exists and is being deleted" in by_user["conclusion"]
    assert "deleted by a request" in by_user["conclusion"]
    assert "it waits for its finalizers: x.io/hold" in by_user["conclusion"]
    assert "deleted by the garbage collector (OwnerAbsent)" in by_gc["conclusion"]
    assert kept["conclusion"] == "ConfigMap/kept exists and is not being deleted"


def test_why_says_recreated_only_for_an_owner_that_was_seen() -> None:
    """The owner was deleted and recreated under its name; a child made with the old uid
    is collected with OwnerRecreated (the GC saw the old uid go). A made-up uid is
    OwnerAbsent (see test_why_follows_the_chain_of_records)."""
    with Cluster() as cluster:
        async def build() -> dict[str, Any]:
            c = cluster.client
            old = await c.create(CM, body("ConfigMap", "owner"), namespace="default")
            await cluster.asettle()
            await c.delete(CM, "owner", namespace="default")
            await cluster.asettle()
            await c.create(CM, body("ConfigMap", "owner"), namespace="default")
            await c.create(CM, body("ConfigMap", "stale-child", ref(old)), namespace="default")
            return old
        old = cluster.run(build())
        cluster.settle()
        why = kubegc_json("why", "configmap/stale-child", "--kubeconfig",
                          str(cluster.kubeconfig))
    (entry,) = why["entries"]
    assert entry["reason"] == "OwnerRecreated"
    assert entry["owners"][0] == {**entry["owners"][0], "uid": old["metadata"]["uid"],
                                  "detail": "Recreated"}
    assert "OwnerRecreated" in why["conclusion"]
