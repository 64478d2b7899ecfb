"""The ``KV`` contract (storage/kv.py), run against every backend (fixture ``kv``:
memory, sqlite, and etcd when ``KUBEGC_TEST_ETCD`` is set)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from kubegc.storage import (
    KV,
    BatchWrite,
    CompactedError,
    ConflictError,
    Event,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    StorageClosedError,
    StorageError,
    WriteKind,
    prefix_end,
)

PUT, DELETE = EventType.PUT, EventType.DELETE


async def collect_until(watch: AsyncIterator[list[Event]], last_revision: int, *,
                        timeout: float = 20.0) -> list[Event]:
    """Events from ``watch`` until one has ``last_revision`` or beyond; fails after
    ``timeout`` seconds."""
    events: list[Event] = []
    async with asyncio.timeout(timeout):
        async for batch in watch:
            assert batch, "a watch batch is never empty"
            events.extend(batch)
            if events[-1].revision >= last_revision:
                break
    return events


def summary(events: list[Event]) -> list[tuple[str, str, bytes, int, int, int | None]]:
    """(type, key, value, create_revision, mod_revision, prev mod_revision) per event."""
    return [(e.type.value, e.kv.key, e.kv.value, e.kv.create_revision, e.kv.mod_revision,
             e.prev_kv.mod_revision if e.prev_kv else None) for e in events]


async def create_many(kv: KV, keys: list[str], *, concurrency: int = 16) -> list[int]:
    """Create ``keys`` (value = key) with a few concurrent writers; the revisions."""
    todo = iter(keys)
    revisions: list[int] = []

    async def writer() -> None:
        for key in todo:
            revisions.append(await kv.create(key, key.encode()))

    await asyncio.gather(*(writer() for _ in range(concurrency)))
    return sorted(revisions)


# -- revisions and writes ----------------------------------------------------------------


async def test_revisions_increase_by_one_per_write(kv: KV) -> None:
    r1 = await kv.create("/r/a", b"1")
    r2 = await kv.update("/r/a", b"2", expected_mod_revision=r1)
    r3 = await kv.create("/r/b", b"3")
    r4 = await kv.delete("/r/a", expected_mod_revision=r2)
    r5 = await kv.create("/r/a", b"5")

    assert [r2, r3, r4, r5] == [r1 + 1, r1 + 2, r1 + 3, r1 + 4]
    assert kv.current_revision == r5
    assert await kv.get("/r/a") == KeyValue("/r/a", b"5", r5, r5)  # re-created: new identity
    assert await kv.get("/r/b") == KeyValue("/r/b", b"3", r3, r3)


async def test_update_keeps_create_revision(kv: KV) -> None:
    r1 = await kv.create("/u/a", b"1")
    r2 = await kv.update("/u/a", b"2", expected_mod_revision=r1)
    assert await kv.get("/u/a") == KeyValue("/u/a", b"2", r1, r2)


async def test_create_existing_key_fails_without_using_a_revision(kv: KV) -> None:
    r1 = await kv.create("/c/a", b"1")
    with pytest.raises(KeyExistsError) as info:
        await kv.create("/c/a", b"again")
    assert info.value.key == "/c/a"
    assert await kv.get("/c/a") == KeyValue("/c/a", b"1", r1, r1)
    assert await kv.create("/c/b", b"2") == r1 + 1


Write = Callable[[KV, int], Awaitable[int]]


@pytest.mark.parametrize(("write", "error", "actual"), [
    pytest.param(lambda kv, r: kv.update("/k", b"x", expected_mod_revision=r - 1),
                 ConflictError, True, id="update-stale-revision"),
    pytest.param(lambda kv, r: kv.delete("/k", expected_mod_revision=r + 7),
                 ConflictError, True, id="delete-wrong-revision"),
    pytest.param(lambda kv, r: kv.update("/k", b"x", expected_mod_revision=0),
                 ConflictError, True, id="update-expecting-zero"),
    pytest.param(lambda kv, r: kv.update("/missing", b"x", expected_mod_revision=r),
                 KeyNotFoundError, False, id="update-missing-key"),
    pytest.param(lambda kv, r: kv.delete("/missing", expected_mod_revision=r),
                 KeyNotFoundError, False, id="delete-missing-key"),
])
async def test_cas_failures(kv: KV, write: Write, error: type[StorageError],
                            actual: bool) -> None:
    r1 = await kv.create("/k", b"v")
    with pytest.raises(error) as info:
        await write(kv, r1)
    if actual:
        assert isinstance(info.value, ConflictError)
        assert info.value.actual == r1
    assert await kv.get("/k") == KeyValue("/k", b"v", r1, r1)
    assert await kv.create("/next", b"") == r1 + 1  # failures use no revision


async def test_deleted_key_is_gone(kv: KV) -> None:
    r1 = await kv.create("/d/a", b"v")
    r2 = await kv.delete("/d/a", expected_mod_revision=r1)
    assert await kv.get("/d/a") is None
    with pytest.raises(KeyNotFoundError):
        await kv.update("/d/a", b"x", expected_mod_revision=r2)
    with pytest.raises(KeyNotFoundError):
        await kv.delete("/d/a", expected_mod_revision=r2)


# -- range -------------------------------------------------------------------------------


async def test_range_prefix_single_key_and_end(kv: KV) -> None:
    for key in ["/p/b", "/p/a", "/p/a/x", "/pa", "/q", "/p"]:
        await kv.create(key, key.encode())

    prefixed = await kv.range("/p/", prefix=True)
    assert [k.key for k in prefixed.kvs] == ["/p/a", "/p/a/x", "/p/b"]
    assert [k.value for k in prefixed.kvs] == [b"/p/a", b"/p/a/x", b"/p/b"]
    assert prefixed.revision == kv.current_revision
    assert not prefixed.more
    assert [k.key for k in (await kv.range("/p")).kvs] == ["/p"]
    assert (await kv.range("/p/zz")).kvs == []
    between = await kv.range("/p/a/", end="/pa")
    assert [k.key for k in between.kvs] == ["/p/a/x", "/p/b"]
    everything = await kv.range("", prefix=True)
    assert [k.key for k in everything.kvs] == ["/p", "/p/a", "/p/a/x", "/p/b", "/pa", "/q"]


async def test_range_limit_pages_at_the_first_pages_revision(kv: KV) -> None:
    keys = [f"/pg/{i:02d}" for i in range(25)]
    await create_many(kv, keys)
    first = await kv.range("/pg/", prefix=True, limit=10)
    # Writes between pages: the pages must not see them.
    late = await kv.create("/pg/99", b"late")
    victim = await kv.get("/pg/15")
    assert victim is not None
    await kv.delete("/pg/15", expected_mod_revision=victim.mod_revision)
    await kv.create("/pg/00a", b"behind the cursor")

    pages, page = [first], first
    while page.more:
        page = await kv.range(page.kvs[-1].key + "\x00", end=prefix_end("/pg/"),
                              revision=first.revision, limit=10)
        assert page.revision == first.revision
        pages.append(page)
    assert [len(p.kvs) for p in pages] == [10, 10, 5]
    assert [p.more for p in pages] == [True, True, False]
    assert [k.key for p in pages for k in p.kvs] == keys
    assert late > first.revision
    latest = await kv.range("/pg/", prefix=True)
    assert len(latest.kvs) == 26 and "/pg/15" not in {k.key for k in latest.kvs}


async def test_range_limit_exact_fit_has_no_more(kv: KV) -> None:
    await create_many(kv, [f"/ex/{i}" for i in range(3)])
    page = await kv.range("/ex/", prefix=True, limit=3)
    assert len(page.kvs) == 3 and not page.more


async def test_range_at_past_revision(kv: KV) -> None:
    r1 = await kv.create("/h/a", b"a1")
    r2 = await kv.create("/h/b", b"b1")
    r3 = await kv.update("/h/a", b"a2", expected_mod_revision=r1)
    r4 = await kv.delete("/h/b", expected_mod_revision=r2)
    r5 = await kv.create("/h/c", b"c1")
    r6 = await kv.create("/h/b", b"b2")

    async def state(revision: int) -> dict[str, tuple[bytes, int, int]]:
        result = await kv.range("/h/", prefix=True, revision=revision)
        assert result.revision == revision
        return {k.key: (k.value, k.create_revision, k.mod_revision) for k in result.kvs}

    assert await state(r1) == {"/h/a": (b"a1", r1, r1)}
    assert await state(r2) == {"/h/a": (b"a1", r1, r1), "/h/b": (b"b1", r2, r2)}
    assert await state(r3) == {"/h/a": (b"a2", r1, r3), "/h/b": (b"b1", r2, r2)}
    assert await state(r4) == {"/h/a": (b"a2", r1, r3)}
    assert await state(r5) == {"/h/a": (b"a2", r1, r3), "/h/c": (b"c1", r5, r5)}
    assert await state(r6) == {"/h/a": (b"a2", r1, r3), "/h/b": (b"b2", r6, r6),
                               "/h/c": (b"c1", r5, r5)}
    single = await kv.range("/h/b", revision=r3)
    assert single.kvs == [KeyValue("/h/b", b"b1", r2, r2)]
    assert (await kv.range("/h/b", revision=r4)).kvs == []
    limited = await kv.range("/h/", prefix=True, revision=r3, limit=1)
    assert [k.key for k in limited.kvs] == ["/h/a"] and limited.more


async def test_range_of_a_key_suffix_selects_by_key(kv: KV) -> None:
    """``key_suffix``: the keys ending with it, the latest state or a past one, ``limit``
    counting them (the listing's ``metadata.name`` field selector in every namespace)."""
    for key in ["/s/a/root", "/s/a/other", "/s/b/root", "/s/b/xroot", "/s/c/root", "/root"]:
        await kv.create(key, key.encode())
    before = kv.current_revision
    gone = await kv.get("/s/b/root")
    assert gone is not None
    await kv.delete("/s/b/root", expected_mod_revision=gone.mod_revision)
    await kv.create("/s/d/root", b"late")

    latest = await kv.range("/s/", prefix=True, key_suffix="/root")
    assert [(k.key, k.value) for k in latest.kvs] == [
        ("/s/a/root", b"/s/a/root"), ("/s/c/root", b"/s/c/root"), ("/s/d/root", b"late")]
    past = await kv.range("/s/", prefix=True, revision=before, key_suffix="/root")
    assert [k.key for k in past.kvs] == ["/s/a/root", "/s/b/root", "/s/c/root"]
    first = await kv.range("/s/", prefix=True, revision=before, limit=2, key_suffix="/root")
    assert [k.key for k in first.kvs] == ["/s/a/root", "/s/b/root"] and first.more
    rest = await kv.range(first.kvs[-1].key + "\x00", end=prefix_end("/s/"),
                          revision=before, limit=2, key_suffix="/root")
    assert [k.key for k in rest.kvs] == ["/s/c/root"] and not rest.more
    exact = await kv.range("/s/", prefix=True, revision=before, limit=3, key_suffix="/root")
    assert len(exact.kvs) == 3 and not exact.more
    assert [k.key for k in (await kv.range("/s/a/root", key_suffix="/root")).kvs] == [
        "/s/a/root"]
    assert (await kv.range("/s/a/other", key_suffix="/root")).kvs == []
    assert (await kv.range("/s/", prefix=True, key_suffix="/none")).kvs == []


async def test_range_at_future_revision_fails(kv: KV) -> None:
    await kv.create("/f/a", b"")
    future = kv.current_revision + 1
    with pytest.raises(FutureRevisionError):
        await kv.range("/f/", prefix=True, revision=future)


# -- watch -------------------------------------------------------------------------------


async def test_watch_replays_then_delivers_live_events_in_order(kv: KV) -> None:
    r1 = await kv.create("/w/a", b"a1")
    r2 = await kv.update("/w/a", b"a2", expected_mod_revision=r1)
    r3 = await kv.create("/other/x", b"not watched")
    r4 = await kv.create("/w/b", b"b1")
    watch = kv.watch("/w/", start_revision=r2)
    replayed = await collect_until(watch, r4)

    r5 = await kv.delete("/w/a", expected_mod_revision=r2)
    r6 = await kv.create("/w/a", b"a3")
    live = await collect_until(watch, r6)

    assert r3 not in [e.revision for e in replayed + live]
    assert summary(replayed) == [
        ("PUT", "/w/a", b"a2", r1, r2, r1),
        ("PUT", "/w/b", b"b1", r4, r4, None),
    ]
    assert summary(live) == [
        ("DELETE", "/w/a", b"a2", r1, r5, r2),  # a DELETE carries the value before deletion
        ("PUT", "/w/a", b"a3", r6, r6, None),
    ]
    assert [e.is_create for e in replayed + live] == [False, True, False, True]


async def test_watch_from_zero_sees_only_later_writes(kv: KV) -> None:
    await kv.create("/z/old", b"")
    watch = kv.watch("/z/", start_revision=0)
    r = await kv.create("/z/new", b"")
    events = await collect_until(watch, r)
    assert [(e.kv.key, e.revision) for e in events] == [("/z/new", r)]


async def test_watch_switch_from_replay_to_live_has_no_gap_or_duplicate(kv: KV) -> None:
    # Enough history for several catch-up slices, and writes racing with the catch-up.
    history = await create_many(kv, [f"/race/old-{i:04d}" for i in range(2500)])
    watch = kv.watch("/race/", start_revision=history[0])
    more = [f"/race/new-{i:04d}" for i in range(300)]
    racing: list[int] = []

    async def writer() -> None:
        for key in more:
            racing.append(await kv.create(key, b""))
            await asyncio.sleep(0)  # interleave with the watch even where writes never yield

    write_task = asyncio.ensure_future(writer())
    events = await collect_until(watch, history[0] + len(history) + len(more) - 1)
    await write_task

    revisions = [e.revision for e in events]
    assert revisions == list(range(history[0], racing[-1] + 1))
    assert {e.kv.key for e in events} == {f"/race/old-{i:04d}" for i in range(2500)} | set(more)


async def test_slow_consumer_gets_every_event_in_order(kv: KV) -> None:
    watch = kv.watch("/slow/", start_revision=kv.current_revision + 1)
    first = await kv.create("/slow/0", b"")
    batch = await collect_until(watch, first)  # the watch is live now
    revisions = await create_many(kv, [f"/slow/{i}" for i in range(1, 200)], concurrency=4)
    events = batch + await collect_until(watch, revisions[-1])
    assert [e.revision for e in events] == [first, *revisions]


async def test_two_watchers_on_one_prefix_both_see_everything(kv: KV) -> None:
    start = kv.current_revision + 1
    w1, w2 = kv.watch("/two/", start_revision=start), kv.watch("/two/", start_revision=start)
    revisions = await create_many(kv, [f"/two/{i}" for i in range(20)], concurrency=2)
    e1, e2 = await collect_until(w1, revisions[-1]), await collect_until(w2, revisions[-1])
    assert [e.revision for e in e1] == [e.revision for e in e2] == revisions


# -- compaction --------------------------------------------------------------------------


async def test_compaction_forgets_history_but_keeps_current_values(kv: KV) -> None:
    r1 = await kv.create("/cp/a", b"a1")
    r2 = await kv.update("/cp/a", b"a2", expected_mod_revision=r1)
    r3 = await kv.create("/cp/b", b"b1")
    r4 = await kv.delete("/cp/b", expected_mod_revision=r3)
    r5 = await kv.create("/cp/c", b"c1")
    r6 = await kv.update("/cp/a", b"a3", expected_mod_revision=r2)

    await kv.compact(r5)

    assert kv.compact_revision == r5
    with pytest.raises(CompactedError) as info:
        await kv.range("/cp/", prefix=True, revision=r4)
    assert info.value.compact_revision == r5
    with pytest.raises(CompactedError):
        await anext(aiter(kv.watch("/cp/", start_revision=r2)))
    at_r5 = await kv.range("/cp/", prefix=True, revision=r5)
    assert [(k.key, k.value, k.mod_revision) for k in at_r5.kvs] == [
        ("/cp/a", b"a2", r2), ("/cp/c", b"c1", r5)]
    latest = await kv.range("/cp/", prefix=True)
    assert [(k.key, k.value) for k in latest.kvs] == [("/cp/a", b"a3"), ("/cp/c", b"c1")]
    replay = await collect_until(kv.watch("/cp/", start_revision=r5), r6)
    assert summary(replay) == [("PUT", "/cp/c", b"c1", r5, r5, None),
                               ("PUT", "/cp/a", b"a3", r1, r6, r2)]


@pytest.mark.parametrize(("offset", "error"), [
    pytest.param(0, CompactedError, id="same-revision-again"),
    pytest.param(-1, CompactedError, id="older-revision"),
])
async def test_compact_at_or_below_compact_revision_fails(
        kv: KV, offset: int, error: type[StorageError]) -> None:
    await create_many(kv, [f"/cc/{i}" for i in range(3)], concurrency=1)
    await kv.compact(kv.current_revision - 1)
    with pytest.raises(error):
        await kv.compact(kv.compact_revision + offset)


async def test_compact_future_revision_fails(kv: KV) -> None:
    await kv.create("/cf/a", b"")
    with pytest.raises(FutureRevisionError):
        await kv.compact(kv.current_revision + 1)


# -- close -------------------------------------------------------------------------------


async def test_close_ends_watches_and_rejects_calls(kv: KV) -> None:
    r1 = await kv.create("/cl/a", b"")
    watch = kv.watch("/cl/", start_revision=r1)
    assert [e.revision for e in await collect_until(watch, r1)] == [r1]
    pending = asyncio.ensure_future(anext(aiter(watch)))
    await asyncio.sleep(0)
    await kv.close()
    async with asyncio.timeout(10):
        with pytest.raises(StopAsyncIteration):
            await pending

    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: kv.get("/cl/a"),
        lambda: kv.range("/cl/", prefix=True),
        lambda: kv.create("/cl/b", b""),
        lambda: kv.update("/cl/a", b"", expected_mod_revision=r1),
        lambda: kv.delete("/cl/a", expected_mod_revision=r1),
        lambda: kv.compact(r1),
    ]
    for call in calls:
        with pytest.raises(StorageClosedError):
            await call()
    with pytest.raises(StorageClosedError):
        kv.watch("/cl/", start_revision=r1)
    await kv.close()  # closing twice is harmless


