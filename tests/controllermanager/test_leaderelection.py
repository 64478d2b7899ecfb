"""The controller manager holds kube-system/kube-controller-manager, as on a real cluster."""

from __future__ import annotations

from kubegc.api.clock import ManualClock, parse_time
from kubegc.controllermanager.leaderelection import (
    LEASE_NAME,
    LEASE_NAMESPACE,
    LEASES,
    RENEW_PERIOD,
)
from kubegc.testing import Cluster


async def test_lease_is_held_and_renewed() -> None:
    clock = ManualClock()
    async with Cluster(controllers=["eventttl"], clock=clock) as cluster:
        await cluster.asettle()
        lease = await cluster.client.get(LEASES, LEASE_NAME, namespace=LEASE_NAMESPACE)
        first = parse_time(lease["spec"]["renewTime"])
        assert lease["spec"]["holderIdentity"] and lease["spec"]["leaseDurationSeconds"] == 15
        clock.advance(RENEW_PERIOD)
        await cluster.asettle()
        renewed = await cluster.client.get(LEASES, LEASE_NAME, namespace=LEASE_NAMESPACE)
        assert parse_time(renewed["spec"]["renewTime"]) > first
        assert renewed["spec"]["holderIdentity"] == lease["spec"]["holderIdentity"]
