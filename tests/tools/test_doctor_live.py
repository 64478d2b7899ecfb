"""kubegc doctor against a running kubegc, through its kubeconfig (as on a real cluster).

Broken ownerReferences are made on a kubegc without controllers (a live garbage collector
would remove them within milliseconds); stuck deletions on one with every controller.
(Several controller references cannot be made live: the API server rejects them.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kubegc.api.clock import format_time
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions
from kubegc.testing import Cluster

from .lab import kubegc, kubegc_json

CM = GroupVersionResource("", "v1", "configmaps")
NS = GroupVersionResource("", "v1", "namespaces")
PV = GroupVersionResource("", "v1", "persistentvolumes")
LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")


def ns_body(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def cm_body(name: str, *refs: dict[str, Any], finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "ownerReferences": list(refs)}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def ref(obj: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"], **extra}


def findings(cluster: Cluster, *args: str) -> dict[tuple[str, str], dict[str, Any]]:
    report = kubegc_json("doctor", "--kubeconfig", str(cluster.kubeconfig), *args)
    return {(f["kind"], f["object"]["name"]): f for f in report["findings"]}


@pytest.fixture(scope="module")
def no_controllers() -> Iterator[Cluster]:
    with Cluster(controllers=()) as cluster:
        async def build() -> None:
            c = cluster.client
            for name in ("a", "b"):
                await c.create(NS, ns_body(name))
            owner = await c.create(CM, cm_body("owner"), namespace="a")
            await c.create(CM, cm_body("recreated-owner", {**ref(owner), "uid": "old-uid"}),
                           namespace="a")
            await c.create(CM, cm_body("absent-owner", {**ref(owner), "name": "gone",
                                                        "uid": "gone"}), namespace="a")
            await c.create(CM, cm_body("other-namespace", ref(owner)), namespace="b")
            await c.create(CM, cm_body("unknown-kind", {"apiVersion": "x.io/v1", "kind": "Thing",
                                                        "name": "t", "uid": "t"}), namespace="a")
            await c.create(PV, {"apiVersion": "v1", "kind": "PersistentVolume",
                                "metadata": {"name": "pv", "ownerReferences": [ref(owner)]},
                                "spec": {"capacity": {"storage": "1Gi"},
                                         "accessModes": ["ReadWriteOnce"],
                                         "hostPath": {"path": "/tmp"}}})
            x = await c.create(CM, cm_body("x"), namespace="a")
            y = await c.create(CM, cm_body("y", ref(x)), namespace="a")
            x["metadata"]["ownerReferences"] = [ref(y)]
            await c.update(CM, x, namespace="a")
        cluster.run(build())
        yield cluster


@pytest.mark.parametrize(("kind", "name", "next_text"), [
    # "old-uid" never existed: absent, not "recreated" (there is no evidence of a recreation)
    pytest.param("OwnerAbsent", "recreated-owner", "garbage collector deletes",
                 id="made-up-uid-is-absent"),
    pytest.param("OwnerAbsent", "absent-owner", "garbage collector deletes", id="absent"),
    pytest.param("OwnerInOtherNamespace", "other-namespace", "garbage collector deletes",
                 id="other-namespace"),
    pytest.param("UnknownOwnerKind", "unknown-kind", "retries with backoff", id="unknown-kind"),
    pytest.param("ClusterScopedDependentOfNamespacedOwner", "pv", "never collects",
                 id="cluster-scoped-child"),
])
def test_broken_owner_references(no_controllers: Cluster, kind: str, name: str,
                                 next_text: str) -> None:
    found = findings(no_controllers)
    assert next_text in " ".join(found[(kind, name)]["next"])


def test_ownership_cycle(no_controllers: Cluster) -> None:
    cycles = [f for f in findings(no_controllers).values() if f["kind"] == "OwnershipCycle"]
    assert len(cycles) == 1
    assert {r["name"] for r in [cycles[0]["object"], *cycles[0]["related"]]} == {"x", "y"}


def test_namespace_flag(no_controllers: Cluster) -> None:
    assert {name for _, name in findings(no_controllers, "-n", "b")} == {"other-namespace"}


@pytest.fixture(scope="module")
def all_controllers() -> Iterator[Cluster]:
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            for name in ("lab", "other", "doomed", "ops"):
                await c.create(NS, ns_body(name))
            owner = await c.create(CM, cm_body("owner"), namespace="lab")
            await c.create(CM, cm_body("hold", ref(owner, blockOwnerDeletion=True),
                                       finalizers=("x.io/hold",)), namespace="lab")
            await c.delete(CM, "owner", namespace="lab",
                           options=DeleteOptions(propagation_policy="Foreground"))
            await c.create(CM, cm_body("mirror", ref(owner)), namespace="other")
            await c.create(CM, cm_body("content", finalizers=("x.io/hold",)), namespace="doomed")
            await c.delete(NS, "doomed")
            await c.create(LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "op.own.example.io", "namespace": "ops",
                                                 "annotations": {"kubegc.io/removes-finalizers":
                                                                 "own.example.io/cleanup"}},
                                    "spec": {"holderIdentity": None,
                                             "leaseDurationSeconds": 15}})
            await c.create(CM, cm_body("custom", finalizers=("own.example.io/cleanup",)),
                           namespace="lab")
            await c.delete(CM, "custom", namespace="lab")
            # one root cause for four deletions: app <- mid <- leaf-1, leaf-2 (held); and an
            # unrelated controller's fresh Lease in the finalizer's domain (the case)
            await c.create(NS, ns_body("shop"))
            await c.create(LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "8f2a1c.backup.example.com",
                                                 "namespace": "ops"},
                                    "spec": {"holderIdentity": "backup-0",
                                             "leaseDurationSeconds": 3600,
                                             "renewTime": format_time(datetime.now(UTC))}})
            app = await c.create(CM, cm_body("app"), namespace="shop")
            mid = await c.create(CM, cm_body("mid", ref(app, blockOwnerDeletion=True)),
                                 namespace="shop")
            for name in ("leaf-1", "leaf-2"):
                await c.create(CM, cm_body(name, ref(mid, blockOwnerDeletion=True),
                                           finalizers=("example.com/hold",)), namespace="shop")
            await c.delete(CM, "app", namespace="shop",
                           options=DeleteOptions(propagation_policy="Foreground"))
        cluster.run(build())
        cluster.settle()
        yield cluster


def test_stuck_foreground_owner(all_controllers: Cluster) -> None:
    f = findings(all_controllers, "--stuck-after", "0")[("StuckDeletion", "owner")]
    assert [r["finalizer"] for r in f["finalizers"]] == ["foregroundDeletion"]
    assert f["finalizers"][0]["alive"] == "alive"  # kubegc runs its GC in-process
    (blocking,) = f["blockingDependents"]
    assert blocking["object"]["name"] == "hold"
    assert "x.io/hold" in blocking["holdsBecause"]


def test_stuck_namespace(all_controllers: Cluster) -> None:
    f = findings(all_controllers, "--stuck-after", "0")[("StuckNamespace", "doomed")]
    facts = " ".join(f["facts"])
    assert "content left: configmaps 1" in facts
    assert "x.io/hold in 1 object" in facts
    assert "condition NamespaceFinalizersRemaining" in facts


def test_dead_operator_lease(all_controllers: Cluster) -> None:
    f = findings(all_controllers, "--stuck-after", "0")[("StuckDeletion", "custom")]
    (remover,) = f["finalizers"]
    assert remover["alive"] == "not alive"
    assert remover["evidence"][0]["source"] == "Lease ops/op.own.example.io"


def test_owner_ref_invalid_namespace_event(all_controllers: Cluster) -> None:
    f = findings(all_controllers)[("OwnerRefInvalidNamespaceEvent", "mirror")]
    assert "is gone" in " ".join(f["facts"])


def test_young_deletions_are_listed_as_info(all_controllers: Cluster) -> None:
    """The issue's case: a foreground deletion held for seconds was not reported at all
    (the --stuck-after threshold hid it). Now every deletion is listed; the threshold only
    sets its severity, and the summary counts the young ones."""
    report = kubegc_json("doctor", "--kubeconfig", str(all_controllers.kubeconfig),
                         "--stuck-after", "1h")
    by_key = {(f["kind"], f["object"]["name"]): f for f in report["findings"]}
    assert not {k for k, _ in by_key} & {"StuckDeletion", "StuckNamespace"}
    owner = by_key[("Deleting", "owner")]
    assert owner["severity"] == "info"
    assert owner["blockingDependents"][0]["object"]["name"] == "hold"
    assert by_key[("DeletingNamespace", "doomed")]["severity"] == "info"
    assert report["summary"]["young"] == report["summary"]["deleting"] >= 3
    stuck = findings(all_controllers, "--stuck-after", "0")
    assert stuck[("StuckDeletion", "owner")]["severity"] == "warning"  # remover unknown
    assert stuck[("StuckDeletion", "custom")]["severity"] == "error"  # its remover is dead


def test_findings_that_share_a_root_cause_are_grouped(all_controllers: Cluster) -> None:
    """Four deletions held by one finalizer: one root cause, its fix once, the objects it
    holds under it, a by-hand command for each object that carries the finalizer."""
    report = kubegc_json("doctor", "--kubeconfig", str(all_controllers.kubeconfig), "-n", "shop",
                         "--stuck-after", "0")
    (cause,) = report["rootCauses"]
    assert cause["cause"] == ("finalizer example.com/hold, removed by an unknown controller "
                              "(unknown whether it is running)")
    assert {o["name"] for o in cause["holds"]} == {"app", "mid", "leaf-1", "leaf-2"}
    assert {o["name"] for o in cause["at"]} == {"leaf-1", "leaf-2"}
    assert len(cause["commands"]) == 2 and all("example.com/hold" in c
                                                for c in cause["commands"])
    assert len(cause["fix"]) == 1
    # the fresh Lease "8f2a1c.backup.example.com" is no evidence for example.com/hold
    assert "8f2a1c" not in json.dumps(report)
    code, text, _ = kubegc("doctor", "--kubeconfig", str(all_controllers.kubeconfig), "-n",
                           "shop", "--stuck-after", "0", "--fail-on", "warning")
    assert code == 3
    assert text.count("find the controller that owns example.com/hold") == 1  # the fix, once
    assert text.index("root causes") < text.index("StuckDeletion")  # summary first
