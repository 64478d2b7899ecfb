"""``kubegc plan evict|drain|taint|stop-kubelet`` against a real ``kubegc serve``, each
planned first and then done for real with kubectl: the pods the plan says go are the pods
that go, in its order, at times within its bounds; the pods it says stay, stay.

The cluster clock runs 30 times faster (``--time-scale``): a plan's 300 s toleration is 10
real seconds. Times are compared on the cluster's clock (the objects' timestamps), with a
tolerance for whole-second timestamps and for the reaction of a controller at that scale.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server

SCALE = 30
#: cluster seconds a real reaction may take at SCALE (0.5 real s on a loaded machine), plus
#: timestamp rounding
SLACK = 15.0
GRACE = 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(tmp_path_factory.mktemp("plan-nodes"), "--nodes", "3",
                     "--time-scale", str(SCALE))
    yield s
    stop_server(s)


@pytest.fixture
def ns(server: Server) -> Iterator[str]:
    name = "plan-" + uuid.uuid4().hex[:6]
    server.kubectl("create", "namespace", name)
    yield name
    server.kubectl("delete", "namespace", name, "--wait=false", check=False)


def pod(name: str, node: str, *, tolerations: list[dict[str, Any]] | None = None,
        labels: dict[str, str] | None = None) -> str:
    spec: dict[str, Any] = {"nodeName": node, "terminationGracePeriodSeconds": GRACE,
                            "containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "labels": labels or {}}, "spec": spec})


def get(server: Server, *args: str) -> dict[str, Any] | None:
    done = server.kubectl("get", *args, "-o", "json", "--show-managed-fields", check=False)
    if done.returncode != 0:
        return None
    obj: dict[str, Any] = json.loads(done.stdout)
    return obj


def running(server: Server, ns: str, *names: str) -> None:
    for name in names:
        eventually(lambda n=name: ((get(server, "pod", n, "-n", ns) or {}).get("status") or {})
                   .get("phase") == "Running", what=f"{name} running")


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def deleting_since(server: Server, ns: str, name: str) -> datetime | None:
    """When the pod's DELETE came (its deletionTimestamp less its grace period)."""
    p = get(server, "pod", name, "-n", ns)
    meta = (p or {}).get("metadata") or {}
    if not meta.get("deletionTimestamp"):
        return None
    return stamp(meta["deletionTimestamp"]) - timedelta(
        seconds=int(meta.get("deletionGracePeriodSeconds") or 0))


def managed_time(obj: dict[str, Any], manager: str) -> datetime:
    times = [stamp(m["time"]) for m in obj["metadata"].get("managedFields") or []
             if m.get("manager") == manager and m.get("time")]
    assert times, obj["metadata"].get("managedFields")
    return max(times)


def steps_by_pod(plan: dict[str, Any], action: str) -> dict[str, dict[str, Any]]:
    return {s["object"]["name"]: s for s in plan["steps"]
            if s["action"] == action and s["object"]["kind"] == "Pod"}


def within(step: dict[str, Any], seconds: float) -> bool:
    low = step["earliest"] if step["earliest"] is not None else step["time"]
    high = step["latest"] if step["latest"] is not None else step["time"]
    return low - SLACK <= seconds <= high + SLACK


def test_plan_taint_then_kubectl_taint(server: Server, ns: str) -> None:
    node = "kubegc-node-1"
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("bare", node))
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("patient", node, tolerations=[
        {"key": "maint", "operator": "Equal", "value": "now", "effect": "NoExecute",
         "tolerationSeconds": 120}]))
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("forever", node, tolerations=[
        {"key": "maint", "operator": "Exists", "effect": "NoExecute"}]))
    running(server, ns, "bare", "patient", "forever")
    plan = server.kubegc_json("plan", "taint", f"node/{node}", "maint=now:NoExecute")
    assert plan["verb"] == "taint"
    assert plan["operation"]["result"] == "evicted", plan["operation"]
    started = steps_by_pod(plan, "deletionTimestamp set")
    assert set(started) == {"bare", "patient"}, plan["steps"]
    assert started["bare"]["by"] == "taint-eviction-controller"
    assert started["bare"]["reason"].startswith("UntoleratedTaint")
    assert started["patient"]["reason"].startswith("TolerationExpired")
    assert abs(started["patient"]["time"] - 120) < 1
    assert [d["name"] for d in plan["deleted"]] == ["bare", "patient"]
    # then for real
    server.kubectl("taint", "node", node, "maint=now:NoExecute")
    try:
        tainted = managed_time(get(server, "node", node) or {}, "kubectl-taint")
        eventually(lambda: get(server, "pod", "patient", "-n", ns) is None, timeout=30,
                   what="the tolerating pod deleted")
        assert get(server, "pod", "bare", "-n", ns) is None
        assert get(server, "pod", "forever", "-n", ns) is not None
        why = server.kubegc_json("why", "pod/patient", "-n", ns)
        entry = why["entries"][-1]
        assert (entry["deleter"], entry["reason"]) == ("taint-eviction-controller",
                                                       "TolerationExpired")
        when = stamp(entry["time"])
        assert within(started["patient"], (when - tainted).total_seconds()), (
            when, tainted, started["patient"])
    finally:
        server.kubectl("taint", "node", node, "maint=now:NoExecute-")


