"""The words of kubegc's ``kubegc.io/v1 DeletionRecord`` (kubegc's own kind, no upstream
counterpart): its resource, its labels and the layout of one record. Shared by every
writer — the garbage collector's sink (``kubegc.controllers.deletionrecords``), the
eviction subresource (``kubegc.registry.groups.core.eviction``) — and by the readers
(``kubegc why``, the inventory), so that a record written by one floor reads the same on
another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj

DELETION_RECORDS = GroupVersionResource("kubegc.io", "v1", "deletionrecords")
LABEL_UID = "kubegc.io/object-uid"
LABEL_NAMESPACE = "kubegc.io/object-namespace"
LABEL_KIND = "kubegc.io/object-kind"
LABEL_NAME = "kubegc.io/object-name"
LABEL_ACTION = "kubegc.io/action"
LABEL_REASON = "kubegc.io/reason"
#: the controller that acted, by its event source (pod GC, taint eviction, the GC)
LABEL_DELETER = "kubegc.io/deleter"
#: the garbage collector's records' deleter: its event source
GC_DELETER = "garbage-collector-controller"

#: the action of a record the eviction subresource writes: the pod was deleted through
#: ``pods/eviction`` (its ``user`` field names who asked)
ACTION_EVICT = "evict"


def label_value(text: str) -> str:
    """A label-safe form of ``text`` (names can be longer than a label value may be)."""
    if len(text) <= 63:
        return text
    return text[:52] + "-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def record_object(*, name: str, time: str, action: str, reason: str, message: str,
                  about: Mapping[str, str], owners: Sequence[Mapping[str, str]] = (),
                  **fields: Any) -> Obj:
    """One DeletionRecord: ``about`` is the object acted on (apiVersion, kind, namespace,
    name, uid); ``fields`` are a writer's own (``propagationPolicy``, ``user``, ``budget``),
    left out when empty."""
    uid, namespace = about.get("uid", ""), about.get("namespace", "")
    labels = {LABEL_UID: uid, LABEL_KIND: label_value(about.get("kind", "")),
              LABEL_NAME: label_value(about.get("name", "")), LABEL_ACTION: action,
              LABEL_REASON: reason}
    if namespace:
        labels[LABEL_NAMESPACE] = namespace
    if fields.get("deleter"):
        labels[LABEL_DELETER] = str(fields["deleter"])
    body: dict[str, Any] = {
        "apiVersion": "kubegc.io/v1", "kind": "DeletionRecord",
        "metadata": {"name": name, "labels": labels},
        "time": time, "action": action, "reason": reason, "message": message,
        "object": {k: about.get(k, "") for k in ("apiVersion", "kind", "namespace", "name",
                                                  "uid")},
        "owners": [dict(o) for o in owners],
    }
    body.update((k, v) for k, v in fields.items() if v)
    return body


__all__ = [
    "ACTION_EVICT",
    "DELETION_RECORDS",
    "GC_DELETER",
    "LABEL_ACTION",
    "LABEL_DELETER",
    "LABEL_KIND",
    "LABEL_NAME",
    "LABEL_NAMESPACE",
    "LABEL_REASON",
    "LABEL_UID",
    "label_value",
    "record_object",
]
