"""The simulated kubelet: pod settings and termination timelines (pure), the runtime and
status it reports, and the termination flow of docs/kubelet.md against a real in-process kubegc."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import shutil
import subprocess
from datetime import timedelta

import pytest

import kubegc.kubelet.kubelet_pods as runtime
from kubegc.api.clock import ManualClock, ScaledClock, parse_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions, ListOptions, PatchType, WatchOptions
from kubegc.client.local import LocalClient
from kubegc.component.config import KubeletConfiguration
from kubegc.kubelet.kubelet import Kubelet
from kubegc.kubelet.nodes import LEASES, NODES, PodIPAllocator, node_names, pod_cidr
from kubegc.kubelet.termination import (
    PodSettings,
    SimulationDefaults,
    TerminationPlan,
)
from kubegc.testing import Cluster
from tests.controllers.workload_harness import eventually, running

PODS = GroupVersionResource("", "v1", "pods")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
SERVICES = GroupVersionResource("", "v1", "services")
ENDPOINTS = GroupVersionResource("", "v1", "endpoints")
EVENTS = GroupVersionResource("", "v1", "events")


def pod(name: str = "web", *, annotations: dict[str, str] | None = None, grace: int = 30,
        restart_policy: str = "Always", prestop: bool = False, node: str = "",
        finalizers: list[str] | None = None, containers: tuple[str, ...] = ("web",)) -> dict:
    specs = []
    for c in containers:
        spec = {"name": c, "image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 80}]}
        if prestop:
            spec["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", "5"]}}}
        specs.append(spec)
    meta: dict = {"name": name, "labels": {"app": "web"}, "annotations": annotations or {}}
    if finalizers:
        meta["finalizers"] = finalizers
    spec_: dict = {"containers": specs, "terminationGracePeriodSeconds": grace,
                   "restartPolicy": restart_policy}
    if node:
        spec_["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec_}


# -- settings and termination timelines (pure) ------------------------------------------

@pytest.mark.parametrize(("annotations", "restart_policy", "defaults", "expected"), [
    pytest.param({}, "Always", SimulationDefaults(), PodSettings(), id="defaults"),
    pytest.param({"kubegc.io/exit-delay-seconds": "12", "kubegc.io/prestop-seconds": "3",
                  "kubegc.io/ignore-term": "true", "kubegc.io/ready": "false"}, "Always",
                 SimulationDefaults(), PodSettings(exit_delay=12, prestop=3, ignore_term=True,
                                                   ready=False), id="annotations"),
    pytest.param({}, "Always", SimulationDefaults(exit_delay=4, prestop=1, ignore_term=True),
                 PodSettings(exit_delay=4, prestop=1, ignore_term=True), id="global-defaults"),
    pytest.param({"kubegc.io/ignore-term": "false"}, "Always",
                 SimulationDefaults(ignore_term=True), PodSettings(), id="annotation-wins"),
    pytest.param({}, "Never", SimulationDefaults(job_pod_duration=7),
                 PodSettings(run_seconds=7), id="job-pod-duration-for-never"),
    pytest.param({}, "OnFailure", SimulationDefaults(), PodSettings(run_seconds=0),
                 id="on-failure-completes-at-once"),
    pytest.param({"kubegc.io/run-seconds": "5", "kubegc.io/exit-code": "3"}, "Always",
                 SimulationDefaults(), PodSettings(run_seconds=5, exit_code=3),
                 id="run-seconds-on-always"),
    pytest.param({"kubegc.io/exit-delay-seconds": "soon", "kubegc.io/exit-code": "x"},
                 "Always", SimulationDefaults(exit_delay=2), PodSettings(exit_delay=2),
                 id="invalid-values-fall-back"),
])
def test_pod_settings(annotations, restart_policy, defaults, expected) -> None:
    assert PodSettings.of(pod(annotations=annotations, restart_policy=restart_policy),
                          defaults) == expected


@pytest.mark.parametrize(("settings", "grace", "prestop", "exit_at", "exit_code"), [
    pytest.param(PodSettings(), 30, False, 0, 0, id="exits-at-once"),
    pytest.param(PodSettings(exit_delay=10), 30, False, 10, 0, id="exits-within-grace"),
    pytest.param(PodSettings(exit_delay=40), 30, False, 30, 137, id="too-slow-killed"),
    pytest.param(PodSettings(exit_delay=30), 30, False, 30, 137, id="exactly-at-grace-killed"),
    pytest.param(PodSettings(ignore_term=True), 30, False, 30, 137, id="ignores-term"),
    pytest.param(PodSettings(prestop=5, exit_delay=10), 30, True, 15, 0, id="prestop-then-term"),
    pytest.param(PodSettings(prestop=5), 30, False, 0, 0, id="no-hook-no-prestop"),
    pytest.param(PodSettings(prestop=29, exit_delay=5), 30, True, 31, 137,
                 id="prestop-eats-grace-min-2s"),
    pytest.param(PodSettings(prestop=60, ignore_term=True), 30, True, 32, 137,
                 id="prestop-cut-at-grace"),
    pytest.param(PodSettings(ignore_term=True), 0, True, 2, 137, id="grace-0-still-2s"),
])
def test_termination_timeline(settings, grace, prestop, exit_at, exit_code) -> None:
    p = pod(grace=grace, prestop=prestop)
    p["metadata"]["deletionGracePeriodSeconds"] = grace
    plan = TerminationPlan.build(p, settings, now=100.0, running=["web"])
    stop = plan.containers[0]
    assert (stop.exit_at - 100.0, stop.exit_code) == (exit_at, exit_code)
    assert plan.done(100.0 + exit_at) and (exit_at == 0 or not plan.done(100.0 + exit_at - 0.5))


def test_shorter_grace_period_pulls_kill_in() -> None:
    p = pod(grace=30)
    plan = TerminationPlan.build(p, PodSettings(ignore_term=True), now=0.0, running=["web"])
    assert plan.next_deadline(0.0) == 30.0
    assert plan.shorten(5, now=10.0)
    assert plan.next_deadline(10.0) == 15.0
    assert not plan.shorten(20, now=11.0)  # longer grace periods are ignored


# -- the runtime and the status it reports ----------------------------------------------

@pytest.mark.parametrize(("image", "expected"), [
    pytest.param("nginx", "docker.io/library/nginx:latest", id="short"),
    pytest.param("nginx:1.27", "docker.io/library/nginx:1.27", id="tag"),
    pytest.param("bitnami/redis", "docker.io/bitnami/redis:latest", id="user"),
    pytest.param("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", id="registry"),
    pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="local-registry"),
])
def test_normalize_image(image, expected) -> None:
    name, image_id = runtime.normalize_image(image)
    assert name == expected
    assert image_id.startswith(expected.rsplit(":", 1)[0] + "@sha256:") or (
        image_id.startswith(expected.rpartition(":")[0] + "@sha256:"))


def started(p: dict, now: float = 0.0):
    p["metadata"].update(uid="uid-1", namespace="ns")
    return runtime.start_pod(p, node="kubegc-node-1", pod_ip="10.244.0.2", host_ip="172.18.0.2",
                             now=now, now_wall=ManualClock().now())


def test_running_status_is_upstream_shaped() -> None:
    p = pod(containers=("web", "sidecar"))
    rec, events = started(p)
    status = runtime.generate_status(p, rec, now_wall=ManualClock().now())
    assert status["phase"] == "Running"
    assert [c["type"] for c in status["conditions"]] == list(runtime.KUBELET_CONDITIONS)
    assert all(c["status"] == "True" for c in status["conditions"])
    assert (status["podIP"], status["hostIP"]) == ("10.244.0.2", "172.18.0.2")
    web = status["containerStatuses"][0]
    assert web["state"] == {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    assert (web["ready"], web["restartCount"], web["started"]) == (True, 0, True)
    assert web["containerID"].startswith("containerd://") and len(web["containerID"]) == 77
    assert [e[1] for e in events] == ["Pulled", "Created", "Started"] * 2
    assert events[0][2] == 'Container image "nginx:1.27" already present on machine'


def test_not_ready_pod_reports_unready_containers() -> None:
    p = pod(annotations={"kubegc.io/ready": "false"})
    rec, _ = started(p)
    runtime.advance(rec, PodSettings.of(p, SimulationDefaults()), restart_policy="Always",
                    now=1.0, now_wall=ManualClock().now())
    ready = {c["type"]: c for c in runtime.generate_status(
        p, rec, now_wall=ManualClock().now())["conditions"]}["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "ContainersNotReady", "containers with unready status: [web]")


@pytest.mark.parametrize(("restart_policy", "exit_code", "phase", "reason"), [
    pytest.param("Never", 0, "Succeeded", "Completed", id="never-success"),
    pytest.param("Never", 3, "Failed", "Error", id="never-failure"),
    pytest.param("OnFailure", 0, "Succeeded", "Completed", id="onfailure-success"),
])
def test_run_to_completion(restart_policy, exit_code, phase, reason) -> None:
    p = pod(restart_policy=restart_policy,
            annotations={"kubegc.io/run-seconds": "5", "kubegc.io/exit-code": str(exit_code)})
    rec, _ = started(p)
    settings = PodSettings.of(p, SimulationDefaults())
    _, wake = runtime.advance(rec, settings, restart_policy=restart_policy, now=1.0,
                              now_wall=ManualClock().now())
    assert (rec.phase, wake) == ("Running", 5.0)
    runtime.advance(rec, settings, restart_policy=restart_policy, now=5.0,
                    now_wall=ManualClock().now())
    status = runtime.generate_status(p, rec, now_wall=ManualClock().now())
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert (status["phase"], term["exitCode"], term["reason"]) == (phase, exit_code, reason)
    ready = {c["type"]: c for c in status["conditions"]}["Ready"]
    assert ready["reason"] == ("PodCompleted" if phase == "Succeeded" else "PodFailed")


def test_crash_loop_restarts_with_backoff() -> None:
    p = pod(annotations={"kubegc.io/run-seconds": "1", "kubegc.io/exit-code": "1"},
            restart_policy="OnFailure")
    rec, _ = started(p)
    settings = PodSettings.of(p, SimulationDefaults())
    wall = ManualClock().now()
    events, wake = runtime.advance(rec, settings, restart_policy="OnFailure", now=1.0,
                                   now_wall=wall)
    c = rec.containers["web"]
    assert (c.restart_count, c.state, wake) == (1, "running", 2.0)  # first restart: at once
    assert c.last_state["terminated"]["exitCode"] == 1
    events, wake = runtime.advance(rec, settings, restart_policy="OnFailure", now=2.0,
                                   now_wall=wall)
    assert (c.state, c.reason, wake) == ("waiting", "CrashLoopBackOff", 12.0)
    assert ("Warning", "BackOff") in [(e[0], e[1]) for e in events]
    runtime.advance(rec, settings, restart_policy="OnFailure", now=12.0, now_wall=wall)
    assert (c.restart_count, c.state, rec.phase) == (2, "running", "Running")


def test_terminate_sets_exit_codes_and_phase() -> None:
    p = pod(containers=("web", "slow"))
    rec, _ = started(p)
    plan = TerminationPlan.build(p, PodSettings(), now=0.0, running=["web", "slow"])
    plan.containers[1].exit_delay = math.inf  # "slow" ignores TERM
    runtime.terminate(rec, plan, now=30.0, now_wall=ManualClock().now() + timedelta(seconds=30))
    codes = {n: c.exit_code for n, c in rec.containers.items()}
    assert (codes, rec.phase) == ({"web": 0, "slow": 137}, "Failed")


def test_terminating_a_crash_looping_pod_reports_its_last_exit() -> None:
    p = pod(annotations={"kubegc.io/run-seconds": "1", "kubegc.io/exit-code": "2"})
    rec, _ = started(p)
    settings = PodSettings.of(p, SimulationDefaults())
    for now in (1.0, 2.0):  # restart at once, then back-off
        runtime.advance(rec, settings, restart_policy="Always", now=now,
                        now_wall=ManualClock().now())
    assert rec.running() == []
    plan = TerminationPlan.build(p, settings, now=3.0, running=rec.running())
    runtime.terminate(rec, plan, now=3.0, now_wall=ManualClock().now())
    term = runtime.generate_status(p, rec, now_wall=ManualClock().now())[
        "containerStatuses"][0]["state"]["terminated"]
    assert (rec.phase, term["exitCode"], term["reason"]) == ("Failed", 2, "Error")


# -- nodes ----------------------------------------------------------------------------------

def test_pod_cidrs_and_ip_allocation() -> None:
    assert node_names(2) == ["kubegc-node-1", "kubegc-node-2"]
    assert [str(pod_cidr(i, nodes=3)) for i in (1, 2, 3)] == [
        "10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]
    assert str(pod_cidr(2, nodes=2, max_pods=1000)) == "10.244.4.0/22"
    alloc = PodIPAllocator(pod_cidr(1, nodes=1))
    assert [alloc.allocate(u) for u in ("a", "b", "a")] == [
        "10.244.0.2", "10.244.0.3", "10.244.0.2"]
    alloc.release("a")
    assert alloc.allocate("c") == "10.244.0.4"  # sequential, no immediate reuse


# -- the controller against FakeClient ------------------------------------------------------

@contextlib.asynccontextmanager
async def fake_kubelet(client: FakeClient, clock: ManualClock, **options):
    async with running(Kubelet, client, clock,
                       options=KubeletConfiguration(**options)) as kubelet:
        await eventually(kubelet.ready, what="nodes registered")
        yield kubelet


async def test_registers_nodes_with_leases() -> None:
    client, clock = FakeClient(), ManualClock()
    async with fake_kubelet(client, clock, nodes=2):
        node = client.stored(NODES, "kubegc-node-2")
        assert node is not None
        ready = {c["type"]: c for c in node["status"]["conditions"]}["Ready"]
        assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.32.0"
        assert node["status"]["allocatable"]["pods"] == "110"
        assert node["spec"]["podCIDR"] == "10.244.1.0/24"
        lease = client.stored(LEASES, "kubegc-node-2", namespace="kube-node-lease")
        assert lease["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]
        first = lease["spec"]["renewTime"]
        clock.advance(10)
        await eventually(lambda: client.stored(LEASES, "kubegc-node-2",
                                               namespace="kube-node-lease")["spec"]["renewTime"]
                         != first, what="lease renewed")


@pytest.mark.parametrize("error, traceback", [
    pytest.param(StatusError(409, "Conflict", "the object has been modified"), False,
                 id="api-refusal-by-its-message"),
    pytest.param(KeyError("containers"), True, id="bug-with-its-traceback"),
])
async def test_a_failed_pod_sync_is_logged_and_retried(monkeypatch, caplog, error,
                                                       traceback) -> None:
    client, clock = FakeClient(), ManualClock()
    async with fake_kubelet(client, clock) as kubelet:
        calls: list[str] = []

        async def failing_sync(key: str) -> float | None:
            calls.append(key)
            if len(calls) == 1:
                raise error
            return None

        monkeypatch.setattr(kubelet, "sync_pod", failing_sync)
        with caplog.at_level("INFO", logger="kubegc.component.failures"):
            client.add_object(PODS, pod(node="kubegc-node-1"), namespace="ns")
            await eventually(lambda: len(calls) == 1, what="first sync")
            clock.advance(1)  # the rate limiter's retry
            await eventually(lambda: len(calls) == 2, what="retried")
        [record] = [r for r in caplog.records
                    if "kubelet: error syncing 'ns/web'" in r.getMessage()]
        assert bool(record.exc_info) is traceback


async def test_pod_with_finalizer_gets_exactly_one_final_delete() -> None:
    client, clock = FakeClient(), ManualClock()
    async with fake_kubelet(client, clock) as kubelet:
        created = client.add_object(PODS, pod(node="kubegc-node-1",
                                              finalizers=["example.com/hold"]), namespace="ns")
        await eventually(lambda: (client.stored(PODS, "web", namespace="ns").get("status")
                                  or {}).get("phase") == "Running", what="running")
        await client.delete(PODS, "web", namespace="ns")  # the fake keeps it: finalizer
        await eventually(lambda: kubelet.records["ns/web"].final_delete_sent, what="deleted")
        for _ in range(3):
            await client.patch(PODS, "web", {"metadata": {"labels": {"x": "y"}}}, namespace="ns")
            clock.advance(60)
            await asyncio.sleep(0.01)
        final = DeleteOptions(grace_period_seconds=0, preconditions_uid=created["metadata"]["uid"])
        finals = [a for a in client.action_log if a.verb == "delete" and a.body == final]
        assert len(finals) == 1
        status = client.stored(PODS, "web", namespace="ns")["status"]
        assert status["phase"] == "Succeeded"
        assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


# -- termination against a real kubegc ------------------------------------------------------------

async def settle(cluster: Cluster) -> None:
    await asyncio.wait_for(cluster.asettle(), 30)  # a ManualClock never times settle() out


def spy_deletes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, DeleteOptions | None]]:
    """Every pod DELETE of an in-process client: the test's and the components' (each
    component has a client of its own identity)."""
    calls: list[tuple[str, DeleteOptions | None]] = []
    original = LocalClient.delete

    async def delete(self, gvr, name, *, namespace="", options=None):
        if gvr == PODS:
            calls.append((name, options))
        return await original(self, gvr, name, namespace=namespace, options=options)

    monkeypatch.setattr(LocalClient, "delete", delete)
    return calls


async def seed_cluster(cluster: Cluster, annotations: dict[str, str], **kw) -> dict:
    client = cluster.client
    await client.create(NAMESPACES, {"metadata": {"name": "seed"}})
    await client.create(SERVICES, {"metadata": {"name": "web"}, "spec": {
        "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}},
        namespace="seed")
    await client.create(PODS, pod(annotations=annotations, **kw), namespace="seed")
    await settle(cluster)
    return await client.get(PODS, "web", namespace="seed")


async def endpoint_ips(client) -> list[str]:
    ep = await client.get(ENDPOINTS, "web", namespace="seed")
    return [a["ip"] for s in ep.get("subsets") or []
            for a in (s.get("addresses") or []) + (s.get("notReadyAddresses") or [])]


async def pod_events(client) -> list[tuple[str, str, str]]:
    events = (await client.list(EVENTS, namespace="seed",
                                options=ListOptions(field_selector="involvedObject.name=web")))
    return [(e["type"], e["reason"], e["message"]) for e in sorted(
        events["items"], key=lambda e: e["metadata"]["name"])]


async def test_seed_003_pod_ignoring_term_is_killed_at_the_end_of_its_grace_period(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    async with Cluster(controllers=["kubelet", "scheduler", "endpoints"], clock=clock) as c:
        client = c.client
        running = await seed_cluster(c, {"kubegc.io/ignore-term": "true"})
        assert running["status"]["phase"] == "Running"
        assert await endpoint_ips(client) == [running["status"]["podIP"]]
        seen: list[tuple[str, dict]] = []

        async def watch() -> None:
            options = WatchOptions(resource_version=running["metadata"]["resourceVersion"])
            async for event in client.watch(PODS, namespace="seed", options=options):
                seen.append((event.type, event.object))

        watcher = asyncio.ensure_future(watch())
        deletes = spy_deletes(monkeypatch)
        # 1-3: the user's DELETE records the grace period; the pod shows as Terminating
        t0 = clock.now()
        await client.delete(PODS, "web", namespace="seed")
        await settle(c)
        terminating = await client.get(PODS, "web", namespace="seed")
        assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
        assert parse_time(terminating["metadata"]["deletionTimestamp"]) == t0 + timedelta(
            seconds=30)
        # 5: out of the Service's endpoints at once
        assert await endpoint_ips(client) == []
        # 4: the kubelet sent TERM (Killing event); the process ignores it
        assert ("Normal", "Killing", "Stopping container web") in await pod_events(client)
        clock.advance(29)
        await settle(c)
        still = await client.get(PODS, "web", namespace="seed")
        assert "running" in still["status"]["containerStatuses"][0]["state"]
        assert [name for name, _ in deletes] == ["web"]  # only the user's so far
        # 6: KILL at the end of the grace period; 7: the kubelet's final DELETE
        clock.advance(1)
        await settle(c)
        with pytest.raises(StatusError) as gone:
            await client.get(PODS, "web", namespace="seed")
        assert is_not_found(gone.value)
        assert deletes == [("web", None), ("web", DeleteOptions(
            grace_period_seconds=0, preconditions_uid=running["metadata"]["uid"]))]
        killed = [e for e in await pod_events(client) if e[1] == "Killed"]
        assert killed == [("Warning", "Killed", "Container web did not stop within the grace "
                           "period (30s): killed with SIGKILL, exit code 137")]
        await eventually(lambda: seen and seen[-1][0] == "DELETED", what="DELETED watched")
        watcher.cancel()
        last_status = [o for t, o in seen if t == "MODIFIED"][-1]["status"]
        term = last_status["containerStatuses"][0]["state"]["terminated"]
        assert (last_status["phase"], term["exitCode"], term["reason"]) == ("Failed", 137, "Error")


async def test_seed_003_force_delete_skips_the_kubelet(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    async with Cluster(controllers=["kubelet", "scheduler", "endpoints"], clock=clock) as c:
        await seed_cluster(c, {"kubegc.io/ignore-term": "true"})
        deletes = spy_deletes(monkeypatch)
        await c.client.delete(PODS, "web", namespace="seed",
                              options=DeleteOptions(grace_period_seconds=0))
        await settle(c)
        with pytest.raises(StatusError):
            await c.client.get(PODS, "web", namespace="seed")
        assert [o for _, o in deletes] == [DeleteOptions(grace_period_seconds=0)]
        assert await endpoint_ips(c.client) == []
        assert "Killing" not in [e[1] for e in await pod_events(c.client)]
        assert c.cluster.controller_manager.get("kubelet").records == {}


async def test_prestop_then_clean_exit_within_grace() -> None:
    clock = ManualClock()
    async with Cluster(controllers=["kubelet", "scheduler"], clock=clock) as c:
        await seed_cluster(c, {"kubegc.io/prestop-seconds": "5",
                               "kubegc.io/exit-delay-seconds": "3"}, prestop=True)
        await c.client.delete(PODS, "web", namespace="seed")
        await settle(c)
        reasons = [e[1] for e in await pod_events(c.client)]
        assert reasons[-2:] == ["Killing", "PreStopHook"]
        clock.advance(7.5)
        await settle(c)
        assert (await c.client.get(PODS, "web", namespace="seed"))["metadata"]["name"] == "web"
        clock.advance(0.5)  # 5 s preStop + 3 s to exit after TERM
        await settle(c)
        with pytest.raises(StatusError):
            await c.client.get(PODS, "web", namespace="seed")


async def test_pod_with_finalizer_stays_after_the_final_delete_until_released(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    async with Cluster(controllers=["kubelet", "scheduler"], clock=clock) as c:
        client = c.client
        await seed_cluster(c, {}, finalizers=["example.com/hold"])
        deletes = spy_deletes(monkeypatch)
        await client.delete(PODS, "web", namespace="seed")
        await settle(c)
        held = await client.get(PODS, "web", namespace="seed")
        assert held["metadata"]["deletionGracePeriodSeconds"] == 0
        assert held["status"]["phase"] == "Succeeded"
        for _ in range(3):
            clock.advance(30)
            await settle(c)
        assert len(deletes) == 2  # the user's and the kubelet's, no loop
        await client.patch(PODS, "web", {"metadata": {"finalizers": None}}, namespace="seed",
                           patch_type=PatchType.MERGE)
        await settle(c)
        with pytest.raises(StatusError):
            await client.get(PODS, "web", namespace="seed")


SEED_MANIFEST = """
apiVersion: v1
kind: Namespace
metadata: {name: seed}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: seed}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: seed
  labels: {app: web}
  annotations: {kubegc.io/ignore-term: "true"}
