"""The Status an ``error`` fault answers: the one kube-apiserver writes for that code.

* 409: ``apierrors.NewConflict(gr, name, errors.New(registry.OptimisticLockErrorMsg))``,
  what an update with a stale resourceVersion gets (the object named from the path, or
  from the body of a create);
* 429: ``apierrors.NewTooManyRequests("Too many requests, please try again later.", n)``
  with a ``Retry-After`` header (``responsewriters.ErrorNegotiated``). The message and
  header are the max-in-flight and priority-and-fairness filters' (``tooManyRequests``),
  which write them as plain text; a Status carries the same and ``retryAfterSeconds``,
  and every client reads both alike (client-go waits and retries either);
* 500: ``apierrors.NewInternalError(err)``;
* 503: ``apierrors.NewServiceUnavailable(...)``;
* 504: the ``WithTimeoutForNonLongRunningRequests`` filter's
  ``apierrors.NewTimeoutError("request did not complete within requested timeout -
  context deadline exceeded", 0)``.
"""

from __future__ import annotations

from kubegc.api import errors
from kubegc.api.auth import Attributes
from kubegc.api.errors import GroupResource, StatusError
from kubegc.server.faults.model import Action, Fault
from kubegc.server.http import Request
from kubegc.server.negotiation import decode_body


def injected_error(fault: Fault, attrs: Attributes, request: Request) -> StatusError:
    action = fault.action
    err = _error(action, attrs, request)
    if action.retry_after_seconds and action.code != 429:
        err = StatusError(err.code, err.reason, err.message, name=err.details.name,
                          group=err.details.group, kind=err.details.kind,
                          causes=err.details.causes,
                          retry_after_seconds=action.retry_after_seconds)
    return err


def _error(action: Action, attrs: Attributes, request: Request) -> StatusError:
    if action.code == 409:
        return errors.conflict(GroupResource(attrs.api_group, attrs.resource),
                               attrs.name or body_name(request), errors.OBJECT_MODIFIED)
    if action.code == 429:
        return errors.too_many_requests("Too many requests, please try again later.",
                                        action.retry_after_seconds or 1)
    if action.code == 503:
        return StatusError(503, "ServiceUnavailable",
                           "the server is currently unable to handle the request")
    if action.code == 504:
        return StatusError(504, "Timeout", "Timeout: request did not complete within "
                           "requested timeout - context deadline exceeded",
                           empty_details=True)
    return errors.internal_error("etcdserver: request timed out")


def body_name(request: Request) -> str:
    """The name a create's body gives (a conflict names the object), "" when unreadable."""
    try:
        doc = decode_body(request.body, request.headers.get("Content-Type", ""))
    except Exception:  # an unreadable body is the route's to refuse
        return ""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""
