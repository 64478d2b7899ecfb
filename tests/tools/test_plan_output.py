"""What ``kubegc plan`` prints: times on the plan's own time line, the verdict first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubegc.api.clock import parse_time

from .conftest import NOW, NOW_TEXT
from .lab import kubegc, kubegc_json


def _obj(kind: str, name: str, *owners: dict[str, Any], ns: str = "shop", **meta: Any
         ) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {
        "name": name, "namespace": ns, "uid": f"uid-{name}", "ownerReferences": list(owners),
        "creationTimestamp": "2026-01-01T00:00:00Z", **meta}}


def _ref(name: str, kind: str = "ConfigMap") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": f"uid-{name}",
            "blockOwnerDeletion": True}


def held_dump(tmp_path: Path) -> Path:
    """shop/root ← shop/held (finalizer nobody removes) ← ... plus one free dependent."""
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop",
                                                                     "uid": "uid-shop"}},
             _obj("ConfigMap", "root"),
             _obj("ConfigMap", "held", _ref("root"), finalizers=["example.com/hold"]),
             _obj("ConfigMap", "free", _ref("root"))]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_hangs_are_judged_on_the_plan_time_line(tmp_path: Path) -> None:
    """The simulation's clock runs ahead of the reading (it first lets what happens anyway
    happen): its deletionTimestamps used to lie ~90 s in the future, deleting for -89 s."""
    report = kubegc_json("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                         "foreground", "--from", str(held_dump(tmp_path)), "--now", NOW_TEXT)
    assert report["time"] == NOW_TEXT
    judged = parse_time(report["hangingJudgedAt"])
    assert {h["object"]["name"] for h in report["hanging"]} == {"root", "held"}
    for hang in report["hanging"]:
        deletion = hang["deletion"]
        stamp = parse_time(deletion["deletionTimestamp"])
        assert NOW <= stamp <= judged, deletion
        assert deletion["deletingForSeconds"] == int((judged - stamp).total_seconds()) > 0
        assert "set by this delete at t+0.0s): still Terminating at t+" in hang["facts"][0]
    assert any("judged when the simulation went quiet" in n for n in report["notes"])


def test_no_none_in_the_text(tmp_path: Path) -> None:
    code, out, err = kubegc("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                            "foreground", "--from", str(held_dump(tmp_path)), "--now", NOW_TEXT)
    assert code == 0, err
    assert "None" not in out
