"""The revisioned key-value contract every backend implements (etcd's MVCC model).

* Every successful write (create, update, delete) gets the next global revision; a write
  never shares its revision with another write. Revisions start at 1 and only grow; a
  restarted store continues at the revision it had.
* ``mod_revision`` of a key is the revision of its last write, ``create_revision`` the
  revision that created it. Updates and deletes compare on ``mod_revision`` (CAS).
* ``range`` reads the latest state, or the state at a past revision not yet compacted.
* ``watch(prefix, start_revision=r)`` first replays every event with revision >= r, then
  delivers live events; events arrive in revision order, in batches. A watch started at a
  compacted revision raises ``CompactedError``.
* ``compact(r)`` forgets history before ``r``: reads at revisions < r and watches starting
  before r fail with ``CompactedError``. Current values are never compacted.
* A write that returned is durable to the degree the backend promises (SQLite FULL: it
  survives kill -9 and power loss once acknowledged).
* ``write_batch`` applies several writes as if each were its own call (each its own
  revision and event; a failed check fails only that write); a backend that can commits
  them together (``SqliteKV``: one transaction, in the batch's order, so a failed commit
  leaves none of them written; ``EtcdKV`` sends them as concurrent requests).

Keys are ``str`` (``/registry/<group>/<resource>/<namespace>/<name>``), values ``bytes``.
"""

from __future__ import annotations

import enum
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubegc.storage.errors import ConflictError, KeyExistsError, KeyNotFoundError, StorageError


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int


@dataclass(frozen=True, slots=True)
class RangeResult:
    kvs: list[KeyValue]
    revision: int  # the store revision the read observed
    more: bool = False  # a limit cut the result short


class EventType(enum.Enum):
    PUT = "PUT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class Event:
    """One change. For PUT, ``kv`` is the new value (``create_revision == mod_revision`` on
    creation); for DELETE, ``kv.value`` is the value before deletion and ``kv.mod_revision``
    the deletion's revision. ``prev_kv`` is the value before the change, when known."""

    type: EventType
    kv: KeyValue
    prev_kv: KeyValue | None = None

    @property
    def revision(self) -> int:
        return self.kv.mod_revision

    @property
    def is_create(self) -> bool:
        return self.type is EventType.PUT and self.kv.create_revision == self.kv.mod_revision


class WriteKind(enum.IntEnum):
    """What one write of a ``write_batch`` does (the values are ``sqlite_writer``'s)."""

    CREATE = 0
    UPDATE = 1
    DELETE = 2


@dataclass(frozen=True, slots=True)
class BatchWrite:
    """One write of a ``write_batch``: ``value`` is unused by a DELETE, and
    ``expected_mod_revision`` by a CREATE."""

    kind: WriteKind
    key: str
    value: bytes = b""
    expected_mod_revision: int = 0


#: The outcome of one write of a batch: its revision, or the error its own call would raise.
BatchOutcome = int | StorageError


def batch_outcomes(results: Sequence[int | BaseException]) -> list[BatchOutcome]:
    """The outcomes of a batch's writes gathered with ``return_exceptions``: a failed check
    stays in its place; any other error (a failed commit, a closed store) is raised."""
    outcomes: list[BatchOutcome] = []
    for result in results:
        if isinstance(result, BaseException) and not isinstance(
                result, KeyExistsError | KeyNotFoundError | ConflictError):
            raise result
        outcomes.append(result)
    return outcomes


