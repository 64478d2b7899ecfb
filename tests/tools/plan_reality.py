"""Running a scenario (``scenarios.py``) for the plan-against-reality test
(``test_plan_random.py``): build it on a running kubegc, plan its delete read-only through a
RestClient as the CLI does, run the delete for real, wait until nothing is left to do, and
compare (``compare``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

from kubegc.api.clock import RealClock, format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import DeletionPropagation, controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, DeleteOptions, ListOptions, PatchType, WatchOptions
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.controllers.deletionrecords import DELETION_RECORDS
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.testing import Cluster, NotSettledError, StuckError
from kubegc.testing.webhooks import url_of
from kubegc.tools.inventory import read_inventory
from kubegc.tools.plan import (
    PlanReport,
    Recorder,
    plan_delete,
)
from kubegc.tools.resolve import resolve_kind

from .plan_compare import compare
from .scenarios import (
    CLEANUP,
    CRDS,
    GVR,
    LEASES,
    NAMESPACES,
    NODE,
    NODES,
    SECRETS,
    WEBHOOKS,
    Graph,
    Node,
    body,
    crd,
    gadget,
    gadget_crd,
    gvr_of,
    own_node,
    token_secret,
    webhook_configuration,
)

QUIET_TIMEOUT = 20.0
#: refusals of a guarded object's DELETE in a row after which kubegc counts as quiet
STUCK_AFTER = 3
JOB_TRACKING = "batch.kubernetes.io/job-tracking"


# -- the cluster: a kubegc, a controller that removes CLEANUP, and its Lease -------------------


async def remove_cleanup_finalizers(client: Client) -> None:
    """The live controller that publishes CLEANUP: removes it from whatever is deleting."""
    async def one(gvr: GroupVersionResource) -> None:
        while True:
            listed = await client.list(gvr, options=ListOptions())
            for item in listed["items"]:
                await _release(client, gvr, item)
            rv = listed["metadata"]["resourceVersion"]
            with contextlib.suppress(StatusError):
                async for event in client.watch(gvr, options=WatchOptions(resource_version=rv)):
                    if event.type in ("ADDED", "MODIFIED"):
                        await _release(client, gvr, event.object)

    await asyncio.gather(*(one(gvr) for gvr in GVR.values()))


async def _release(client: Client, gvr: GroupVersionResource, obj: Obj) -> None:
    meta = obj["metadata"]
    fins = list(meta.get("finalizers") or [])
    if not meta.get("deletionTimestamp") or CLEANUP not in fins:
        return
    index = fins.index(CLEANUP)
    with contextlib.suppress(StatusError):  # gone, or changed meanwhile: the next event
        await client.patch(gvr, meta["name"], [
            {"op": "test", "path": f"/metadata/finalizers/{index}", "value": CLEANUP},
            {"op": "remove", "path": f"/metadata/finalizers/{index}"}],
            namespace=meta.get("namespace", ""), patch_type=PatchType.JSON)


@contextlib.contextmanager
def scenario_cluster() -> Iterator[Cluster]:
    """A kubegc with the scenarios' ClusterOwner CRD and the live controller that removes
    CLEANUP (its Lease published, so the plan takes it to be alive)."""
    cluster = Cluster()
    # pod GC deletes the pods of a deleted Node in about 1.5 s (upstream and kubegc serve:
    # a 40 s quarantine, then the next of its passes every 20 s, which the plan simulates;
    # reality is then sooner than the plan's time, within its bound)
    cluster.config.controller_manager.pod_gc.quarantine_time = 1.0
    cluster.config.controller_manager.pod_gc.gc_check_period = 0.5
    with cluster as c:
        async def start() -> asyncio.Task[None]:
            await c.client.create(CRDS, crd())
            now = format_time(datetime.now(UTC))
            await c.client.create(LEASES, {"metadata": {
                "name": "cleanup-controller", "annotations": {
                    "kubegc.io/removes-finalizers": CLEANUP}},
                "spec": {"holderIdentity": "cleanup-1", "leaseDurationSeconds": 3600,
                         "renewTime": now, "acquireTime": now}}, namespace="kube-system")
            await c.asettle(30)
            return asyncio.create_task(remove_cleanup_finalizers(c.client))

        task = c.run(start())
        c.admission_webhook("deny", lambda review: {
            "allowed": False, "status": {"code": 403, "message": "guarded"}})
        c.admission_webhook("allow", lambda review: {"allowed": True})
        yield c

        async def stop() -> None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

        c.run(stop())


@contextlib.asynccontextmanager
async def rest(cluster: Cluster) -> AsyncIterator[RestClient]:
    client = RestClient(load_kubeconfig(str(cluster.kubeconfig)))
    try:
        yield client
    finally:
        await client.close()


# -- quiet: nothing left for anyone to do ----------------------------------------------------


async def _graph_objects(client: Client, graph: Graph) -> list[Obj]:
    out = []
    extra = [gvr_of(graph.ident, "Gadget")] if graph.gadgets else []
    for gvr in [*GVR.values(), NAMESPACES, CRDS, *extra]:
        try:
            listed = await client.list(gvr, options=ListOptions(
                label_selector=f"plan-graph={graph.label}"))
        except StatusError as e:
            if gvr in extra and is_not_found(e):
                continue  # the graph's CRD is gone, and its Gadgets with it
            raise
        out.extend(listed["items"])
    return out


def _finished(job: Obj) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def _busy_one(obj: Obj, claims: set[str], nodes: set[str]) -> bool:
    meta = obj["metadata"]
    fins = meta.get("finalizers") or []
    phase = (obj.get("status") or {}).get("phase")
    pod = obj["kind"] == "Pod"
    if obj["kind"] == "Job" and not meta.get("deletionTimestamp"):
        if _finished(obj):
            return "ttlSecondsAfterFinished" in obj["spec"]
        return not (obj.get("status") or {}).get("active")  # starting, or finishing
    if pod and phase in ("Succeeded", "Failed") and JOB_TRACKING in fins:
        return True  # the Job controller is counting it
    if pod and obj["spec"].get("nodeName") != NODE:  # the scenario's, which no kubelet runs
        return obj["spec"]["nodeName"] not in nodes  # gone: pod GC deletes the pod
    if not meta.get("deletionTimestamp"):
        run = float((meta.get("annotations") or {}).get("kubegc.io/run-seconds", "inf"))
        if pod and phase == "Pending" and not _mountable(obj, claims):
            return False  # the kubelet waits for its claim (kubelet/volume_manager.py)
        return pod and (phase not in ("Running", "Succeeded", "Failed")
                        or (phase == "Running" and run < 60))  # about to exit
    return CLEANUP in fins or (pod and (not fins or phase not in ("Succeeded", "Failed")))


def _busy(objects: list[Obj]) -> list[str]:
    """Objects someone still works on: the live controller (CLEANUP on a deleting object),
    the kubelet (a pod starting, or terminating: until its containers have stopped and,
    without finalizers, it is removed), pod GC (a pod of the scenario's Node once that
    is gone), the Job controller (a Job starting or finishing: no
    active pod and not finished yet, or a pod it has not counted) or the TTL-after-finished
    controller (a finished Job with a TTL)."""
    claims = {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"
              and not o["metadata"].get("deletionTimestamp")}
    nodes = {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    return [o["metadata"]["name"] for o in objects if _busy_one(o, claims, nodes)]


def _mountable(pod: Obj, claims: set[str]) -> bool:
    """Whether each claim ``pod`` names exists and is not being deleted."""
    return all(v["persistentVolumeClaim"]["claimName"] in claims
               for v in pod["spec"].get("volumes") or [] if "persistentVolumeClaim" in v)


async def quiet(cluster: Cluster, client: Client, graph: Graph) -> None:
    """Wait (with a deadline) until kubegc has settled and nothing is left to do."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUIET_TIMEOUT
    while True:
        unsettled = await _unsettled(cluster, graph)
        busy = _busy(await _graph_objects(client, graph))
        if not unsettled and not busy:
            return
        if loop.time() > deadline:
            raise AssertionError(f"not quiet after {QUIET_TIMEOUT}s: {busy}{unsettled}\n"
                                 + graph.describe())
        await asyncio.sleep(0.02)


