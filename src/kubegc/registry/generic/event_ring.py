"""The watch cache's ring of events, packed: every event's key and stored bytes written one
after the other into large anonymous memory maps (``CHUNK`` each), and per event only three
numbers in array columns (its revision, where its row starts, its resource).

Why (issue 27, bench/README.md "bench_after_deletion.py"): a ring of one ``bytes`` (~1.1 KB,
malloc'd), one record, one key and two ints per event held its 100,000 events in ~300 bytes
of Python objects each, and its survivors — written amid the garbage of a mass deletion —
pinned pymalloc arenas and glibc chunks long after everything else was freed. Here an event
costs its row (a 19-byte header, the key, the value, the previous value unless it is the
same bytes, as a DELETE's is) plus 20 bytes of columns, and a chunk goes back to the system
whole (``munmap``) once every event in it has left the ring — but the last one dropped,
kept to write the next (a new map's pages cost a fault and zeroing each: reusing one made
an append ~3x cheaper, 1.4 against 4-5 us). The resource column (``resource_root``, as a
small number) lets a watch resuming in the past skip other resources' events without
reading their rows. Upstream's cacher keeps its
``watchCacheEvent`` ring of decoded objects (``k8s.io/apiserver/pkg/storage/cacher``
``watchCache.cache``); decoding here is the reader's (``watch_cache.CachedEvent``).

Ownership: the watch cache's dispatch task is the only writer (``append``, ``clear``);
``since`` reads on the event loop between writes.
"""

from __future__ import annotations

import mmap
import struct
from array import array
from bisect import bisect_right
from typing import TypeAlias

#: Bytes per chunk: a row never spans two (a bigger row gets a chunk of its own size).
CHUNK = 4 << 20

_HEADER = struct.Struct("<BHIiq")  # flags, key length, value length, prev length, prev rev
_DELETED, _CREATED = 1, 2
_NO_PREV, _PREV_IS_VALUE = -1, -2
_NO_ROOT = 0xFFFFFFFF  # a key above any resource's root


def resource_root(key: str) -> str:
    """The resource's key root (``/registry/<group>/<resource>/``) of a key or of a longer
    prefix; a shorter prefix is its own root."""
    parts = key.split("/")
    return "/".join(parts[:4]) + "/" if len(parts) > 4 else key


def _one_resource(key: str) -> bool:
    """Whether every key under ``key`` is of one resource (it has a ``resource_root``)."""
    return key.count("/") >= 4


#: One event as it was appended: deleted, created, key, revision, value, the previous value
#: (None when unknown), its revision (the fields of ``watch_cache.CachedEvent``).
Row: TypeAlias = tuple[bool, bool, str, int, bytes, bytes | None, int]


