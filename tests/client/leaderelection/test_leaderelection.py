"""LeaderElector against a real registry (memory storage) on a manual clock: the Lease is
taken only when absent, expired on the observed clock, released, or already ours; every
write is a compare-and-swap; terms and transitions are counted only on hand-overs; a
leader that cannot renew within its deadline stops leading (cf. client-go
leaderelection_test.go ``TestTryAcquireOrRenew``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.leaderelection import (
    JITTER_FACTOR,
    LEASES,
    LeaderCallbacks,
    LeaderElector,
    LeaseLock,
    check_timing,
)
from kubegc.client.local import LocalClient
from kubegc.registry import Registry
from kubegc.storage.memory import MemoryKV

LEASE, NS = "kube-controller-manager", "kube-system"
L, D, R = 15.0, 10.0, 2.0
#: the longest a candidate waits between two tries
MAX_RETRY = R * (1 + JITTER_FACTOR)


@dataclass
class Candidate:
    elector: LeaderElector
    started: int = 0
    stopped: int = 0
    leaders: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def run(self) -> None:
        self.task = asyncio.create_task(self.elector.run())

    async def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def client(clock: ManualClock) -> AsyncIterator[LocalClient]:
    registry = Registry(MemoryKV(), clock=clock)
    await registry.start()
    yield LocalClient(registry)
    await registry.stop()


def candidate(client: LocalClient, clock: ManualClock, identity: str, *,
              release_on_cancel: bool = False) -> Candidate:
    box: list[Candidate] = []

    async def started() -> None:
        box[0].started += 1

    async def stopped() -> None:
        box[0].stopped += 1

    lock = LeaseLock(client, namespace=NS, name=LEASE, identity=identity)
    elector = LeaderElector(
        lock, clock=clock, lease_duration=L, renew_deadline=D, retry_period=R,
        release_on_cancel=release_on_cancel,
        callbacks=LeaderCallbacks(on_started_leading=started, on_stopped_leading=stopped,
                                  on_new_leader=lambda who: box[0].leaders.append(who)))
    box.append(Candidate(elector))
    return box[0]


async def spin(turns: int = 30) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)


async def advance(clock: ManualClock, seconds: float, *, step: float = 0.25) -> None:
    """Move the clock in small steps, letting every woken task run at each."""
    moved = 0.0
    while moved < seconds:
        clock.advance(min(step, seconds - moved))
        moved += step
        await spin()


async def lease(client: LocalClient) -> Obj:
    return await client.get(LEASES, LEASE, namespace=NS)


def spec(obj: Obj) -> Obj:
    result: Obj = obj["spec"]
    return result


async def test_an_absent_lease_is_created_and_renewed_in_one_term(
        client: LocalClient, clock: ManualClock) -> None:
    a = candidate(client, clock, "a")
    a.run()
    await spin()
    first = spec(await lease(client))
    assert first["holderIdentity"] == "a" and first["leaseDurationSeconds"] == 15
    assert first["leaseTransitions"] == 0 and first["acquireTime"] == first["renewTime"]
    assert a.started == 1 and a.leaders == ["a"]
    await advance(clock, 60)
    renewed = spec(await lease(client))
    assert renewed["renewTime"] > first["renewTime"]
    assert (renewed["acquireTime"], renewed["leaseTransitions"]) == (first["acquireTime"], 0)
    await a.cancel()
    assert a.stopped == 1


async def test_a_standby_never_takes_a_lease_that_is_being_renewed(
        client: LocalClient, clock: ManualClock) -> None:
    a, b = candidate(client, clock, "a"), candidate(client, clock, "b")
    a.run()
    await spin()
    b.run()
    await advance(clock, 10 * L)
    assert (a.elector.is_leader(), b.elector.is_leader()) == (True, False)
    assert b.started == 0 and b.leaders == ["a"]
    assert spec(await lease(client))["leaseTransitions"] == 0
    await a.cancel()
    await b.cancel()


async def test_an_expired_lease_is_taken_over_on_the_observed_clock(
        client: LocalClient, clock: ManualClock) -> None:
    """The leader stops renewing (its process froze): the standby waits the lease duration
    after it last saw the record change, never less, then takes it in a new term."""
    a, b = candidate(client, clock, "a"), candidate(client, clock, "b")
    a.run()
    await spin()
    b.run()
    await advance(clock, 5)  # a renewed at 0, 2 and 4
    await a.cancel()  # no release: as after kill -9
    held = spec(await lease(client))
    await advance(clock, L - 1.5)  # b saw the renewal of 4 no earlier than 4: valid to 19
    assert not b.elector.is_leader()
    # b saw it at most one retry after 4; it expires L later, and b retries within one more
    await advance(clock, 2 * MAX_RETRY + 1.5)
    assert b.elector.is_leader() and b.started == 1
    took = spec(await lease(client))
    assert took["holderIdentity"] == "b" and took["leaseTransitions"] == 1
    assert took["acquireTime"] > held["acquireTime"]
    await b.cancel()


async def test_a_released_lease_is_taken_at_the_next_retry(
        client: LocalClient, clock: ManualClock) -> None:
    a = candidate(client, clock, "a", release_on_cancel=True)
    b = candidate(client, clock, "b")
    a.run()
    await spin()
    b.run()
    await advance(clock, 3)
    await a.cancel()
    released = spec(await lease(client))
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    assert a.stopped == 1
    await advance(clock, MAX_RETRY)
    assert b.elector.is_leader()
    assert spec(await lease(client))["leaseTransitions"] == 1
    await b.cancel()


async def test_the_same_identity_renews_its_own_lease_at_once(
        client: LocalClient, clock: ManualClock) -> None:
    """A server restarted on its data directory keeps its identity: no wait, no new term."""
    first = candidate(client, clock, "a")
    first.run()
    await spin()
    before = spec(await lease(client))
    await first.cancel()
    again = candidate(client, clock, "a")
    assert await again.elector.try_acquire_or_renew()
    after = spec(await lease(client))
    assert (after["acquireTime"], after["leaseTransitions"]) == (
        before["acquireTime"], before["leaseTransitions"])


class GetTogether(LocalClient):
    """Holds every GET of the Lease until ``parties`` candidates have read it, so that
    they all decide on the same record before any of them writes."""

    def __init__(self, client: LocalClient, parties: int) -> None:
        super().__init__(client.registry)
        self.barrier = asyncio.Barrier(parties)

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        got = await super().get(gvr, name, namespace=namespace)
        await self.barrier.wait()
        return got


async def test_of_two_candidates_racing_for_an_expired_lease_one_wins(
        client: LocalClient, clock: ManualClock) -> None:
    """Both read the expired record; the writes are compare-and-swaps: one Conflict."""
    a = candidate(client, clock, "a")
    assert await a.elector.try_acquire_or_renew()
    together = GetTogether(client, 2)
    b, c = candidate(together, clock, "b"), candidate(together, clock, "c")
    await asyncio.gather(b.elector.try_acquire_or_renew(), c.elector.try_acquire_or_renew())
    clock.advance(L + 1)
    won = await asyncio.gather(b.elector.try_acquire_or_renew(),
                               c.elector.try_acquire_or_renew())
    assert sorted(won) == [False, True]
    assert spec(await lease(client))["leaseTransitions"] == 1


async def test_a_leader_that_cannot_renew_within_its_deadline_stops_leading(
        client: LocalClient, clock: ManualClock) -> None:
    """Someone else wrote the Lease (as a partitioned leader's successor would): the
    leader's renewals fail, and it stops leading within the renew deadline (plus the
    retry it was waiting on), while the lease it last wrote was still valid for others."""
    a = candidate(client, clock, "a")
    a.run()
    await spin()
    current = await lease(client)
    current["spec"]["holderIdentity"] = "intruder"
    await client.update(LEASES, current, namespace=NS)
    await advance(clock, R + D - 0.5)  # the failing poll began at R: it ends at R + D
    assert a.task is not None and not a.task.done() and a.stopped == 0
    await advance(clock, 1.0)
    assert a.task is not None and a.task.done() and a.stopped == 1
    assert not a.elector.is_leader()


async def test_a_lease_stored_with_fields_of_the_wrong_type_reads_as_unset(
        client: LocalClient, clock: ManualClock) -> None:
    await client.create(LEASES, {"metadata": {"name": LEASE, "namespace": NS},
                                 "spec": {"holderIdentity": "x"}}, namespace=NS)
    a = candidate(client, clock, "a")
    assert await a.elector.try_acquire_or_renew()  # no duration: expired at once
    assert spec(await lease(client))["leaseTransitions"] == 1


@pytest.mark.parametrize(("lease_duration", "renew_deadline", "retry_period", "message"), [
    pytest.param(10, 10, 2, "leaseDuration must be greater than renewDeadline", id="lease"),
    pytest.param(15, 2.4, 2, "renewDeadline must be greater than retryPeriod*JitterFactor",
                 id="deadline"),
    pytest.param(15, 10, 0, "retryPeriod must be greater than zero", id="retry"),
])
def test_timings_that_cannot_work_are_refused_with_upstreams_messages(
        lease_duration: float, renew_deadline: float, retry_period: float,
        message: str) -> None:
    check: Callable[[], None] = lambda: check_timing(  # noqa: E731
        lease_duration=lease_duration, renew_deadline=renew_deadline,
        retry_period=retry_period)
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        check()
