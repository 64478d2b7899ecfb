"""The request log of ``GET /debug/kubegc/requests``: every write an HTTP client made
(create, update, patch, delete, deletecollection), with its answer's code and the fault
that answered it, if any — to assert what an operator did (controller-runtime #1633).

Bounded: the newest ``capacity`` writes are kept. Requests of the in-process controllers
(which do not go through HTTP) are not in it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from kubegc.api.clock import format_micro_time
from kubegc.server.http import Request


def note_created_name(request: Request, body: object) -> None:
    """Called by the create verb with the decoded body: the name it gives, for the log.
    (On the request, not in a ContextVar: setting one on every create cost the POSTs of
    bench/bench_faults.py ~2 % of the server's CPU.)"""
    if isinstance(body, dict):
        meta = body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(name, str):
            request.named = name


WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
CAPACITY = 10_000

#: one logged write, as ``FaultRegistry.serve`` builds it on the request path (inline: a
#: call less a write): only strings, numbers and None, so that the tuple is left out of
#: the cyclic GC's scans (a tuple of untracked values is untracked) — (time, user,
#: userAgent, verb, group, resource, subresource, namespace, name, fieldManager, code,
#: fault); ``name`` is the path's, or a create's body's; ``time`` is the cluster clock's
#: ``monotonic()``, made a wall time when read (``RequestLog.select``): the clock's
#: ``now()``, a datetime, cost a POST ~1 % of the server's CPU (bench/bench_faults.py)
Entry = tuple[float, str, str, str, str, str, str, str, str, str, int, "str | None"]
_FIELDS = ("time", "user", "userAgent", "verb", "group", "resource", "subresource",
           "namespace", "name", "fieldManager", "code", "fault")


class RequestLog:
    """The newest ``capacity`` writes (bench/bench_faults.py measures what keeping them
    costs a write: an entry is a tuple built in one step, nothing else is done per write)."""

    def __init__(self, capacity: int = CAPACITY, *,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        """``now`` and ``monotonic``: the cluster's clock, which the entries' times are
        read on."""
        self.entries: deque[Entry] = deque(maxlen=capacity)
        self._now, self._monotonic = now, monotonic

    def __len__(self) -> int:
        return len(self.entries)

    def select(self, user: str | None = None, since: datetime | None = None
               ) -> Iterator[dict[str, Any]]:
        """The kept writes of ``user`` at or after ``since``, oldest first, in the wire
        form of ``GET /debug/kubegc/requests``."""
        wall, mono = self._now(), self._monotonic()
        for e in list(self.entries):
            if user is not None and e[1] != user:
                continue
            when = wall - timedelta(seconds=mono - e[0])
            if since is not None and when < since:
                continue
            doc = dict(zip(_FIELDS, e, strict=True))
            doc["time"] = format_micro_time(when)
            yield doc
