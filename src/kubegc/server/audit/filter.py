"""Auditing one request, as kube-apiserver's ``WithAudit`` and
``WithFailedAuthenticationAudit`` filters do (``endpoints/filters/audit.go``,
``audit/request.go``). The policy is evaluated on the authenticated user's request (the
filter runs between authentication and impersonation); a request at level ``None`` costs
nothing more. Events: ``RequestReceived``; ``ResponseStarted`` when a long-running response
(a watch) sends its head; ``ResponseComplete`` when the handler returns — also when the
client went away or the handler failed (``Panic``, with upstream's 500 status). A request
that failed to authenticate gives one ``ResponseStarted`` event with the 401.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from kubegc.api.auth import Attributes, Decision, UserInfo
from kubegc.api.clock import Clock
from kubegc.registry.typed import yamlload
from kubegc.server.audit.event import Event, object_ref, truncate_user_agent
from kubegc.server.audit.log import LogBackend
from kubegc.server.audit.policy import Level, Policy, RequestAuditConfig, Stage
from kubegc.server.http import AnyResponse, Request, Response

#: the request and response header of the event's id (``auditinternal.HeaderAuditID``)
HEADER_AUDIT_ID = "Audit-Id"
DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"
_DECISIONS = {Decision.ALLOW: "allow", Decision.DENY: "forbid", Decision.NO_OPINION: "forbid"}
_BODY_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass
class Auditor:
    """The configured policy and backend (``--audit-policy-file``, ``--audit-log-*``)."""

    policy: Policy
    backend: LogBackend
    clock: Clock

    def begin(self, request: Request, attrs: Attributes) -> RequestAudit | None:
        """The audit of an authenticated request, its ``RequestReceived`` written; None
        when the policy says ``None``."""
        config = self.policy.evaluate(attrs)
        if config.level is Level.NONE:
            return None
        audit = RequestAudit(self, config, self._event(request, config.level, attrs))
        audit.emit(Stage.REQUEST_RECEIVED)
        return audit

    def begin_call(self, attrs: Attributes, request_uri: str,
                   user_agent: str) -> RequestAudit | None:
        """The audit of an in-process client's call (a controller's request, which
        upstream makes over HTTP from kube-controller-manager), as ``begin``."""
        config = self.policy.evaluate(attrs)
        if config.level is Level.NONE:
            return None
        event = Event(level=config.level, audit_id=str(uuid.uuid4()),
                      request_uri=request_uri, verb=attrs.verb, received=self.clock.now(),
                      user=attrs.user, source_ips=("127.0.0.1",),
                      user_agent=truncate_user_agent(user_agent), object_ref=object_ref(attrs))
        audit = RequestAudit(self, config, event)
        audit.emit(Stage.REQUEST_RECEIVED)
        return audit

    def failed_authentication(self, request: Request, response: Response) -> None:
        """``WithFailedAuthenticationAudit``: a 401's one event."""
        config = self.policy.evaluate(None)
        if config.level is Level.NONE:
            return
        event = self._event(request, config.level, None)
        event.response_status = {"metadata": {}, "message": _auth_methods(request),
                                 "code": response.status}
        RequestAudit(self, config, event).emit(Stage.RESPONSE_STARTED)

    def _event(self, request: Request, level: Level, attrs: Attributes | None) -> Event:
        verb = attrs.verb if attrs is not None else request.method.lower()
        ref = object_ref(attrs) if attrs is not None and attrs.resource_request else None
        return Event(level=level, audit_id=request.headers.get(HEADER_AUDIT_ID)
                     or str(uuid.uuid4()), request_uri=request.path_qs, verb=verb,
                     received=self.clock.now(), user=attrs.user if attrs else None,
                     source_ips=source_ips(request),
                     user_agent=truncate_user_agent(request.headers.get("User-Agent", "")),
                     object_ref=ref)


