"""A dump's objects are read in one walk each (issue 27: the doctor on a 1M-object dump):
the inventory checks each object's well-formedness (``tools.wellformed``), indexes it and
its owner references (``tools.dependents``) in the same walk, and ``DumpClient`` stores
the objects and finds the CRDs in one. Each must find what the separate passes found
before: on a dump with every kind of problem (every field the tools read of a wrong type,
objects that cannot be named, dangling, recreated and cyclic owners, a deletion whose time
is no time, dependents sharing their owner's references), the same objects, problems,
indexes, dependents, cycles and doctor report, byte for byte."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.clock import format_time
from kubegc.api.meta import uid_of
from kubegc.api.types import Obj
from kubegc.client.dump import DumpClient
from kubegc.tools.cluster_clock import cluster_time, judging_time
from kubegc.tools.doctor import DoctorOptions, diagnose
from kubegc.tools.inventory import Inventory, read_inventory
from kubegc.tools.ownership import OwnerGraph
from kubegc.tools.render import render
from kubegc.tools.slim import Slim
from kubegc.tools.wellformed import IGNORED, SKIPPED, well_formed
from tests.tools.conftest import NOW

from .test_malformed_input import PATHS, more_objects, obj

WRONG: list[Any] = ["yesterday-ish", 7, 2.5, True, None, [], ["x"], {}, {"a": 1}, [7]]


def _ref(kind: str, name: str, uid: str, **more: Any) -> dict[str, Any]:
    api = "apps/v1" if kind in ("Deployment", "ReplicaSet") else "v1"
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, **more}


def every_problem() -> list[Any]:
    """``more_objects()`` (the lab's dump and the objects each check reads), then, for
    each of their fields, a copy with that field of a wrong type; objects that cannot be
    named; owners absent, recreated, in a cycle; 50 dependents sharing one owner."""
    base = more_objects()
    items: list[Any] = list(base)
    for n, path in enumerate(PATHS):
        index, *inner = path
        if not inner:
            continue
        item = copy.deepcopy(base[index])
        parent: Any = item
        for step in inner[:-1]:
            parent = parent[step]
        parent[inner[-1]] = WRONG[n % len(WRONG)]
        meta = item.get("metadata")
        if isinstance(meta, dict) and inner[:2] not in (["metadata", "name"],
                                                        ["metadata", "uid"]):
            meta["name"], meta["uid"] = f"{meta.get('name')}-{n}", f"u-mutated-{n}"
        items.append(item)
    items += [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "no object"},
        {"apiVersion": 1, "kind": "ConfigMap", "metadata": {"name": "api-int"}},
        obj("v1", "ConfigMap", "name-int", uid=7),
        obj("v1", "ConfigMap", "cycle-a", ownerReferences=[_ref("ConfigMap", "cycle-b",
                                                                "u-cycle-b")]),
        obj("v1", "ConfigMap", "cycle-b", ownerReferences=[_ref("ConfigMap", "cycle-a",
                                                                "u-cycle-a")]),
        obj("v1", "ConfigMap", "orphan", ownerReferences=[_ref("ConfigMap", "gone", "u-gone")]),
        obj("v1", "ConfigMap", "recreated", ownerReferences=[
            _ref("Deployment", "held", "u-old-held", controller=True)]),
        obj("v1", "ConfigMap", "bad-time", deletionTimestamp="soon",
            creationTimestamp="later", finalizers=["x.io/y"]),
        *(obj("v1", "ConfigMap", f"dep-{i}", labels={"app": "web"},
              ownerReferences=[_ref("Deployment", "held", "u-held", blockOwnerDeletion=True)])
          for i in range(50)),
    ]
    return items


def write(tmp_path: Path, items: list[Any]) -> Path:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4))
    return path


def separate_dependents(objects: list[Obj]) -> dict[str, list[tuple[Obj, dict[str, Any]]]]:
    """The owner graph's index as its own pass built it."""
    out: dict[str, list[tuple[Obj, dict[str, Any]]]] = {}
    for o in objects:
        for ref in (o.get("metadata") or {}).get("ownerReferences") or ():
            out.setdefault(str(ref.get("uid") or ""), []).append((o, ref))
    return out


def separate_cycles(graph: OwnerGraph, objects: list[Obj]) -> list[list[Obj]]:
    """The cycles as the walk over every object found them."""
    found: dict[tuple[str, ...], list[Obj]] = {}
    owners = separate_dependents(objects)
    for start in objects:
        if uid_of(start) in owners and any(o is not None for _, o in graph.owners(start)):
            graph._walk(start, [start], found)
    return list(found.values())


async def test_one_walk_finds_what_the_separate_passes_found(tmp_path: Path) -> None:
    client = DumpClient.from_file(write(tmp_path, every_problem()), prepare=Slim())
    objects = [*client.objects(), *client.malformed]
    resources = await client.discover()
    fused = Inventory(list(objects), resources, NOW, dump=True, check_well_formed=True)
    read, problems = well_formed(objects, NOW)
    apart = Inventory(read, resources, NOW, dump=True, problems=problems)

    assert fused.problems == apart.problems
    effects = {p.effect for p in fused.problems}
    assert {SKIPPED, IGNORED, "that item is ignored",
            "read as being deleted since now"} <= effects, effects
    assert len(fused.objects) == len(apart.objects) == len(read)
    for one, other in zip(fused.objects, apart.objects, strict=True):
        assert one == other
        assert (one is other) == (any(one is o for o in objects))  # only a fix is a copy
    assert [o["metadata"]["name"] for o in fused.deleting] == [
        o["metadata"]["name"] for o in apart.deleting]
    assert dict(fused.uids()).keys() == dict(apart.uids()).keys()
    for o in objects[:400]:
        meta = o.get("metadata") if isinstance(o, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            for inv in (fused, apart):
                assert inv.find("", str(o.get("kind")), str(meta.get("namespace") or ""),
                                meta["name"]) == apart.find(
                    "", str(o.get("kind")), str(meta.get("namespace") or ""), meta["name"])

    dependents = separate_dependents(fused.objects)
    assert {uid: [(id(e.dependent), id(e.ref)) for e in edges]
            for uid, edges in fused.dependents.by_owner.items()} == {
        uid: [(id(o), id(r)) for o, r in edges] for uid, edges in dependents.items()}
    assert len(fused.dependents.by_owner["u-held"]) >= 50
    graph = OwnerGraph(fused)
    cycles = graph.cycles()
    assert [[uid_of(o) for o in c] for c in cycles] == [
        [uid_of(o) for o in c] for c in separate_cycles(graph, fused.objects)]
    assert cycles, "the dump holds a cycle"

    for fmt in ("json", "text"):
        options = DoctorOptions(stuck_after=30.0)
        report = render(diagnose(fused, options), fmt)
        assert report == render(diagnose(apart, options), fmt)
    kinds = {f.kind.value for f in diagnose(fused).findings}
    assert {"MalformedObject", "OwnershipCycle", "OwnerAbsent"} <= kinds, kinds


async def test_the_doctor_reads_a_dump_as_the_separate_passes_did(tmp_path: Path) -> None:
    """``read_inventory`` (its walk) against the inventory of ``well_formed``'s pass over
    the objects read in the same order: the same report."""
    path = write(tmp_path, every_problem())
    client = DumpClient.from_file(path, prepare=Slim())
    inv = await read_inventory(client, clock=_clock(), source="dump")
    objects = [o for res in _listed(client, await client.discover())
               for o in client.shared_items(res)] + client.malformed
    read, problems = well_formed(objects, inv.now)
    apart = Inventory(read, inv.resources, inv.now, source="dump", dump=True,
                      problems=problems, read=inv.read, notes=inv.notes)
    assert render(diagnose(inv), "json") == render(diagnose(apart), "json")


async def test_the_cluster_clock_is_found_in_the_walk(tmp_path: Path) -> None:
    """The cluster's clock ahead of ours, as the objects show it (``cluster_clock``): found
    in the inventory's walk over a dump, it is what ``cluster_time`` found over the objects
    listed: an object left out (its uid no string) counts, one the dump could not serve
    (its apiVersion no string) does not; a deletion whose time is no time (and no creation
    time) is read as beginning at the time judged at, the cluster's."""
    ahead = "2027-01-01T00:00:00Z"
    lease = obj("coordination.k8s.io/v1", "Lease", "l", ns="kube-node-lease")
    lease["spec"] = {"renewTime": "2026-11-30T00:00:00Z", "holderIdentity": "n1"}
    items = [*every_problem(), lease,
             obj("v1", "ConfigMap", "left-out", uid=7, creationTimestamp=ahead),
             {"apiVersion": 1, "kind": "ConfigMap", "metadata": {
                 "name": "unserved", "creationTimestamp": "2028-01-01T00:00:00Z"}},
             obj("v1", "ConfigMap", "now-deleting", creationTimestamp=None,
                 deletionTimestamp="soon", finalizers=["x.io/y"])]
    client = DumpClient.from_file(write(tmp_path, items), prepare=Slim())
    inv = await read_inventory(client, clock=_clock(), source="dump", follow_cluster_clock=True)
    listed = [o for res in _listed(client, await client.discover())
              for o in client.shared_items(res)]
    now, notes = judging_time(cluster_time(listed), NOW)
    assert format_time(now) == ahead and inv.now == now and notes
    read, problems = well_formed([*listed, *client.malformed], now)
    apart = Inventory(read, inv.resources, now, source="dump", dump=True, problems=problems,
                      read=inv.read, notes=inv.notes)
    assert inv.notes[0] == notes[0]
    assert inv.problems == apart.problems
    deleting = inv.find("", "ConfigMap", "shop", "now-deleting")
    assert deleting is not None and deleting["metadata"]["deletionTimestamp"] == ahead
    assert render(diagnose(inv), "json") == render(diagnose(apart), "json")


def _clock() -> Any:
    from kubegc.api.clock import ManualClock
    return ManualClock(NOW)


def _listed(client: DumpClient, discovered: list[Any]) -> list[Any]:
    from kubegc.tools.inventory import SKIPPED as NOT_READ
    from kubegc.tools.inventory import preferred_resources
    return [r.gvr for r in preferred_resources(discovered)
            if (r.group, r.resource) not in NOT_READ]


@pytest.mark.parametrize("crd_first", [True, False])
async def test_the_dump_client_stores_in_file_order_in_one_walk(crd_first: bool) -> None:
    """Two versions of one resource interleaved stay in file order; a CRD after its custom
    resources still names their resource (found after the walk, before they are stored)."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "sites.own.example.io"},
           "spec": {"group": "own.example.io", "scope": "Namespaced",
                    "names": {"plural": "sites", "kind": "Site"},
                    "versions": [{"name": "v1", "served": True}]}}
    sites = [obj("own.example.io/v1", "Site", f"s{i}") for i in range(3)]
    hpas = [obj(f"autoscaling/{'v2' if i % 2 else 'v1'}", "HorizontalPodAutoscaler", f"h{i}")
            for i in range(5)]
    items = [crd, *sites, *hpas] if crd_first else [*sites, *hpas, crd]
    client = DumpClient(items)
    found = {(r.group, r.resource) for r in await client.discover()}
    assert ("own.example.io", "sites") in found
    assert ("own.example.io", "sites") in found and ("own.example.io", "sits") not in found
    gvr = next(r.gvr for r in await client.discover() if r.resource == "sites")
    assert [o["metadata"]["name"] for o in client.shared_items(gvr)] == ["s0", "s1", "s2"]
    hpa = next(r.gvr for r in await client.discover()
               if r.resource == "horizontalpodautoscalers")
    assert [o["metadata"]["name"] for o in client.shared_items(hpa)] == [
        f"h{i}" for i in range(5)]
