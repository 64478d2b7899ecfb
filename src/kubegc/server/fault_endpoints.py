"""``/debug/kubegc/faults[/{id}]``, ``/debug/kubegc/requests`` and
``/debug/kubegc/controllers[/{name}]``: for ``system:masters``
only (a user another group or RBAC lets reach ``/debug/*`` still gets 403)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import orjson

from kubegc.api import errors
from kubegc.api.auth import SYSTEM_PRIVILEGED_GROUP, Attributes, UserInfo, request_user
from kubegc.api.clock import parse_time
from kubegc.server.context import DebugHandler, json_response
from kubegc.server.faults.model import Fault
from kubegc.server.faults.registry import FaultRegistry
from kubegc.server.http import AnyResponse, Request

FAULTS_PATH = "/debug/kubegc/faults"
REQUESTS_PATH = "/debug/kubegc/requests"


def require_masters(request: Request) -> None:
    """403 unless the request's user is in ``system:masters``."""
    user = request_user() or UserInfo("system:anonymous")
    if not user.in_group(SYSTEM_PRIVILEGED_GROUP):
        raise errors.forbidden_request(
            Attributes(user=user, verb=request.method.lower(), resource_request=False,
                       path=request.path), "only system:masters may use /debug/kubegc")


def faults_handler(faults: FaultRegistry) -> DebugHandler:
    async def handle(request: Request) -> AnyResponse:
        require_masters(request)
        fault_id = request.path.rstrip("/")[len(FAULTS_PATH):].strip("/")
        method = request.method
        if method in ("GET", "HEAD"):
            if fault_id:
                return json_response(_found(faults, fault_id).to_dict())
            return json_response({"items": [f.to_dict() for f in faults]})
        if method == "POST" and not fault_id:
            try:
                doc = orjson.loads(await request.read() or b"null")
            except orjson.JSONDecodeError as e:
                raise errors.bad_request(f"the fault is not JSON: {e}") from None
            return json_response(faults.add(doc).to_dict(), 201)
        if method == "DELETE":
            if fault_id:
                _found(faults, fault_id)
                faults.remove(fault_id)
            else:
                faults.clear()
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "code": 200})
        raise errors.StatusError(405, "MethodNotAllowed",
                                 f"{method} is not supported on {request.path}")
    return handle


def _found(faults: FaultRegistry, fault_id: str) -> Fault:
    for fault in faults:
        if fault.id == fault_id:
            return fault
    raise errors.StatusError(404, "NotFound", f'fault "{fault_id}" not found')


def requests_handler(faults: FaultRegistry) -> DebugHandler:
    async def handle(request: Request) -> AnyResponse:
        require_masters(request)
        q = request.query
        since: datetime | None = None
        if q.get("since"):
            try:
                since = parse_time(q["since"])
            except ValueError:
                raise errors.bad_request(f"since: not an RFC 3339 time: {q['since']!r}"
                                         ) from None
        entries = faults.log.select(user=q.get("user") or None, since=since)
        return json_response({"items": list(entries)})
    return handle


CONTROLLERS_PATH = "/debug/kubegc/controllers"


def controllers_handler(paused: Callable[[], dict[str, bool]],
                        pause: Callable[[str, bool], None]) -> DebugHandler:
    """``GET /debug/kubegc/controllers`` → ``{"items": [{"name", "paused"}]}``;
    ``POST /debug/kubegc/controllers/{name}`` ``{"paused": bool}`` pauses or resumes one
    (the composition root hands the controller manager's ``paused`` and ``pause``)."""
    async def handle(request: Request) -> AnyResponse:
        require_masters(request)
        name = request.path.rstrip("/")[len(CONTROLLERS_PATH):].strip("/")
        states = paused()
        if request.method in ("GET", "HEAD") and not name:
            return json_response({"items": [{"name": n, "paused": p}
                                            for n, p in states.items()]})
        if name not in states:
            raise errors.StatusError(404, "NotFound", f'controller "{name}" not found')
        if request.method in ("GET", "HEAD"):
            return json_response({"name": name, "paused": states[name]})
        if request.method not in ("POST", "PUT"):
            raise errors.StatusError(405, "MethodNotAllowed",
                                     f"{request.method} is not supported on {request.path}")
        try:
            doc = orjson.loads(await request.read() or b"null")
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("paused"), bool):
            raise errors.bad_request('the body must be {"paused": true|false}')
        pause(name, doc["paused"])
        return json_response({"name": name, "paused": doc["paused"]})
    return handle