class RequestAudit:
    """The event of one request as it is filled in."""

    def __init__(self, auditor: Auditor, config: RequestAuditConfig, event: Event) -> None:
        self.auditor = auditor
        self.config = config
        self.event = event
        self._started = False

    def emit(self, stage: Stage) -> None:
        """``processAuditEvent``: stamp and write, unless the policy omits the stage."""
        if stage in self.config.omit_stages:
            return
        self.event.stage = stage
        self.event.stage_time = (self.event.received if stage is Stage.REQUEST_RECEIVED
                                 else self.auditor.clock.now())
        self.auditor.backend.process(self.event)

    def impersonated(self, user: UserInfo) -> None:
        self.event.impersonated_user = user

    def authorized(self, decision: Decision, reason: str) -> None:
        self.event.annotations[DECISION_ANNOTATION] = _DECISIONS[decision]
        self.event.annotations[REASON_ANNOTATION] = reason

    def stream_started(self, status: int) -> None:
        """A long-running response sent its head: ``ResponseStarted``."""
        self._started = True
        self.event.response_status = {"metadata": {}, "code": status}
        self.emit(Stage.RESPONSE_STARTED)

    def complete(self, request: Request, response: AnyResponse | None) -> None:
        """``ResponseComplete`` (None: the client went away mid-response)."""
        request_object = response_object = None
        if self.event.level >= Level.REQUEST and self.event.verb in _BODY_VERBS:
            request_object = _decoded(request.body, request.headers.get("Content-Type", ""))
        if isinstance(response, Response):
            status = _response_status(response)
            if self.event.level >= Level.REQUEST_RESPONSE:
                response_object = _decoded(response.body, response.content_type or "")
        else:
            status = self.event.response_status or {
                "metadata": {}, "status": "Success", "message": "Connection closed early",
                "code": 200}
        self.finish(status, request_object, response_object)

    def finish(self, status: dict[str, Any], request_object: Any = None,
               response_object: Any = None) -> None:
        """``ResponseComplete`` with the response's status and, as the level asks, the
        request's and the response's objects (JSON values, not shared)."""
        self.event.response_status = status
        if self.event.level >= Level.REQUEST and self.event.verb in _BODY_VERBS:
            self.event.request_object = request_object
        if self.event.level >= Level.REQUEST_RESPONSE:
            self.event.response_object = response_object
        if self.config.omit_managed_fields:
            for obj in (self.event.request_object, self.event.response_object):
                _drop_managed_fields(obj)
        self.emit(Stage.RESPONSE_COMPLETE)

    def panic(self, error: BaseException) -> None:
        self.event.response_status = {"metadata": {}, "status": "Failure",
                                      "message": f"APIServer panic'd: {error}",
                                      "reason": "InternalError", "code": 500}
        self.emit(Stage.PANIC)


def _decoded(body: bytes, content_type: str) -> Any:
    """A body as JSON for the event (``runtime.Unknown`` in JSON), or None when it is not
    JSON or YAML (protobuf bodies are not logged)."""
    if not body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    if "yaml" not in content_type:
        return None
    try:
        return yamlload.safe_load(body)
    except (yaml.YAMLError, RecursionError):  # too deep: the request itself is refused
        return None


def status_of(status: Mapping[str, Any], code: int) -> dict[str, Any]:
    """``LogResponseObject``'s bounded copy of a Status."""
    copied = {k: status[k] for k in ("status", "message", "reason", "details")
              if status.get(k)}
    return {"metadata": {}, **copied, "code": code}


def _response_status(response: Response) -> dict[str, Any]:
    """``LogResponseObject``'s bounded copy of a Status, else the code alone."""
    body = response.body
    if body.startswith(b'{"kind":"Status"'):
        try:
            return status_of(orjson.loads(body), response.status)
        except orjson.JSONDecodeError:
            pass
    return {"metadata": {}, "code": response.status}


def _drop_managed_fields(obj: Any) -> None:
    if not isinstance(obj, dict):
        return
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    for item in obj.get("items") or ():
        _drop_managed_fields(item)


def source_ips(request: Request) -> tuple[str, ...]:
    """``utilnet.SourceIPs``: X-Forwarded-For, X-Real-Ip, then the connection's peer,
    each once."""
    ips: list[str] = []
    for hop in (request.headers.get("X-Forwarded-For") or "").split(","):
        if hop.strip():
            ips.append(hop.strip())
    real = (request.headers.get("X-Real-Ip") or "").strip()
    if real:
        ips.append(real)
    peer = _peer(request.connection)
    if peer:
        ips.append(peer)
    return tuple(dict.fromkeys(ips))


def _peer(connection: object) -> str:
    transport = getattr(connection, "transport", None)
    if transport is None:
        return ""
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if peer else ""


def _auth_methods(request: Request) -> str:
    """``getAuthMethods``: which credentials a request that failed authentication
    carried."""
    methods = []
    auth = (request.headers.get("Authorization") or "").strip()
    scheme = auth.split(" ", 1)[0].lower() if " " in auth else ""
    if scheme == "basic":
        methods.append("basic")
    if scheme == "bearer":
        methods.append("bearer")
    query: Mapping[str, str] = request.query
    if (query.get("access_token") or "").strip():
        methods.append("access_token")
    if request.peer_certificate is not None:
        methods.append("x509")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"
