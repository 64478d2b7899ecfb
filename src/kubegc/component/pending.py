"""What keeps a component busy, for the error of a ``settle()`` that timed out.

Upstream nothing "settles": a controller's work queue retries a failing item with
exponential backoff for ever (client-go's ``DefaultControllerRateLimiter``, 5 ms doubling
to 1000 s), and the last error is only logged (``utilruntime.HandleError``). A test waiting
for kubegc to be quiet needs more than "did not settle": each busy component says how many
items it holds and, for an item retrying, its key and the error of its last attempt
(``LastErrors``, kept by the component beside its queue). ``Pending.line`` is one line of
``settle()``'s error; ``Pending.stuck`` is what ``settle(stuck_after=N)`` asks:
``wait_quiet`` is the loop of ``settle()`` (``kubegc.cluster.Cluster.settle``).

May import: stdlib only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)

#: retrying items named in one line; the rest are counted
SHOWN_RETRYING = 5


class LastError(NamedTuple):
    error: str
    #: consecutive failures with this same error
    times: int


class LastErrors(Generic[K]):
    """The error of each item's last failed attempt, and how many attempts in a row failed
    with it.

    Ownership: the component's workers call ``failed`` when an attempt fails (the item is
    then retried with backoff) and ``succeeded`` when one succeeds or the item is dropped.
    """

    def __init__(self) -> None:
        self._errors: dict[K, LastError] = {}

    def failed(self, item: K, error: BaseException | str) -> None:
        message = str(error) or type(error).__name__
        last = self._errors.get(item)
        times = last.times + 1 if last is not None and last.error == message else 1
        self._errors[item] = LastError(message, times)

    def succeeded(self, item: K) -> None:
        self._errors.pop(item, None)

    def get(self, item: K) -> LastError | None:
        return self._errors.get(item)

    def __len__(self) -> int:
        return len(self._errors)

    def retrying(self, key: Callable[[K], str],
                 where: Callable[[K], bool] | None = None) -> tuple[Retrying, ...]:
        """The items whose last attempt failed (those ``where`` accepts), by key."""
        return tuple(sorted((Retrying(key(i), *e) for i, e in self._errors.items()
                             if where is None or where(i)), key=lambda r: r.key))


class Retrying(NamedTuple):
    """An item waiting for (or in) its next attempt after a failed one."""

    key: str
    error: str
    times: int

    def describe(self) -> str:
        again = f" (failed {self.times} times in a row)" if self.times > 1 else ""
        return f"{self.key}{again}: {self.error}"


@dataclass(frozen=True)
class Pending:
    """What one busy component holds: ``items`` queued, in hand or waiting for a retry
    (``retrying``: those whose last attempt failed, with the error), and ``other`` work
    that is not items (events or records being written, a (re)list being delivered)."""

    component: str
    items: int = 0
    retrying: tuple[Retrying, ...] = ()
    other: tuple[str, ...] = ()

    def line(self) -> str:
        """``garbagecollector: 1 item retrying: v1/ConfigMap ns/x: admission webhook ...``"""
        parts = [self._count()] if self.items or self.retrying else []
        parts += self.other
        text = f"{self.component}: {', '.join(parts) or 'busy'}"
        if self.retrying:
            shown = [r.describe() for r in self.retrying[:SHOWN_RETRYING]]
            more = len(self.retrying) - len(shown)
            text += ": " + "; ".join(shown) + (f"; and {more} more" if more else "")
        return text

    def _count(self) -> str:
        items, retrying = max(self.items, len(self.retrying)), len(self.retrying)
        noun = "item" if items == 1 else "items"
        if retrying == items:
            return f"{items} {noun} retrying"
        if retrying:
            return f"{items} {noun}, {retrying} retrying"
        return f"{items} {noun}"

    def stuck(self, after: int) -> bool:
        """All it holds is items retrying, each after failing ``after`` times or more in a
        row with the same error."""
        return (not self.other and bool(self.retrying) and self.items <= len(self.retrying)
                and all(r.times >= after for r in self.retrying))


class WorkQueue(Protocol):
    """What ``of_queue`` reads of a work queue (``kubegc.client.workqueue.Queue``)."""

    def __len__(self) -> int: ...

    def __contains__(self, item: object) -> bool: ...

    def processing_count(self) -> int: ...


def of_queue(component: str, queue: WorkQueue, errors: LastErrors[str], *,
             waiting: Collection[str] = (), other: Iterable[str] = ()) -> Pending:
    """A component with a queue of string keys: those queued or in hand, and those of
    ``waiting`` (keys it waits for to be retried), each with its last error if it failed."""
    later = [k for k in waiting if k not in queue]
    return Pending(component, items=len(queue) + queue.processing_count() + len(later),
                   retrying=errors.retrying(str, where=lambda k: k in queue or k in waiting),
                   other=tuple(other))


class NotSettledError(TimeoutError):
    """``settle()`` timed out; ``pending`` is what kept the cluster busy, one entry per
    component, each a line of the message."""

    def __init__(self, headline: str, pending: list[Pending]) -> None:
        lines = [p.line() for p in pending] or ["nothing any more: it went quiet just now"]
        super().__init__(headline + "\n" + "\n".join(f"  {line}" for line in lines))
        self.pending = pending


class StuckError(NotSettledError):
    """``settle(stuck_after=N)``: all that kept the cluster busy was items retrying, each
    after failing ``N`` times or more in a row with the same error."""


async def wait_quiet(is_idle: Callable[[], bool], pending: Callable[[], list[Pending]],
                     timeout: float, *, quiet_rounds: int = 3,
                     stuck_after: int | None = None) -> None:
    """Return once ``is_idle()`` held ``quiet_rounds`` checks in a row; raise
    ``NotSettledError`` after ``timeout`` real seconds, or ``StuckError`` as soon as every
    entry of ``pending()`` was ``stuck(stuck_after)`` ``quiet_rounds`` checks in a row."""
    if stuck_after is not None and stuck_after < 1:
        raise ValueError("stuck_after must be at least 1")
    loop = asyncio.get_running_loop()
    real_deadline = loop.time() + timeout
    quiet = stuck = 0
    while quiet < quiet_rounds:
        idle = is_idle()
        quiet = quiet + 1 if idle else 0
        if not idle and stuck_after is not None:
            busy = pending()
            # as quiet, stuck ``quiet_rounds`` times in a row: new work may be on its way
            stuck = stuck + 1 if busy and all(p.stuck(stuck_after) for p in busy) else 0
            if stuck >= quiet_rounds:
                raise StuckError(
                    f"cluster is stuck: all it does is retry, each item after failing "
                    f"{stuck_after} times or more in a row with the same error:", busy)
        if loop.time() > real_deadline:
            raise NotSettledError(f"cluster did not settle within {timeout} s; still busy:",
                                  pending())
        await asyncio.sleep(0.001 if quiet else 0.005)


__all__ = ["LastError", "LastErrors", "NotSettledError", "Pending", "Retrying", "StuckError",
           "WorkQueue", "of_queue", "wait_quiet"]