class EventRing:
    """The last ``capacity`` events in revision order."""

    def __init__(self, capacity: int, chunk: int = CHUNK) -> None:
        self.capacity = capacity
        self._chunk = chunk
        self._revisions = array("q")  # column by slot: slot = sequence % capacity
        self._offsets = array("q")  # where each row starts, as a global byte offset
        self._roots = array("I")  # the event's resource, numbered in ``_root_ids``
        self._root_ids: dict[str, int] = {}
        self._next = 0  # sequence number of the next event
        self._len = 0
        self._maps: list[mmap.mmap] = []  # oldest first
        self._starts: list[int] = []  # global offset of each map's first byte
        self._end = 0  # global offset where the next row goes
        self._spare: mmap.mmap | None = None  # the last chunk dropped, reused for the next
        self._limit = 0  # global offset where the newest map ends

    def __len__(self) -> int:
        return self._len

    @property
    def chunks(self) -> int:
        """Memory maps held (for tests and benches)."""
        return len(self._maps)

    @property
    def nbytes(self) -> int:
        """Bytes held: the maps' written part (the pages touched) and the columns."""
        written = self._end - self._starts[0] if self._maps else 0
        columns = sum(c.itemsize * len(c) for c in (self._revisions, self._offsets,
                                                    self._roots))
        return written + columns

    def clear(self) -> None:
        self._len = 0
        self._maps.clear()
        self._starts.clear()
        self._spare = None
        self._limit = self._end

    def append(self, row: Row, root: str | None = None) -> int | None:
        """Add ``row`` (revisions only grow; ``root``: its key's ``resource_root`` when the
        caller has it); the revision of the event it pushed out of a full ring, else None."""
        deleted, created, key_str, revision, value, prev, prev_revision = row
        key = key_str.encode()
        flags = (_DELETED if deleted else 0) | (_CREATED if created else 0)
        if prev is None or prev == value:
            prev_len = _NO_PREV if prev is None else _PREV_IS_VALUE
            data = b"".join((_HEADER.pack(flags, len(key), len(value), prev_len,
                                          prev_revision), key, value))
        else:
            data = b"".join((_HEADER.pack(flags, len(key), len(value), len(prev),
                                          prev_revision), key, value, prev))
        size, start = len(data), self._end
        if start + size > self._limit:
            self._new_chunk(size)
        at = start - self._starts[-1]
        self._maps[-1][at:at + size] = data
        self._end = start + size
        root_id = _NO_ROOT
        if _one_resource(key_str):
            root = resource_root(key_str) if root is None else root
            root_id = self._root_ids.setdefault(root, len(self._root_ids))
        return self._push(revision, start, root_id)

    def _new_chunk(self, size: int) -> None:
        """A map (the spare, or a new one) for rows from ``_end`` on, with room for ``size``."""
        spare, self._spare = self._spare, None
        if spare is None or size > len(spare):
            # private, so that it counts as the process's anonymous memory, as malloc's does
            spare = mmap.mmap(-1, max(self._chunk, size), flags=mmap.MAP_PRIVATE)
        self._maps.append(spare)
        self._starts.append(self._end)
        self._limit = self._end + len(spare)

    def _push(self, revision: int, offset: int, root: int) -> int | None:
        slot = self._next % self.capacity
        evicted = None
        if slot == len(self._revisions):
            self._revisions.append(revision)
            self._offsets.append(offset)
            self._roots.append(root)
        else:
            if self._len == self.capacity:
                evicted = self._revisions[slot]
            self._revisions[slot] = revision
            self._offsets[slot] = offset
            self._roots[slot] = root
        self._next += 1
        if self._len < self.capacity:
            self._len += 1
        else:
            self._drop_chunks()
        return evicted

    def _drop_chunks(self) -> None:
        """Drop the chunks whose every row has left the ring (unmapped, but the spare)."""
        oldest = self._offsets[(self._next - self._len) % self.capacity]
        while len(self._maps) > 1 and self._starts[1] <= oldest:
            dropped = self._maps.pop(0)
            del self._starts[0]
            if len(dropped) == self._chunk:
                # kept for the next chunk: its pages are already the process's, and a ring
                # that keeps its size needs one as often as it drops one
                self._spare = dropped

    def since(self, after: int, prefix: str) -> list[Row]:
        """The events under ``prefix`` with revision > ``after``, oldest first, read from
        the newest back (a watch resuming near the present reads only the few since)."""
        # a prefix of one resource or narrower: only that resource's events are read
        only = self._root_ids.get(resource_root(prefix), -1) if _one_resource(prefix) else None
        want = prefix.encode()
        out: list[Row] = []
        revisions, roots, capacity = self._revisions, self._roots, self.capacity
        for seq in range(self._next - 1, self._next - self._len - 1, -1):
            slot = seq % capacity
            if revisions[slot] <= after:
                break
            if only is None or roots[slot] == only:
                row = self._read(self._offsets[slot], revisions[slot], want)
                if row is not None:
                    out.append(row)
        out.reverse()
        return out

    def _read(self, offset: int, revision: int, prefix: bytes) -> Row | None:
        i = bisect_right(self._starts, offset) - 1
        chunk, at = self._maps[i], offset - self._starts[i]
        flags, key_len, value_len, prev_len, prev_revision = _HEADER.unpack_from(chunk, at)
        at += _HEADER.size
        if key_len < len(prefix) or chunk[at:at + len(prefix)] != prefix:
            return None
        key = chunk[at:at + key_len].decode()
        at += key_len
        value = chunk[at:at + value_len]
        prev = None if prev_len == _NO_PREV else value if prev_len == _PREV_IS_VALUE else \
            chunk[at + value_len:at + value_len + prev_len]
        return (bool(flags & _DELETED), bool(flags & _CREATED), key, revision, value, prev,
                prev_revision)
