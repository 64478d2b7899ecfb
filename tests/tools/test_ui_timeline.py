"""The page's deletion timeline (``tools/ui/timeline.py``): steps in the order a deletion
runs them, from why's entries, the object's metadata and what the page saw."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubegc.api.types import Obj
from kubegc.tools.model import ObjRef
from kubegc.tools.ui.timeline import Observations, timeline
from kubegc.tools.why_report import Entry, WhyReport

NOW = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)
T = "2026-01-01T12:00:05Z"  # every step in the same second: the order is causal


def cm(name: str, uid: str, *finalizers: str, deleting: bool = True) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid,
                            "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = T
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def dependent_entry(detail: str, classification: str) -> Entry:
    return Entry(T, "DeletionRecord", "delete", "OwnerAbsent", "all owners are absent",
                 ObjRef("ConfigMap", "ns", "kid", "v1", "u-kid"), "Background",
                 ({"uid": "u-boss", "kind": "ConfigMap", "name": "boss",
                   "classification": classification, "detail": detail},))


def steps(out: list[dict[str, Any]]) -> list[str]:
    return [s["step"] for s in out]


def test_background_owner_held_by_its_finalizer() -> None:
    seen = Observations()
    held = cm("boss", "u-boss", "example.com/hold")
    seen.changed("u-boss", None, held, NOW)
    seen.changed("u-boss", held, None, NOW)  # the finalizer went with the object
    seen.changed("u-kid", cm("kid", "u-kid", deleting=False), None, NOW)
    why = WhyReport("test", ObjRef("ConfigMap", "ns", "boss", "v1", "u-boss"), "DeletionRecords")
    out = timeline(None, why, [dependent_entry("ObservedDeleted", "dangling")], seen, "u-boss",
                   NOW)
    assert steps(out) == ["requested", "finalizer removed", "gone", "dependent deleted",
                          "dependents gone"]
    assert "example.com/hold" in out[1]["text"] and out[1]["source"] == "watch"


def test_foreground_owner_waits_for_its_dependents() -> None:
    seen = Observations()
    waiting = cm("boss", "u-boss", "foregroundDeletion")
    seen.changed("u-boss", None, waiting, NOW)
    seen.changed("u-boss", waiting, None, NOW)
    why = WhyReport("test", ObjRef("ConfigMap", "ns", "boss", "v1", "u-boss"), "DeletionRecords")
    why.entries = [Entry(T, "DeletionRecord", "remove-finalizer", "NoBlockingDependents",
                         "removed foregroundDeletion",
                         ObjRef("ConfigMap", "ns", "boss", "v1", "u-boss"))]
    out = timeline(None, why, [dependent_entry("Foreground", "waitingForDependentsDeletion")],
                   seen, "u-boss", NOW)
    # the GC's record says foregroundDeletion went: the page's sighting is not repeated
    assert steps(out) == ["requested", "dependent deleted", "dependents gone", "gone"]


def test_an_object_not_being_deleted_has_no_timeline() -> None:
    why = WhyReport("test", ObjRef("ConfigMap", "ns", "a", "v1", "u-a"), "DeletionRecords")
    assert timeline(cm("a", "u-a", deleting=False), why, [], Observations(), "u-a", NOW) == []


def test_observations_forget_the_oldest() -> None:
    seen = Observations(limit=2)
    for i in range(3):
        seen.changed(f"u{i}", cm(f"c{i}", f"u{i}", deleting=False), None, NOW)
    assert seen.get("u0") is None and seen.get("u2") is not None
