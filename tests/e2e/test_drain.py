"""``kubectl drain`` against ``kubegc serve``: evictions through ``pods/eviction`` (never
kubectl's DELETE fallback), refused with 429 while a PodDisruptionBudget allows no
disruption, a server dry run that returns and deletes nothing, and what ``kubegc why``
says about an evicted pod."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server

NODE = "kubegc-node-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of its own: draining cordons its one node."""
    s = start_server(tmp_path_factory.mktemp("drain"))
    yield s
    stop_server(s)


@pytest.fixture
def ns(server: Server) -> Iterator[str]:
    name = f"drain-{time.monotonic_ns() % 10**8}"
    server.kubectl("create", "namespace", name)
    yield name
    server.kubectl("uncordon", NODE, check=False)
    server.kubectl("delete", "namespace", name, "--wait=false", check=False)


def _pods(server: Server, ns: str) -> list[dict[str, Any]]:
    out = server.kubectl("get", "pods", "-n", ns, "-o", "json").stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def _running(server: Server, ns: str, count: int) -> list[str]:
    def ready() -> list[str] | None:
        pods = _pods(server, ns)
        names = [p["metadata"]["name"] for p in pods
                 if any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in (p.get("status") or {}).get("conditions") or [])]
        return names if len(names) == count else None
    names: list[str] = eventually(ready, timeout=30, what=f"{count} ready pods")
    return names


def _deployment(server: Server, ns: str, replicas: int = 2) -> list[str]:
    server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx",
                   f"--replicas={replicas}")
    return _running(server, ns, replicas)


def _drain(server: Server, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return server.kubectl("drain", NODE, "--ignore-daemonsets", "--pod-selector",
                          "app=web", *args, check=False, timeout=timeout)


def _records(server: Server, uid: str) -> list[dict[str, Any]]:
    out = server.kubectl("get", "deletionrecords", "-l", f"kubegc.io/object-uid={uid}",
                         "-o", "json").stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def test_drain_without_budget_evicts_through_the_eviction_api(server: Server, ns: str) -> None:
    names = _deployment(server, ns)
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in _pods(server, ns)}
    proc = _drain(server, "--timeout=60s")
    assert proc.returncode == 0, proc.stderr
    for name in names:
        assert f"evicting pod {ns}/{name}" in proc.stdout + proc.stderr
        assert f"pod/{name} evicted" in proc.stdout + proc.stderr
    left = {p["metadata"]["name"] for p in _pods(server, ns)}
    assert not left & set(names)
    for name in names:
        [record] = _records(server, uids[name])
        assert record["action"] == "evict"
        assert record["reason"] == "EvictionByEvictionAPI"
        assert record["user"] == "kubernetes-admin"
        assert record["object"]["name"] == name
    why = _why(server, ns, names[0])
    assert why["exists"] is False
    assert why["conclusion"].startswith(f"Pod/{names[0]} was evicted by kubernetes-admin "
                                        "through the Eviction API (pods/eviction, at ")
    assert "no PodDisruptionBudget selects it" in why["conclusion"]
    [entry] = why["entries"]
    assert (entry["action"], entry["user"], entry["budget"]) == (
        "evict", "kubernetes-admin", None)


def _why(server: Server, ns: str, pod: str) -> dict[str, Any]:
    return server.kubegc_json("why", f"pod/{pod}", "-n", ns)



def test_evicted_pod_carries_the_disruption_target_condition(server: Server, ns: str) -> None:
    server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx", "--replicas=1")
    [name] = _running(server, ns, 1)
    pod = _pods(server, ns)[0]
    # a long grace period keeps the evicted pod Terminating long enough to read it
    server.kubectl("patch", "deployment", "web", "-n", ns, "--type=json", "-p", json.dumps(
        [{"op": "add", "path": "/spec/paused", "value": True}]))
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name},
         "deleteOptions": {"gracePeriodSeconds": 30,
                           "preconditions": {"uid": pod["metadata"]["uid"]}}},
        headers={"Content-Type": "application/json"})
    assert status == 201, body
    assert json.loads(body)["status"] == "Success"
    gone_or_terminating = server.http("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    if gone_or_terminating[0] == 200:
        obj = json.loads(gone_or_terminating[1])
        [condition] = [c for c in obj["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (condition["reason"], condition["message"]) == (
            "EvictionByEvictionAPI", "Eviction API: evicting")
        assert obj["metadata"]["deletionTimestamp"]


def test_eviction_with_a_stale_uid_precondition_is_a_conflict(server: Server, ns: str) -> None:
    server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx", "--replicas=1")
    [name] = _running(server, ns, 1)
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name},
         "deleteOptions": {"preconditions": {"uid": "not-the-uid"}}},
        headers={"Content-Type": "application/json"})
    assert status == 409, body
    assert "the UID in the precondition (not-the-uid)" in json.loads(body)["message"]
    assert name in {p["metadata"]["name"] for p in _pods(server, ns)}


def test_eviction_name_must_match_the_url(server: Server, ns: str) -> None:
    server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx", "--replicas=1")
    [name] = _running(server, ns, 1)
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}},
        headers={"Content-Type": "application/json"})
    assert status == 400
    assert json.loads(body)["message"] == "name in URL does not match name in Eviction object"


def test_drain_dry_run_server_returns_and_deletes_nothing(server: Server, ns: str) -> None:
    names = _deployment(server, ns)
    proc = _drain(server, "--dry-run=server", "--timeout=30s", timeout=40)
    assert proc.returncode == 0, proc.stderr
    assert {p["metadata"]["name"] for p in _pods(server, ns)} == set(names)
    for pod in _pods(server, ns):
        assert not pod["metadata"].get("deletionTimestamp")
        assert not _records(server, pod["metadata"]["uid"])


