"""Several ``kubegc serve`` processes on one etcd are one cluster (docs/several-servers.md):
any server answers any request, a watch on one sees the writes made through the others in
order, exactly one runs the controllers (so nothing is made twice), and after ``kill -9`` of
that one another takes over within the lease duration plus its retries.

Real processes on a real etcd: with ``KUBEGC_TEST_ETCD_CLUSTER`` (comma-separated client
URLs of a multi-member etcd, as ``.ci/run`` starts it) each server talks to its own member;
with ``KUBEGC_TEST_ETCD`` alone, all share that one.

The servers run short leader-election settings (lease 3 s, renew deadline 2 s, retry
0.5 s) so that a window of 12 s holds what 60 s hold at upstream's defaults (15 s / 10 s /
2 s): four lease durations, and ~15 tries by each standby to take the Lease. The split
brain these tests guard against (each server taking the Lease at every try without looking
at the holder) changed the holder at the first try; so does any acquire that ignores the
observed lease.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubegc.client.leaderelection import JITTER_FACTOR
from kubegc.storage import etcd_storage

from .conftest import Server, eventually, start_server, stop_server

ETCD_MEMBERS = [e for e in os.environ.get("KUBEGC_TEST_ETCD_CLUSTER", "").split(",") if e] or (
    [os.environ["KUBEGC_TEST_ETCD"]] if os.environ.get("KUBEGC_TEST_ETCD") else [])

pytestmark = [pytest.mark.etcd, pytest.mark.skipif(
    not ETCD_MEMBERS, reason="KUBEGC_TEST_ETCD(_CLUSTER) is not set (start etcd, see .ci/run)")]

LEASE, DEADLINE, RETRY = 3.0, 2.0, 0.5
ELECTION = ("--leader-elect-lease-duration", f"{LEASE:g}s", "--leader-elect-renew-deadline",
            f"{DEADLINE:g}s", "--leader-elect-retry-period", f"{RETRY * 1000:g}ms")
#: four lease durations (see the module docstring)
WINDOW = 4 * LEASE
#: a standby last saw the dead leader's renewal at most one (jittered) retry after it was
#: made, the lease expires LEASE later, and the standby's next try comes within one more
FAILOVER_BOUND = LEASE + 2 * RETRY * (1 + JITTER_FACTOR) + 1.0
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
LEADING, STANDING_BY = "kubegc: leading the controllers", "kubegc: standing by"


@pytest.fixture
def start_servers(tmp_path: Path) -> Iterator[Callable[[int], list[Server]]]:
    """``start(n)``: n more servers on this test's etcd prefix, started one after the
    other (so the first one started leads); each on the next etcd member."""
    prefix = f"/kubegc-test/{uuid.uuid4().hex}"
    started: list[Server] = []

    def start(n: int) -> list[Server]:
        for _ in range(n):
            member = ETCD_MEMBERS[len(started) % len(ETCD_MEMBERS)]
            started.append(start_server(
                tmp_path / f"server-{len(started)}", "--storage",
                str(etcd_storage(member, prefix)), *ELECTION))
        return started[-n:]

    yield start
    for server in started:
        if server.process.poll() is None:
            stop_server(server)


# -- reading the cluster ---------------------------------------------------------------------

def get(server: Server, path: str) -> Any:
    status, body = server.http("GET", path)
    assert status == 200, (path, status, body)
    return json.loads(body)


def send(server: Server, method: str, path: str, body: Any,
         content_type: str = "application/json") -> Any:
    status, answer = server.http(method, path, body, headers={"Content-Type": content_type})
    assert status in (200, 201), (method, path, status, answer)
    return json.loads(answer)


def identity(server: Server) -> str:
    return (server.data_dir / "leader-identity").read_text().strip()


def lease(server: Server) -> dict[str, Any]:
    spec: dict[str, Any] = get(server, f"{LEASE_PATH}/kube-controller-manager")["spec"]
    return spec


def said(server: Server, line: str) -> bool:
    return any(t.startswith(line) for t in server.log.read_text().splitlines())


class Watch:
    """One watch stream of a server, read by a thread: each event with the local time it
    arrived. Starts from ``resourceVersion`` of a list made now, so nothing is missed."""

    def __init__(self, server: Server, path: str, *, query: str = "") -> None:
        rv = get(server, f"{path}?{query}")["metadata"]["resourceVersion"]
        url = (f"{server.url}{path}?watch=1&resourceVersion={rv}&timeoutSeconds=300"
               f"&allowWatchBookmarks=false{'&' + query if query else ''}")
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {server.token}"})
        context = ssl.create_default_context(cafile=str(server.ca_file))
        self._response = urllib.request.urlopen(request, context=context, timeout=300)
        self.events: list[tuple[float, dict[str, Any]]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self._response:
                if line.strip():
                    self.events.append((time.monotonic(), json.loads(line)))
        except (OSError, ValueError):
            pass  # the server went away

    def objects(self, kind: str = "") -> list[tuple[str, dict[str, Any]]]:
        return [(e["type"], e["object"]) for _, e in self.events
                if not kind or e["type"] == kind]


# -- what the tests create -----------------------------------------------------------------

def namespace(server: Server) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    send(server, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def replica_set(server: Server, ns: str, replicas: int) -> dict[str, Any]:
    labels = {"app": "web"}
    return send(server, "POST", f"/apis/apps/v1/namespaces/{ns}/replicasets", {
        "metadata": {"name": "web"}, "spec": {
            "replicas": replicas, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})


def job(server: Server, ns: str) -> dict[str, Any]:
    return send(server, "POST", f"/apis/batch/v1/namespaces/{ns}/jobs", {
        "metadata": {"name": "once"}, "spec": {"completions": 1, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})


def pods(server: Server, ns: str, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = get(
        server, f"/api/v1/namespaces/{ns}/pods?labelSelector={selector}")["items"]
    return items


def running(server: Server, ns: str, selector: str, count: int) -> bool:
    found = pods(server, ns, selector)
    return len(found) == count and all(p["status"].get("phase") == "Running" for p in found)


def job_succeeded(server: Server, ns: str) -> bool:
    return bool(get(server, f"/apis/batch/v1/namespaces/{ns}/jobs/once")
                .get("status", {}).get("succeeded") == 1)


def events(server: Server, ns: str, reason: str) -> list[dict[str, Any]]:
    items = get(server, f"/api/v1/namespaces/{ns}/events")["items"]
    return [e for e in items if e.get("reason") == reason]


# -- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [2, 3])
def test_one_leader_and_every_object_made_once(
        start_servers: Callable[[int], list[Server]], count: int) -> None:
    servers = start_servers(count)
    first, last = servers[0], servers[-1]
    started = time.monotonic()
    leases = Watch(last, LEASE_PATH, query="fieldSelector=metadata.name%3Dkube-controller-manager")
    ns = namespace(last)
    pod_watch = Watch(servers[1], f"/api/v1/namespaces/{ns}/pods")
    replica_set(first, ns, 10)
    job(last, ns)
    eventually(lambda: running(servers[1], ns, "app=web", 10), timeout=30)
    eventually(lambda: job_succeeded(first, ns), timeout=30)
    time.sleep(max(0.0, started + WINDOW - time.monotonic()))  # the window: see the docstring

    holders = {(o["spec"]["holderIdentity"], o["spec"]["leaseTransitions"])
               for _, o in leases.objects()}
    assert holders == {(identity(first), 0)}, holders
    assert len(leases.objects("MODIFIED")) >= WINDOW / RETRY / 2  # renewed all along
    assert [said(s, LEADING) for s in servers] == [True] + [False] * (count - 1)
    assert all(said(s, STANDING_BY) for s in servers[1:])

    assert len(pods(last, ns, "app=web")) == 10
    [job_pod] = pods(servers[1], ns, "job-name=once")
    assert job_pod["status"]["phase"] == "Succeeded"
    made = {o["metadata"]["name"] for t, o in pod_watch.objects("ADDED")}
    assert len(made) == 11 and pod_watch.objects("DELETED") == []
    created = events(first, ns, "SuccessfulCreate")
    assert len(created) == 11 and all(e["count"] == 1 for e in created)
    assert events(first, ns, "SuccessfulDelete") == []
    started_events = events(last, ns, "Started")
    assert len(started_events) == 11 and all(e["count"] == 1 for e in started_events)
    elected = events(last, "kube-system", "LeaderElection")
    assert [e["message"] for e in elected] == [f"{identity(first)} became leader"]

    # the garbage collector's records: one per pod it deleted
    gone = {p["metadata"]["uid"] for p in pods(first, ns, "app=web")}
    status, _ = last.http("DELETE", f"/apis/apps/v1/namespaces/{ns}/replicasets/web")
    assert status == 200
    eventually(lambda: pods(servers[1], ns, "app=web") == [], timeout=30)
    first.settle()  # the leader wrote every record it had

    def recorded() -> list[str]:
        items = get(last, "/apis/kubegc.io/v1/deletionrecords")["items"]
        return [r["metadata"]["labels"]["kubegc.io/object-uid"] for r in items
                if r["metadata"]["labels"].get("kubegc.io/object-uid") in gone]

    eventually(lambda: len(recorded()) >= 10, timeout=30)
    assert sorted(recorded()) == sorted(gone)


def test_watches_on_one_server_see_writes_through_the_others_in_order(
        start_servers: Callable[[int], list[Server]]) -> None:
    a, b, c = start_servers(3)
    ns = namespace(b)
    watch = Watch(a, f"/api/v1/namespaces/{ns}/configmaps")
    cm = send(c, "POST", f"/api/v1/namespaces/{ns}/configmaps",
              {"metadata": {"name": "counter"}, "data": {"i": "0"}})
    versions = [cm["metadata"]["resourceVersion"]]
    for i in range(1, 30):
        through = (b, c)[i % 2]
        patched = send(through, "PATCH", f"/api/v1/namespaces/{ns}/configmaps/counter",
                       {"data": {"i": str(i)}}, "application/merge-patch+json")
        versions.append(patched["metadata"]["resourceVersion"])
    # any server answers at once what another has written (a read not older than the write)
    latest = get(a, f"/api/v1/namespaces/{ns}/configmaps/counter?resourceVersion={versions[-1]}")
    assert latest["data"] == {"i": "29"}

    def counter() -> list[tuple[str, dict[str, Any]]]:  # not the namespace's kube-root-ca.crt
        return [(t, o) for t, o in watch.objects() if o["metadata"]["name"] == "counter"]

    eventually(lambda: len(counter()) >= 30, timeout=10)
    seen = counter()
    assert [t for t, _ in seen] == ["ADDED"] + ["MODIFIED"] * 29
    assert [o["metadata"]["resourceVersion"] for _, o in seen] == versions
    assert [o["data"]["i"] for _, o in seen] == [str(i) for i in range(30)]


def test_failover_after_kill_9_of_the_leader(
        start_servers: Callable[[int], list[Server]]) -> None:
    leader, *survivors = start_servers(3)
    assert lease(survivors[0])["holderIdentity"] == identity(leader)
    ns = namespace(survivors[0])
    replica_set(survivors[0], ns, 10)
    eventually(lambda: running(survivors[1], ns, "app=web", 10), timeout=30)
    before = {p["metadata"]["uid"] for p in pods(survivors[1], ns, "app=web")}
    leader.settle()  # its events are written (a crash loses those still queued)
    pod_watch = Watch(survivors[1], f"/api/v1/namespaces/{ns}/pods")
    leases = Watch(survivors[1], LEASE_PATH,
                   query="fieldSelector=metadata.name%3Dkube-controller-manager")

    leader.process.kill()  # SIGKILL: no release, no clean stop
    killed = time.monotonic()
    ours = {identity(s): s for s in survivors}

    def took_over() -> float:
        return next((at for at, e in leases.events
                     if e["object"]["spec"]["holderIdentity"] in ours), 0.0)

    taken = eventually(took_over, timeout=FAILOVER_BOUND + 10)
    assert taken - killed <= FAILOVER_BOUND, f"failover took {taken - killed:.1f}s"
    spec = lease(survivors[0])
    new_leader = ours[spec["holderIdentity"]]
    assert spec["leaseTransitions"] == 1
    eventually(lambda: said(new_leader, LEADING), timeout=10)
    assert [said(s, LEADING) for s in survivors].count(True) == 1

    # the new leader runs the controllers and the kubelets: nothing lost, nothing doubled
    other = next(s for s in survivors if s is not new_leader)
    send(other, "PATCH", f"/apis/apps/v1/namespaces/{ns}/replicasets/web",
         {"spec": {"replicas": 12}}, "application/merge-patch+json")
    job(other, ns)
    eventually(lambda: running(new_leader, ns, "app=web", 12), timeout=30)
    eventually(lambda: job_succeeded(other, ns), timeout=30)
    after = {p["metadata"]["uid"] for p in pods(other, ns, "app=web")}
    assert before < after and len(after) == 12
    assert len(pods(other, ns, "job-name=once")) == 1
    assert pod_watch.objects("DELETED") == []
    new_leader.settle()  # its kubelets' events are written (recorded asynchronously)
    started_events = events(other, ns, "Started")
    assert len(started_events) == 13 and all(e["count"] == 1 for e in started_events)
