"""``EtcdKV``: the ``kv`` contract on a real etcd (3.4+) through aetcd 1.0's gRPC channel.

aetcd owns the channel (and auth); requests are built from its generated protobufs
(``aetcd.rpc``) because its helpers lack ``limit``/``revision`` on ranges and deliver watch
events one by one. What this module owns:

  * Keys: every key is stored as ``prefix + key`` (UTF-8), so several kubegc instances or
    test runs can share one etcd; ``prefix`` is stripped on the way out.
  * Writes: create = txn ``create_revision(k) == 0``; update/delete = txn
    ``create_revision(k) > 0 and mod_revision(k) == expected`` with a range of the key on
    failure to tell ``KeyNotFoundError`` from ``ConflictError``. A write is acknowledged
    by etcd (raft + fsync) before it returns. Writes are not retried.
  * Ranges: ``grpc.max_receive_message_length`` is raised to 64 MiB and an unlimited range
    is read in pages of ``RANGE_PAGE`` keys at the first page's revision.
  * Watch: one gRPC stream per watch, ``prev_kv`` on (DELETE events carry the old value).
    When the stream breaks, it re-watches from the last delivered revision + 1 after a
    backoff on the injected clock; the consumer sees no gap and no duplicate. A watch whose
    next revision was compacted raises ``CompactedError``.
  * etcd quirk: compaction at ``r`` also drops a tombstone written exactly at ``r``, so a
    watch starting at ``r`` == ``compact_revision`` misses a DELETE made at ``r`` (the
    Kubernetes watch cache resumes after the compact revision, never at it).
  * Revisions: ``current_revision`` is the highest revision seen in any response;
    ``compact_revision`` is probed at ``open()`` (binary search with ranges) and raised by
    every compaction this client makes or learns of from an error.
  * Errors: etcd's "required revision has been compacted" / "is a future revision" map to
    ``CompactedError`` / ``FutureRevisionError``; any other gRPC failure to ``StorageError``.

``open()`` connects and learns the revisions; every method calls it on first use.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aetcd
import grpc  # type: ignore[import-untyped,unused-ignore]  # no stubs; see pyproject overrides
from aetcd import rpc

from kubegc.api.clock import Clock, RealClock
from kubegc.storage.endpoint import etcd_client_address
from kubegc.storage.errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    StorageClosedError,
    StorageError,
)
from kubegc.storage.kv import (
    KV,
    BatchOutcome,
    BatchWrite,
    Event,
    EventType,
    KeyValue,
    RangeResult,
    batch_outcomes,
    key_bounds,
)
from kubegc.storage.revisions import Revisions

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 << 20
# Keys per request when the caller asked for an unlimited range (10k Pods ~ 16 MB).
RANGE_PAGE = 10_000
# Re-watch backoff after a broken stream: doubles from the first to the last value.
REWATCH_BACKOFF = (0.1, 5.0)
_RETRY_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_CMP = rpc.Compare
_EVENT_DELETE = 1  # mvccpb.Event.DELETE


class EtcdKV(Revisions, KV):
    """Revisioned store on etcd (see the module contract).

    Ownership: one event loop. ``_calls`` holds the open watch streams so ``close`` can end
    them; its revisions (``Revisions``) only grow, to what etcd answers.
    """

    def __init__(
        self, endpoint: str = "http://127.0.0.1:2379", *, prefix: str = "",
        timeout: float | None = 30.0, clock: Clock | None = None,
    ) -> None:
        host, port = etcd_client_address(endpoint)
        options = {"grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
                   "grpc.max_send_message_length": MAX_MESSAGE_BYTES}
        self._client = aetcd.Client(host, port, options=options)
        self.endpoint = f"http://{host}:{port}"
        self.prefix = prefix
        self._p = prefix.encode()
        self._timeout = timeout
        self.clock: Clock = clock or RealClock()
        self._kv: Any = None
        self._watch_stub: Any = None
        self._calls: set[Any] = set()
        self._closed = False

    async def open(self) -> None:
        """Connect, then learn the current and compact revisions (idempotent)."""
        if self._closed:
            raise StorageClosedError("storage is closed")
        if self._kv is not None:
            return
        try:
            await self._client.connect()
        except aetcd.ClientError as exc:
            raise StorageError(f"etcd: cannot connect to {self.endpoint}: {exc}") from exc
        self._kv = self._client.kvstub
        self._watch_stub = rpc.WatchStub(self._client.channel)
        await self._call("Range", rpc.RangeRequest(key=self._p or b"\x00", count_only=True))
        self._observe_compaction(await self._probe_compact_revision())

    async def _call(self, method: str, request: Any, revision: int = 0) -> Any:
        if self._kv is None:
            await self.open()
        elif self._closed:
            raise StorageClosedError("storage is closed")
        try:
            resp = await getattr(self._kv, method)(request, timeout=self._timeout)
        except grpc.aio.AioRpcError as exc:
            raise await self._error(exc, revision) from exc
        self._observe_revision(resp.header.revision)
        return resp

    async def _error(self, exc: grpc.aio.AioRpcError, revision: int) -> StorageError:
        details = exc.details() or ""
        if "required revision has been compacted" in details:
            self._observe_compaction(await self._probe_compact_revision())
            return CompactedError(revision, self._compact_rev)
        if "required revision is a future revision" in details:
            return FutureRevisionError(revision, self._rev)
        return StorageError(f"etcd: {exc.code().name}: {details}")

    async def _probe_compact_revision(self) -> int:
        """The lowest revision etcd still serves: binary search over
        ``(compact_revision, current_revision]`` with single-key ranges."""
        lo, hi = max(self._compact_rev, 1), max(self._rev, 1)
        while lo < hi:
            mid = (lo + hi) // 2
            try:
                await self._kv.Range(rpc.RangeRequest(key=self._p + b"\x00", revision=mid),
                                     timeout=self._timeout)
            except grpc.aio.AioRpcError as exc:
                if "compacted" not in (exc.details() or ""):
                    raise StorageError(f"etcd: {exc.code().name}: {exc.details()}") from exc
                lo = mid + 1
            else:
                hi = mid
        return lo if lo > 1 else 0

    # -- reads ---------------------------------------------------------------------------

    def _kv_of(self, kv: Any) -> KeyValue:
        return KeyValue(kv.key[len(self._p):].decode(), kv.value, kv.create_revision,
                        kv.mod_revision)

    async def get(self, key: str) -> KeyValue | None:
        resp = await self._call("Range", rpc.RangeRequest(key=self._p + key.encode()))
        return self._kv_of(resp.kvs[0]) if resp.kvs else None

    async def range(
        self, key: str, *, end: str = "", prefix: bool = False, revision: int = 0,
        limit: int = 0, key_suffix: str = "",
    ) -> RangeResult:
        lo, hi = key_bounds(key, prefix=prefix, end=end)
        request = rpc.RangeRequest(key=self._p + lo.encode(),
                                   range_end=self._p + hi.encode() if hi is not None else b"",
                                   revision=max(revision, 0), limit=max(limit, 0) or RANGE_PAGE)
        if key_suffix:
            return await self._range_suffix(request, revision, limit, key_suffix.encode())
        resp = await self._call("Range", request, revision)
        rev = revision if revision > 0 else resp.header.revision
        kvs = [self._kv_of(kv) for kv in resp.kvs]
        if limit > 0:
            return RangeResult(kvs, rev, resp.more)
        while resp.more:  # unlimited: page on at the first page's revision
            request.key = resp.kvs[-1].key + b"\x00"
            request.revision = rev
            resp = await self._call("Range", request, rev)
            kvs += [self._kv_of(kv) for kv in resp.kvs]
        return RangeResult(kvs, rev)

    async def _range_suffix(self, request: Any, revision: int, limit: int, suffix: bytes
                            ) -> RangeResult:
        """``range`` of the keys ending with ``suffix``: etcd cannot select by suffix, so
        the keys alone are read (``keys_only``, ``RANGE_PAGE`` at a time, at the first
        page's revision), then the value of each key that ends with it, at that revision."""
        request.keys_only, request.limit = True, RANGE_PAGE
        resp = await self._call("Range", request, revision)
        rev = revision if revision > 0 else resp.header.revision
        keys: list[bytes] = []
        while True:
            keys += [kv.key for kv in resp.kvs if kv.key.endswith(suffix)]
            if not resp.more or 0 < limit < len(keys):
                break
            request.key, request.revision = resp.kvs[-1].key + b"\x00", rev
            resp = await self._call("Range", request, rev)
        more = 0 < limit < len(keys)
        kvs: list[KeyValue] = []
        for found in keys[:limit] if more else keys:
            got = await self._call("Range", rpc.RangeRequest(key=found, revision=rev), rev)
            kvs += [self._kv_of(kv) for kv in got.kvs]
        return RangeResult(kvs, rev, more)

    # -- writes --------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> int:
        k = self._p + key.encode()
        resp = await self._call("Txn", rpc.TxnRequest(
            compare=[_CMP(key=k, target=_CMP.CREATE, result=_CMP.EQUAL, create_revision=0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=value))]))
        if not resp.succeeded:
            raise KeyExistsError(key)
        return int(resp.header.revision)

    async def update(self, key: str, value: bytes, *, expected_mod_revision: int) -> int:
        op = rpc.RequestOp(request_put=rpc.PutRequest(key=self._p + key.encode(), value=value))
        return await self._cas(key, expected_mod_revision, op)

    async def delete(self, key: str, *, expected_mod_revision: int) -> int:
        op = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(
            key=self._p + key.encode()))
        return await self._cas(key, expected_mod_revision, op)

    async def write_batch(self, writes: Sequence[BatchWrite]) -> list[BatchOutcome]:
        """See ``KV.write_batch``: one request per write, all in flight at once (as the
        concurrent calls they replace; a Txn would fail every write on one failed compare),
        so their revisions need not follow the batch's order, and a batch is not atomic."""
        results = await asyncio.gather(*(self._write_one(w) for w in writes),
                                       return_exceptions=True)
        return batch_outcomes(results)

    async def _cas(self, key: str, expected: int, op: Any) -> int:
        k = self._p + key.encode()
        resp = await self._call("Txn", rpc.TxnRequest(
            compare=[_CMP(key=k, target=_CMP.CREATE, result=_CMP.GREATER, create_revision=0),
                     _CMP(key=k, target=_CMP.MOD, result=_CMP.EQUAL, mod_revision=expected)],
            success=[op],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=k))]))
        if resp.succeeded:
            return int(resp.header.revision)
        current = resp.responses[0].response_range.kvs
        if not current:
            raise KeyNotFoundError(key)
        raise ConflictError(key, expected, current[0].mod_revision)

    # -- watch ---------------------------------------------------------------------------

    def watch(self, prefix: str, *, start_revision: int) -> AsyncIterator[list[Event]]:
        """See ``KV.watch``; ``start_revision`` <= 0 means "after ``current_revision``"
        (after every write this client has seen; etcd's "now" if not opened yet)."""
        if self._closed:
            raise StorageClosedError("storage is closed")
        if start_revision <= 0 and self._rev:
            start_revision = self._rev + 1
        return self._watch(prefix, start_revision)

    async def _watch(self, prefix: str, start_revision: int) -> AsyncIterator[list[Event]]:
        lo, hi = key_bounds(prefix, prefix=True, end="")
        create = rpc.WatchCreateRequest(key=self._p + lo.encode(),
                                        range_end=self._p + (hi or "").encode(), prev_kv=True)
        next_rev = max(start_revision, 0)  # 0 until the first stream tells us "now"
        backoff = REWATCH_BACKOFF[0]
        while True:
            if self._kv is None:
                await self.open()
            create.start_revision = next_rev
            call = self._watch_stub.Watch()
            self._calls.add(call)
            try:
                await call.write(rpc.WatchRequest(create_request=create))
                while (resp := await call.read()) is not grpc.aio.EOF:
                    if resp.compact_revision:
                        self._observe_compaction(resp.compact_revision)
                        raise CompactedError(next_rev, resp.compact_revision)
                    if resp.canceled:
                        raise StorageError(f"etcd canceled the watch: {resp.cancel_reason}")
                    if resp.created and next_rev == 0:
                        next_rev = resp.header.revision + 1
                    self._observe_revision(resp.header.revision)
                    if resp.events:
                        events = [self._event(e) for e in resp.events]
                        next_rev = events[-1].kv.mod_revision + 1
                        backoff = REWATCH_BACKOFF[0]
                        yield events
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in _RETRY_CODES:
                    raise StorageError(f"etcd watch: {exc.code().name}: {exc.details()}") from exc
                log.warning("etcd watch on %r broke (%s); re-watching from revision %d",
                            prefix, exc.code().name, next_rev)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self._closed and task is not None and not task.cancelling():
                    return
                raise
            finally:
                self._calls.discard(call)
                call.cancel()
            if self._closed:
                return
            await self.clock.sleep(backoff)
            backoff = min(backoff * 2, REWATCH_BACKOFF[1])

    def _event(self, e: Any) -> Event:
        key = e.kv.key[len(self._p):].decode()
        prev = None
        if e.HasField("prev_kv"):
            p = e.prev_kv
            prev = KeyValue(key, p.value, p.create_revision, p.mod_revision)
        if e.type == _EVENT_DELETE:
            value, crev = (prev.value, prev.create_revision) if prev else (b"", 0)
            return Event(EventType.DELETE, KeyValue(key, value, crev, e.kv.mod_revision), prev)
        return Event(EventType.PUT, KeyValue(key, e.kv.value, e.kv.create_revision,
                                             e.kv.mod_revision), prev)

    # -- compaction and lifecycle --------------------------------------------------------

    async def compact(self, revision: int) -> None:
        await self._call("Compact", rpc.CompactionRequest(revision=revision), revision)
        self._observe_compaction(revision)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for call in list(self._calls):
            call.cancel()
        await self._client.close()
