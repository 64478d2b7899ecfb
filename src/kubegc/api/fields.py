"""Field selectors, as apimachinery's ``pkg/fields`` (``fields.ParseSelector``,
``EscapeValue``), and the selectable fields of each resource (the registries' ``GetAttrs``
and field label conversion functions).

Contract:
  * ``parse_field_selector(text)`` accepts ``=``, ``==``, ``!=`` and comma AND, with the
    ``\\,`` ``\\=`` ``\\\\`` escapes in values; it fails with a 400 BadRequest carrying
    upstream's message.
  * ``object_fields(group, resource, obj)`` lists an object's selectable fields (upstream's
    ``GetAttrs``); ``validate_field_selector`` rejects fields the resource does not support
    with ``field label not supported: <label>``.
Selectors are immutable values; requirements keep the order of the sorted terms, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegc.api import errors
from kubegc.api.labels import Operator


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    operator: Operator  # EQUALS, DOUBLE_EQUALS or NOT_EQUALS
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        equal = fields.get(self.field, "") == self.value
        return not equal if self.operator is Operator.NOT_EQUALS else equal

    def __str__(self) -> str:
        op = "!=" if self.operator is Operator.NOT_EQUALS else "="
        return f"{self.field}{op}{escape_field_value(self.value)}"


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """AND of ``field=value`` / ``field!=value`` terms; a missing field reads as ``""``."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self.requirements)

    def exact_value(self, field: str) -> str | None:
        """``RequiresExactMatch``: the value an ``=`` term pins ``field`` to, if any."""
        for r in self.requirements:
            if r.field == field and r.operator is not Operator.NOT_EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(value: str) -> str:
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            # Upstream formats the rune with %v, which prints its code point.
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    terms: list[str] = []
    start, in_slash = 0, False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_field_term(term: str) -> tuple[str, Operator, str] | None:
    for i in range(len(term)):
        for symbol, op in (("!=", Operator.NOT_EQUALS), ("==", Operator.DOUBLE_EQUALS),
                           ("=", Operator.EQUALS)):
            if term.startswith(symbol, i):
                return term[:i], op, term[i + len(symbol):]
    return None


def parse_field_selector(text: str) -> FieldSelector:
    """``fields.ParseSelector``; raises 400 BadRequest with upstream's message when invalid."""
    requirements: list[FieldRequirement] = []
    try:
        for term in sorted(_split_field_terms(text)) if text else []:
            if not term:
                continue
            split = _split_field_term(term)
            if split is None:
                raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
            lhs, op, rhs = split
            requirements.append(FieldRequirement(lhs, op, _unescape_field_value(rhs)))
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    return FieldSelector(tuple(requirements))


# --- selectable fields per resource (GetAttrs / AddFieldLabelConversionFunc) --------

_META = ("metadata.name", "metadata.namespace")
_CORE_EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
)
_REGARDING = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

#: Field labels each built-in accepts, as upstream's field label conversion functions
#: (cluster-scoped nodes and namespaces do not accept ``metadata.namespace``).
SUPPORTED_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): (*_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                   "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                   "status.podIP", "status.nominatedNodeName"),
    ("", "events"): (*_META, *_CORE_EVENT_FIELDS),
    ("events.k8s.io", "events"): (*_META, *(f"regarding.{f}" for f in _REGARDING), "reason",
                                  "type", "reportingController"),
    ("", "secrets"): (*_META, "type"),
    ("", "services"): (*_META, "spec.clusterIP", "spec.type"),
    ("", "namespaces"): ("metadata.name", "status.phase"),
    ("", "nodes"): ("metadata.name", "spec.unschedulable"),
    ("", "replicationcontrollers"): (*_META, "status.replicas"),
    ("apps", "replicasets"): (*_META, "status.replicas"),
    ("batch", "jobs"): (*_META, "status.successful"),
}


def _dig(obj: Mapping[str, Any], *path: str) -> Any:
    cur: Any = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _pod_fields(pod: Mapping[str, Any]) -> dict[str, str]:
    pod_ips = _dig(pod, "status", "podIPs")
    pod_ip = (_dig(pod_ips[0], "ip") if isinstance(pod_ips, list) and pod_ips
              else _dig(pod, "status", "podIP"))
    out = {f"spec.{f}": _text(_dig(pod, "spec", f))
           for f in ("nodeName", "restartPolicy", "schedulerName", "serviceAccountName")}
    out["spec.hostNetwork"] = _text(bool(_dig(pod, "spec", "hostNetwork")))
    out["status.phase"] = _text(_dig(pod, "status", "phase"))
    out["status.podIP"] = _text(pod_ip)
    out["status.nominatedNodeName"] = _text(_dig(pod, "status", "nominatedNodeName"))
    return out


def _core_event_fields(event: Mapping[str, Any]) -> dict[str, str]:
    out = {f"involvedObject.{f}": _text(_dig(event, "involvedObject", f)) for f in _REGARDING}
    source = _text(_dig(event, "source", "component")) or _text(event.get("reportingComponent"))
    out.update(reason=_text(event.get("reason")), type=_text(event.get("type")),
               reportingComponent=_text(event.get("reportingComponent")), source=source)
    return out


def _events_k8s_io_fields(event: Mapping[str, Any]) -> dict[str, str]:
    out = {f"regarding.{f}": _text(_dig(event, "regarding", f)) for f in _REGARDING}
    out.update(reason=_text(event.get("reason")), type=_text(event.get("type")),
               reportingController=_text(event.get("reportingController")))
    return out


def _specific_fields(group: str, resource: str, obj: Mapping[str, Any]) -> dict[str, str]:
    key = (group, resource)
    if key == ("", "pods"):
        return _pod_fields(obj)
    if key == ("", "events"):
        return _core_event_fields(obj)
    if key == ("events.k8s.io", "events"):
        return _events_k8s_io_fields(obj)
    if key == ("", "secrets"):
        return {"type": _text(obj.get("type"))}
    if key == ("", "services"):
        return {"spec.clusterIP": _text(_dig(obj, "spec", "clusterIP")),
                "spec.type": _text(_dig(obj, "spec", "type"))}
    if key == ("", "namespaces"):
        return {"status.phase": _text(_dig(obj, "status", "phase"))}
    if key == ("", "nodes"):
        return {"spec.unschedulable": _text(bool(_dig(obj, "spec", "unschedulable")))}
    if key in (("", "replicationcontrollers"), ("apps", "replicasets")):
        return {"status.replicas": _text(_dig(obj, "status", "replicas") or 0)}
    if key == ("batch", "jobs"):
        return {"status.successful": _text(_dig(obj, "status", "succeeded") or 0)}
    return {}


def object_fields(group: str, resource: str, obj: Mapping[str, Any]) -> dict[str, str]:
    """The fields a field selector can test on ``obj`` (upstream's ``GetAttrs`` field set)."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": _text(meta.get("name")),
              "metadata.namespace": _text(meta.get("namespace"))}
    fields.update(_specific_fields(group, resource, obj))
    return fields


def validate_field_selector(group: str, resource: str, selector: FieldSelector) -> None:
    """Raise 400 ``field label not supported: <label>`` for a field the resource does not
    support; resources without their own list (CRs and the rest) support metadata only."""
    supported = SUPPORTED_FIELDS.get((group, resource), _META)
    for requirement in selector.requirements:
        if requirement.field not in supported:
            raise errors.bad_request(f"field label not supported: {requirement.field}")
