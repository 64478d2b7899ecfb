"""What a component does with a failed sync (cf. upstream's ``handleErr`` in each
controller): retry it with the work queue's exponential backoff (5 ms doubling to 1000 s).

A failure that is not the API's (a conflict, a 404, a timeout are part of normal operation)
means the component could not understand its object (``kubegc.component.fields``), or the
API refused what it made of it (400, 422), or it failed on it: that is recorded as a Warning
event ``FailedSync`` on the object (the recorder counts repeats), and until the object
itself changes, the informer events that would queue it again wait for the backoff. So a
component never loops on an object it cannot understand, and keeps serving the others; a
fixed object is synced at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar

import orjson

from kubegc.api.errors import StatusError, is_bad_request, is_invalid
from kubegc.api.types import Obj
from kubegc.client.events import EVENT_TYPE_WARNING, EventRecorder
from kubegc.component.fields import NotUnderstood
from kubegc.component.pending import LastErrors

log = logging.getLogger(__name__)

#: the reason of the Warning event about an object a component failed to sync
FAILED_SYNC_REASON = "FailedSync"

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class RetryQueue(Protocol[K_contra]):
    def add(self, item: K_contra) -> None: ...

    def add_rate_limited(self, item: K_contra) -> None: ...


def fingerprint(obj: Obj) -> bytes:
    """What the object says, leaving out what changes without its author (status, the
    resourceVersion and managedFields): a changed fingerprint is a change worth a retry."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in ("resourceVersion", "managedFields")}
    body = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    return orjson.dumps([meta, body], option=orjson.OPT_SORT_KEYS, default=str)


def is_api_error(err: Exception, expected: tuple[type[Exception], ...]) -> bool:
    """An error of normal operation: one of ``expected``, but not the API refusing the
    request itself (400, 422: retrying the same request cannot help)."""
    return isinstance(err, expected) and not (
        isinstance(err, StatusError) and (is_bad_request(err) or is_invalid(err)))


class FailedSyncs:
    """The keys whose last sync failed on their object, with its fingerprint then.

    Ownership: the component's workers call ``failed`` and ``succeeded``; its handlers
    call ``add`` instead of the queue's.
    """

    def __init__(self, name: str, queue: RetryQueue[str], *,
                 lookup: Callable[[str], Obj | None],
                 recorder: Callable[[Obj], EventRecorder],
                 expected: tuple[type[Exception], ...] = (StatusError,)) -> None:
        self.name = name
        self.queue = queue
        self.lookup = lookup
        self.recorder = recorder
        self.expected = expected
        self._failed: dict[str, bytes] = {}
        #: every failed key's last error (``kubegc.component.pending``), until it succeeds
        self.errors: LastErrors[str] = LastErrors()

    def failed(self, err: Exception, key: str) -> None:
        """``handleErr``: log, maybe record, and retry ``key`` with the backoff."""
        self.errors.failed(key, err)
        if is_api_error(err, self.expected):
            log.info("%s: error syncing %r, requeuing: %s", self.name, key, err)
        else:
            log.warning("%s: error syncing %r, requeuing: %s", self.name, key, err,
                        exc_info=not isinstance(err, (ValueError, RuntimeError, StatusError)))
            obj = self.lookup(key)
            if obj is not None:
                self._failed[key] = fingerprint(obj)
                what = "cannot understand it" if isinstance(err, NotUnderstood) else "error"
                self.recorder(obj).event(obj, EVENT_TYPE_WARNING, FAILED_SYNC_REASON,
                                         f"{self.name}: {what}: {err}")
        self.queue.add_rate_limited(key)

    def succeeded(self, key: str) -> None:
        self._failed.pop(key, None)
        self.errors.succeeded(key)

    def add(self, key: str) -> None:
        """Queue ``key`` now, unless its last sync failed on the object as it still is:
        its retry is already scheduled by the backoff."""
        failed = self._failed.get(key)
        if failed is not None:
            current = self.lookup(key)
            if current is not None and fingerprint(current) == failed:
                return
            del self._failed[key]
        self.queue.add(key)

    def __contains__(self, key: str) -> bool:
        return key in self._failed