def prefix_end(prefix: str) -> str:
    """The smallest key greater than every key that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"


def key_bounds(key: str, *, prefix: bool, end: str) -> tuple[str, str | None]:
    """``[lo, hi)`` for a ``range`` call; ``hi`` None means the single key ``key``."""
    if prefix and end:
        raise ValueError("range: prefix and end are exclusive")
    if prefix:
        return key, prefix_end(key)
    return key, (end or None)


class KV(Protocol):
    """A revisioned key-value store with watch. All methods may raise ``StorageClosedError``."""

    @property
    @abstractmethod
    def current_revision(self) -> int:
        """The revision of the last write this process knows of."""

    @property
    @abstractmethod
    def compact_revision(self) -> int:
        """Reads and watches below this revision fail with ``CompactedError``."""

    @abstractmethod
    async def get(self, key: str) -> KeyValue | None:
        """The latest value of ``key``, or None."""

    @abstractmethod
    async def range(
        self, key: str, *, end: str = "", prefix: bool = False, revision: int = 0,
        limit: int = 0, key_suffix: str = "",
    ) -> RangeResult:
        """Keys equal to ``key``; or starting with it when ``prefix``; or in ``[key, end)``
        when ``end`` is given (etcd's range_end). Results are in key order.

        ``key_suffix``: only the keys that end with it (a LIST whose field selector pins
        ``metadata.name``, the key's last segment, in every namespace); the backend selects
        them by key, reading the values of those alone, and ``limit`` counts them.

        ``revision`` 0 reads the latest state; otherwise the state at that revision
        (``CompactedError`` if compacted, ``FutureRevisionError`` if in the future).
        ``limit`` > 0 returns at most that many keys and sets ``more``. To page through a
        prefix, call again with ``key`` = last key + ``"\\x00"``, ``end`` =
        ``prefix_end(prefix)`` and the first page's revision."""

    @abstractmethod
    async def create(self, key: str, value: bytes) -> int:
        """Create ``key``; return the write's revision. ``KeyExistsError`` if it exists."""

    @abstractmethod
    async def update(self, key: str, value: bytes, *, expected_mod_revision: int) -> int:
        """Replace ``key`` if its mod revision is ``expected_mod_revision``; return the new
        revision. ``KeyNotFoundError`` if absent, ``ConflictError`` if modified."""

    @abstractmethod
    async def delete(self, key: str, *, expected_mod_revision: int) -> int:
        """Delete ``key`` if its mod revision is ``expected_mod_revision``; return the
        deletion's revision. ``KeyNotFoundError`` if absent, ``ConflictError`` if modified."""

    async def write_batch(self, writes: Sequence[BatchWrite]) -> list[BatchOutcome]:
        """Apply ``writes`` in order, each as its own ``create``/``update``/``delete`` would
        (its own revision and watch event; a write whose check fails gets its
        ``KeyExistsError`` / ``KeyNotFoundError`` / ``ConflictError`` in its place and
        does not stop the others). A write the backend could not make at all
        (``StorageError``: a failed commit, a closed store) is raised instead.

        By default one write after the other, in order; ``SqliteKV`` queues them all for
        ONE group commit, so they share one fsync and a failed commit leaves none of them
        written; ``EtcdKV`` has them all in flight at once, in no particular order."""
        outcomes: list[BatchOutcome] = []
        for w in writes:
            try:
                outcomes.append(await self._write_one(w))
            except (KeyExistsError, KeyNotFoundError, ConflictError) as exc:
                outcomes.append(exc)
        return outcomes

    async def _write_one(self, w: BatchWrite) -> int:
        if w.kind is WriteKind.CREATE:
            return await self.create(w.key, w.value)
        if w.kind is WriteKind.UPDATE:
            return await self.update(w.key, w.value,
                                     expected_mod_revision=w.expected_mod_revision)
        return await self.delete(w.key, expected_mod_revision=w.expected_mod_revision)

    @abstractmethod
    def watch(self, prefix: str, *, start_revision: int) -> AsyncIterator[list[Event]]:
        """Events under ``prefix`` with revision >= ``start_revision``, in order, in batches.

        Raises ``CompactedError`` (on first iteration) if ``start_revision`` is compacted.
        The iterator ends only when the store closes or the consumer stops iterating.
        Slow consumers are never dropped: events queue until read."""

    @abstractmethod
    async def compact(self, revision: int) -> None:
        """Forget history before ``revision`` (see the module contract)."""

    @abstractmethod
    async def close(self) -> None:
        """Flush pending writes and release resources; further calls fail."""
