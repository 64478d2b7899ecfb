"""No controller loops on an object it cannot understand (cf. upstream's ``handleErr``):
objects with fields of the wrong type or out of range, put straight into the storage
(below the API's validation: as stored before validation existed, or loaded from a dump),
get a Warning event from the component that cannot sync them and are retried with the work
queue's exponential backoff — a bounded number of attempts in a window — while every
component keeps serving the other objects; the same after a restart.

Each bad object is a valid object made by the API (so defaulted as the API stores it),
then changed at one field and stored as it is when the cluster starts."""

from __future__ import annotations

import asyncio
import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.events import EVENTS
from kubegc.client.local import LocalClient
from kubegc.testing import Cluster

R = GroupVersionResource
PODS, CONFIGMAPS = R("", "v1", "pods"), R("", "v1", "configmaps")
NAMESPACES, SERVICES, ENDPOINTS = R("", "v1", "namespaces"), R("", "v1", "services"), R(
    "", "v1", "endpoints")
RCS = R("", "v1", "replicationcontrollers")
DEPLOYMENTS, REPLICASETS = R("apps", "v1", "deployments"), R("apps", "v1", "replicasets")
STATEFULSETS, DAEMONSETS = R("apps", "v1", "statefulsets"), R("apps", "v1", "daemonsets")
JOBS, CRONJOBS = R("batch", "v1", "jobs"), R("batch", "v1", "cronjobs")
NS = "bad"
#: a window of real time, and the most attempts the workqueue's backoff (5 ms doubling,
#: the controllers' default) allows in it: 5 ms × (2^10 − 1) ≈ 5 s
WINDOW, MAX_ATTEMPTS = 4.0, 11
CONTAINERS = [{"name": "c", "image": "nginx"}]


def template(app: str, restart: str = "Always") -> Obj:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"restartPolicy": restart, "containers": CONTAINERS}}


def selector(app: str) -> Obj:
    return {"matchLabels": {"app": app}}


def workload(app: str, replicas: int = 1) -> Obj:
    return {"replicas": replicas, "selector": selector(app), "template": template(app)}


#: resource -> a valid spec for an object whose name (and pods' app label) is ``app``
VALID: dict[GroupVersionResource, Callable[[str], Obj]] = {
    JOBS: lambda app: {"spec": {"template": template(app, "Never")}},
    CRONJOBS: lambda app: {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {
        "spec": {"template": template(app, "Never")}}}},
    DEPLOYMENTS: lambda app: {"spec": workload(app)},
    REPLICASETS: lambda app: {"spec": workload(app)},
    RCS: lambda app: {"spec": {"replicas": 1, "selector": {"app": app},
                               "template": template(app)}},
    STATEFULSETS: lambda app: {"spec": {**workload(app), "serviceName": app}},
    DAEMONSETS: lambda app: {"spec": {"selector": selector(app), "template": template(app)}},
    SERVICES: lambda app: {"spec": {"selector": {"app": app}, "ports": [{"port": 80}]}},
    PODS: lambda app: {"metadata": {"labels": {"app": app}},
                       "spec": {"restartPolicy": "Always", "containers": CONTAINERS}},
    CONFIGMAPS: lambda app: {"data": {"app": app}},
    NAMESPACES: lambda app: {},
}


@dataclass(frozen=True)
class Bad:
    resource: GroupVersionResource
    path: str  # dotted; a number is a list index
    value: Any
    #: more changes, each (path, value), that bring the object to its controller
    also: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        """Readable and unique: the kind, the path and a digest of the value."""
        digest = hashlib.sha1(repr(self.value).encode()).hexdigest()[:6]
        text = f"{self.resource.resource}-{self.path}".lower()
        return "".join(c if c.isalnum() else "-" for c in text)[:50].strip("-") + f"-{digest}"


