"""``Revisions``: the revision bookkeeping every backend shares (etcd mvcc's ``store``:
``currentRev``, ``compactMainRev``, the revision checks of ``rangeKeys`` and
``updateCompactRev``).

A backend inherits it beside ``KV``: it answers ``current_revision`` and
``compact_revision`` from ``_rev`` and ``_compact_rev``, checks the revision of a read and
of a compaction against them, and moves them forward. The fields stay plain attributes of
the backend (not a separate object) because the memory and SQLite backends read ``_rev`` on
every range and write it on every commit. May import: ``kubegc.storage`` errors.
"""

from __future__ import annotations

from kubegc.storage.errors import CompactedError, FutureRevisionError


class Revisions:
    """The current and compact revisions of one store.

    Ownership: the backend is the only writer, on its one event loop: the memory and SQLite
    backends set ``_rev`` when a write commits and ``_compact_rev`` through
    ``_update_compact_rev``; the etcd backend raises both to what etcd's responses say
    (``_observe_revision``, ``_observe_compaction``).
    Invariant: both only grow.
    """

    #: the revision of the last write this process knows of
    _rev: int = 0
    #: reads and watches below it fail with ``CompactedError``
    _compact_rev: int = 0

    @property
    def current_revision(self) -> int:
        return self._rev

    @property
    def compact_revision(self) -> int:
        return self._compact_rev

    def _read_revision(self, revision: int) -> int:
        """The revision a read at ``revision`` sees: the current one for 0 (or less);
        ``CompactedError`` below the compact revision, ``FutureRevisionError`` past the
        current one (etcd ``rangeKeys``)."""
        if revision <= 0:
            return self._rev
        if revision < self._compact_rev:
            raise CompactedError(revision, self._compact_rev)
        if revision > self._rev:
            raise FutureRevisionError(revision, self._rev)
        return revision

    def _update_compact_rev(self, revision: int) -> None:
        """Compact at ``revision``: ``FutureRevisionError`` past the current revision,
        ``CompactedError`` at or below the compact one (etcd ``updateCompactRev``)."""
        if revision > self._rev:
            raise FutureRevisionError(revision, self._rev)
        if revision <= self._compact_rev:
            raise CompactedError(revision, self._compact_rev)
        self._compact_rev = revision

    def _observe_revision(self, revision: int) -> None:
        """A response was at ``revision``: the current revision is at least that."""
        if revision > self._rev:
            self._rev = revision

    def _observe_compaction(self, revision: int) -> None:
        """History below ``revision`` is known to be gone."""
        if revision > self._compact_rev:
            self._compact_rev = revision
