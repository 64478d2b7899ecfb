"""Nodes that go away, against a real ``kubegc serve`` with the real kubectl: NoExecute
taints (taint eviction), a stopped kubelet (node lifecycle, then taint eviction after the
300 s default tolerations), a deleted node (pod GC) — and what ``kubegc why`` says of each
deleted pod. The cluster clock runs 30 times faster (``--time-scale``): the 50 s grace
period is under 2 s, the 300 s tolerations 10 s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server

SCALE = 30


@pytest.fixture(scope="module")
def nodes_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(tmp_path_factory.mktemp("kubegc-nodes"), "--nodes", "3",
                     "--time-scale", str(SCALE))
    yield s
    stop_server(s)


def pod(name: str, node: str, tolerations: list[dict[str, Any]] | None = None) -> str:
    spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": spec})


def get(server: Server, *args: str) -> dict[str, Any] | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    if done.returncode != 0:
        return None
    obj: dict[str, Any] = json.loads(done.stdout)
    return obj


def why(server: Server, what: str, ns: str) -> dict[str, Any]:
    return server.kubegc_json("why", what, "-n", ns)


def running(server: Server, ns: str, name: str) -> bool:
    p = get(server, "pod", name, "-n", ns)
    return p is not None and (p.get("status") or {}).get("phase") == "Running"


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or []
                 if c.get("type") == type_), {})


@pytest.fixture
def nsn(nodes_server: Server) -> Iterator[str]:
    name = "nodes-" + __import__("uuid").uuid4().hex[:6]
    nodes_server.kubectl("create", "namespace", name)
    yield name
    nodes_server.kubectl("delete", "namespace", name, "--wait=false", check=False)


def test_a_noexecute_taint_deletes_untolerating_pods_at_once_and_tolerating_ones_later(
        nodes_server: Server, nsn: str) -> None:
    s, node = nodes_server, "kubegc-node-1"
    s.kubectl("create", "-n", nsn, "-f", "-", input=pod("bare", node))
    s.kubectl("create", "-n", nsn, "-f", "-", input=pod("patient", node, [
        {"key": "maint", "operator": "Equal", "value": "now", "effect": "NoExecute",
         "tolerationSeconds": 60}]))
    s.kubectl("create", "-n", nsn, "-f", "-", input=pod("forever", node, [
        {"key": "maint", "operator": "Exists", "effect": "NoExecute"}]))
    for name in ("bare", "patient", "forever"):
        eventually(lambda n=name: running(s, nsn, n), what=f"{name} running")
    s.kubectl("taint", "node", node, "maint=now:NoExecute")
    try:
        eventually(lambda: get(s, "pod", "bare", "-n", nsn) is None, timeout=30,
                   what="the untolerating pod deleted")
        assert get(s, "pod", "patient", "-n", nsn) is not None  # 60 s are 2 s: not yet
        eventually(lambda: get(s, "pod", "patient", "-n", nsn) is None, timeout=30,
                   what="the tolerating pod deleted after tolerationSeconds")
        assert running(s, nsn, "forever")
    finally:
        s.kubectl("taint", "node", node, "maint=now:NoExecute-")
    report = why(s, "pod/bare", nsn)
    entry = report["entries"][-1]
    assert entry["deleter"] == "taint-eviction-controller"
    assert (entry["reason"], entry["taint"], entry["node"]) == (
        "UntoleratedTaint", "maint=now:NoExecute", node)
    assert "taint eviction" in report["conclusion"] and "maint=now:NoExecute" in report[
        "conclusion"]
    patient = why(s, "pod/patient", nsn)["entries"][-1]
    assert (patient["reason"], patient["toleration"]) == (
        "TolerationExpired", "maint=now:NoExecute for 60s")
    events = s.kubectl("get", "events", "-n", nsn, "--field-selector",
                       "reason=TaintManagerEviction", "-o", "json")
    messages = {e["message"] for e in json.loads(events.stdout)["items"]}
    assert f"Marking for deletion Pod {nsn}/bare" in messages


def test_a_stopped_kubelet_makes_its_node_unknown_then_its_pods_evicted(
        nodes_server: Server, nsn: str) -> None:
    s, node = nodes_server, "kubegc-node-2"
    s.kubectl("create", "-n", nsn, "-f", "-", input=pod("web", node))
    eventually(lambda: running(s, nsn, "web"), what="web running")
    s.kubectl("annotate", "node", node, "kubegc.io/kubelet=stopped")
    try:
        def unreachable() -> bool:
            n = get(s, "node", node) or {}
            return any(t.get("key") == "node.kubernetes.io/unreachable"
                       for t in (n.get("spec") or {}).get("taints") or [])
        eventually(unreachable, timeout=30, what="the unreachable taint")
        ready = condition(get(s, "node", node) or {}, "Ready")
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert condition(get(s, "pod", "web", "-n", nsn) or {}, "Ready")["status"] == "False"
        # the 300 s default toleration (DefaultTolerationSeconds) runs out; the kubelet is
        # stopped, so the pod stays Terminating
        eventually(lambda: ((get(s, "pod", "web", "-n", nsn) or {}).get("metadata") or {})
                   .get("deletionTimestamp"), timeout=40, what="web being deleted")
        target = condition(get(s, "pod", "web", "-n", nsn) or {}, "DisruptionTarget")
        assert target["reason"] == "DeletionByTaintManager"
        report = why(s, "pod/web", nsn)
        assert "taint eviction" in report["conclusion"]
        assert "node.kubernetes.io/unreachable:NoExecute" in report["conclusion"]
        # the doctor's answer for the pod stuck Terminating: which node, that its kubelet is
        # stopped, and what will delete the pod
        stuck = json.dumps(report["findings"])
        assert "its kubelet is stopped" in stuck and "out-of-service" in stuck
    finally:
        s.kubectl("annotate", "node", node, "kubegc.io/kubelet=running", "--overwrite")
    eventually(lambda: not unreachable(), timeout=30, what="the taint removed")
    eventually(lambda: get(s, "pod", "web", "-n", nsn) is None, timeout=30,
               what="the restarted kubelet finishing the deletion")


def plan(server: Server, *args: str) -> dict[str, Any]:
    return server.kubegc_json("plan", *args)


def test_a_deleted_node_has_its_pods_deleted_by_pod_gc(nodes_server: Server, nsn: str) -> None:
    s, node = nodes_server, "kubegc-node-3"
    s.kubectl("create", "-n", nsn, "-f", "-", input=pod("bare", node))
    eventually(lambda: running(s, nsn, "bare"), what="bare running")
    bare = get(s, "pod", "bare", "-n", nsn)
    assert bare is not None
    s.kubectl("create", "-n", nsn, "-f", "-", input=json.dumps({  # goes with the pod (GC)
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cache", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "bare",
             "uid": bare["metadata"]["uid"]}]}}))
    # the plan first: pod GC deletes the pod once the node is gone, then the GC its dependent
    predicted = plan(s, "delete", f"node/{node}")
    deleted = {(d["kind"], d["name"]) for d in predicted["deleted"]}
    assert {("Node", node), ("Pod", "bare"), ("ConfigMap", "cache")} <= deleted, deleted
    by = {(st["object"]["kind"], st["object"]["name"]): st for st in predicted["steps"]
          if st["action"] == "deleted"}
    assert by[("Pod", "bare")]["by"] == "pod-garbage-collector", by[("Pod", "bare")]
    assert by[("Pod", "bare")]["reason"].startswith("NodeDeleted"), by[("Pod", "bare")]
    assert by[("ConfigMap", "cache")]["by"] == "the garbage collector"
    # then what happens
    s.kubectl("delete", "node", node)
    eventually(lambda: get(s, "pod", "bare", "-n", nsn) is None, timeout=30,
               what="pod GC deleting the orphaned pod")
    eventually(lambda: get(s, "configmap", "cache", "-n", nsn) is None, timeout=30,
               what="the garbage collector deleting the pod's dependent")
    report = why(s, "pod/bare", nsn)
    entry = report["entries"][-1]
    assert (entry["deleter"], entry["reason"], entry["node"]) == (
        "pod-garbage-collector", "NodeDeleted", node)
    assert "pod GC" in report["conclusion"] and node in report["conclusion"]