def test_plan_delete_predicts_pods_of_an_already_tainted_node(server: Server, ns: str) -> None:
    node = "kubegc-node-1"
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("slow", node, tolerations=[
        {"key": "drain", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 3000}]))
    running(server, ns, "slow")
    slow = get(server, "pod", "slow", "-n", ns) or {}
    server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps({  # owned: in the plan's scope
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cache", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "slow", "uid": slow["metadata"]["uid"]}]}}))
    server.kubectl("taint", "node", node, "drain=soon:NoExecute")
    try:
        plan = server.kubegc_json("plan", "delete", "configmap/cache", "-n", ns,
                                  "--horizon", "1h")
        started = steps_by_pod(plan, "deletionTimestamp set")
        assert started["slow"]["by"] == "taint-eviction-controller", plan["steps"]
        assert started["slow"]["reason"].startswith("TolerationExpired")
        assert 2900 < started["slow"]["time"] <= 3000
    finally:
        server.kubectl("taint", "node", node, "drain=soon:NoExecute-")


def test_plan_stop_kubelet_then_a_stopped_kubelet(server: Server, ns: str) -> None:
    node = "kubegc-node-2"
    unreachable = {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                   "effect": "NoExecute"}
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("web", node))  # default 300 s
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("quick", node, tolerations=[
        {**unreachable, "tolerationSeconds": 60}]))
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("stay", node,
                                                            tolerations=[unreachable]))
    running(server, ns, "web", "quick", "stay")
    plan = server.kubegc_json("plan", "stop-kubelet", f"node/{node}")
    assert plan["verb"] == "stop-kubelet"
    unknown = next(s for s in plan["steps"] if s["action"] == "node Ready=Unknown")
    assert unknown["earliest"] <= 50 <= unknown["latest"], unknown
    tainted = [s for s in plan["steps"] if s["action"] == "taint added"]
    assert tainted[0]["detail"] == "node.kubernetes.io/unreachable:NoExecute", tainted
    started = steps_by_pod(plan, "deletionTimestamp set")
    assert set(started) == {"web", "quick"}, plan["steps"]
    assert started["quick"]["time"] < started["web"]["time"]
    hanging = {h["object"]["name"] for h in plan["hanging"]}
    assert hanging == {"web", "quick"}, plan["hanging"]
    assert not plan["operation"]["completes"]
    assert "stay Terminating with no kubelet" in plan["operation"]["text"]
    # then for real
    server.kubectl("annotate", "node", node, "kubegc.io/kubelet=stopped")
    try:
        stopped = managed_time(get(server, "node", node) or {}, "kubectl-annotate")
        eventually(lambda: deleting_since(server, ns, "web"), timeout=60,
                   what="web being deleted")
        reality = {n: deleting_since(server, ns, n) for n in ("web", "quick", "stay")}
        assert reality["stay"] is None
        for name in ("web", "quick"):
            when = reality[name]
            assert when is not None
            assert within(started[name], (when - stopped).total_seconds()), (
                name, when, stopped, started[name])
        assert get(server, "pod", "web", "-n", ns) is not None  # Terminating: no kubelet
    finally:
        server.kubectl("annotate", "node", node, "kubegc.io/kubelet=running", "--overwrite")


def _replicaset(ns: str, name: str, node: str, replicas: int) -> str:
    labels = {"app": name}
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "nodeSelector": {"kubernetes.io/hostname": node},
                     "terminationGracePeriodSeconds": GRACE,
                     "containers": [{"name": "c", "image": "nginx"}]}}}})


def _pods(server: Server, ns: str, app: str) -> set[str]:
    out = server.kubectl("get", "pods", "-n", ns, "-l", f"app={app}", "-o", "json").stdout
    return {p["metadata"]["name"] for p in json.loads(out)["items"]
            if not p["metadata"].get("deletionTimestamp")}


