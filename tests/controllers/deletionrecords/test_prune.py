"""Pruning DeletionRecords after their TTL: page by page (after a million-object run there
are over a million records), and a listing whose continue token expired is given up for
the round, not raised."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import ListOptions
from kubegc.controllers.deletionrecords import sink as sink_module
from kubegc.controllers.deletionrecords.sink import (
    DELETION_RECORDS,
    DeletionRecordSink,
    to_object,
)
from kubegc.controllers.garbagecollector.records import (
    DecisionReason,
    DeletionRecord,
    RecordAction,
)
from kubegc.testing import Cluster


class _ListingClient:
    """The cluster's client, recording each LIST's limit and the items it answered; it
    answers 410 Expired to the continued LISTs after ``expire_after`` pages."""

    def __init__(self, client: Any, *, expire_after: int | None = None) -> None:
        self._client = client
        self.pages: list[tuple[int, int]] = []  # (limit, items answered)
        self.expire_after = expire_after

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Any:
        options = options or ListOptions()
        if (self.expire_after is not None and options.continue_
                and len(self.pages) >= self.expire_after):
            raise errors.resource_expired("The provided continue parameter is too old")
        listed = await self._client.list(gvr, namespace=namespace, options=options)
        self.pages.append((options.limit or 0, len(listed["items"])))
        return listed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


async def _create_records(client: Any, clock: ManualClock, count: int, prefix: str) -> None:
    for i in range(count):
        rec = DeletionRecord(
            time=clock.now(), action=RecordAction.DELETE,
            object=ObjectReference("v1", "Pod", f"p{i}", f"{prefix}-{i}", "default"),
            reason=DecisionReason.OWNER_ABSENT, message="all owners are absent",
            propagation_policy="Background", owners=())
        await client.create(DELETION_RECORDS, to_object(rec, i))


async def _names(client: Any) -> set[str]:
    listed = await client.list(DELETION_RECORDS)
    return {item["object"]["uid"] for item in listed["items"]}


async def test_prune_lists_in_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sink_module, "PRUNE_PAGE", 4)
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        await _create_records(cluster.client, clock, 7, "old")
        clock.advance(3600)
        await _create_records(cluster.client, clock, 3, "new")
        listing = _ListingClient(cluster.client)
        sink = DeletionRecordSink(listing, clock=clock, ttl=1800)  # type: ignore[arg-type]
        assert await sink.prune() == 7
        assert listing.pages == [(4, 4), (4, 4), (4, 2)]  # never the whole collection
        assert await _names(cluster.client) == {f"new-{i}" for i in range(3)}


async def test_an_expired_continue_token_ends_the_round(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 410 on a continued LIST: what the pages so far found expired is deleted, the
    rest in the next round (the prune loop's next period)."""
    monkeypatch.setattr(sink_module, "PRUNE_PAGE", 4)
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        await _create_records(cluster.client, clock, 10, "old")
        clock.advance(3600)
        listing = _ListingClient(cluster.client, expire_after=1)
        sink = DeletionRecordSink(listing, clock=clock, ttl=1800)  # type: ignore[arg-type]
        assert await sink.prune() == 4
        assert len(await _names(cluster.client)) == 6
        listing.expire_after = None
        assert await sink.prune() == 6
        assert await _names(cluster.client) == set()


async def test_a_first_page_that_fails_is_raised() -> None:
    """Only a continued LIST's 410 is the round's end; any other failure is the prune
    loop's to log (as before)."""
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        listing = _ListingClient(cluster.client)

        async def failing(*_: Any, **__: Any) -> Any:
            raise errors.resource_expired("too old resource version")

        listing.list = failing  # type: ignore[method-assign]
        sink = DeletionRecordSink(listing, clock=clock, ttl=1800)  # type: ignore[arg-type]
        with pytest.raises(errors.StatusError):
            await sink.prune()
