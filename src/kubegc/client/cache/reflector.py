"""List-then-watch one resource into a store (cf. client-go tools/cache/reflector.go).

``Reflector.run`` keeps a store in step with the server, forever:
  1. LIST in pages of ``page_size`` (an expired continue token restarts as one unpaged
     list), filling in each item's ``apiVersion``/``kind`` from the list (real servers omit
     them on items), then ``store.replace(items, list_rv)``;
  2. WATCH from the list's resourceVersion with ``allowWatchBookmarks`` and a random
     ``timeoutSeconds`` in [min_watch_timeout, 2*min_watch_timeout); ADDED/MODIFIED/DELETED
     go to ``store.add/update/delete``, BOOKMARKs only move the resourceVersion;
  3. a watch that ends normally is re-opened from the last resourceVersion seen;
  4. a 410 (ERROR event with code 410, or a StatusError that ``is_gone``) means that
     resourceVersion is no longer served: go back to 1 at once (after a second 410 in a
     row without progress, with backoff);
  5. other failures wait an exponential backoff on the injected clock (0.8 s doubling to
     30 s, reset after 2 min without failures): a failed LIST or an API error in the
     watch relists; a transport error re-watches from the last resourceVersion; a watch
     closed in under 1 s with no event counts as a failure ("very short watch").
"""

from __future__ import annotations

import asyncio
import logging
import random
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError, is_gone
from kubegc.api.meta import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    MODIFIED,
    resource_version_of,
)
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, ListOptions, WatchEvent, WatchOptions

logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 500  # client-go's pager default
MIN_WATCH_TIMEOUT = 300.0  # seconds; client-go's minWatchTimeout (5 min)
_SHORT_WATCH = 1.0  # a watch closed faster than this with no event is a failure


class ReflectorStore(Protocol):
    """Where a Reflector puts what it sees. ``replace`` may yield to the loop (chunking)."""

    @abstractmethod
    def add(self, obj: Obj) -> None: ...

    @abstractmethod
    def update(self, obj: Obj) -> None: ...

    @abstractmethod
    def delete(self, obj: Obj) -> None: ...

    @abstractmethod
    async def replace(self, objs: list[Obj], resource_version: str) -> None: ...


@dataclass(frozen=True, slots=True)
class CachedList:
    """What a LIST would answer, known without asking (``snapshot``): its objects, shaped
    as the reflector's transform shapes them, at ``resource_version``."""

    items: list[Obj]
    resource_version: str


@dataclass
class Backoff:
    """Exponential backoff on a clock (cf. wait.NewExponentialBackoffManager, no jitter)."""

    clock: Clock
    initial: float = 0.8
    cap: float = 30.0
    reset_after: float = 120.0
    factor: float = 2.0
    _next: float = 0.0
    _last: float | None = None

    def next_delay(self) -> float:
        now = self.clock.monotonic()
        if self._last is None or now - self._last > self.reset_after:
            self._next = self.initial
        delay, self._next = self._next, min(self.cap, self._next * self.factor)
        self._last = now
        return delay

    async def wait(self) -> None:
        await self.clock.sleep(self.next_delay())


class _Relist(Exception):
    """The watch's resourceVersion is gone (410): list again."""


