"""The watch cache's ring alone: memory per event it holds and CPU per event dispatched
(issue 27), in-process.

Usage: ``python bench/bench_ring.py [--objects 100000] [--capacity 100000] [--quick]``

Feeds ``WatchCache._dispatch`` (no watcher, no storage) the life of N ConfigMaps of ~1.2 KB
as stored: N creates, N updates (each carrying the previous value), N deletes (each
carrying the last state as its value and as its previous value, one ``bytes``, as
``sqlite_writer.plan_batch`` makes them). After each phase, with the cyclic collector run
and the heap trimmed (``malloc_trim``, as the compactor does), it prints the anonymous RSS
over the
empty cache's per event the ring holds, next to the baseline of the same run: the bytes
the ring must keep of those events (the value, plus the previous value where it differs).
Run each tree's own copy to compare two commits.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from array import array
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import configmap, rss_anon_bytes

from kubegc.registry.generic.target import encode
from kubegc.registry.generic.watch_cache import WatchCache
from kubegc.storage.compactor import trim_heap
from kubegc.storage.kv import Event, EventType, KeyValue
from kubegc.storage.memory import MemoryKV


def _value(i: int, version: int) -> bytes:
    obj = configmap(f"cm-{i:07d}", "big", size=1000)
    obj["metadata"]["uid"] = f"{i:08d}-0000-4000-8000-{version:012d}"
    return encode(obj)  # as the registry stores it (an allocation of its own size)


def events(n: int, phase: str, first_revision: int) -> Iterator[tuple[Event, int]]:
    """The events of one phase and the payload bytes the ring must keep of each."""
    for i in range(n):
        key = f"/registry/core/configmaps/big/cm-{i:07d}"
        revision = first_revision + i
        created = first_revision - (2 * n if phase == "delete" else n if phase == "update"
                                    else 0)
        value = _value(i, 1 if phase == "create" else 2)
        if phase == "create":
            yield Event(EventType.PUT, KeyValue(key, value, revision, revision)), len(value)
        elif phase == "update":
            before = _value(i, 1)
            yield (Event(EventType.PUT, KeyValue(key, value, created, revision),
                         KeyValue(key, before, created, revision - n)),
                   len(value) + len(before))
        else:
            yield (Event(EventType.DELETE, KeyValue(key, value, created, revision),
                         KeyValue(key, value, created, revision - n)),
                   len(value))


def settled_rss() -> int:
    gc.collect()
    trim_heap()
    return rss_anon_bytes()


def run(n: int, capacity: int) -> None:
    cache = WatchCache(MemoryKV(), capacity=capacity)
    base = settled_rss()
    held = array("q")  # payload bytes of the events the ring holds, oldest first
    revision = 1
    print(f"bench_ring  [Python {sys.version.split()[0]}]  {n:,} ConfigMaps, ring of "
          f"{capacity:,} events")
    for phase in ("create", "update", "delete"):
        cpu = 0.0
        for event, payload in events(n, phase, revision):
            start = time.process_time()
            cache._dispatch(event)
            cpu += time.process_time() - start
            held.append(payload)
        revision += n
        held = held[-capacity:]
        grown = settled_rss() - base - held.itemsize * len(held)
        count = len(held)
        print(f"  after {phase:<6}: {count:,} events held, RSS anon +{grown / 2**20:6.1f} MB = "
              f"{grown / count:6.0f} B/event; payload {sum(held) / count:6.0f} B/event "
              f"(x{grown / sum(held):.2f}); dispatch {cpu / n * 1e6:5.1f} us/event CPU",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--capacity", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="20,000 objects, ring of 20,000")
    args = parser.parse_args()
    if args.quick:
        args.objects = args.capacity = 20_000
    run(args.objects, args.capacity)


if __name__ == "__main__":
    main()
