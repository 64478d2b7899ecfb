"""The controller manager's leader-election Lease (``kube-system/kube-controller-manager``),
held and renewed as upstream's leaderelection does. kubegc runs one manager, so it always
holds it; the Lease is there because tools (``kubegc doctor``) judge whether the controllers
that remove finalizers are alive from exactly this evidence on real clusters."""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid

from kubegc.api.clock import Clock, format_micro_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client

log = logging.getLogger(__name__)

LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")
LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "kube-controller-manager"
LEASE_DURATION = 15  # seconds, upstream's --leader-elect-lease-duration
RENEW_PERIOD = 5.0  # seconds between renewals (well inside the lease duration)


class LeaderLease:
    def __init__(self, client: Client, *, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self._task: asyncio.Task[None] | None = None
        self._acquired = ""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="leader-lease")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.renew()
            except StatusError as e:
                log.warning("renewing the controller manager lease failed: %s", e)
            await self.clock.sleep(RENEW_PERIOD)

    async def renew(self) -> Obj:
        now = format_micro_time(self.clock.now())
        self._acquired = self._acquired or now
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": LEASE_DURATION,
                "acquireTime": self._acquired, "renewTime": now, "leaseTransitions": 0}
        try:
            current = await self.client.get(LEASES, LEASE_NAME, namespace=LEASE_NAMESPACE)
        except StatusError as e:
            if not is_not_found(e):
                raise
            return await self.client.create(LEASES, {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
                "spec": spec}, namespace=LEASE_NAMESPACE)
        previous = (current.get("spec") or {})
        if previous.get("holderIdentity") not in (None, self.identity):
            spec["leaseTransitions"] = int(previous.get("leaseTransitions") or 0) + 1
        elif previous.get("leaseTransitions"):
            spec["leaseTransitions"] = previous["leaseTransitions"]
        updated = dict(current, spec=spec)
        return await self.client.update(LEASES, updated, namespace=LEASE_NAMESPACE)
