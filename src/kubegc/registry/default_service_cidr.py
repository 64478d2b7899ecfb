"""The default ServiceCIDR (cf. pkg/controlplane/controller/defaultservicecidr, a
kube-apiserver post-start hook since KEP-1880): the ServiceCIDR ``kubernetes`` of the
Service range the API server allocates from, created at start and again within
``SYNC_PERIOD`` of being deleted, and marked ``Ready`` when it has no Ready condition and
its CIDRs are the range's (``syncStatus``; a ServiceCIDR being deleted is left to the
controller manager's service-cidr controller).

Started by the registry at the versions that serve ServiceCIDRs (``kubegc.api.lifecycle``).
Writes as the API server itself, through the registry's verbs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kubegc.api import errors
from kubegc.api.clock import Clock, format_time
from kubegc.api.servicecidrs import ready, ready_condition
from kubegc.registry.facade import Verbs
from kubegc.registry.groups.networking.servicecidr import (
    DEFAULT_SERVICE_CIDR_NAME,
    default_service_cidr,
)

log = logging.getLogger(__name__)

#: seconds between two syncs (upstream's ``wait.Until(c.sync, 10*time.Second)``)
SYNC_PERIOD = 10.0
READY_MESSAGE = "Kubernetes default Service CIDR is ready"


class DefaultServiceCIDRController:
    """Ownership: one task, ``run``; ``sync`` is also called once at start."""

    def __init__(self, verbs: Verbs, clock: Clock, cidrs: list[str]) -> None:
        self.verbs, self.clock, self.cidrs = verbs, clock, cidrs
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.sync()
        self._task = asyncio.create_task(self.run(), name="default-service-cidr")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def run(self) -> None:
        while True:
            await self.clock.sleep(SYNC_PERIOD)
            try:
                await self.sync()
            except Exception:
                log.exception("default ServiceCIDR sync failed")

    async def sync(self) -> None:
        t = self.verbs.target("networking.k8s.io", "v1", "servicecidrs")
        try:
            current = await self.verbs.get(t, DEFAULT_SERVICE_CIDR_NAME)
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                raise
            try:
                current = await self.verbs.create(t, default_service_cidr(self.cidrs))
            except errors.StatusError as err:
                if not errors.is_already_exists(err):
                    raise
                return
        if (current["metadata"].get("deletionTimestamp") or ready_condition(current)
                or (current.get("spec") or {}).get("cidrs") != self.cidrs):
            return
        current["status"] = {"conditions": [ready("True", "", READY_MESSAGE,
                                                  format_time(self.clock.now()))]}
        await self.verbs.update(t, DEFAULT_SERVICE_CIDR_NAME, current, subresource="status")
