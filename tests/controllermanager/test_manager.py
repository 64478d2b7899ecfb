"""The controller manager runs its components only while it holds
kube-system/kube-controller-manager: a lone server leads at once and renews; of two on one
store one leads; a leader that loses the Lease stops its components before another may
take over, and stands again as a candidate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kubegc.api.clock import ManualClock, parse_time
from kubegc.client.leaderelection import JITTER_FACTOR, LEASES
from kubegc.client.local import LocalClient
from kubegc.component.config import ControllerManagerConfiguration, LeaderElectionConfiguration
from kubegc.controllermanager import ControllerManager
from kubegc.registry import Registry
from kubegc.storage.memory import MemoryKV
from kubegc.testing import Cluster

NS, NAME = "kube-system", "kube-controller-manager"
LE = LeaderElectionConfiguration


async def test_a_lone_server_leads_at_once_and_renews() -> None:
    clock = ManualClock()
    async with Cluster(controllers=["eventttl"], clock=clock) as cluster:
        await cluster.asettle()
        manager = cluster.cluster.controller_manager
        assert manager is not None and manager.get("eventttl") is not None
        lease = await cluster.client.get(LEASES, NAME, namespace=NS)
        first = parse_time(lease["spec"]["renewTime"])
        assert lease["spec"]["holderIdentity"] == manager.identity
        assert lease["spec"]["leaseDurationSeconds"] == 15
        clock.advance(LE.retry_period)
        await cluster.asettle()
        renewed = await cluster.client.get(LEASES, NAME, namespace=NS)
        assert parse_time(renewed["spec"]["renewTime"]) > first
        assert renewed["spec"]["holderIdentity"] == manager.identity
        assert renewed["spec"]["leaseTransitions"] == 0


async def test_without_leader_election_no_lease_is_written() -> None:
    async with Cluster(controllers=["eventttl"], clock=ManualClock(),
                       leader_election=LE(leader_elect=False)) as cluster:
        await cluster.asettle()
        leases = await cluster.client.list(LEASES, namespace=NS)
        assert leases["items"] == []
        manager = cluster.cluster.controller_manager
        assert manager is not None and manager.get("eventttl") is not None


@pytest.fixture
async def shared() -> AsyncIterator[tuple[LocalClient, ManualClock]]:
    clock = ManualClock()
    registry = Registry(MemoryKV(), clock=clock)
    await registry.start()
    yield LocalClient(registry), clock
    await registry.stop()


def manager(client: LocalClient, clock: ManualClock, identity: str) -> ControllerManager:
    return ControllerManager(client, clock=clock, identity=identity,
                             config=ControllerManagerConfiguration(controllers=["eventttl"]))


async def advance(clock: ManualClock, seconds: float, step: float = 0.25) -> None:
    moved = 0.0
    while moved < seconds:
        clock.advance(step)
        moved += step
        for _ in range(30):
            await asyncio.sleep(0)


async def test_of_two_servers_one_leads_and_a_lost_lease_stops_its_components(
        shared: tuple[LocalClient, ManualClock]) -> None:
    client, clock = shared
    a, b = manager(client, clock, "a"), manager(client, clock, "b")
    await a.start()
    await b.start()
    assert [c.name for c in a.controllers] == ["eventttl"] and b.controllers == []
    assert a.ready() and b.ready() and b.leader() == "a"
    await advance(clock, 30)
    assert a.is_leading() and not b.is_leading() and b.controllers == []
    # the Lease is taken from a behind its back (as by a server that saw it expire)
    lease = await client.get(LEASES, NAME, namespace=NS)
    lease["spec"].update(holderIdentity="elsewhere", leaseTransitions=1)
    await client.update(LEASES, lease, namespace=NS)
    await advance(clock, LE.retry_period + LE.renew_deadline + 0.5)
    assert a.controllers == [] and not a.is_leading()  # stopped within its deadline
    assert b.controllers == []  # the new record is still valid for b
    # nobody renews "elsewhere": one of a and b takes over, with new components
    await advance(clock, LE.lease_duration + 2 * LE.retry_period * (1 + JITTER_FACTOR))
    leaders = [m for m in (a, b) if m.is_leading()]
    assert len(leaders) == 1 and [c.name for c in leaders[0].controllers] == ["eventttl"]
    final = await client.get(LEASES, NAME, namespace=NS)
    assert final["spec"]["leaseTransitions"] == 2
    await a.stop()
    await b.stop()


async def test_a_clean_stop_hands_over_within_a_retry_period(
        shared: tuple[LocalClient, ManualClock]) -> None:
    client, clock = shared
    a, b = manager(client, clock, "a"), manager(client, clock, "b")
    await a.start()
    await b.start()
    await a.stop()
    assert a.controllers == []
    await advance(clock, LE.retry_period * (1 + JITTER_FACTOR))
    assert b.is_leading() and [c.name for c in b.controllers] == ["eventttl"]
    await b.stop()