async def _unsettled(cluster: Cluster, graph: Graph) -> str:
    """"" once kubegc settled, or all it does is retry the DELETEs of the graph's guarded
    objects that its webhook refuses (the garbage collector's: for ever, as upstream);
    else what keeps it busy (``settle()``'s error)."""
    deny = graph.webhook == "deny"
    try:
        await asyncio.to_thread(cluster.settle, 10, stuck_after=STUCK_AFTER if deny else None)
    except StuckError as e:
        guarded = {f"v1/{n.kind} {graph.namespace_of(n)}/{graph.name(n)}"
                   for n in graph.nodes if n.guarded}
        if all(r.key in guarded for p in e.pending for r in p.retrying):
            return ""
        return f"; {e}"
    except NotSettledError as e:
        return f"; {e}"
    return ""


async def caught_up(recorder: Recorder, client: Client, graph: Graph) -> None:
    """Wait (with a deadline) until the recorder's watches delivered what a list shows."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUIET_TIMEOUT
    listed = {o["metadata"]["uid"]: o["metadata"]["resourceVersion"]
              for o in await _graph_objects(client, graph)}
    while True:
        seen = {u: o["metadata"]["resourceVersion"] for u, o in recorder.current.items()
                if o["metadata"].get("labels", {}).get("plan-graph") == graph.label}
        if seen == listed:
            return
        if loop.time() > deadline:
            raise AssertionError(f"the recorder saw {seen}, a list {listed}")
        await asyncio.sleep(0.01)


# -- one graph: build, plan, run, compare -----------------------------------------------------


async def build(client: Client, graph: Graph) -> dict[int, str]:
    for ns in graph.namespaces:
        await client.create(NAMESPACES, {"metadata": {
            "name": ns, "labels": {"plan-graph": str(graph.ident)}}})
    if graph.target_kind == "node":
        await client.create(NODES, own_node(graph))
    if graph.webhook:  # before the Secrets (admission has it once kubegc settled)
        await client.create(WEBHOOKS, webhook_configuration(graph, url_of(graph.webhook)))
    if graph.gadgets:
        await client.create(CRDS, gadget_crd(graph.ident))
        for name, finalizer in graph.gadgets:
            await _create_when_served(client, graph, gadget(graph, name, finalizer))
    uids: dict[int, str] = {}
    for i, node in enumerate(graph.nodes):
        created = await client.create(gvr_of(graph.ident, node.kind), body(graph, node, uids),
                                      namespace=graph.namespace_of(node))
        uids[i] = created["metadata"]["uid"]
        if node.kind == "ServiceAccount":
            await client.create(SECRETS, token_secret(graph, node, uids[i]),
                                namespace=graph.namespace_of(node))
    return uids


async def _create_when_served(client: Client, graph: Graph, obj: Obj) -> None:
    """Create a Gadget once its new CRD is served (with a deadline)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUIET_TIMEOUT
    while True:
        try:
            await client.create(gvr_of(graph.ident, "Gadget"), obj,
                                namespace=graph.namespaces[0])
            return
        except StatusError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def _delete(client: Client, graph: Graph, node: Node, policy: str) -> None:
    await client.delete(GVR[node.kind], graph.name(node), namespace=graph.namespace_of(node),
                        options=DeleteOptions(propagation_policy=DeletionPropagation(policy)))