# -- randomized history against a model -----------------------------------------------


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in (1, 2, 3)])
async def test_random_history_matches_a_model(kv: KV, seed: int) -> None:
    rng = random.Random(seed)
    keys = [f"/m/{name}" for name in ("a", "b", "b/c", "ba", "c", "d")]
    state: dict[str, KeyValue] = {}
    snapshots: dict[int, dict[str, KeyValue]] = {}
    expected_events: list[tuple[str, str, int]] = []
    first = kv.current_revision + 1
    for _ in range(120):
        key = rng.choice(keys)
        cur = state.get(key)
        if cur is None:
            rev = await kv.create(key, f"{key}@{kv.current_revision + 1}".encode())
            state[key] = KeyValue(key, f"{key}@{rev}".encode(), rev, rev)
            expected_events.append(("PUT", key, rev))
        elif rng.random() < 0.3:
            rev = await kv.delete(key, expected_mod_revision=cur.mod_revision)
            del state[key]
            expected_events.append(("DELETE", key, rev))
        else:
            rev = await kv.update(key, f"{key}@{kv.current_revision + 1}".encode(),
                                  expected_mod_revision=cur.mod_revision)
            state[key] = KeyValue(key, f"{key}@{rev}".encode(), cur.create_revision, rev)
            expected_events.append(("PUT", key, rev))
        snapshots[rev] = dict(state)

    last = kv.current_revision
    assert sorted(snapshots) == list(range(first, last + 1))
    compact_at = rng.randrange(first + 1, last)
    await kv.compact(compact_at)
    for rev in range(compact_at, last + 1):
        page = await kv.range("/m/", prefix=True, revision=rev)
        assert page.kvs == sorted(snapshots[rev].values(), key=lambda k: k.key), rev
        limited = await kv.range("/m/b", end="/m/c", revision=rev, limit=1)
        in_range = sorted(k for k in snapshots[rev] if "/m/b" <= k < "/m/c")
        assert [k.key for k in limited.kvs] == in_range[:1]
        assert limited.more == (len(in_range) > 1)
    # From compact_at + 1: etcd drops a DELETE made exactly at the compact revision from
    # its history (the Kubernetes watch cache never asks for it: it resumes after it).
    events = await collect_until(kv.watch("/m/", start_revision=compact_at + 1), last)
    assert [(e.type.value, e.kv.key, e.revision) for e in events] == [
        ev for ev in expected_events if ev[2] > compact_at]