def test_plan_drain_then_kubectl_drain(server: Server, ns: str) -> None:
    node = "kubegc-node-3"
    server.kubectl("create", "-f", "-", input=_replicaset(ns, "guarded", node, 2))
    server.kubectl("create", "-f", "-", input=_replicaset(ns, "free", node, 1))
    eventually(lambda: len(_pods(server, ns, "guarded")) == 2 and _pods(server, ns, "free"),
               what="the pods")
    guarded, free = _pods(server, ns, "guarded"), _pods(server, ns, "free")
    running(server, ns, *guarded, *free)
    server.kubectl("create", "pdb", "guarded", "-n", ns, "--selector=app=guarded",
                   "--min-available=2")
    eventually(lambda: (json.loads(server.kubectl("get", "pdb", "guarded", "-n", ns, "-o",
                                                  "json").stdout).get("status") or {})
               .get("currentHealthy") == 2, what="the budget's status")
    try:
        plan = server.kubegc_json("plan", "drain", f"node/{node}", "--ignore-daemonsets",
                                  "--timeout", "6s")
        assert plan["operation"]["result"] == "blocked", plan["operation"]
        assert "would not finish" in plan["verdict"]["text"]
        refused = steps_by_pod(plan, "eviction refused")
        assert set(refused) == guarded, plan["steps"]
        assert ("Cannot evict pod as it would violate the pod's disruption budget. The "
                "disruption budget guarded needs 2 healthy pods and has 2 currently"
                in next(iter(refused.values()))["detail"])
        assert {d["name"] for d in plan["deleted"]} == free
        assert any("replacement pods are not simulated" in n for n in plan["notes"])
        # then for real
        proc = server.kubectl("drain", node, "--ignore-daemonsets", "--timeout=6s",
                              check=False, timeout=60)
        assert proc.returncode != 0
        assert "Cannot evict pod as it would violate the pod's disruption budget." in proc.stderr
        eventually(lambda: not _pods(server, ns, "free") & free, what="the free pod gone")
        assert _pods(server, ns, "guarded") == guarded
        why = server.kubegc_json("why", f"pod/{next(iter(free))}", "-n", ns)
        assert "through the Eviction API" in why["conclusion"]
        # without the budget the drain finishes: plan, then reality
        server.kubectl("delete", "pdb", "guarded", "-n", ns)
        plan = server.kubegc_json("plan", "drain", f"node/{node}", "--ignore-daemonsets")
        assert plan["operation"]["result"] == "drained", plan["operation"]
        assert {d["name"] for d in plan["deleted"]} >= guarded
        proc = server.kubectl("drain", node, "--ignore-daemonsets", "--timeout=30s",
                              check=False, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert not _pods(server, ns, "guarded") & guarded
    finally:
        server.kubectl("uncordon", node, check=False)


def test_plan_drain_refuses_a_bare_pod_as_kubectl_does(server: Server, ns: str) -> None:
    node = "kubegc-node-3"
    server.kubectl("create", "-n", ns, "-f", "-", input=pod("solo", node))
    running(server, ns, "solo")
    try:
        plan = server.kubegc_json("plan", "drain", f"node/{node}", "--ignore-daemonsets")
        assert plan["operation"]["result"] == "refused", plan["operation"]
        message = (f"cannot delete cannot delete Pods that declare no controller (use --force "
                   f"to override): {ns}/solo")
        assert message in plan["operation"]["error"], plan["operation"]
        assert not plan["deleted"]
        proc = server.kubectl("drain", node, "--ignore-daemonsets", check=False)
        assert proc.returncode != 0
        assert message in proc.stderr, proc.stderr
        plan = server.kubegc_json("plan", "drain", f"node/{node}", "--ignore-daemonsets",
                                  "--force")
        assert plan["operation"]["result"] == "drained", plan["operation"]
        assert any(d["name"] == "solo" for d in plan["deleted"])
    finally:
        server.kubectl("uncordon", node, check=False)


def test_plan_evict_then_the_eviction(server: Server, ns: str) -> None:
    node = "kubegc-node-3"
    labels = {"app": "pair"}
    for name in ("one", "two"):
        server.kubectl("create", "-n", ns, "-f", "-", input=pod(name, node, labels=labels))
    running(server, ns, "one", "two")
    server.kubectl("create", "pdb", "pair", "-n", ns, "--selector=app=pair", "--min-available=2")
    eventually(lambda: (json.loads(server.kubectl("get", "pdb", "pair", "-n", ns, "-o",
                                                  "json").stdout).get("status") or {})
               .get("currentHealthy") == 2, what="the budget's status")
    plan = server.kubegc_json("plan", "evict", "pod/one", "-n", ns)
    assert plan["operation"]["result"] == "refused"
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/one/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "one"}},
        headers={"Content-Type": "application/json"})
    assert status == 429
    answer = json.loads(body)
    [refused] = [s for s in plan["steps"] if s["action"] == "eviction refused"]
    assert refused["detail"] == (f"429: {answer['message']} "
                                 f"{answer['details']['causes'][0]['message']}")
    # one disruption allowed: the plan evicts, as the eviction then does
    server.kubectl("patch", "pdb", "pair", "-n", ns, "--type=merge", "-p",
                   '{"spec": {"minAvailable": 1}}')
    eventually(lambda: (json.loads(server.kubectl("get", "pdb", "pair", "-n", ns, "-o",
                                                  "json").stdout).get("status") or {})
               .get("disruptionsAllowed") == 1, what="one disruption allowed")
    plan = server.kubegc_json("plan", "evict", "pod/one", "-n", ns)
    assert plan["operation"]["result"] == "evicted", plan["operation"]
    assert [d["name"] for d in plan["deleted"]] == ["one"]
    started = steps_by_pod(plan, "deletionTimestamp set")
    assert started["one"]["by"] == "the Eviction API (pods/eviction)"
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/one/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "one"}},
        headers={"Content-Type": "application/json"})
    assert status == 201, body
    eventually(lambda: get(server, "pod", "one", "-n", ns) is None, what="one evicted")
    assert get(server, "pod", "two", "-n", ns) is not None
