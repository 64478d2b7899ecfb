"""Object metadata vocabulary: finalizers, propagation policies, owner references.

Helpers here read JSON-shaped objects (``Obj``) without copying them; nothing here mutates
an object unless its name says so (``set_*``).
"""

from __future__ import annotations

import enum
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegc.api.types import Obj

FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
GC_FINALIZERS = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS)
FINALIZER_KUBERNETES = "kubernetes"  # namespace spec finalizer


class DeletionPropagation(enum.StrEnum):
    ORPHAN = "Orphan"
    BACKGROUND = "Background"
    FOREGROUND = "Foreground"


@dataclass(frozen=True, slots=True)
class ListOptions:
    """``metav1.ListOptions`` of a LIST: what clients send and the registry serves (a
    watch's are the client's ``WatchOptions`` and the registry's ``WatchRequest``)."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""

    @property
    def selects(self) -> bool:
        return bool(self.label_selector or self.field_selector)


@dataclass(frozen=True, slots=True)
class DeleteOptions:
    """``metav1.DeleteOptions``: what a DELETE asks beside the object's name. One type for
    every layer: clients build it, the server parses the wire's into it
    (``registry.validation.objectmeta.parse_delete_options``), the registry decides with it."""

    propagation_policy: DeletionPropagation | None = None
    grace_period_seconds: int | None = None
    preconditions_uid: str | None = None
    preconditions_resource_version: str | None = None
    orphan_dependents: bool | None = None
    dry_run: bool = False

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if self.propagation_policy is not None:
            body["propagationPolicy"] = str(self.propagation_policy)  # the wire's plain string
        if self.grace_period_seconds is not None:
            body["gracePeriodSeconds"] = self.grace_period_seconds
        if self.orphan_dependents is not None:
            body["orphanDependents"] = self.orphan_dependents
        pre: dict[str, str] = {}
        if self.preconditions_uid is not None:
            pre["uid"] = self.preconditions_uid
        if self.preconditions_resource_version is not None:
            pre["resourceVersion"] = self.preconditions_resource_version
        if pre:
            body["preconditions"] = pre
        if self.dry_run:
            body["dryRun"] = ["All"]
        return body

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> DeleteOptions:
        """The options of a wire DeleteOptions whose values are valid (see
        ``registry.validation.objectmeta.parse_delete_options``)."""
        pre = body.get("preconditions") or {}
        policy = body.get("propagationPolicy")
        return cls(
            propagation_policy=None if policy is None else DeletionPropagation(policy),
            grace_period_seconds=body.get("gracePeriodSeconds"),
            preconditions_uid=pre.get("uid"),
            preconditions_resource_version=pre.get("resourceVersion"),
            orphan_dependents=body.get("orphanDependents"),
            dry_run=bool(body.get("dryRun")))


class EventType(enum.StrEnum):
    """A watch event's ``type``. A ``StrEnum``: the string a server sent compares equal."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


# The members as module constants, for the per-event paths (reflectors, watchers): a global
# lookup costs a quarter of ``EventType.ADDED``'s attribute lookup on the enum class.
ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED
BOOKMARK, ERROR = EventType.BOOKMARK, EventType.ERROR


@dataclass(frozen=True, slots=True)
class ObjectReference:
    """Identity of an object as the GC sees it (cf. garbagecollector ``objectReference``):
    the ownerReference coordinates plus the namespace."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    def __str__(self) -> str:
        return (
            f"[{self.api_version}/{self.kind}, namespace: {self.namespace}, "
            f"name: {self.name}, uid: {self.uid}]"
        )

    @classmethod
    def of(cls, obj: Obj) -> ObjectReference:
        m = obj.get("metadata") or {}
        return cls(
            api_version=str(obj.get("apiVersion", "")),
            kind=str(obj.get("kind", "")),
            name=str(m.get("name", "")),
            uid=str(m.get("uid", "")),
            namespace=str(m.get("namespace", "") or ""),
        )


def new_uid() -> str:
    """A random (version 4) UUID in its string form, as ``str(uuid.uuid4())`` but several
    times faster (every create makes one): the random bytes come from ``os.urandom`` 4 KiB
    at a time."""
    global _random_pool, _random_used
    with _random_lock:
        if _random_used + 16 > len(_random_pool):
            _random_pool, _random_used = os.urandom(4096), 0
        raw = bytearray(_random_pool[_random_used:_random_used + 16])
        _random_used += 16
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_random_pool = b""
_random_used = 0
_random_lock = threading.Lock()


def metadata(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def uid_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def resource_version_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def finalizers_of(obj: Obj) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def owner_references_of(obj: Obj) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def deletion_timestamp_of(obj: Obj) -> str | None:
    value = (obj.get("metadata") or {}).get("deletionTimestamp")
    return str(value) if value else None


def is_being_deleted(obj: Obj) -> bool:
    return deletion_timestamp_of(obj) is not None


def controller_ref_of(obj: Obj) -> dict[str, Any] | None:
    """The ownerReference with ``controller: true`` (cf. ``metav1.GetControllerOf``)."""
    for ref in owner_references_of(obj):
        if ref.get("controller"):
            return ref
    return None


def owner_reference(owner: Obj, *, controller: bool = False, block: bool = False) -> dict[str, Any]:
    """An ownerReference pointing at ``owner`` (cf. ``metav1.NewControllerRef``)."""
    ref: dict[str, Any] = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": name_of(owner),
        "uid": uid_of(owner),
    }
    if controller:
        ref["controller"] = True
    if block:
        ref["blockOwnerDeletion"] = True
    return ref
