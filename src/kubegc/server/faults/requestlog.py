"""The request log of ``GET /debug/kubegc/requests``: every write an HTTP client made
(create, update, patch, delete, deletecollection), with its answer's code and the fault
that answered it, if any — to assert what an operator did (controller-runtime #1633).

Bounded: the newest ``capacity`` writes are kept. Requests of the in-process controllers
(which do not go through HTTP) are not in it.
"""

from __future__ import annotations

import itertools
from array import array
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from kubegc.api.auth import Attributes
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
#: writes kept as built before they are packed together (``RequestLog.pack``)
CHUNK = 256

#: one logged write, as written on the request path: only strings, an int, a datetime and
#: None — (time, user, userAgent, verb, group, resource, subresource, namespace, name,
#: fieldManager, code, fault)
Entry = tuple[datetime, str, str, str, str, str, str, str, str, str, int, "str | None"]
_FIELDS = ("time", "user", "userAgent", "verb", "group", "resource", "subresource",
           "namespace", "name", "fieldManager", "code", "fault")
#: separators of a packed chunk's text: between an entry's strings, and between entries
_UNIT, _RECORD = "\x1f", "\x1e"


def entry(time: datetime, attrs: Attributes, user_agent: str, field_manager: str, code: int,
          fault: str | None, name: str) -> Entry:
    """A write as the log keeps it; ``name`` is the path's, or a create's body's."""
    return (time, attrs.user.name, user_agent, attrs.verb, attrs.api_group, attrs.resource,
            attrs.subresource, attrs.namespace, name, field_manager, code, fault)


class _Chunk:
    """``CHUNK`` writes packed: their times and codes in arrays, their strings joined in
    one ``str`` — three objects where the tuples were ~5 objects a write."""

    __slots__ = ("codes", "faults", "size", "text", "times")

    def __init__(self, rows: list[Entry]) -> None:
        self.size = len(rows)
        self.times = array("d", [row[0].timestamp() for row in rows])
        self.codes = array("H", [row[10] for row in rows])
        self.faults = {i: row[11] for i, row in enumerate(rows) if row[11] is not None}
        self.text = _RECORD.join([_UNIT.join(row[1:10]) for row in rows])

    def __len__(self) -> int:
        return self.size

    def intact(self) -> bool:
        """False when a string held a separator (a name or user agent with control
        characters): the text then cannot be split back."""
        return (self.text.count(_RECORD) == self.size - 1
                and self.text.count(_UNIT) == self.size * 8)

    def rows(self) -> Iterator[Entry]:
        for i, record in enumerate(self.text.split(_RECORD)):
            (user, agent, verb, group, resource, subresource, namespace, name,
             manager) = record.split(_UNIT)
            yield (datetime.fromtimestamp(self.times[i], UTC), user, agent, verb, group,
                   resource, subresource, namespace, name, manager, self.codes[i],
                   self.faults.get(i))


class RequestLog:
    """The newest ``capacity`` writes. A write appends its ``Entry`` to ``recent`` (the one
    thing done per write); every ``CHUNK`` writes they are packed into a ``_Chunk``, and
    the oldest chunks dropped once the rest hold ``capacity``: keeping 10,000 writes as
    tuples of fresh strings cost a POST ~1 % of the server's CPU (bench/bench_faults.py),
    freeing the oldest's objects, long out of the CPU's caches, one write at a time."""

    def __init__(self, capacity: int = CAPACITY, chunk: int = CHUNK) -> None:
        self.capacity = capacity
        self.chunk = chunk
        #: the newest writes, fewer than ``chunk``, as built on the request path
        self.recent: list[Entry] = []
        self._chunks: deque[_Chunk | list[Entry]] = deque()
        self._packed = 0  # entries in _chunks

    def append(self, row: Entry) -> None:
        self.recent.append(row)
        if len(self.recent) >= self.chunk:
            self.pack()

    def pack(self) -> None:
        """Pack ``recent`` into a chunk; drop the chunks no longer among the newest
        ``capacity``."""
        rows, self.recent = self.recent, []
        packed = _Chunk(rows)
        self._chunks.append(packed if packed.intact() else rows)
        self._packed += len(rows)
        while self._chunks and self._packed - len(self._chunks[0]) >= self.capacity:
            self._packed -= len(self._chunks.popleft())

    def __len__(self) -> int:
        return min(self.capacity, self._packed + len(self.recent))

    def _rows(self) -> Iterator[Entry]:
        skip = self._packed + len(self.recent) - self.capacity
        for chunk in list(self._chunks):
            size = len(chunk)
            if skip >= size:
                skip -= size
                continue
            rows = chunk.rows() if isinstance(chunk, _Chunk) else iter(chunk)
            yield from itertools.islice(rows, max(skip, 0), None)
            skip = 0
        yield from itertools.islice(list(self.recent), max(skip, 0), None)

    def select(self, user: str | None = None, since: datetime | None = None
               ) -> Iterator[dict[str, Any]]:
        """The kept writes of ``user`` at or after ``since``, oldest first, in the wire
        form of ``GET /debug/kubegc/requests``."""
        for e in self._rows():
            if user is not None and e[1] != user:
                continue
            if since is not None and e[0] < since:
                continue
            doc = dict(zip(_FIELDS, e, strict=True))
            doc["time"] = format_micro_time(e[0])
            yield doc