async def _delete_target(client: Client, graph: Graph, target: Obj) -> None:
    meta = target["metadata"]
    await client.delete(gvr_of(graph.ident, target["kind"]), meta["name"],
                        namespace=meta.get("namespace", ""),
                        options=DeleteOptions(
                            propagation_policy=DeletionPropagation(graph.policy)))


async def plan(client: Client, target: Obj, policy: str) -> PlanReport:
    resource = resolve_kind(await client.discover(), f"{target['kind']}")
    inv = await read_inventory(client, clock=RealClock(), source="test")
    return await plan_delete(inv, target, resource, factory=ClusterSimulationFactory(),
                             propagation=DeletionPropagation(policy))


def _deletion_state(obj: Obj) -> str:
    meta = obj["metadata"]
    return repr([meta["uid"], meta.get("deletionTimestamp"), meta.get("finalizers"),
                 meta.get("ownerReferences")])


async def run_graph(cluster: Cluster, graph: Graph) -> PlanReport | None:
    """Build, plan, run and compare ``graph``; the plan (None: nothing was left to
    delete when the plan would have been made)."""
    async with rest(cluster) as client:
        await build(client, graph)
        await quiet(cluster, client, graph)
        if graph.pre_delete is not None:
            with contextlib.suppress(StatusError):  # already collected
                await _delete(client, graph, graph.nodes[graph.pre_delete[0]],
                              graph.pre_delete[1])
            await quiet(cluster, client, graph)
        alive = {o["metadata"]["name"]: o for o in await _graph_objects(client, graph)
                 if o["kind"] not in ("Namespace", "CustomResourceDefinition", "Node")
                 or o["metadata"]["name"] == graph.target_name}
        name = graph.target_name
        if name not in alive:
            name = next((graph.name(n) for n in graph.nodes if graph.name(n) in alive), "")
        if not name:
            return None  # everything was collected before the plan (invalid references)
        if graph.target_pod and name == graph.target_name:
            name = _pod_of(list(alive.values()), name) or name
        target = alive[name]
        state = sorted(_deletion_state(o) for o in await _graph_objects(client, graph))
        report = await plan(client, target, graph.policy)
        after = sorted(_deletion_state(o) for o in await _graph_objects(client, graph))
        assert after == state, (f"the plan wrote to the cluster: {set(state) ^ set(after)}\n"
                                + graph.describe())

        recorder = Recorder(client, RealClock())
        await recorder.start()
        _, before = recorder.checkpoint()
        try:
            await _delete_target(client, graph, target)
        except StatusError:
            if graph.webhook != "deny":
                raise  # refused by the scenario's webhook: nothing happens
        await quiet(cluster, client, graph)
        await caught_up(recorder, client, graph)
        await recorder.stop()
        records = await _records_about(client, graph)
        try:
            compare(graph, name, report, recorder, before, records)
        finally:
            await clean_up(client, graph)
        return report