async def test_a_write_batch_is_each_write_on_its_own(kv: KV) -> None:
    """``write_batch``: in order, each write its own revision and event, a failed check
    failing only its own write (the error its own call would raise, in its place)."""
    a = await kv.create("/b/a", b"a")
    c = await kv.create("/b/c", b"c")
    watch = kv.watch("/b/", start_revision=c + 1)
    outcomes = await kv.write_batch([
        BatchWrite(WriteKind.DELETE, "/b/a", expected_mod_revision=a),
        BatchWrite(WriteKind.DELETE, "/b/gone", expected_mod_revision=1),
        BatchWrite(WriteKind.UPDATE, "/b/c", b"c2", expected_mod_revision=a),
        BatchWrite(WriteKind.CREATE, "/b/c", b"again"),
        BatchWrite(WriteKind.UPDATE, "/b/c", b"c2", expected_mod_revision=c),
        BatchWrite(WriteKind.CREATE, "/b/d", b"d"),
    ])
    assert [type(o) for o in outcomes] == [int, KeyNotFoundError, ConflictError,
                                           KeyExistsError, int, int]
    # in the batch's order on SQLite and in memory; etcd's requests are concurrent
    revisions = {"/b/a": outcomes[0], "/b/c": outcomes[4], "/b/d": outcomes[5]}
    assert sorted(revisions.values()) == [c + 1, c + 2, c + 3]
    events = await collect_until(watch, c + 3)
    assert sorted(summary(events), key=lambda e: e[1]) == [
        ("DELETE", "/b/a", b"a", a, revisions["/b/a"], a),
        ("PUT", "/b/c", b"c2", c, revisions["/b/c"], c),
        ("PUT", "/b/d", b"d", revisions["/b/d"], revisions["/b/d"], None),
    ]
    assert await kv.get("/b/a") is None
    assert await kv.write_batch([]) == []
