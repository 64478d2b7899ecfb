"""One audit event (``audit.k8s.io/v1`` ``Event``) and its two line formats, as
kube-apiserver's log backend writes them (``plugin/pkg/audit/log/backend.go``): ``json``,
the event encoded as upstream's serializer encodes it (Go's field order, empty fields
left out, HTML characters escaped, one event per line), and ``legacy``
(``audit.EventString``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from kubegc.api.auth import Attributes, UserInfo
from kubegc.api.clock import format_micro_time
from kubegc.api.goformat import go_quote, html_escape
from kubegc.server.audit.policy import GROUP_VERSION, Level, Stage

#: ``maxUserAgentLength`` and its suffix (``audit/request.go``)
MAX_USER_AGENT = 1024
TRUNCATED = "...TRUNCATED"


def user_info(user: UserInfo) -> dict[str, Any]:
    """``authenticationv1.UserInfo`` as JSON: username, uid, groups, extra (empty
    fields left out)."""
    doc: dict[str, Any] = {"username": user.name}
    if user.uid:
        doc["uid"] = user.uid
    if user.groups:
        doc["groups"] = list(user.groups)
    if user.extra:
        doc["extra"] = {k: list(v) for k, v in user.extra.items()}
    return doc


def object_ref(attrs: Attributes) -> dict[str, str]:
    """``audit.ObjectReference`` of a resource request, in Go's field order."""
    ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name,
           "apiGroup": attrs.api_group, "apiVersion": attrs.api_version,
           "subresource": attrs.subresource}
    return {k: v for k, v in ref.items() if v}


@dataclass(slots=True)
class Event:
    """``auditinternal.Event``: filled in as the request goes through the server."""

    level: Level
    audit_id: str
    request_uri: str
    verb: str
    received: datetime
    user: UserInfo | None = None
    source_ips: tuple[str, ...] = ()
    user_agent: str = ""
    object_ref: dict[str, str] | None = None
    stage: Stage = Stage.REQUEST_RECEIVED
    stage_time: datetime | None = None
    impersonated_user: UserInfo | None = None
    response_status: dict[str, Any] | None = None
    request_object: Any = None
    response_object: Any = None
    annotations: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``audit.k8s.io/v1`` Event, in Go's field order."""
        doc: dict[str, Any] = {
            "kind": "Event", "apiVersion": GROUP_VERSION, "level": self.level.wire,
            "auditID": self.audit_id, "stage": self.stage.value,
            "requestURI": self.request_uri, "verb": self.verb,
            "user": user_info(self.user) if self.user is not None else {}}
        if self.impersonated_user is not None:
            doc["impersonatedUser"] = user_info(self.impersonated_user)
        if self.source_ips:
            doc["sourceIPs"] = list(self.source_ips)
        if self.user_agent:
            doc["userAgent"] = self.user_agent
        optional = (("objectRef", self.object_ref), ("responseStatus", self.response_status),
                    ("requestObject", self.request_object),
                    ("responseObject", self.response_object))
        doc.update((k, v) for k, v in optional if v is not None)
        doc["requestReceivedTimestamp"] = format_micro_time(self.received)
        doc["stageTimestamp"] = format_micro_time(self.stage_time or self.received)
        if self.annotations:
            doc["annotations"] = dict(sorted(self.annotations.items()))
        return doc

    def json_line(self) -> bytes:
        """The ``json`` format's line (``json.Encoder``: HTML escaped, newline)."""
        return html_escape(orjson.dumps(self.to_json())) + b"\n"

    def legacy_line(self) -> bytes:
        """``audit.EventString`` and a newline."""
        username, groups = "<none>", "<none>"
        if self.user is not None and self.user.name:
            username = self.user.name
            if self.user.groups:
                groups = _quoted(self.user.groups)
        as_user, as_groups = "<self>", "<lookup>"
        if self.impersonated_user is not None:
            as_user = self.impersonated_user.name
            as_groups = _quoted(self.impersonated_user.groups)
        namespace = (self.object_ref or {}).get("namespace") or "<none>"
        response = (str(self.response_status.get("code", 0))
                    if self.response_status is not None else "<deferred>")
        ip = self.source_ips[0] if self.source_ips else "<unknown>"
        fields = (("id", self.audit_id), ("stage", self.stage.value), ("ip", ip),
                  ("method", self.verb), ("user", username), ("groups", groups),
                  ("as", as_user), ("asgroups", as_groups), ("user-agent", self.user_agent),
                  ("namespace", namespace), ("uri", self.request_uri))
        text = " ".join(f"{k}={go_quote(v)}" for k, v in fields)
        return f'{rfc3339_nano(self.received)} AUDIT: {text} response="{response}"\n'.encode()


def rfc3339_nano(t: datetime) -> str:
    """Go's ``time.RFC3339Nano`` of a UTC time: the fraction without trailing zeros."""
    fraction = f"{t.microsecond:06d}".rstrip("0")
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{fraction}" if fraction else "") + "Z"


def _quoted(values: tuple[str, ...]) -> str:
    return ",".join(go_quote(v) for v in values)


def truncate_user_agent(agent: str) -> str:
    """``maybeTruncateUserAgent``."""
    return agent[:MAX_USER_AGENT] + TRUNCATED if len(agent) > MAX_USER_AGENT else agent