BAD = [
    Bad(JOBS, "spec.completions", "abc"),  # the issue's
    Bad(JOBS, "spec.completions", -1),
    Bad(JOBS, "spec.parallelism", "two"),
    Bad(JOBS, "spec.backoffLimit", "x"),
    Bad(JOBS, "spec.activeDeadlineSeconds", "soon"),
    Bad(JOBS, "spec.suspend", "yes"),
    Bad(JOBS, "spec.template", "x"),
    Bad(CRONJOBS, "spec.schedule", "not a schedule"),
    Bad(CRONJOBS, "spec.startingDeadlineSeconds", "x"),
    Bad(CRONJOBS, "spec.successfulJobsHistoryLimit", "x"),
    Bad(CRONJOBS, "spec.timeZone", "Mars/Olympus_Mons"),
    Bad(CRONJOBS, "spec.jobTemplate", "x"),
    Bad(DEPLOYMENTS, "spec.replicas", "abc"),
    Bad(DEPLOYMENTS, "spec.replicas", -1),
    Bad(DEPLOYMENTS, "spec.strategy.rollingUpdate.maxSurge", "abc%"),
    Bad(DEPLOYMENTS, "spec.revisionHistoryLimit", "x"),
    Bad(DEPLOYMENTS, "spec.progressDeadlineSeconds", "x"),
    Bad(DEPLOYMENTS, "spec.selector", "x"),
    Bad(REPLICASETS, "spec.replicas", "abc"),
    Bad(REPLICASETS, "spec.replicas", -1),
    Bad(REPLICASETS, "spec.minReadySeconds", "x"),
    Bad(REPLICASETS, "spec.selector.matchLabels", "x"),
    Bad(RCS, "spec.replicas", "abc"),
    Bad(RCS, "spec.selector", "x"),
    Bad(STATEFULSETS, "spec.replicas", "abc"),
    Bad(STATEFULSETS, "spec.ordinals", {"start": "x"}),
    Bad(STATEFULSETS, "spec.updateStrategy.rollingUpdate", {"partition": "x"}),
    Bad(STATEFULSETS, "spec.revisionHistoryLimit", "x"),
    Bad(DAEMONSETS, "spec.template.spec.nodeSelector", "x"),
    Bad(DAEMONSETS, "spec.minReadySeconds", "x"),
    Bad(DAEMONSETS, "spec.revisionHistoryLimit", -1),
    Bad(DAEMONSETS, "spec.updateStrategy", {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": "x%"}}),
    Bad(SERVICES, "spec.ports", "x"),
    Bad(SERVICES, "spec.ports.0.port", "x"),
    Bad(SERVICES, "spec.selector", "x"),
    Bad(PODS, "spec.terminationGracePeriodSeconds", "x"),
    Bad(PODS, "spec.containers", "x"),
    Bad(PODS, "spec.nodeSelector", "x"),
    Bad(PODS, "metadata.ownerReferences", [{"apiVersion": "v1", "kind": "ConfigMap",
                                            "name": "x", "uid": 5}]),
    # bound to a node: the kubelet's, not the scheduler's
    Bad(PODS, "spec", {"nodeName": "kubegc-node-1", "containers": CONTAINERS,
                       "terminationGracePeriodSeconds": "soon"}),
    # the garbage collector's: a reference it cannot understand is no owner
    Bad(CONFIGMAPS, "metadata.ownerReferences", [{"apiVersion": "v1", "kind": "ConfigMap",
                                                  "name": "gone", "uid": 5}]),
    Bad(CONFIGMAPS, "metadata.ownerReferences", [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "u-gone",
        "blockOwnerDeletion": "yes"}]),
    # a namespace being deleted is the namespace controller's
    Bad(NAMESPACES, "spec.finalizers", "kubernetes",
        also=(("metadata.deletionTimestamp", "2026-01-01T00:00:00Z"),)),
]


def mutate(obj: Obj, path: str, value: Any) -> Obj:
    out = copy.deepcopy(obj)
    node: Any = out
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


async def made_by_the_api() -> list[Obj]:
    """Every bad object, made valid by the API first, then changed; and the namespaces."""
    async with Cluster(controllers=[]) as source:
        c = source.client
        await c.create(NAMESPACES, {"metadata": {"name": NS}})
        objects = [o for o in (await c.list(NAMESPACES))["items"]]
        for bad in BAD:
            body = copy.deepcopy(VALID[bad.resource](bad.name))
            body.setdefault("metadata", {})["name"] = bad.name
            made = mutate(await c.create(bad.resource, body, namespace=NS), bad.path,
                          bad.value)
            for path, value in bad.also:
                made = mutate(made, path, value)
            objects.append(made)
        return objects


async def start(objects: list[Obj] | None, data_dir: Path) -> Cluster:
    cluster = Cluster(storage="sqlite", data_dir=data_dir)
    cluster.config.snapshot = objects  # loaded as they are, before the controllers start
    await cluster.start()
    return cluster


async def warnings(client: LocalClient) -> dict[str, list[Obj]]:
    """Warning events by the name of their object (a cluster-scoped one's are in
    ``default``)."""
    out: dict[str, list[Obj]] = {}
    events = [*(await client.list(EVENTS, namespace=NS))["items"],
              *(await client.list(EVENTS, namespace="default"))["items"]]
    for event in events:
        if event.get("type") == "Warning":
            out.setdefault(event["involvedObject"]["name"], []).append(event)
    return out


async def serves_the_good_ones(c: LocalClient, suffix: str) -> None:
    """Objects made now through the API are served: pods run, a Job completes, a
    Deployment is available, a Service gets Endpoints, a cascade and a namespace go."""
    ns = f"good-{suffix}"
    await c.create(NAMESPACES, {"metadata": {"name": ns}})
    for resource in (JOBS, DEPLOYMENTS, REPLICASETS, STATEFULSETS, DAEMONSETS, SERVICES):
        body = VALID[resource]("good")
        body.setdefault("metadata", {})["name"] = "good"
        await c.create(resource, body, namespace=ns)
    owner = await c.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, namespace=ns)
    await c.create(CONFIGMAPS, {"metadata": {"name": "dependent", "ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
        "uid": owner["metadata"]["uid"]}]}}, namespace=ns)

    async def state() -> tuple[object, ...]:
        pods = (await c.list(PODS, namespace=ns))["items"]
        running = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")
        job = await c.get(JOBS, "good", namespace=ns)
        deploy = await c.get(DEPLOYMENTS, "good", namespace=ns)
        try:
            endpoints = (await c.get(ENDPOINTS, "good", namespace=ns)).get("subsets")
        except Exception:
            endpoints = None
        return (running >= 4, (job.get("status") or {}).get("succeeded") == 1,
                (deploy.get("status") or {}).get("availableReplicas") == 1, bool(endpoints))

    await until(state, lambda s: all(s), what="the good objects are served")
    await c.delete(CONFIGMAPS, "owner", namespace=ns)
    await until(lambda: names(c, CONFIGMAPS, ns), lambda n: "dependent" not in n,
                what="the garbage collector deletes the dependent")
    await c.delete(NAMESPACES, ns)
    await until(lambda: names(c, NAMESPACES, ""), lambda n: ns not in n,
                what="the namespace controller empties and removes the namespace")


