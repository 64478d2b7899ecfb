"""``cluster.faults``, ``cluster.paused(...)``, ``cluster.requests(...)`` and the seed's
accidents, for tests of operators (issue 25; docs/faults.md has a recipe per fault).

    with cluster.faults.conflicts(on="configmaps", times=3):
        ...                                  # the next 3 writes of configmaps answer 409
    with cluster.paused("garbagecollector"):
        ...                                  # the GC does nothing; resumes on exit
    cluster.requests(user="system:serviceaccount:ops:operator")

Every context manager clears what it set when it exits. ``on`` is a resource name
(``"configmaps"``) or a match object (``{"resource": "pods", "verb": "delete"}``, the
fields of ``POST /debug/kubegc/faults``). Faults act on HTTP requests (kubectl, the
official client, kopf — what an operator under test uses); the in-process
``cluster.client`` goes around the API server's handler chain and sees none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, TypeVar

from kubegc.api.clock import format_micro_time
from kubegc.server.faults import FaultRegistry

T = TypeVar("T")
On = str | Mapping[str, Any] | None

#: the verbs that write (what ``conflicts`` applies to unless ``on`` names verbs)
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def match_of(on: On, **extra: str) -> dict[str, Any]:
    """The match object of ``on`` (a resource name, or a match object as it is)."""
    match: dict[str, Any] = {}
    if isinstance(on, str):
        match["resource"] = on
    elif on is not None:
        match.update(on)
    match.update(extra)
    return match


class Faults:
    """The cluster's fault registry, from the test's thread (``call`` runs on the loop)."""

    def __init__(self, registry: Callable[[], FaultRegistry],
                 call: Callable[[Callable[[], Any]], Any]) -> None:
        self._registry = registry
        self._call = call

    # -- the API of POST/GET/DELETE /debug/kubegc/faults ---------------------------------

    def add(self, fault: Mapping[str, Any]) -> dict[str, Any]:
        """Set a fault (the object of ``POST /debug/kubegc/faults``); its answer, with
        ``id`` and ``fired``."""
        answer: dict[str, Any] = self._call(lambda: self._registry().add(dict(fault)).to_dict())
        return answer

    def remove(self, fault_id: str) -> None:
        self._call(lambda: self._registry().remove(fault_id))

    def clear(self) -> None:
        self._call(lambda: self._registry().clear())

    def items(self) -> list[dict[str, Any]]:
        """The active faults, with how many times each fired."""
        items: list[dict[str, Any]] = self._call(
            lambda: [f.to_dict() for f in self._registry()])
        return items

    def fired(self, fault_id: str) -> int:
        """How many times the fault answered so far; -1 once it is gone (cleared, or its
        ``count`` used up)."""
        for fault in self.items():
            if fault["id"] == fault_id:
                return int(fault["fired"])
        return -1

    # -- context managers that clear themselves -------------------------------------------

    @contextlib.contextmanager
    def inject(self, fault: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """``fault`` while the block runs."""
        answer = self.add(fault)
        try:
            yield answer
        finally:
            self.remove(answer["id"])  # gone already when its count is used up: no-op

    def conflicts(self, on: On = None, times: int = 0
                  ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Writes matching ``on`` answer 409 Conflict, as for a stale resourceVersion
        (``times``: that many, 0: all), and write nothing."""
        return self.errors(409, on=on, times=times)

    def errors(self, code: int, on: On = None, times: int = 0, *, retry_after: int = 0,
               probability: float = 1.0, after: int = 0
               ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Requests matching ``on`` answer ``code`` (409, 429, 500, 503, 504) as
        kube-apiserver writes it, ``times`` times (0: while the block runs), after letting
        ``after`` through; without a verb in ``on``, only writes (``WRITES``) do."""
        action: dict[str, Any] = {"type": "error", "code": code}
        if retry_after:
            action["retryAfterSeconds"] = retry_after
        base = match_of(on)
        if "verb" not in base and "verbs" not in base:
            base["verbs"] = list(WRITES)
        return self.inject({"match": base, "action": action, "count": times,
                            "probability": probability, "afterRequests": after})

    def delay(self, seconds: float, on: On = None
              ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        return self.inject({"match": match_of(on),
                            "action": {"type": "delay", "seconds": seconds}})

    def hang(self, on: On = None
             ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Matching requests and watches never answer while the block runs."""
        return self.inject({"match": match_of(on), "action": {"type": "hang"}})

    def close_watches(self, after_events: int = 0, on: On = None
                      ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        return self.inject({"match": match_of(on, verb="watch"),
                            "action": {"type": "closeWatch", "afterEvents": after_events}})

    def expire_watches(self, on: On = None
                       ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Open and new watches get ``ERROR`` 410 Expired (and LISTs at an older
        resourceVersion 410): the client must relist."""
        return self.inject({"match": match_of(on),
                            "action": {"type": "expireWatch"}})

    def stale_reads(self, on: On = None, *, revisions_behind: int = 0, seconds: float = 0.0
                    ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """GETs, LISTs and watches matching ``on`` see a view that lags by
        ``revisions_behind`` writes or ``seconds`` (one of the two), as from an apiserver
        whose cache lags behind its storage."""
        return self.inject({"match": match_of(on),
                            "action": stale_reads_action(revisions_behind, seconds)})


def stale_reads_action(revisions_behind: int, seconds: float) -> dict[str, Any]:
    action: dict[str, Any] = {"type": "staleReads"}
    if revisions_behind:
        action["revisionsBehind"] = revisions_behind
    if seconds:
        action["seconds"] = seconds
    return action


def request_items(registry: FaultRegistry, user: str | None, since: datetime | None
                  ) -> list[dict[str, Any]]:
    return list(registry.log.select(user=user, since=since))


def rfc3339(t: datetime) -> str:
    return format_micro_time(t)
