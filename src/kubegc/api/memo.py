"""``Memo``: a bounded cache for pure functions of JSON values that see the same values
again and again.

Objects created from one template (the Pods of a ReplicaSet, a test's manifests, kubectl
applying similar files) carry equal ``spec``s; the work that depends only on such a value
(its managedFields document, its strict-decoding check) is the same for all of them. Keys
are the value's JSON encoding (``orjson.dumps``, about 1 µs for a Pod spec) plus whatever
else the result depends on; results are kept encoded, so every hit decodes a fresh copy and
no caller can alter what another receives.
"""

from __future__ import annotations

from collections.abc import Hashable


class Memo:
    """At most ``size`` entries; the oldest entry goes first. Loop-thread only."""

    __slots__ = ("_entries", "hits", "misses", "size")

    def __init__(self, size: int = 1024) -> None:
        self._entries: dict[Hashable, bytes] = {}
        self.size = size
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> bytes | None:
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: Hashable, value: bytes) -> None:
        entries = self._entries
        if len(entries) >= self.size and key not in entries:
            del entries[next(iter(entries))]
        entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["Memo"]
