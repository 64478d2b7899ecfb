"""Rough edges of the tools (issue 24): ``tree ns/X`` shows what holds the namespace,
``why`` never says "Terminating since" a time after now, and the page's search in a
namespace finds cluster-scoped objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from kubegc.api.clock import ManualClock
from kubegc.client.dump import DumpClient
from kubegc.tools.ui import UIApp

from .conftest import NOW, NOW_TEXT
from .lab import kubegc
from .test_malformed_input import objects, write
from .test_ui import first_event, logged_in, request


def run(*args: str) -> dict[str, Any]:
    code, out, err = kubegc(*args, "-o", "json")
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def test_tree_of_a_terminating_namespace_shows_the_content_holding_it(tmp_path: Path) -> None:
    items = objects()
    items[0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:02:00Z"
    items[0]["spec"] = {"finalizers": ["kubernetes"]}
    dump = write(tmp_path, items)
    tree = run("tree", "ns/shop", "--from", dump, "--now", NOW_TEXT)
    top = {c["object"]["name"]: c for c in tree["root"]["children"]}
    assert set(top) == {"held", "p1"}  # the ConfigMap is under its owner; no Event
    assert top["held"]["edge"]["via"] == "namespace"
    assert top["held"]["state"]["finalizers"] == ["example.com/hold"]
    assert [c["object"]["name"] for c in top["held"]["children"]] == ["child"]
    assert top["held"]["children"][0]["edge"]["via"] == "ownerReference"
    code, out, _ = kubegc("tree", "ns/shop", "--from", dump, "--now", NOW_TEXT)
    assert code == 0 and "├─Deployment/held" in out and "in the namespace" in out


def test_why_never_says_terminating_since_a_time_in_the_future(tmp_path: Path) -> None:
    dump = write(tmp_path, objects())  # the Deployment's deletionTimestamp is 00:01:00
    why = run("why", "deployment/held", "-n", "shop", "--from", dump,
              "--now", "2025-12-31T23:00:00Z")
    assert "Terminating since" not in why["conclusion"]
    assert ("Terminating, but its deletion begins 1h1m in the future (deletionTimestamp "
            "2026-01-01T00:01:00Z, now 2025-12-31T23:00:00Z)") in why["conclusion"]
    # a pod in its grace period: deletionTimestamp is when the period ends
    pod = run("why", "pod/p1", "-n", "shop", "--from", dump, "--now", "2026-01-01T00:00:50Z")
    assert ("Terminating since 2026-01-01T00:00:30Z (grace period of 30s, ends at "
            "2026-01-01T00:01:00Z)") in pod["conclusion"]
    past = run("why", "deployment/held", "-n", "shop", "--from", dump, "--now", NOW_TEXT)
    assert "(Terminating since 2026-01-01T00:01:00Z)" in past["conclusion"]


async def test_the_search_in_a_namespace_finds_cluster_scoped_objects() -> None:
    app = UIApp(DumpClient(objects()), clock=ManualClock(NOW), source="dump")
    try:
        cookie = await logged_in(app)
        _, snapshot = await first_event(await app.handle(
            request("/ui/api/stream", cookie, namespace="shop")))
        assert "n1" not in {n["name"] for n in snapshot["nodes"]}  # not drawn in "shop"
        found = orjson.loads((await app.handle(
            request("/ui/api/find", cookie, q="node/n1", namespace="shop"))).body)
        assert found["id"] == "u-n1"
        assert (found["node"]["name"], found["node"]["external"]) == ("n1", True)
        details = await app.handle(request("/ui/api/details", cookie, id="u-n1"))
        assert details.status == 200
        found = orjson.loads((await app.handle(
            request("/ui/api/find", cookie, q="deploy/held", namespace="shop"))).body)
        assert "external" not in found["node"]
    finally:
        await app.close()


def test_the_doctor_says_a_deletion_begins_after_the_time_judged_at(tmp_path: Path) -> None:
    """Never "deleting for 0s" about a deletion after now: a note, and the finding says so."""
    doctor = run("doctor", "--from", write(tmp_path, objects()), "--now",
                 "2025-12-31T23:00:00Z")
    (note,) = [n for n in doctor["notes"] if "begins after the time judged at" in n]
    assert note.startswith("2 objects being deleted have a deletion that begins after the "
                           "time judged at, 2025-12-31T23:00:00Z")
    (held,) = [f for f in doctor["findings"] if f["object"]["name"] == "held"]
    assert held["facts"][0] == (
        "deletionTimestamp 2026-01-01T00:01:00Z, its deletion begins 1h1m after the time "
        "judged at (the cluster's clock is ahead, or --now is too early)")