async def names(c: LocalClient, gvr: GroupVersionResource, ns: str) -> set[str]:
    return {o["metadata"]["name"] for o in (await c.list(gvr, namespace=ns))["items"]}


async def until(read: Callable[[], Any], ok: Callable[[Any], bool], *, what: str,
                timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not ok(value := await read()):
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s (last: {value!r})")
        await asyncio.sleep(0.05)


def attempts(events: list[Obj]) -> int:
    """The attempts of the component that tried most (each component has its own queue
    and backoff: a pod with a bad ownerReference is the GC's and the kubelet's)."""
    by_source: dict[str, int] = {}
    for e in events:
        source = str((e.get("source") or {}).get("component") or e.get("reportingComponent"))
        by_source[source] = by_source.get(source, 0) + int(e.get("count") or 1)
    return max(by_source.values(), default=0)


def allowed_attempts(elapsed: float) -> int:
    """The most attempts a 5 ms doubling backoff allows in ``elapsed`` seconds (a loaded
    machine may count later than ``WINDOW``)."""
    n, waited = 1, 0.0
    while waited + 0.005 * 2 ** (n - 1) <= elapsed:
        waited += 0.005 * 2 ** (n - 1)
        n += 1
    return max(MAX_ATTEMPTS, n)


async def check(cluster: Cluster, suffix: str, started: float, *,
                before: dict[str, int] | None = None) -> None:
    """The good objects are served; each bad one has a Warning, and at most
    ``MAX_ATTEMPTS`` attempts (beyond ``before``) since ``started``."""
    c = cluster.client
    await serves_the_good_ones(c, suffix)
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, WINDOW - (loop.time() - started)))
    tried = {n: attempts(e) - (before or {}).get(n, 0) for n, e in (await warnings(c)).items()}
    elapsed = loop.time() - started
    missing = [b.name for b in BAD if tried.get(b.name, 0) <= 0]
    assert missing == [], f"no Warning event about: {missing}"
    most = allowed_attempts(elapsed)
    looping = {n: t for n, t in tried.items() if t > most}
    assert looping == {}, f"more than {most} attempts in {elapsed:.1f} s: {looping}"
    # nothing is deleted on a reference the garbage collector cannot understand
    kept = await names(c, CONFIGMAPS, NS) | await names(c, PODS, NS)
    assert [b.name for b in BAD if "ownerReferences" in b.path and b.name not in kept] == []


async def test_every_component_warns_backs_off_and_serves_the_others(tmp_path: Path) -> None:
    cluster = await start(await made_by_the_api(), tmp_path)
    try:
        await check(cluster, "first", asyncio.get_running_loop().time())
    finally:
        await cluster.stop()


async def test_the_same_after_a_restart(tmp_path: Path) -> None:
    first = await start(await made_by_the_api(), tmp_path)
    await first.asettle()
    before = {n: attempts(e) for n, e in (await warnings(first.client)).items()}
    await first.stop()
    again = await start(None, tmp_path)
    try:  # tried (and warned about) again, and backed off again
        await check(again, "again", asyncio.get_running_loop().time(), before=before)
    finally:
        await again.stop()
