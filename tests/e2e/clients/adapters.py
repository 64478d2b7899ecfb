"""Adapters that let one story drive sync and async clients: a watch read on a thread
(blocking clients) or as a task (async clients), and ``BlockingDriver``, which runs an
``AsyncDriver``'s coroutines on an event loop of its own thread, where the async client
lives."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Protocol, TypeVar

from .story import Kind, Obj, PatchType

T = TypeVar("T")
Event = tuple[str, Obj]


class Collected:
    """Events received by a watch, and the error that ended it, if any."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._error: BaseException | None = None

    def add(self, event: Event) -> None:
        self._events.append(event)

    def fail(self, error: BaseException) -> None:
        self._error = error

    def events(self) -> list[Event]:
        if self._error is not None:
            raise AssertionError(f"the watch failed: {self._error!r}") from self._error
        return list(self._events)


class ThreadWatch(Collected):
    """Reads a blocking event iterator on a daemon thread. ``stop`` takes effect at the
    next event (the story's namespace deletion brings one) or when ``close`` (the client's
    own way of ending a watch, if it has one) ends the iterator."""

    def __init__(self, events: Iterator[Event], *, close: Callable[[], None] | None = None
                 ) -> None:
        super().__init__()
        self._stopped = threading.Event()
        self._close = close
        self._thread = threading.Thread(target=self._read, args=(events,), daemon=True)
        self._thread.start()

    def _read(self, events: Iterator[Event]) -> None:
        try:
            for event in events:
                if self._stopped.is_set():
                    break
                self.add(event)
        except BaseException as e:
            if not self._stopped.is_set():
                self.fail(e)

    def stop(self) -> None:
        self._stopped.set()
        if self._close is not None:
            self._close()


class TaskWatch(Collected):
    """Consumes an async event iterator as a task on ``loop``; ``stop`` cancels it."""

    def __init__(self, loop: LoopThread, events: AsyncIterator[Event]) -> None:
        super().__init__()
        self._loop = loop
        self._future = loop.spawn(self._read(events))

    async def _read(self, events: AsyncIterator[Event]) -> None:
        try:
            async for event in events:
                self.add(event)
        except asyncio.CancelledError:
            raise
        except BaseException as e:
            self.fail(e)

    def stop(self) -> None:
        self._future.cancel()


class LoopThread:
    """An event loop running on a thread of its own, for the async client under test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> LoopThread:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.run(_cancel_others())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def spawn(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 90) -> T:
        return self.spawn(coro).result(timeout)


async def _cancel_others() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class AsyncDriver(Protocol):
    """``story.Driver`` for an async client: the same calls, as coroutines."""

    namespace: str

    async def create(self, obj: Obj) -> Obj: ...

    async def get(self, kind: Kind, name: str) -> Obj | None: ...

    async def list(self, kind: Kind, *, label_selector: str) -> list[Obj]: ...

    async def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj: ...

    async def apply(self, obj: Obj, *, field_manager: str) -> Obj: ...

    async def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None: ...

    async def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None: ...

    def watch(self, kind: Kind, *, label_selector: str) -> AsyncIterator[Event]: ...


class BlockingDriver:
    """A ``story.Driver`` that runs an ``AsyncDriver`` on ``loop``."""

    def __init__(self, inner: AsyncDriver, loop: LoopThread) -> None:
        self.inner = inner
        self.loop = loop
        self.namespace = inner.namespace

    def create(self, obj: Obj) -> Obj:
        return self.loop.run(self.inner.create(obj))

    def get(self, kind: Kind, name: str) -> Obj | None:
        return self.loop.run(self.inner.get(kind, name))

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        return self.loop.run(self.inner.list(kind, label_selector=label_selector))

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return self.loop.run(self.inner.patch(kind, name, patch, patch_type))

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return self.loop.run(self.inner.apply(obj, field_manager=field_manager))

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        self.loop.run(self.inner.delete(kind, name, propagation_policy=propagation_policy))

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        self.loop.run(self.inner.wait_deleted(kind, name, timeout=timeout), timeout + 10)

    def watch(self, kind: Kind, *, label_selector: str) -> TaskWatch:
        return TaskWatch(self.loop, self.inner.watch(kind, label_selector=label_selector))
