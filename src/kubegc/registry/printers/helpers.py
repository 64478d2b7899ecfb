"""Cells and column definitions shared by the per-resource printers (the helpers of
pkg/printers/internalversion/printers.go).

``RowFn`` is a printer: it maps an object and "now" to its cells and row conditions. Lookups
are total: a missing or mistyped field reads as None and never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from kubegc.api.clock import parse_time, parse_time_or_none
from kubegc.api.errors import StatusError
from kubegc.api.labels import label_selector_from_dict
from kubegc.registry.printers.duration import human_duration

Obj = Mapping[str, Any]
Conditions = list[dict[str, str]]
RowFn = Callable[[Obj, datetime], tuple[list[Any], Conditions]]


def translate_timestamp_since(timestamp: Any, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing timestamp."""
    if not timestamp:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(str(timestamp))).total_seconds())
    except ValueError:
        return "<invalid>"


def column(name: str, desc: str, kind: str = "string", *, wide: bool = False,
           fmt: str = "") -> dict[str, Any]:
    """A ``TableColumnDefinition``; ``wide`` columns (priority 1) show only with ``-o wide``."""
    return {"name": name, "type": kind, "format": fmt, "description": desc,
            "priority": 1 if wide else 0}


NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although"
    " some resources may allow a client to request the generation of an appropriate name"
    " automatically. Name is primarily intended for creation idempotence and configuration"
    " definition. Cannot be updated. More info:"
    " https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was"
    " created. It is not guaranteed to be set in happens-before order across separate"
    " operations. Clients may not set this value. It is represented in RFC3339 form and is in"
    " UTC.\n\nPopulated by the system. Read-only. Null for lists. More info:"
    " https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
NAME = column("Name", NAME_DESCRIPTION, fmt="name")
AGE = column("Age", AGE_DESCRIPTION)


def lookup(obj: Any, *path: str | int) -> Any:
    """``obj[path[0]][path[1]]...``, or None when a step is missing or not a map/list."""
    cur = obj
    for key in path:
        if isinstance(key, int):
            cur = cur[key] if isinstance(cur, list) and -len(cur) <= key < len(cur) else None
        else:
            cur = cur.get(key) if isinstance(cur, Mapping) else None
        if cur is None:
            return None
    return cur


def object_meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def age(obj: Obj, now: datetime) -> str:
    return translate_timestamp_since(object_meta(obj).get("creationTimestamp"), now)


def format_labels(labels: Mapping[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def format_label_selector(selector: Mapping[str, Any] | None, *, empty: str = "<none>") -> str:
    """``metav1.FormatLabelSelector`` (``<error>`` when invalid)."""
    try:
        text = str(label_selector_from_dict(selector))
    except StatusError:
        return "<error>"
    return text or empty


def layout_container_cells(template_spec: Any) -> list[str]:
    containers = lookup(template_spec, "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return [names, images]


def has_condition(obj: Obj, kind: str) -> bool:
    for condition in lookup(obj, "status", "conditions") or []:
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


parse_timestamp = parse_time_or_none


def name_and(*cells: Callable[[Obj], Any]) -> RowFn:
    """A printer whose cells are Name, ``cells`` and Age."""
    def row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
        return [object_meta(obj).get("name", ""), *(cell(obj) for cell in cells), age(obj, now)], []
    return row