spec:
  containers:
  - name: web
    image: nginx
    ports: [{name: http, containerPort: 80}]
"""


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_seed_003_with_kubectl(tmp_path) -> None:
    """The same flow as a user sees it, on a clock 10 times faster (30 s grace = 3 s)."""
    with Cluster(controllers=["kubelet", "scheduler", "endpoints"],
                 clock=ScaledClock(10)) as c:
        def kubectl(*args: str, stdin: str | None = None) -> str:
            done = subprocess.run(["kubectl", "--kubeconfig", str(c.kubeconfig), "--cache-dir",
                                   str(tmp_path), *args], input=stdin, capture_output=True,
                                  text=True, timeout=60, check=True)
            return done.stdout

        kubectl("apply", "-f", "-", stdin=SEED_MANIFEST)
        c.settle()
        assert kubectl("get", "pod", "web", "-n", "seed", "-o",
                       "jsonpath={.status.phase}") == "Running"
        assert kubectl("get", "endpoints", "web", "-n", "seed", "-o",
                       "jsonpath={.subsets[0].addresses[0].targetRef.name}") == "web"
        kubectl("delete", "pod", "web", "-n", "seed", "--wait=false")
        terminating = json.loads(kubectl("get", "pod", "web", "-n", "seed", "-o", "json"))
        assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
        assert kubectl("get", "endpoints", "web", "-n", "seed", "-o",
                       "jsonpath={.subsets}") == ""
        kubectl("wait", "--for=delete", "pod/web", "-n", "seed", "--timeout=30s")
        c.settle()  # the kubelet's events are written in the background
        events = json.loads(kubectl("get", "events", "-n", "seed", "--field-selector",
                                    "involvedObject.name=web", "-o", "json"))["items"]
        reasons = [e["reason"] for e in sorted(events, key=lambda e: e["metadata"]["name"])]
        assert reasons[-2:] == ["Killing", "Killed"]
