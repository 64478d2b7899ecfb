"""The events.k8s.io group's storage (cf. pkg/registry/events): ``events.k8s.io/v1``
Events are the core Events seen through another shape, one store with two views as in
kube-apiserver (its storage factory's cohabitating resources): their keys are core
Events' (``storage_resource``) and each object converts between the two shapes
(``EventsConversion``, upstream's v1 ↔ core conversion functions)."""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_path_segment_name
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import GCPolicy, Strategy
from kubegc.registry.groups.core.validation import validate_events_v1_event

_RENAMES = (
    # (events.k8s.io/v1 field, core/v1 field)
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)
_SAME = ("reason", "type", "action", "eventTime", "series")


class EventsConversion:
    """``events.k8s.io/v1`` ↔ the stored ``core/v1`` Event."""

    def to_storage(self, obj: Obj) -> Obj:
        out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event",
                               "metadata": obj.get("metadata") or {}}
        for new, old in _RENAMES:
            if new in obj:
                out[old] = obj[new]
        for same in _SAME:
            if same in obj:
                out[same] = obj[same]
        return out

    def from_storage(self, obj: Obj, version: str) -> Obj:
        out: dict[str, Any] = {"apiVersion": f"events.k8s.io/{version}", "kind": "Event",
                               "metadata": obj.get("metadata") or {}}
        for new, old in _RENAMES:
            if old in obj and obj[old] is not None:
                out[new] = obj[old]
        for same in _SAME:
            if same in obj:
                out[same] = obj[same]
        return out

    def served_as_stored(self, version: str) -> bool:
        return False


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("events.k8s.io", "events"), Strategy(
        default_gc_policy=GCPolicy.UNSUPPORTED, allow_create_on_update=True,
        tracks_generation=False, name_validator=is_path_segment_name,
        validate=validate_events_v1_event, storage_resource=("", "events"),
        conversion=EventsConversion()), table=printers.EVENT)]
