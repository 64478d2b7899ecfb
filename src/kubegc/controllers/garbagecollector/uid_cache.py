"""The absent-owner cache: an LRU of owner identities verified absent (cf. uid_cache.go).

Keys are ``ObjectReference`` values: the ownerReference coordinates (apiVersion, kind,
name, uid) plus a namespace -- the dependent's namespace for namespaced owners, ``""`` for
cluster-scoped owners (cf. ``isDangling``'s ``absentOwnerCacheKey``).
``controller``/``blockOwnerDeletion`` never take part.

Each entry also remembers *why* the owner is absent (``AbsentReason``), so a later cache
hit can still explain a deletion ("owner recreated with another uid" rather than only
"cached"). ``has`` counts as a use and promotes the entry, as upstream's ``lru.Get``.

Ownership: shared by GraphBuilder (adds observed deletions) and GarbageCollector workers
(adds verified absences, reads); all calls are synchronous on the event loop.
"""

from __future__ import annotations

import enum
from collections import OrderedDict

from kubegc.api.meta import ObjectReference

#: Production size (upstream ``NewReferenceCache(500)``).
DEFAULT_ABSENT_OWNER_CACHE_SIZE = 500


class AbsentReason(enum.StrEnum):
    NOT_FOUND = "NotFound"  # GET returned 404
    UID_MISMATCH = "UIDMismatch"  # an object of that name exists with another uid
    OBSERVED_DELETED = "ObservedDeleted"  # the informer saw the owner go away


class ReferenceCache:
    """Bounded LRU set of ``ObjectReference`` (cf. ``ReferenceCache``)."""

    __slots__ = ("_entries", "max_entries")

    def __init__(self, max_entries: int = DEFAULT_ABSENT_OWNER_CACHE_SIZE) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self._entries: OrderedDict[ObjectReference, AbsentReason] = OrderedDict()

    def add(self, ref: ObjectReference, reason: AbsentReason = AbsentReason.NOT_FOUND) -> None:
        """Insert or refresh ``ref``; evicts the least recently used entry when full."""
        self._entries[ref] = reason
        self._entries.move_to_end(ref)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def has(self, ref: ObjectReference) -> bool:
        """Whether ``ref`` is cached; a hit promotes it to most recently used."""
        return self.get(ref) is not None

    def get(self, ref: ObjectReference) -> AbsentReason | None:
        """The recorded reason for ``ref``, promoting it; ``None`` if not cached."""
        reason = self._entries.get(ref)
        if reason is not None:
            self._entries.move_to_end(ref)
        return reason

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[ObjectReference]:
        """Cached references, least recently used first (does not promote)."""
        return list(self._entries)

    def clear(self) -> None:
        self._entries.clear()


#: How many deleted uids the GraphBuilder remembers (``DeletedUIDs``): ~100 bytes each.
DEFAULT_DELETED_UIDS_SIZE = 10_000


class DeletedUIDs:
    """The uids of the most recently deleted objects the GraphBuilder observed, so that a
    reference to one of them, found with another uid under its name, can be explained as
    "the owner was recreated" rather than only "no object with that uid" (kubegc's
    DeletionRecords; upstream keeps no such memory). Bounded: the oldest is forgotten.

    Ownership: written by GraphBuilder, read by the GC workers, on the event loop."""

    __slots__ = ("_uids", "max_entries")

    def __init__(self, max_entries: int = DEFAULT_DELETED_UIDS_SIZE) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self._uids: OrderedDict[str, None] = OrderedDict()

    def add(self, uid: str) -> None:
        self._uids[uid] = None
        self._uids.move_to_end(uid)
        while len(self._uids) > self.max_entries:
            self._uids.popitem(last=False)

    def __contains__(self, uid: object) -> bool:
        return uid in self._uids

    def __len__(self) -> int:
        return len(self._uids)