class Reflector:
    """Keeps ``store`` equal to the server's view of ``gvr`` (in ``namespace``, or all).

    Ownership: ``run`` (one task) is the only writer of the store through this reflector
    and of ``last_sync_resource_version``.
    """

    def __init__(
        self, client: Client, gvr: GroupVersionResource, store: ReflectorStore, *,
        clock: Clock, namespace: str = "", label_selector: str = "", field_selector: str = "",
        page_size: int = DEFAULT_PAGE_SIZE, transform: Callable[[Obj], Obj] | None = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT, name: str = "",
        initial: CachedList | None = None,
        transform_deleted: Callable[[Obj], Obj] | None = None,
    ) -> None:
        """``initial``: the first LIST's answer, known already: stored as if listed.
        ``transform_deleted``: the transform of a DELETED event's object, when it can be
        cheaper than ``transform`` (that object is not kept); default ``transform``."""
        self.client = client
        self.gvr = gvr
        self.store = store
        self.clock = clock
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.transform = transform
        self.transform_deleted = transform_deleted or transform
        self.min_watch_timeout = min_watch_timeout
        self.name = name or str(gvr)
        self.backoff = Backoff(clock)
        self._last_rv = ""
        self._gone_without_progress = 0
        self._random = random.Random()
        self._initial = initial

    def last_sync_resource_version(self) -> str:
        """The resourceVersion of the last list, event or bookmark applied to the store."""
        return self._last_rv

    async def run(self) -> None:
        """List and watch until cancelled, recovering from every error (see module doc)."""
        while True:
            try:
                await self.list_and_watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every failure is retried: HandleError + backoff
                logger.warning("%s: list/watch failed, will retry: %s", self.name, exc)
                await self.backoff.wait()

    async def list_and_watch(self) -> None:
        """One LIST into the store, then watch until a relist is needed (returns) or an
        API error happens (raises)."""
        initial, self._initial = self._initial, None
        items, rv = (initial.items, initial.resource_version) if initial is not None \
            else await self._list()
        await self.store.replace(items, rv)
        self._last_rv = rv
        try:
            await self._watch_loop()
        except _Relist:
            logger.info("%s: resourceVersion %s is gone: listing again", self.name,
                        self._last_rv)
            self._gone_without_progress += 1
            if self._gone_without_progress > 1:
                await self.backoff.wait()

    async def _list(self) -> tuple[list[Obj], str]:
        items: list[Obj] = []
        cont, limit = "", self.page_size
        while True:
            options = ListOptions(
                label_selector=self.label_selector, field_selector=self.field_selector,
                limit=limit, continue_=cont,
            )
            try:
                page = await self.client.list(self.gvr, namespace=self.namespace, options=options)
            except StatusError as exc:
                if cont and is_gone(exc):  # continue token expired: one full list instead
                    items, cont, limit = [], "", 0
                    continue
                raise
            items.extend(self._list_items(page))
            cont = str((page.get("metadata") or {}).get("continue") or "")
            if not cont or not limit:
                return items, resource_version_of(page)

    def _list_items(self, page: Obj) -> list[Obj]:
        list_kind = str(page.get("kind") or "")
        kind = list_kind.removesuffix("List") if list_kind.endswith("List") else ""
        api_version = str(page.get("apiVersion") or "")
        out: list[Obj] = []
        for item in page.get("items") or []:
            if kind and ("kind" not in item or "apiVersion" not in item):
                item = {"apiVersion": api_version, "kind": kind, **item}
            out.append(self.transform(item) if self.transform else item)
        return out

    async def _watch_loop(self) -> None:
        while True:
            started = self.clock.monotonic()
            try:
                count = await self._watch_once()
            except StatusError as exc:
                if is_gone(exc):
                    raise _Relist from exc
                raise
            except (asyncio.CancelledError, _Relist):
                raise
            except Exception as exc:  # transport failure: the resourceVersion is still good
                logger.info("%s: watch failed, re-watching: %s", self.name, exc)
                await self.backoff.wait()
                continue
            if count == 0 and self.clock.monotonic() - started < _SHORT_WATCH:
                logger.info("%s: very short watch, backing off", self.name)
                await self.backoff.wait()

    async def _watch_once(self) -> int:
        """Consume one watch stream; return how many events it delivered."""
        timeout = int(self.min_watch_timeout * (1 + self._random.random()))
        options = WatchOptions(
            label_selector=self.label_selector, field_selector=self.field_selector,
            resource_version=self._last_rv, allow_bookmarks=True, timeout_seconds=timeout,
        )
        stream = self.client.watch(self.gvr, namespace=self.namespace, options=options)
        count = 0
        try:
            async for event in stream:
                self._handle(event)
                count += 1
                self._gone_without_progress = 0
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:  # release the HTTP response now, not at garbage collection
                await aclose()
        return count

    def _handle(self, event: WatchEvent) -> None:
        obj = event.object
        if event.type == ERROR:
            err = StatusError.from_status(obj)
            if err.code == 410 or is_gone(err):
                raise _Relist
            raise err
        rv = resource_version_of(obj)
        if event.type == BOOKMARK:
            self._last_rv = rv or self._last_rv
            return
        if event.type == DELETED:
            if self.transform_deleted is not None:
                obj = self.transform_deleted(obj)
        elif self.transform is not None:
            obj = self.transform(obj)
        if event.type == ADDED:
            self.store.add(obj)
        elif event.type == MODIFIED:
            self.store.update(obj)
        elif event.type == DELETED:
            self.store.delete(obj)
        if rv:
            self._last_rv = rv