def _pod_of(objects: list[Obj], workload: str) -> str:
    """The first pod (by name) that ``workload``'s controller made (through a ReplicaSet
    for a Deployment), "" if none is left."""
    by_uid = {o["metadata"]["uid"]: o for o in objects}

    def chain(obj: Obj) -> Iterator[str]:
        for _ in range(2):
            ref = controller_ref_of(obj)
            if ref is None or ref["uid"] not in by_uid:
                return
            obj = by_uid[ref["uid"]]
            yield obj["metadata"]["name"]

    pods = sorted(o["metadata"]["name"] for o in objects
                  if o["kind"] == "Pod" and workload in chain(o))
    return pods[0] if pods else ""


async def clean_up(client: Client, graph: Graph) -> None:
    """Release and delete what is left of the graph (its pods hold the node's pod IPs):
    its webhook configuration first (it refuses the DELETEs of its guarded Secrets),
    its Gadgets before its CRD, which is deleted as a user would (its API server's clean-up
    finalizer kept: stripping it would leave instances the server no longer serves)."""
    objects = await _graph_objects(client, graph)
    objects.sort(key=lambda o: (o["kind"] != "ValidatingWebhookConfiguration",
                                o["kind"] == "CustomResourceDefinition"))
    for obj in objects:
        meta = obj["metadata"]
        gvr = gvr_of(graph.ident, obj["kind"])
        with contextlib.suppress(StatusError):
            if meta.get("finalizers") and obj["kind"] != "CustomResourceDefinition":
                await client.patch(gvr, meta["name"], {"metadata": {"finalizers": None}},
                                   namespace=meta.get("namespace", ""),
                                   patch_type=PatchType.MERGE)
            await client.delete(gvr, meta["name"], namespace=meta.get("namespace", ""),
                                options=DeleteOptions(grace_period_seconds=0))


async def _records_about(client: Client, graph: Graph) -> list[str]:
    """The garbage collector's DeletionRecords about the graph's objects, in order."""
    listed = await client.list(DELETION_RECORDS, options=ListOptions())
    ours = [r for r in listed["items"] if r["object"]["name"].startswith(f"g{graph.ident}-")]
    ours.sort(key=lambda r: int(r["metadata"]["resourceVersion"]))
    return [f"  {r['action']} {r['object']['name']}: {r['reason']}: {r['message']}"
            for r in ours]