def _pdb(server: Server, ns: str, *args: str) -> None:
    server.kubectl("create", "pdb", "web", "-n", ns, "--selector=app=web", *args)


def _pdb_status(server: Server, ns: str) -> dict[str, Any]:
    out = server.kubectl("get", "pdb", "web", "-n", ns, "-o", "json").stdout
    status: dict[str, Any] = json.loads(out).get("status") or {}
    return status


def test_disruption_controller_fills_the_budget_status(server: Server, ns: str) -> None:
    _deployment(server, ns)
    _pdb(server, ns, "--min-available=2")
    status = eventually(lambda: (s := _pdb_status(server, ns)).get("currentHealthy") == 2 and s,
                        timeout=30, what="the PDB's status")
    assert status["observedGeneration"] == 1
    assert (status["desiredHealthy"], status["expectedPods"], status["disruptionsAllowed"]) == (
        2, 2, 0)
    [condition] = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed", "False", "InsufficientPods")


def test_disruption_controller_counts_a_percentage_of_the_deployment(server: Server,
                                                                      ns: str) -> None:
    _deployment(server, ns, replicas=3)
    _pdb(server, ns, "--max-unavailable=34%")
    status = eventually(lambda: (s := _pdb_status(server, ns)).get("currentHealthy") == 3 and s,
                        timeout=30, what="the PDB's status")
    # ceil(34% of 3) = 2 may be unavailable: 1 healthy pod needed, 2 disruptions allowed
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (
        3, 1, 2)
    assert status["conditions"][0]["reason"] == "SufficientPods"


def test_drain_blocked_by_a_budget_deletes_nothing(server: Server, ns: str) -> None:
    names = _deployment(server, ns)
    _pdb(server, ns, "--min-available=2")
    eventually(lambda: _pdb_status(server, ns).get("currentHealthy") == 2, timeout=30)
    proc = _drain(server, "--timeout=7s")
    assert proc.returncode != 0
    assert ("Cannot evict pod as it would violate the pod's disruption budget."
            in proc.stderr), proc.stderr
    assert "global timeout reached: 7s" in proc.stderr
    assert {p["metadata"]["name"] for p in _pods(server, ns)} == set(names)
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{names[0]}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": names[0]}},
        headers={"Content-Type": "application/json"})
    assert status == 429
    answer = json.loads(body)
    assert answer["reason"] == "TooManyRequests"
    assert answer["details"]["causes"] == [{
        "reason": "DisruptionBudget",
        "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]
    assert not _pdb_status(server, ns).get("disruptedPods")
    doctor = server.kubegc_json("doctor", "-n", ns)
    blocked = [f for f in doctor["findings"] if f["kind"] == "DrainBlockedByDisruptionBudget"]
    assert sorted(f["object"]["name"] for f in blocked) == sorted(names)
    assert blocked[0]["title"].endswith(f"on cordoned node {NODE} cannot be evicted: "
                                        "disruption budget web allows no disruption")
    assert ("PodDisruptionBudget web (minAvailable 2): needs 2 healthy pods and has 2 of 2 "
            "expected; disruptionsAllowed 0") in blocked[0]["facts"]
    plan = server.kubegc_json("plan", "delete", f"pod/{names[0]}", "-n", ns)
    assert any("through pods/eviction (kubectl drain) an eviction would be refused now (429): "
               "Cannot evict pod as it would violate the pod's disruption budget. The "
               "disruption budget web needs 2 healthy pods and has 2 currently" in note
               for note in plan["notes"]), plan["notes"]


def test_eviction_under_a_budget_takes_one_disruption(server: Server, ns: str) -> None:
    names = _deployment(server, ns)
    _pdb(server, ns, "--min-available=1")
    eventually(lambda: _pdb_status(server, ns).get("disruptionsAllowed") == 1, timeout=30)
    server.kubectl("cordon", NODE)  # the replacement stays Pending: no healthy pod comes back
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{names[0]}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": names[0]}},
        headers={"Content-Type": "application/json"})
    assert status == 201, body
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{names[1]}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": names[1]}},
        headers={"Content-Type": "application/json"})
    assert status == 429, body
    assert "needs 1 healthy pods and has 1 currently" in body.decode()
    eventually(lambda: not _pdb_status(server, ns).get("disruptedPods"), timeout=30,
               what="the controller seeing the evicted pod go")
    why = _why(server, ns, names[0])
    assert "evicted by kubernetes-admin through the Eviction API" in why["conclusion"]
    assert "the disruption budget web allowed it" in why["conclusion"]
    [entry] = why["entries"]
    assert entry["budget"] == {"name": "web", "disruptionsAllowed": 0, "currentHealthy": 2,
                               "desiredHealthy": 1, "expectedPods": 2}


def test_more_than_one_budget_is_refused(server: Server, ns: str) -> None:
    names = _deployment(server, ns, replicas=1)
    _pdb(server, ns, "--min-available=0")
    server.kubectl("create", "pdb", "web2", "-n", ns, "--selector=app=web", "--min-available=0")
    status, body = server.http(
        "POST", f"/api/v1/namespaces/{ns}/pods/{names[0]}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": names[0]}},
        headers={"Content-Type": "application/json"})
    assert status == 500
    assert json.loads(body)["message"] == ("This pod has more than one PodDisruptionBudget, "
                                           "which the eviction subresource does not support.")
