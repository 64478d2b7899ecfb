"""Driving the simulation: settle, move the clock, stand in for live controllers.

``run_until_quiet`` settles the simulation, then moves its ``ManualClock`` to the next
timer (grace periods, retries), until no relevant change happened for ``horizon``
simulated seconds or nothing waits on the clock any more. ``finish_for_alive`` removes,
in the simulation, the finalizers whose controller is alive in the source
(``finalizers.who_removes``), as that controller would after its clean-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_KUBERNETES,
    FINALIZER_ORPHAN_DEPENDENTS,
    finalizers_of,
    name_of,
    namespace_of,
)
from kubegc.api.servicecidrs import SERVICE_CIDR_FINALIZER
from kubegc.api.types import Obj
from kubegc.api.volumes import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from kubegc.client.interface import PatchType
from kubegc.tools.finalizers import Alive, ControllerMap, who_removes
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.recorder import Recorder
from kubegc.tools.plan.simulation import Simulation

log = logging.getLogger(__name__)

#: Real seconds to wait for the simulation to settle before moving the clock anyway
#: (a retry waiting on the clock keeps it busy).
SETTLE_TIMEOUT = 0.5
#: Real seconds a simulation may stay busy with no timer pending before the plan stops
#: waiting for it (and says that its result may be incomplete).
UNSETTLED_LIMIT = 120.0
#: Rounds of "controllers alive in the source remove their finalizers" (each may free
#: more objects whose finalizers are then removed in turn).
MAX_ASSUME_ROUNDS = 100
#: Finalizers the simulation's own controllers handle (the CRD cleanup one: the simulated
#: API server's CRD finalizer, which deletes the instances and waits until they are gone).
CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
NOT_ASSUMED = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS, FINALIZER_KUBERNETES,
               CRD_CLEANUP)
#: Finalizers the simulation handles when it runs that controller (``PLAN_CONTROLLERS``):
#: released on the controller's own rule (a claim once no pod uses it), never assumed.
SIMULATED_BY = {PVC_PROTECTION_FINALIZER: "persistentvolumeclaim-protection-controller",
                PV_PROTECTION_FINALIZER: "persistentvolume-protection-controller",
                SERVICE_CIDR_FINALIZER: "service-cidr-controller"}


async def settle(sim: Simulation, timeout: float) -> bool:
    try:
        await sim.settle(timeout)
    except TimeoutError:
        return False
    return True


async def run_until_quiet(sim: Simulation, clock: ManualClock, recorder: Recorder,
                          horizon: float,
                          after_settle: Callable[[], Awaitable[bool]] | None = None,
                          operation_step: Callable[[], Awaitable[bool]] | None = None) -> bool:
    """Settle, then move the clock to the next timer, until nothing relevant happened for
    ``horizon`` simulated seconds. ``after_settle`` runs after each settle; when it
    changed something the loop settles again before moving the clock; so does
    ``operation_step`` (the planned operation's own next move: a drain's retry), with no
    limit on its rounds. A simulation still
    busy with no timer pending is waited for (it is slow, not done); False if it was still
    busy after ``UNSETTLED_LIMIT`` real seconds (the report must then say so)."""
    last_change = clock.monotonic()
    seen = -1
    rounds = 0
    loop = asyncio.get_running_loop()
    busy_since: float | None = None  # real time the simulation has been busy since
    while True:
        settled = await settle(sim, SETTLE_TIMEOUT)
        if operation_step is not None and await operation_step():
            continue
        if after_settle is not None and rounds < MAX_ASSUME_ROUNDS and await after_settle():
            rounds += 1
            continue
        if recorder.relevant_count() != seen:
            seen = recorder.relevant_count()
            last_change = clock.monotonic()
        deadline = clock.next_deadline
        if not settled and deadline is None:
            # still working with no timer to move the clock to (a loaded machine, a large
            # cascade): quiet is not the end of it yet; give up only after UNSETTLED_LIMIT
            busy_since = loop.time() if busy_since is None else busy_since
            if loop.time() - busy_since < UNSETTLED_LIMIT:
                continue
            return False
        busy_since = None
        if deadline is None or deadline - last_change > horizon:
            return True
        clock.advance(max(0.0, deadline - clock.monotonic()))
        await asyncio.sleep(0)


async def finish_for_alive(sim: Simulation, recorder: Recorder, inv: Inventory,
                           mapping: ControllerMap, before: dict[str, Obj],
                           assumed: dict[tuple[str, str], str]) -> bool:
    """Remove, in the simulation, the finalizers whose controller is alive in the source
    (recorded in ``assumed``: (uid, finalizer) -> who). Returns whether anything was
    removed."""
    acted = False
    for uid in sorted(recorder.deleting & before.keys()):
        obj = recorder.current[uid]
        for finalizer in finalizers_of(obj):
            if (finalizer in NOT_ASSUMED or (uid, finalizer) in assumed
                    or SIMULATED_BY.get(finalizer) in sim.controllers):
                continue
            remover = who_removes(finalizer, obj, inv, mapping)
            if remover.alive is not Alive.YES:
                continue
            if await _remove_finalizer(sim, recorder, obj, finalizer):
                assumed[(uid, finalizer)] = remover.who
                acted = True
    return acted


async def _remove_finalizer(sim: Simulation, recorder: Recorder, obj: Obj,
                            finalizer: str) -> bool:
    gvr = recorder.gvr_for(obj)
    if gvr is None:
        return False
    index = finalizers_of(obj).index(finalizer)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{index}", "value": finalizer},
             {"op": "remove", "path": f"/metadata/finalizers/{index}"}]
    try:
        await sim.client.patch(gvr, name_of(obj), patch, namespace=namespace_of(obj),
                               patch_type=PatchType.JSON)
    except StatusError as e:
        log.info("could not remove %s from %s in the simulation: %s", finalizer,
                 ObjRef.of(obj), e.message)
        return False
    return True
