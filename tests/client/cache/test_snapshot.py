"""The metadata informers' caches kept between two runs (``client.cache.snapshot``):
read back for the store they were written for while a watch can resume from their
resourceVersions, never trusted when damaged, written periodically."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import CachedList, snapshot
from kubegc.client.cache.snapshot import CacheKeeper, Window, read_caches, write_caches

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")


def _partial(name: str, rv: int) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": "default", "uid": f"uid-{name}",
        "resourceVersion": str(rv), "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                             "uid": "uid-o", "blockOwnerDeletion": True}]}}


def _caches() -> dict[GroupVersionResource, CachedList]:
    return {CONFIGMAPS: CachedList([_partial("a", 5), _partial("b", 6)], "9"),
            SECRETS: CachedList([], "7")}


STORE = 7


def _window(oldest: int = 0, current: int = 12, store: int = STORE) -> Window:
    return Window(store, oldest, current)


def test_caches_come_back_as_written_and_stay(tmp_path: Path) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches(), store=STORE)
    read = read_caches(path, _window())
    assert read == _caches()
    # kept: a crash before the next write resumes from them again (the watch replays)
    assert read_caches(path, _window(current=40)) == _caches()
    a, b = read[CONFIGMAPS].items
    assert a["metadata"]["labels"] is b["metadata"]["labels"]  # shared, as the live ones
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]


def test_a_cache_older_than_the_window_is_not_used(tmp_path: Path) -> None:
    """A resource whose cache is older than the oldest revision a watch can resume from
    (compacted, or out of the watch cache's window) lists; the others resume."""
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches(), store=STORE)
    assert read_caches(path, _window(oldest=8)) == {CONFIGMAPS: _caches()[CONFIGMAPS]}
    assert read_caches(path, _window(oldest=10)) == {}
    assert not path.exists()  # it can serve nothing any more


@pytest.mark.parametrize("window", [_window(store=8), _window(current=11),
                                    _window(oldest=0, current=8)],
                         ids=["another store", "store behind the file", "cache ahead"])
def test_caches_of_another_store_or_beyond_it_are_not_used(tmp_path: Path,
                                                          window: Window) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches(), store=STORE)
    assert CONFIGMAPS not in read_caches(path, window)


def test_damaged_caches_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches(), store=STORE)
    whole = path.read_bytes()
    damaged = [
        whole[: len(whole) // 2],  # cut short
        whole.replace(b'"items":2', b'"items":3'),  # announces more than it holds
        whole.replace(b'"items":2', b'"items":1'),  # holds more than it announces
        whole.replace(b'{"apiVersion":"v1","kind":"ConfigMap"', b'[', 1),  # not JSON
        whole.replace(b'"name":"a"', b'"name":"a","managedFields":[]'),  # a whole object
        whole.replace(b"kubegc.informer-caches/v2", b"kubegc.informer-caches/v1"),
    ]
    for content in damaged:
        path.write_bytes(content)
        assert read_caches(path, _window()) == {}, content[:80]
        assert not path.exists()


def test_caches_are_owner_only(tmp_path: Path) -> None:
    """Annotations can hold what a Secret holds (kubectl's last-applied-configuration):
    the file is 0600, as the store."""
    path = tmp_path / "caches.jsonl"
    write_caches(path, 12, _caches(), store=STORE)
    assert path.stat().st_mode & 0o777 == 0o600


@contextlib.asynccontextmanager
async def _running(keeper: CacheKeeper) -> AsyncIterator[None]:
    task = asyncio.create_task(keeper.run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await keeper.stop()


async def _written(keeper: CacheKeeper, times: int) -> None:
    deadline = asyncio.get_running_loop().time() + 10
    while keeper.written < times:
        assert asyncio.get_running_loop().time() < deadline, f"not written {times} times"
        await asyncio.sleep(0.01)


async def test_the_keeper_writes_what_it_collects_periodically(tmp_path: Path) -> None:
    """While the server runs, the caches are written every period (so a crash leaves
    recent ones), each time what ``collect`` returns then."""
    path = tmp_path / "caches.jsonl"
    revisions = iter(range(12, 10_000))
    keeper = CacheKeeper(path, store=STORE, period=0.01, clock=RealClock(),
                         collect=lambda: (next(revisions), _caches()))
    async with _running(keeper):
        await _written(keeper, 2)
    assert read_caches(path, _window(current=10_000)) == _caches()
    assert not list(tmp_path.glob("*.tmp"))


async def test_the_keeper_writes_sooner_once_the_store_moved_half_a_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of writes would outrun the period (the caches then older than the watch
    cache's window, of no use after a crash): the keeper also writes once the store has
    moved ``revisions`` past its last write, and not before."""
    monkeypatch.setattr(snapshot, "POLL", 0.01)
    path = tmp_path / "caches.jsonl"
    store_revision = [12]
    keeper = CacheKeeper(path, store=STORE, period=3600, clock=RealClock(),
                         collect=lambda: (store_revision[0], _caches()),
                         revision=lambda: store_revision[0], revisions=10)
    async with _running(keeper):
        await asyncio.sleep(0.05)  # the keeper started at revision 12
        store_revision[0] = 21
        await asyncio.sleep(0.2)
        assert keeper.written == 0  # 9 revisions on: not yet
        store_revision[0] = 22
        await _written(keeper, 1)
    assert read_caches(path, _window(current=22)) == _caches()


async def test_the_keeper_rests_nine_times_as_long_as_a_write_took(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing the caches of a million objects takes seconds, and a burst of writes to the
    store makes a write due again as soon as one ends: the keeper then rests ``REST``
    times the last write's duration, so that writing never takes more than a tenth of the
    time from the server."""
    monkeypatch.setattr(snapshot, "POLL", 0.01)
    took = 0.1

    def slow_write(*args: object, **kwargs: object) -> None:
        time.sleep(took)

    monkeypatch.setattr(snapshot, "write_caches", slow_write)
    store_revision = iter(range(12, 10**9, 100))  # always half a window on
    keeper = CacheKeeper(tmp_path / "caches.jsonl", store=STORE, period=3600,
                         clock=RealClock(), collect=lambda: (next(store_revision), _caches()),
                         revision=lambda: next(store_revision), revisions=10)
    async with _running(keeper):
        await _written(keeper, 1)
        first = time.monotonic()
        await _written(keeper, 2)
        # the second write began no sooner than REST x 0.1 s after the first ended (and
        # took 0.1 s itself: more than the lag between the first's end and ``first``)
        assert time.monotonic() - first >= snapshot.REST * took


class _Caches(dict[GroupVersionResource, CachedList]):
    """Caches a weak reference can follow."""


async def test_the_keeper_keeps_nothing_it_wrote(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two writes the keeper holds none of the caches it wrote: after a mass
    deletion they would keep every deleted object's metadata alive (issue 27: nothing
    kept for what is gone)."""
    monkeypatch.setattr(snapshot, "POLL", 0.01)
    collected: list[weakref.ref[_Caches]] = []
    store_revision = [12]

    def collect() -> tuple[int, _Caches]:
        caches = _Caches(_caches())
        collected.append(weakref.ref(caches))
        return store_revision[0], caches

    keeper = CacheKeeper(tmp_path / "caches.jsonl", store=STORE, period=3600,
                         clock=RealClock(), collect=collect,
                         revision=lambda: store_revision[0], revisions=10)
    async with _running(keeper):
        await asyncio.sleep(0.05)
        store_revision[0] = 30
        await _written(keeper, 1)
        await asyncio.sleep(0.05)  # resting, then polling: nothing due
        assert collected and collected[0]() is None
