"""What a planned delete leaves hanging, diagnosed by the doctor, on the plan's time line.

The simulation's clock runs ahead of the reading: it first lets what happens anyway
happen (``pendingBeforeDelete``, up to the horizon), so its delete request is issued some
simulated minutes after the source was read, and the objects it leaves deleting carry
deletionTimestamps of that simulated future. Reported as they are, they lie in the future
and the doctor would find them deleting for a negative time.

So the plan's time line starts at the reading: the delete is taken to be issued at
``inv.now`` (every step's ``t+`` counts from it), and what hangs is judged when the
simulation went quiet, ``t+T``: each deletionTimestamp the simulation wrote is moved back
by the simulation's lead at the delete, and the doctor runs at ``inv.now + T``. The
source's evidence that a controller is alive (its Leases' renew times) is carried to that
time too: a controller alive at the reading is taken to be alive throughout, as the plan
already takes it when it removes that controller's finalizers. Deletions that were
already under way keep their real timestamps (they are ``T`` older by then).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

from kubegc.api.clock import format_time, parse_time_or_none
from kubegc.api.meta import deletion_timestamp_of, is_being_deleted, uid_of
from kubegc.api.types import Obj
from kubegc.tools.doctor import Deletion, DoctorOptions, Finding, stuck_finding
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.namespaces import namespace_finding
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef, group_of, human_duration
from kubegc.tools.ownership import OwnerGraph
from kubegc.tools.state import deletion_timing

#: Source objects carried into the end state as evidence (the simulation's are its own).
EVIDENCE_KINDS = (("coordination.k8s.io", "Lease"), ("", "Node"))


def _t(seconds: float) -> str:
    return "t+" + (f"{seconds:.1f}s" if seconds < 60 else human_duration(seconds))


def _shifted(value: object, by: timedelta) -> str | None:
    when = parse_time_or_none(value)
    return format_time(when + by) if when is not None else None


def _moved_back(obj: Obj, by: timedelta) -> Obj:
    """``obj`` with the deletionTimestamp the simulation wrote moved back by ``by``."""
    out = copy.copy(obj)
    out["metadata"] = dict(obj["metadata"])
    out["metadata"]["deletionTimestamp"] = _shifted(deletion_timestamp_of(obj), -by)
    return out


def _carried(lease: Obj, by: timedelta) -> Obj:
    """A source Lease renewed ``by`` later: alive at the reading, alive at the end."""
    spec = lease.get("spec") or {}
    if not spec.get("renewTime"):
        return lease
    out = copy.copy(lease)
    out["spec"] = {**spec, "renewTime": _shifted(spec["renewTime"], by)}
    return out


def _lost(node: Obj) -> Obj:
    """A source Node whose kubelet the plan stopped (``plan stop-kubelet``), as the node
    lifecycle controller leaves it: annotated stopped, Ready Unknown."""
    out = copy.deepcopy(node)
    out["metadata"].setdefault("annotations", {})["kubegc.io/kubelet"] = "stopped"
    for c in (out.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            c.update(status="Unknown", reason="NodeStatusUnknown",
                     message="Kubelet stopped posting node status.")
    return out


def _evidence(inv: Inventory, forward: timedelta, lost: frozenset[str]) -> list[Obj]:
    """The source's Leases carried forward and its Nodes, but those of ``lost`` nodes as
    their lost kubelet leaves them (a stale Lease, Ready Unknown)."""
    out = []
    for o in inv.objects:
        if (group_of(o), o.get("kind")) not in EVIDENCE_KINDS:
            continue
        name = (o.get("metadata") or {}).get("name")
        if o.get("kind") == "Node":
            out.append(_lost(o) if name in lost else o)
        else:
            out.append(o if name in lost else _carried(o, forward))
    return out


def hanging(inv: Inventory, end: list[Obj], before: dict[str, Obj], options: DoctorOptions,
            *, target_uid: str, lead: float, quiet_after: float,
            lost: frozenset[str] = frozenset()) -> tuple[list[Finding], datetime]:
    """Objects of ``end`` (the simulation's end state, objects of the source only) that this
    delete left deleting, each diagnosed as the doctor does, and the time they are judged
    at. ``lead``: simulated seconds between the reading and the delete request;
    ``quiet_after``: simulated seconds from the delete to the simulation going quiet;
    ``lost``: nodes whose kubelet the plan stopped."""
    back, forward = timedelta(seconds=lead), timedelta(seconds=quiet_after)
    judged_at = inv.now + forward
    started: dict[str, float] = {}
    state = []
    for obj in end:
        was = before[uid_of(obj)]
        if is_being_deleted(obj) and deletion_timestamp_of(obj) != deletion_timestamp_of(was):
            obj = _moved_back(obj, back)
            timing = deletion_timing(obj, inv.now)  # requested: before a pod's grace period
            started[uid_of(obj)] = -timing.deleting_for if timing is not None else 0.0
        state.append(obj)
    evidence = _evidence(inv, forward, lost)
    end_inv = Inventory(_merge(state, evidence), inv.resources, judged_at,
                        namespace=inv.namespace, source=inv.source, dump=inv.dump,
                        read=set(inv.read), history=dict(inv.history))
    ctx = Context(end_inv, OwnerGraph(end_inv), options)
    out = []
    for obj in sorted(state, key=ObjRef.of):
        already = is_being_deleted(before[uid_of(obj)])
        if not is_being_deleted(obj) or (already and uid_of(obj) != target_uid):
            continue
        finding = (namespace_finding(ctx, obj) if obj.get("kind") == "Namespace"
                   and obj.get("apiVersion") == "v1" else stuck_finding(ctx, obj))
        finding.title = f"{finding.object} stays Terminating"
        if finding.facts and finding.deletion is not None:
            finding.facts[0] = _when(finding.deletion, started.get(uid_of(obj)), quiet_after)
        out.append(finding)
    return out, judged_at


def _when(deletion: Deletion, started: float | None, quiet_after: float) -> str:
    stamp = deletion.deletion_timestamp
    still = f"still Terminating at {_t(quiet_after)}, when the simulation went quiet"
    if started is None:
        return (f"deletionTimestamp {stamp} (already set before the plan): {still}, deleting "
                f"for {human_duration(deletion.deleting_for)} by then")
    return f"deletionTimestamp {stamp} (set by this delete at {_t(max(0.0, started))}): {still}"


def _merge(objects: list[Obj], evidence: list[Obj]) -> list[Obj]:
    """The end state, with the source's Leases and Nodes (the simulation's are its own)."""
    by_uid = {uid_of(o): o for o in objects}
    by_uid.update({uid_of(o): o for o in evidence})
    return list(by_uid.values())
