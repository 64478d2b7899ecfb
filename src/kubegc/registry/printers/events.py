"""The Event printer (``printEvent``), shared by core/v1 and events.k8s.io/v1 Events.

An events.k8s.io Event is first read in core/v1 field names (``regarding`` as
``involvedObject``, ``note`` as ``message``, the ``deprecated*`` fields as their core
names). Last Seen comes from the series when there is one; a singleton event of the new API
without a count shows Count 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kubegc.registry.printers.helpers import (
    NAME_DESCRIPTION,
    Conditions,
    Obj,
    column,
    object_meta,
    translate_timestamp_since,
)

EVENT_COLUMN_DEFINITIONS = [
    column("Last Seen", "The time at which the most recent occurrence of this event was"
           " recorded."),
    column("Type", "Type of this event (Normal, Warning), new types could be added in the"
           " future"),
    column("Reason", "This should be a short, machine understandable string that gives the"
           " reason for the transition into the object's current status."),
    column("Object", "The object that this event is about."),
    column("Subobject", "If referring to a piece of an object instead of an entire object,"
           " this string should contain a valid JSON/Go field access statement, such as"
           " desiredState.manifest.containers[2].", wide=True),
    column("Source", "The component reporting this event. Should be a short machine"
           " understandable string.", wide=True),
    column("Message", "A human-readable description of the status of this operation."),
    column("First Seen", "The time at which the event was first recorded. (Time of server"
           " receipt is in TypeMeta.)", wide=True),
    column("Count", "The number of times this event has occurred.", wide=True),
    column("Name", NAME_DESCRIPTION, wide=True, fmt="name"),
]


def _core_event(obj: Obj) -> Mapping[str, Any]:
    """An events.k8s.io/v1 Event in core/v1 field names (the printer is shared)."""
    if "involvedObject" in obj or ("regarding" not in obj and "note" not in obj):
        return obj
    return {"metadata": obj.get("metadata") or {}, "involvedObject": obj.get("regarding") or {},
            "type": obj.get("type"), "reason": obj.get("reason"), "message": obj.get("note"),
            "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
            "lastTimestamp": obj.get("deprecatedLastTimestamp"),
            "count": obj.get("deprecatedCount"), "source": obj.get("deprecatedSource") or {},
            "eventTime": obj.get("eventTime"), "series": obj.get("series"),
            "reportingComponent": obj.get("reportingController"),
            "reportingInstance": obj.get("reportingInstance")}


def print_event(raw: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    obj = _core_event(raw)
    first = translate_timestamp_since(obj.get("firstTimestamp") or obj.get("eventTime"), now)
    last = (translate_timestamp_since(obj["lastTimestamp"], now) if obj.get("lastTimestamp")
            else first)
    count = int(obj.get("count") or 0)
    series = obj.get("series")
    if series is not None:
        last = translate_timestamp_since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type") or "", obj.get("reason") or "", target,
            involved.get("fieldPath") or "", f"{component}, {host}" if host else component,
            str(obj.get("message") or "").strip(), first, count,
            object_meta(obj).get("name", "")], []
