"""Reading kube-apiserver's audit log (``audit.k8s.io/v1`` Event lines, the ``json``
format) for ``kubegc why --audit-log``: upstream's answer to "who deleted this"
(kubernetes #80038). Only what the log says: each DELETE (and eviction) that succeeded,
by whom, from which client, and — where the level kept the request body — with which
preconditions and propagation policy. A ``deletecollection`` names no object: it is a
candidate for any object of its resource and namespace, never a certainty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubegc.api.auth import KUBE_CONTROLLER_MANAGER
from kubegc.component.deletions import DELETER_RULES

SA_PREFIX = "system:serviceaccount:kube-system:"
NODE_PREFIX = "system:node:"


class AuditLogError(ValueError):
    """A file that is not an audit log in the json format."""


@dataclass(frozen=True, slots=True)
class AuditDeletion:
    """One successful delete (or eviction) as the audit log recorded it."""

    time: str  # stageTimestamp
    verb: str  # delete | deletecollection | evict
    user: str
    impersonated: str
    user_agent: str
    resource: str
    api_group: str
    namespace: str
    name: str  # "" for a deletecollection
    uid: str  # the request's uid precondition, when the level kept the body
    propagation: str
    code: int
    audit_id: str

    @property
    def acting_user(self) -> str:
        return self.impersonated or self.user

    @property
    def rule(self) -> str:
        """What the deleter's rule is, when it is a known controller."""
        user = self.acting_user
        if user.startswith(SA_PREFIX):
            return DELETER_RULES.get(user[len(SA_PREFIX):], "")
        if user == KUBE_CONTROLLER_MANAGER:
            return DELETER_RULES[KUBE_CONTROLLER_MANAGER]
        if user.startswith(NODE_PREFIX):
            return "the kubelet: the pod's graceful termination finished"
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {"time": self.time, "verb": self.verb, "user": self.user,
                "impersonatedUser": self.impersonated or None, "userAgent": self.user_agent,
                "resource": self.resource, "apiGroup": self.api_group,
                "namespace": self.namespace, "name": self.name, "uid": self.uid or None,
                "propagationPolicy": self.propagation or None, "code": self.code,
                "auditID": self.audit_id, "rule": self.rule or None}


def read_audit_log(path: Path) -> list[AuditDeletion]:
    """The deletions in an audit log; ``AuditLogError`` when it holds no json events."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:
        raise AuditLogError(f"cannot read {path}: {e.strerror}") from None
    found: list[AuditDeletion] = []
    events = 0
    for line in lines:
        ev = _event(line)
        if ev is None:
            continue
        events += 1
        deletion = _deletion(ev)
        if deletion is not None:
            found.append(deletion)
    if lines and not events:
        raise AuditLogError(f"{path} holds no audit.k8s.io/v1 Event lines (json format; "
                            "--audit-log-format=legacy lines name no object uid)")
    return found


def _event(line: str) -> dict[str, Any] | None:
    try:
        ev = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(ev, dict) or ev.get("kind") != "Event" or not str(
            ev.get("apiVersion", "")).startswith("audit.k8s.io/"):
        return None
    return ev


def _deletion(ev: dict[str, Any]) -> AuditDeletion | None:
    """The deletion an audit event records; None for any other event (and for one whose
    fields are not of the audit schema's types: a log edited by hand)."""
    ref = _mapping(ev.get("objectRef"))
    verb = str(ev.get("verb", ""))
    if verb == "create" and ref.get("subresource") == "eviction":
        verb = "evict"
    elif verb not in ("delete", "deletecollection") or ref.get("subresource"):
        return None
    if ev.get("stage") != "ResponseComplete":
        return None
    code = _mapping(ev.get("responseStatus")).get("code")
    if not isinstance(code, int) or not 200 <= code < 300:
        return None
    body = _mapping(ev.get("requestObject"))
    options = _mapping(body.get("deleteOptions")) if verb == "evict" else body
    return AuditDeletion(
        time=str(ev.get("stageTimestamp", "")), verb=verb,
        user=str(_mapping(ev.get("user")).get("username", "")),
        impersonated=str(_mapping(ev.get("impersonatedUser")).get("username", "")),
        user_agent=str(ev.get("userAgent", "")), resource=str(ref.get("resource", "")),
        api_group=str(ref.get("apiGroup", "")), namespace=str(ref.get("namespace", "")),
        name=str(ref.get("name", "")),
        uid=str(_mapping(options.get("preconditions")).get("uid") or ""),
        propagation=str(options.get("propagationPolicy") or ""), code=code,
        audit_id=str(ev.get("auditID", "")))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def deletions_of(deletions: list[AuditDeletion], *, resource: str, api_group: str,
                 namespace: str, name: str, uid: str = ""
                 ) -> tuple[list[AuditDeletion], list[AuditDeletion]]:
    """The deletions that name the object (by uid precondition when both have one), and
    the DeleteCollections that may have included it."""
    named, collections = [], []
    for d in deletions:
        if d.resource != resource or d.api_group != api_group or d.namespace != namespace:
            continue
        if d.verb == "deletecollection":
            collections.append(d)
        elif d.name == name and not (uid and d.uid and d.uid != uid):
            named.append(d)
    return named, collections


def describe(d: AuditDeletion) -> str:
    """One deletion in words: who, how, when, and the deleter's rule."""
    who = d.acting_user + (f" (impersonated by {d.user})" if d.impersonated else "")
    how = {"evict": "evicted through pods/eviction", "deletecollection":
           "a DeleteCollection"}.get(d.verb, "DELETE")
    rule = f" — {d.rule}" if d.rule else ""
    extra = f", propagationPolicy {d.propagation}" if d.propagation else ""
    return f"{how} by {who} at {d.time} (audit log, {d.code}{extra}){rule}"
