"""``Controller`` of pkg/controller/volume/pvprotection/pv_protection_controller.go.

A volume is queued when it is added or updated and needs the finalizer or is a deletion
candidate (``pvAddedUpdated``). ``sync`` (``processPV``): a volume being deleted with the
finalizer keeps it while its ``status.phase`` is ``Bound`` (``isBeingUsed``; upstream's
persistent-volume controller writes that phase, kubegc has none, so it is whatever the
volume's status says); otherwise the finalizer is removed with an update of the volume as
read. A volume not being deleted without the finalizer gets it. No events, as upstream.
"""

from __future__ import annotations

from kubegc.api.meta import finalizers_of, name_of
from kubegc.api.types import Obj
from kubegc.api.volumes import PV_PROTECTION_FINALIZER, PVS
from kubegc.client.cache import FuncHandler
from kubegc.component.base_controller import BaseController
from kubegc.component.context import ControllerContext
from kubegc.component.objects import PERSISTENT_VOLUME
from kubegc.controllers.volume.protectionutil import (
    is_deletion_candidate,
    need_to_add_finalizer,
)


def is_being_used(pv: Obj) -> bool:
    """``isBeingUsed``: the volume is Bound to a claim."""
    status = pv.get("status")
    return isinstance(status, dict) and status.get("phase") == "Bound"


class PVProtectionController(BaseController):
    """Ownership: the queue holds volume names, drained by one worker (upstream's start
    function runs one)."""

    name = "persistentvolume-protection-controller"
    component = "pv-protection-controller"

    def __init__(self, ctx: ControllerContext[object]) -> None:
        super().__init__(ctx, workers=1)
        self.pvs = self.informer_factory.for_resource(PVS)
        self.synced_informers = [self.pvs]
        self.primary_informer = self.pvs

    def register_handlers(self) -> None:
        self.pvs.add_event_handler(FuncHandler(
            add=lambda obj, _: self.pv_added_updated(obj),
            update=lambda _, new: self.pv_added_updated(new)))

    def pv_added_updated(self, pv: Obj) -> None:
        if (need_to_add_finalizer(pv, PV_PROTECTION_FINALIZER)
                or is_deletion_candidate(pv, PV_PROTECTION_FINALIZER)):
            self.enqueue_key(name_of(pv))

    async def sync(self, key: str) -> float | None:
        pv = self.pvs.indexer.get_by_key(key)
        if pv is None:
            return None
        PERSISTENT_VOLUME.check(pv)  # a phase it cannot read: FailedSync, never released
        if is_deletion_candidate(pv, PV_PROTECTION_FINALIZER) and not is_being_used(pv):
            await self.update_finalizers(pv, [f for f in finalizers_of(pv)
                                              if f != PV_PROTECTION_FINALIZER])
            return None
        if need_to_add_finalizer(pv, PV_PROTECTION_FINALIZER):
            await self.update_finalizers(pv, [*finalizers_of(pv), PV_PROTECTION_FINALIZER])
        return None

    async def update_finalizers(self, pv: Obj, finalizers: list[str]) -> None:
        """``addFinalizer`` / ``removeFinalizer``: an update of the volume as read."""
        clone = {**pv, "metadata": {**pv["metadata"], "finalizers": finalizers}}
        await self.client.update(PVS, clone)
