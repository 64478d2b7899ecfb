"""The active faults and where they act on the request path.

``FaultRegistry.serve`` wraps the route of every authorized resource request (app.py):
with no fault set it costs a dict test (and, for a write, one request-log entry). A fault
that answers a request (``error``, ``delay``, ``hang``) acts before the route runs, so an
injected error writes nothing; watch faults act on the stream (``stream.WatchGuard``).

Single writer: everything here runs on the server's event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from datetime import datetime
from typing import Protocol

from kubegc.api import errors
from kubegc.api.auth import Attributes
from kubegc.api.errors import StatusError
from kubegc.registry.generic.stale import read_revision
from kubegc.server.faults.actions import body_name, injected_error
from kubegc.server.faults.model import WATCH_ACTIONS, Fault, parse_fault
from kubegc.server.faults.requestlog import WRITE_VERBS, RequestLog
from kubegc.server.http import AnyResponse, Request

Route = Callable[[], Awaitable[AnyResponse]]

#: the watch request being served, for the watch verb's stream (``stream.WatchGuard``)
current_watch: ContextVar[WatchScope | None] = ContextVar("kubegc_fault_watch", default=None)


class Poked(Protocol):
    """An open watch's guard, told when the faults change."""

    def poke(self) -> None: ...


class WatchScope:
    """A watch request as its faults see it."""

    __slots__ = ("attrs", "faults", "resource_version", "user_agent")

    def __init__(self, faults: FaultRegistry, attrs: Attributes, user_agent: str,
                 resource_version: str) -> None:
        self.faults = faults
        self.attrs = attrs
        self.user_agent = user_agent
        self.resource_version = resource_version


