"""What ``kubegc plan`` prints: times on the plan's own time line, the verdict first."""

from __future__ import annotations

import json
from datetime import timedelta
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
    # a dump's reading is its present: the judging time is said in seconds after it only
    assert report["hangingJudgedAt"] is None
    judged = NOW + timedelta(seconds=report["hangingJudgedAfterSeconds"])
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


def test_the_verdict_comes_first_then_the_summary_then_the_steps(tmp_path: Path) -> None:
    code, out, err = kubegc("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                            "foreground", "--from", str(held_dump(tmp_path)), "--now", NOW_TEXT,
                            "--color", "never")
    assert code == 0, err
    lines = out.splitlines()
    verdict_text = " ".join(line.strip() for line in lines[3:5])
    assert verdict_text == ("VERDICT  the delete does not complete: 2 objects stay Terminating, "
                            "held by ConfigMap/held -n shop; ConfigMap/free -n shop goes")
    heads = [line.split(" (")[0].split("  ")[0] for line in lines if line and line[0].isupper()]
    assert heads == ["VERDICT", "SUMMARY", "STEPS", "DELETED, in this order", "HANGS", "NOTES"]
    verdict = out[:out.index("SUMMARY")]
    assert "goes     ConfigMap/free -n shop" in verdict
    assert ("hangs    ConfigMap/held -n shop — its finalizer example.com/hold: nothing names "
            "who removes it") in verdict
    assert "ConfigMap/root -n shop — held by ConfigMap/held -n shop: its own finalizer" in verdict
    summary = out[out.index("SUMMARY"):out.index("STEPS")]
    assert summary.splitlines()[2].split() == ["ConfigMap", "1", "2", "0", "0"]


def fan_out_dump(tmp_path: Path, n: int) -> Path:
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop",
                                                                     "uid": "uid-shop"}},
             _obj("ConfigMap", "root"),
             *(_obj("ConfigMap", f"dep-{i:03d}", _ref("root")) for i in range(n))]
    path = tmp_path / "fan.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _steps_shown(out: str) -> list[str]:
    steps = out[out.index("\nSTEPS"):out.index("\nDELETED")]
    return [line for line in steps.splitlines() if "  t+" in line]


def test_steps_are_cut_to_a_default_length(tmp_path: Path) -> None:
    dump = fan_out_dump(tmp_path, 30)
    args = ("plan", "delete", "configmap/root", "-n", "shop", "--from", str(dump), "--now",
            NOW_TEXT, "--color", "never")
    _, out, _ = kubegc(*args)
    assert "STEPS (first 20 of 32)" in out and len(_steps_shown(out)) == 20
    assert "… and 12 more (--steps N or --all to see them; -o json lists every one)" in out
    assert "DELETED, in this order (first 20 of 31)" in out
    assert "goes     ConfigMap/root -n shop" in out and "… and 26 more" in out  # 5 in the verdict
    _, out, _ = kubegc(*args, "--steps", "3")
    assert "STEPS (first 3 of 32)" in out and len(_steps_shown(out)) == 3
    _, out, _ = kubegc(*args, "--all")
    assert "STEPS (32)" in out and len(_steps_shown(out)) == 32 and "more (--steps" not in out
    report = kubegc_json(*args)
    assert len(report["steps"]) == 32 and len(report["deleted"]) == 31


def test_json_keeps_its_fields_and_adds_the_verdict(tmp_path: Path) -> None:
    report = kubegc_json("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                         "foreground", "--from", str(held_dump(tmp_path)), "--now", NOW_TEXT)
    assert {"source", "target", "propagationPolicy", "controllers", "error", "steps",
            "pendingBeforeDelete", "deleted", "orderConstraints", "survivors", "hanging",
            "warnings", "skipped", "notes", "simulatedSeconds"} <= set(report)
    verdict = report["verdict"]
    assert verdict["completes"] is False
    assert verdict["text"].startswith("the delete does not complete: 2 objects stay")
    held_by = {h["object"]["name"]: [b["object"]["name"] for b in h["heldBy"]]
               for h in verdict["hangs"]}
    assert held_by == {"root": ["held"], "held": ["held"]}
    assert report["summary"] == [{"kind": "ConfigMap", "deleted": 1, "hanging": 2,
                                  "orphaned": 0, "keptByOtherOwners": 0}]


def test_dot_draws_references_from_dependent_to_owner_with_a_legend(tmp_path: Path) -> None:
    code, out, err = kubegc("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                            "foreground", "--from", str(held_dump(tmp_path)), "--now", NOW_TEXT,
                            "-o", "dot")
    assert code == 0, err
    assert '"uid-held" -> "uid-root" [style="solid", label="owned by"];' in out
    assert '"uid-free" -> "uid-root" [style="solid", label="owned by"];' in out
    assert "subgraph cluster_legend" in out
    held = next(line for line in out.splitlines() if line.startswith('  "uid-held" ['))
    assert "holds a deletion" in held and "penwidth=3" in held
    root = next(line for line in out.splitlines() if line.startswith('  "uid-root" ['))
    assert "peripheries=2" in root and "penwidth" not in root


def test_an_outcome_the_order_of_the_garbage_collector_decides_is_not_promised(
        tmp_path: Path) -> None:
    """``held`` has two owners that the delete both deletes: ``root`` waits for it in the
    foreground, ``mid`` is deleted on the way. Whether the GC first removes held's reference
    to root (mid still solid) or deletes held with it (mid already waiting) depends on the
    order it takes them in; held never goes (its finalizer), so root goes, or hangs on it."""
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop",
                                                                     "uid": "uid-shop"}},
             _obj("ConfigMap", "root"), _obj("Secret", "mid", _ref("root")),
             _obj("ConfigMap", "held", {**_ref("mid", "Secret"), "blockOwnerDeletion": False},
                  _ref("root"), finalizers=["example.com/hold"])]
    dump = tmp_path / "race.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    report = kubegc_json("plan", "delete", "configmap/root", "-n", "shop", "--cascade",
                         "foreground", "--from", str(dump), "--now", NOW_TEXT)
    assert {o["object"]["name"] for o in report["orderDependent"]} == {"held", "root"}
    assert report["verdict"]["completes"] is False
    assert ("depends on the order the garbage collector takes dependents in"
            in report["verdict"]["text"])
    assert any("ConfigMap/held -n shop is deleted, or loses its reference to ConfigMap/root "
               "-n shop and stays" in n for n in report["notes"])
