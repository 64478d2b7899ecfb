"""The request log of ``GET /debug/kubegc/requests``: every write an HTTP client made
(create, update, patch, delete, deletecollection), with its answer's code and the fault
that answered it, if any — to assert what an operator did (controller-runtime #1633).

Bounded: the newest ``capacity`` writes are kept. Requests of the in-process controllers
(which do not go through HTTP) are not in it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubegc.api.auth import Attributes
from kubegc.api.clock import format_micro_time

#: the name a create's body gives, noted by the create verb (which decodes the body
#: anyway) for the request log; None outside a logged create
created_name: ContextVar[list[str] | None] = ContextVar("kubegc_created_name", default=None)


def note_created_name(body: object) -> None:
    """Called by the create verb with the decoded body."""
    holder = created_name.get()
    if holder is not None and isinstance(body, dict):
        meta = body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(name, str):
            holder.append(name)


WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
CAPACITY = 10_000


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs twice as much,
class LoggedRequest:    # on every write (bench/bench_faults.py); nothing mutates one
    time: datetime
    attrs: Attributes
    user_agent: str
    field_manager: str
    code: int
    fault: str | None
    name: str  # the path's, or a create's body's

    def to_dict(self) -> dict[str, Any]:
        a = self.attrs
        return {"time": format_micro_time(self.time), "user": a.user.name,
                "userAgent": self.user_agent, "verb": a.verb, "group": a.api_group,
                "resource": a.resource, "subresource": a.subresource,
                "namespace": a.namespace, "name": self.name,
                "fieldManager": self.field_manager, "code": self.code, "fault": self.fault}


class RequestLog:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._entries: deque[LoggedRequest] = deque(maxlen=capacity)

    def append(self, entry: LoggedRequest) -> None:
        self._entries.append(entry)

    def select(self, user: str | None = None, since: datetime | None = None
               ) -> Iterator[LoggedRequest]:
        for entry in self._entries:
            if user is not None and entry.attrs.user.name != user:
                continue
            if since is not None and entry.time < since:
                continue
            yield entry
