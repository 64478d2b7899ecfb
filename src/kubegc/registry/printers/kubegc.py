"""Columns of kubegc's own ``kubegc.io/v1 DeletionRecord``: what the garbage collector (or
pod GC, or taint eviction: the deleter) did to which object, and why — readable with a
plain ``kubectl get deletionrecords``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegc.registry.printers.helpers import AGE, NAME, column, name_and


def _object(record: Mapping[str, Any]) -> str:
    ref: dict[str, Any] = record.get("object") or {}
    name = f"{str(ref.get('kind') or '').lower()}/{ref.get('name') or ''}"
    return f"{ref['namespace']}/{name}" if ref.get("namespace") else name


DELETION_RECORD_COLUMN_DEFINITIONS = [
    NAME,
    column("Action", "What the garbage collector did: delete, orphan-patch, unblock-patch, "
                     "remove-dangling-refs or remove-finalizer."),
    column("Object", "The object acted on (namespace/kind/name)."),
    column("Reason", "Why, as a machine-readable reason (OwnerAbsent, OwnerRecreated, ...)."),
    column("Deleter", "The controller that acted (garbage-collector-controller, "
                      "pod-garbage-collector, taint-eviction-controller)."),
    column("Policy", "The propagation policy of a deletion.", wide=True),
    column("Message", "Why, in words, with each owner and how it was classified.", wide=True),
    AGE,
]

print_deletion_record = name_and(
    lambda r: r.get("action") or "", _object, lambda r: r.get("reason") or "",
    lambda r: r.get("deleter") or "garbage-collector-controller",
    lambda r: r.get("propagationPolicy") or "<none>", lambda r: r.get("message") or "")