class FaultRegistry:
    def __init__(self, *, now: Callable[[], datetime], revision: Callable[[], int],
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._faults: dict[str, Fault] = {}
        self._ids = itertools.count(1)
        self._revision = revision
        self._monotonic = monotonic
        self.log = RequestLog(now=now, monotonic=monotonic)
        #: the open watches' guards (``stream._Guard``), told when a fault is set
        self.guards: set[Poked] = set()
        #: (monotonic time, storage revision) when it changed, sampled while a
        #: ``staleReads`` fault with ``seconds`` is set (``lagging_revision``)
        self._history: deque[tuple[float, int]] = deque()
        self._sampler: asyncio.Task[None] | None = None

    # -- the API of /debug/kubegc/faults --------------------------------------------

    def add(self, doc: object) -> Fault:
        fault = parse_fault(doc, str(next(self._ids)), self._revision())
        self._faults[fault.id] = fault
        if fault.action.type == "staleReads" and fault.action.seconds:
            self._start_sampling()
        self._notify()
        return fault

    def remove(self, fault_id: str) -> Fault | None:
        fault = self._faults.pop(fault_id, None)
        if fault is not None:
            fault.cleared.set()
            self._notify()
        return fault

    def clear(self) -> None:
        for fault_id in list(self._faults):
            self.remove(fault_id)
        if self._sampler is not None:
            self._sampler.cancel()
            self._sampler = None
            self._history.clear()

    def __iter__(self) -> Iterator[Fault]:
        return iter(list(self._faults.values()))

    def __bool__(self) -> bool:
        return bool(self._faults)

    def fire(self, fault: Fault) -> None:
        """Count one answer of ``fault``; a fault with a ``count`` is gone when used up,
        but a ``hang`` that is stays (matching nothing more) until cleared: what it hung
        goes on then."""
        fault.fired += 1
        if fault.exhausted and fault.action.type != "hang":
            self.remove(fault.id)

    def matching(self, attrs: Attributes, user_agent: str, types: frozenset[str]
                 ) -> Iterator[Fault]:
        for fault in list(self._faults.values()):
            if (fault.action.type in types and not fault.exhausted
                    and fault.match.matches(attrs, user_agent)):
                yield fault

    # -- staleReads: what a lagging view shows -------------------------------------------

    def revision(self) -> int:
        """The storage's current revision."""
        return self._revision()

    def lagging_revision(self, fault: Fault) -> int:
        """The revision the view of ``fault`` shows now: ``revisionsBehind`` behind the
        storage, or the storage's revision ``seconds`` ago (as sampled since the fault was
        set: no older than its revision then)."""
        action = fault.action
        if action.revisions_behind:
            return max(1, self._revision() - action.revisions_behind)
        cutoff = time.monotonic() - action.seconds
        revision = fault.revision
        for at, sampled in self._history:
            if at > cutoff:
                break
            if sampled > revision:
                revision = sampled
        return revision

    def _start_sampling(self) -> None:
        self._history.append((time.monotonic(), self._revision()))
        if self._sampler is None or self._sampler.done():
            self._sampler = asyncio.get_running_loop().create_task(
                self._sample(), name="fault-stale-reads")

    async def _sample(self) -> None:
        """Note the storage's revision while a ``seconds`` fault needs the past; forget
        what no such fault can ask for any more."""
        while True:
            longest = max((f.action.seconds for f in self._faults.values()
                           if f.action.type == "staleReads"), default=0.0)
            if not longest:
                self._history.clear()
                return
            now, revision = time.monotonic(), self._revision()
            if not self._history or self._history[-1][1] != revision:
                self._history.append((now, revision))
            while len(self._history) > 1 and self._history[1][0] < now - longest - 1:
                self._history.popleft()
            await asyncio.sleep(SAMPLE_INTERVAL)

    def _notify(self) -> None:
        for guard in list(self.guards):
            guard.poke()

    # -- the request path -----------------------------------------------------------

    async def serve(self, attrs: Attributes, request: Request, route: Route) -> AnyResponse:
        """``route``'s answer, or the answer of a fault that matches the request."""
        if not attrs.resource_request:
            return await route()
        verb = attrs.verb
        if verb == "watch":
            user_agent = request.headers.get("User-Agent", "")
            token = current_watch.set(WatchScope(
                self, attrs, user_agent, request.query.get("resourceVersion", "")))
            try:
                return await self._faulted(attrs, request, route)
            finally:
                current_watch.reset(token)
        if verb not in WRITE_VERBS:
            if not self._faults:
                return await route()
            return await self._faulted(attrs, request, route)
        # a write, logged here rather than in a helper coroutine (one frame less a write),
        # its entry built inline (one call less; bench/bench_faults.py)
        answered: list[Fault] | None = [] if self._faults else None
        code = 500
        try:
            response = await (route() if answered is None
                              else self._faulted(attrs, request, route, answered))
            code = response.status
            return response
        except StatusError as e:
            code = e.code
            raise
        finally:
            fault = answered[0] if answered else None
            # a create's name: the body's, noted by the create verb, else read here
            self.log.entries.append((
                self._monotonic(), attrs.user.name, request.headers.get("User-Agent", ""), verb,
                attrs.api_group, attrs.resource, attrs.subresource, attrs.namespace,
                attrs.name or request.named or (body_name(request) if fault else ""),
                request.query.get("fieldManager", ""), code, fault.id if fault else None))

    async def _faulted(self, attrs: Attributes, request: Request, route: Route,
                       answered: list[Fault] | None = None) -> AnyResponse:
        if not self._faults:
            return await route()
        user_agent = request.headers.get("User-Agent", "")
        if attrs.verb == "list":
            self._check_expired_list(attrs, user_agent, request.query.get("resourceVersion", ""))
        if attrs.verb in ("get", "list"):
            stale = self._stale(attrs, user_agent, answered)
            if stale:
                token = read_revision.set(stale)
                try:
                    return await self._answered(attrs, request, route, user_agent, answered)
                finally:
                    read_revision.reset(token)
        return await self._answered(attrs, request, route, user_agent, answered)

    def _stale(self, attrs: Attributes, user_agent: str, answered: list[Fault] | None
               ) -> int:
        """The revision a ``staleReads`` fault serves this read at, or 0."""
        for fault in self.matching(attrs, user_agent, _STALE):
            if fault.admits():
                self.fire(fault)
                if answered is not None:
                    answered.append(fault)
                return self.lagging_revision(fault)
        return 0

    async def _answered(self, attrs: Attributes, request: Request, route: Route,
                        user_agent: str, answered: list[Fault] | None) -> AnyResponse:
        for fault in self.matching(attrs, user_agent, _ANSWERING):
            if not fault.admits():
                continue
            self.fire(fault)
            if answered is not None:
                answered.append(fault)
            action = fault.action
            if action.type == "error":
                raise injected_error(fault, attrs, request)
            if action.type == "delay":
                await asyncio.sleep(action.seconds)
            else:  # hang: until the fault is cleared
                await fault.cleared.wait()
            break
        return await route()

    def _check_expired_list(self, attrs: Attributes, user_agent: str, rv: str) -> None:
        """An ``expireWatch`` fault expires LISTs at a resourceVersion older than the
        storage's when it was set: upstream's ``NewResourceExpired`` of a list whose
        continue or resourceVersion the cache no longer has."""
        revision = _revision_of(rv)
        if revision is None:
            return
        for fault in self.matching(attrs, user_agent, _EXPIRING):
            if revision < fault.revision and fault.admits():
                self.fire(fault)
                raise errors.resource_expired(
                    "The resourceVersion for the provided list is too old.")


_ANSWERING = frozenset({"error", "delay", "hang"})
_EXPIRING = frozenset({"expireWatch"})
_STALE = frozenset({"staleReads"})
#: how often the storage's revision is noted for ``staleReads`` with ``seconds``
SAMPLE_INTERVAL = 0.02
assert not (_ANSWERING & WATCH_ACTIONS)


def _revision_of(rv: str) -> int | None:
    """The revision a request's resourceVersion asks for; None for "" and "0" (any)."""
    if not rv or rv == "0" or not rv.isdigit():
        return None
    return int(rv)
