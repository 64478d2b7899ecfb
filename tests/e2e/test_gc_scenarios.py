"""The garbage collector's integration scenarios (upstream's
test/integration/garbagecollector) against a real ``kubegc serve`` running only the garbage
collector, as upstream's integration tests run no other controller. Requests go over HTTP,
as kubectl sends them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import ListOptions, PatchType
from kubegc.client.rest import RestClient

from .conftest import Server, start_server, stop_server
from .gc_helpers import (
    CONFIGMAPS,
    CRDS,
    NAMESPACES,
    PODS,
    PVS,
    RC,
    RECORDS,
    SECRETS,
    delete,
    eventually,
    exists,
    names,
    new_pod,
    new_rc,
    ref,
    rest_client,
    settle,
)

EVENTS = GroupVersionResource("", "v1", "events")


@pytest.fixture(scope="module")
def gc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(tmp_path_factory.mktemp("gc"), "--controllers", "garbagecollector")
    yield s
    stop_server(s)


@pytest.fixture
async def c(gc_server: Server) -> AsyncIterator[RestClient]:
    client = rest_client(gc_server)
    yield client
    await client.close()


@pytest.fixture
async def ns(c: RestClient) -> str:
    name = f"gc-{uuid.uuid4().hex[:8]}"
    await c.create(NAMESPACES, {"metadata": {"name": name}})
    return name


async def test_it01_cascading_deletion(c: RestClient, ns: str, gc_server: Server) -> None:
    rc1 = await new_rc(c, ns, "test.rc.1")
    rc2 = await new_rc(c, ns, "test.rc.2")
    await new_pod(c, ns, "test.pod.1", [ref(rc1)])
    await new_pod(c, ns, "test.pod.3", [ref(rc1), ref(rc2)])
    await new_pod(c, ns, "test.pod.2")
    await settle(gc_server)
    await delete(c, RC, "test.rc.1", ns, orphan=False)
    await eventually(lambda: _gone(c, PODS, "test.pod.1", ns), what="test.pod.1 deleted")
    await settle(gc_server)
    assert await names(c, PODS, ns) == ["test.pod.2", "test.pod.3"]
    pod3 = await c.get(PODS, "test.pod.3", namespace=ns)
    assert [r["name"] for r in pod3["metadata"]["ownerReferences"]] == ["test.rc.2"]


async def _gone(c: RestClient, gvr: Any, name: str, ns: str = "") -> bool:
    return not await exists(c, gvr, name, ns)


async def test_it02_create_with_nonexistent_owner(c: RestClient, ns: str) -> None:
    await new_pod(c, ns, "test.pod.1", [{"apiVersion": "v1", "kind": "ReplicationController",
                                         "name": "test.rc.1", "uid": "doesn't matter"}])
    await eventually(lambda: _gone(c, PODS, "test.pod.1", ns), what="pod with absent owner gone")

    async def mine() -> list[dict[str, Any]]:  # records are written once the GC is idle
        records = await c.list(RECORDS)
        return [r for r in records["items"] if r["object"]["name"] == "test.pod.1"
                and r["object"]["namespace"] == ns]

    [record] = await eventually(mine, what="deletion record written")
    assert record["reason"] == "OwnerAbsent"


STRESS_GROUPS: list[tuple[list[str] | None, dict[str, Any], bool]] = [
    ([], {}, True),  # RC v1 default policy is orphan
    (["orphan"], {}, True),
    (["orphan"], {"orphan": False}, False),
    ([], {"orphan": True}, True),
    ([], {"policy": "Orphan"}, True),
]


async def test_it03_stressing_cascading_deletion(c: RestClient, ns: str,
                                                 gc_server: Server) -> None:
    """50 RCs and 150 pods over five policies; exactly 120 pods remain."""

    async def collection(i: int) -> None:
        for g, (finalizers, _, _) in enumerate(STRESS_GROUPS, start=1):
            name = f"collection{g}-rc-{i}"
            rc = await new_rc(c, ns, name, finalizers=finalizers)
            await asyncio.gather(*(new_pod(c, ns, f"collection{g}-pod-{i}-{k}", [ref(rc)])
                                   for k in range(3)))

    await asyncio.gather(*(collection(i) for i in range(10)))
    # every pod observed before its owner's deletion (the wait of upstream's
    # TestStressingCascadingDeletion)
    await settle(gc_server)

    async def delete_all(i: int) -> None:
        for g, (_, options, _) in enumerate(STRESS_GROUPS, start=1):
            await delete(c, RC, f"collection{g}-rc-{i}", ns, **options)

    await asyncio.gather(*(delete_all(i) for i in range(10)))
    await eventually(lambda: _count(c, RC, ns, 0), timeout=120, what="all RCs gone")
    await settle(gc_server)
    pods = await names(c, PODS, ns)
    assert len(pods) == 120
    assert all(p.split("-")[0] in ("collection1", "collection2", "collection4", "collection5")
               for p in pods)


async def _count(c: RestClient, gvr: Any, ns: str, n: int) -> bool:
    return len(await names(c, gvr, ns)) == n


async def test_it04_orphaning(c: RestClient, ns: str, gc_server: Server) -> None:
    rc = await new_rc(c, ns, "test.rc.1")
    for k in range(3):
        await new_pod(c, ns, f"pod-{k}", [ref(rc)])
    await settle(gc_server)
    await delete(c, RC, "test.rc.1", ns, orphan=True)
    await eventually(lambda: _gone(c, RC, "test.rc.1", ns), what="RC gone")
    for k in range(3):
        pod = await c.get(PODS, f"pod-{k}", namespace=ns)
        assert not pod["metadata"].get("ownerReferences")


async def test_it05_solid_owner_does_not_block_waiting_owner(c: RestClient, ns: str) -> None:
    rc1 = await new_rc(c, ns, "rc1")
    rc2 = await new_rc(c, ns, "rc2")
    await new_pod(c, ns, "pod", [ref(rc1, block=True), ref(rc2)])
    await delete(c, RC, "rc1", ns, policy="Foreground")
    await eventually(lambda: _gone(c, RC, "rc1", ns), what="rc1 gone")
    pod = await c.get(PODS, "pod", namespace=ns)
    assert [r["name"] for r in pod["metadata"]["ownerReferences"]] == ["rc2"]


async def test_it06_non_blocking_owner_ref_does_not_block(c: RestClient, ns: str,
                                                          gc_server: Server) -> None:
    rc = await new_rc(c, ns, "rc")
    await new_pod(c, ns, "pod1", [ref(rc)], finalizers=["x/y"])
    await new_pod(c, ns, "pod2", [ref(rc, block=False)], finalizers=["x/y"])
    await delete(c, RC, "rc", ns, policy="Foreground")
    await eventually(lambda: _gone(c, RC, "rc", ns), what="rc gone")
    assert await names(c, PODS, ns) == ["pod1", "pod2"]
    await _release(c, ns, "pod1", "pod2")


async def _release(c: RestClient, ns: str, *pods: str) -> None:
    for name in pods:
        await c.patch(PODS, name, [{"op": "remove", "path": "/metadata/finalizers"}],
                      namespace=ns, patch_type=PatchType.JSON)


async def _finalizers(c: RestClient, ns: str, name: str) -> list[str]:
    return list((await c.get(PODS, name, namespace=ns))["metadata"].get("finalizers") or [])


async def test_it07_double_deletion_with_finalizer(c: RestClient, ns: str) -> None:
    await new_pod(c, ns, "lucy", finalizers=["x/y"])
    for _ in range(2):
        await delete(c, PODS, "lucy", ns, policy="Foreground")
        await eventually(lambda: _only_xy(c, ns), timeout=10, what="foregroundDeletion removed")
    await _release(c, ns, "lucy")
    await eventually(lambda: _gone(c, PODS, "lucy", ns), timeout=10, what="lucy gone")


async def _only_xy(c: RestClient, ns: str) -> bool:
    return await _finalizers(c, ns, "lucy") == ["x/y"]


async def test_it08_blocking_owner_ref_does_block(c: RestClient, ns: str,
                                                  gc_server: Server) -> None:
    rc = await new_rc(c, ns, "rc")
    await new_pod(c, ns, "pod", [ref(rc, block=True)], finalizers=["x/y"])
    await settle(gc_server)
    await delete(c, RC, "rc", ns, policy="Foreground")
    await settle(gc_server)
    held = await c.get(RC, "rc", namespace=ns)
    assert held["metadata"]["finalizers"] == ["foregroundDeletion"]
    pod = await c.get(PODS, "pod", namespace=ns)
    assert pod["metadata"].get("deletionTimestamp")  # the GC issued its delete
    await _release(c, ns, "pod")
    await eventually(lambda: _gone(c, RC, "rc", ns), what="rc gone once the pod is")


def _crd(group: str, kind: str, *, scope: str = "Namespaced") -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                               "listKind": f"{kind}List"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _cr(group: str, kind: str, name: str,
        owners: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": kind,
            "metadata": {"name": name, "ownerReferences": list(owners)}}


async def _make_crd(c: RestClient, kind: str, *, scope: str = "Namespaced") -> Any:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    await c.create(CRDS, _crd(group, kind, scope=scope))
    return group, GroupVersionResource(group, "v1", kind.lower() + "s")


async def test_it09_custom_resource_cascading_deletion(c: RestClient, ns: str) -> None:
    group, gvr = await _make_crd(c, "Foo")
    owner = await eventually(lambda: _try_create(c, gvr, _cr(group, "Foo", "owner"), ns),
                             what="CR type served")
    await c.create(gvr, _cr(group, "Foo", "dependent", [ref(owner)]), namespace=ns)
    await delete(c, gvr, "owner", ns, policy="Foreground")
    await eventually(lambda: _gone(c, gvr, "owner", ns), what="owner gone")
    assert not await exists(c, gvr, "dependent", ns)


async def _try_create(c: RestClient, gvr: Any, body: dict[str, Any], ns: str) -> Any:
    try:
        return await c.create(gvr, body, namespace=ns)
    except StatusError as e:
        if e.code == 404:
            return None
        raise


async def test_it10_mixed_relationships(c: RestClient, ns: str) -> None:
    group, gvr = await _make_crd(c, "Bar")
    custom_owner = await eventually(lambda: _try_create(c, gvr, _cr(group, "Bar", "cowner"), ns),
                                    what="CR type served")
    await c.create(CONFIGMAPS, {"metadata": {"name": "cm-dependent",
                                             "ownerReferences": [ref(custom_owner)]}},
                   namespace=ns)
    core_owner = await c.create(CONFIGMAPS, {"metadata": {"name": "cm-owner"}}, namespace=ns)
    await c.create(gvr, _cr(group, "Bar", "cdependent", [ref(
        dict(core_owner, apiVersion="v1", kind="ConfigMap"))]), namespace=ns)
    await delete(c, gvr, "cowner", ns, policy="Foreground")
    await eventually(lambda: _gone(c, gvr, "cowner", ns), what="custom owner gone")
    await eventually(lambda: _gone(c, CONFIGMAPS, "cm-dependent", ns), what="cm dependent gone")
    await delete(c, CONFIGMAPS, "cm-owner", ns, policy="Foreground")
    await eventually(lambda: _gone(c, CONFIGMAPS, "cm-owner", ns), what="core owner gone")
    assert not await exists(c, gvr, "cdependent", ns)


async def test_it11_crd_deletion_cascading(c: RestClient, ns: str, gc_server: Server) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    gvr = GroupVersionResource(group, "v1", "bazs")
    for _ in range(2):  # the second pass proves a re-created type is monitored again
        await c.create(CRDS, _crd(group, "Baz"))
        owner = await eventually(lambda: _try_create(c, gvr, _cr(group, "Baz", "owner"), ns),
                                 what="CR type served")
        await c.create(CONFIGMAPS, {"metadata": {"name": "dependent",
                                                 "ownerReferences": [ref(owner)]}},
                       namespace=ns)
        await settle(gc_server)
        await delete(c, CRDS, f"bazs.{group}")
        await eventually(lambda: _gone(c, CRDS, f"bazs.{group}"), what="CRD gone")
        await eventually(lambda: _gone(c, CONFIGMAPS, "dependent", ns), what="dependent gone")


async def test_it13_cross_namespace_references_after_restart(tmp_path: Path) -> None:
    """Objects created before the GC starts (a controller-manager restart)."""
    data = tmp_path / "restart"
    quiet = start_server(data, "--controllers", "")
    try:
        c = rest_client(quiet)
        for name in ("a", "b"):
            await c.create(NAMESPACES, {"metadata": {"name": name}})
        parent = await c.create(CONFIGMAPS, {"metadata": {"name": "parent"}}, namespace="b")
        parent = dict(parent, apiVersion="v1", kind="ConfigMap")
        for i in range(10):
            await c.create(SECRETS, {"metadata": {"name": f"child-{i}", "ownerReferences": [
                ref(parent, controller=False)]}}, namespace="b")
        bad = {"apiVersion": "v1", "kind": "Pod", "name": "invalid",
               "uid": parent["metadata"]["uid"], "controller": False}
        invalid = [{"apiVersion": "test/v1", "kind": f"invalid{i}", "name": "invalid",
                    "uid": f"invalid-{i}"} for i in range(25)] + [bad]
        for i in range(5):
            await c.create(CONFIGMAPS, {"metadata": {"name": f"invalid-child-{i}",
                                                     "ownerReferences": invalid}}, namespace="a")
            await c.create(SECRETS, {"metadata": {"name": f"invalid-child-a-{i}",
                                                  "ownerReferences": invalid}}, namespace="a")
            await c.create(SECRETS, {"metadata": {
                "name": f"invalid-child-b-{i}", "labels": {"single-bad-reference": "true"},
                "ownerReferences": [bad]}}, namespace="a")
        await c.close()
    finally:
        stop_server(quiet)
    server = start_server(data, "--controllers", "garbagecollector")
    c = rest_client(server)
    try:
        await eventually(lambda: _none_labelled(c), what="single-bad-reference secrets deleted")
        await settle(server)
        assert await names(c, SECRETS, "b") == sorted(f"child-{i}" for i in range(10))
        assert await exists(c, CONFIGMAPS, "parent", "b")
        await c.create(SECRETS, {"metadata": {"name": "invalid-child-c", "ownerReferences": [
            bad]}}, namespace="a")
        await eventually(lambda: _gone(c, SECRETS, "invalid-child-c", "a"), timeout=10,
                         what="late invalid child deleted")
        events = await c.list(EVENTS, namespace="a")
        warnings = [e for e in events["items"] if e.get("reason") == "OwnerRefInvalidNamespace"]
        assert warnings
        assert warnings[0]["type"] == "Warning"
        assert warnings[0]["message"] == (
            f'ownerRef [v1/Pod, namespace: a, name: invalid, uid: {parent["metadata"]["uid"]}] '
            'does not exist in namespace "a"')
        # the 26-reference children reference unknown kinds: never deleted
        assert len(await names(c, CONFIGMAPS, "a")) >= 5
    finally:
        await c.close()
        stop_server(server)


async def _none_labelled(c: RestClient) -> bool:
    listed = await c.list(SECRETS, namespace="a",
                          options=ListOptions(label_selector="single-bad-reference=true"))
    return not listed["items"]


async def test_it14_cluster_scoped_owners(c: RestClient, ns: str, gc_server: Server) -> None:
    pv = await c.create(PVS, {"metadata": {"name": f"pv-{ns}"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/tmp"}}})
    pv = dict(pv, apiVersion="v1", kind="PersistentVolume")
    await c.create(CONFIGMAPS, {"metadata": {"name": "cm-valid", "ownerReferences": [ref(pv)]}},
                   namespace=ns)
    await c.create(CONFIGMAPS, {"metadata": {"name": "cm-missing", "ownerReferences": [{
        "apiVersion": "v1", "kind": "PersistentVolume", "name": "missing-name",
        "uid": "missing-uid"}]}}, namespace=ns)
    await c.create(CONFIGMAPS, {"metadata": {"name": "cm-invalid", "ownerReferences": [{
        "apiVersion": "unknown.group/v1", "kind": "UnknownType", "name": "invalid-name",
        "uid": "invalid-uid"}]}}, namespace=ns)
    await eventually(lambda: _gone(c, CONFIGMAPS, "cm-missing", ns), what="cm-missing deleted")
    await settle(gc_server)
    assert await exists(c, CONFIGMAPS, "cm-valid", ns)
    assert await exists(c, CONFIGMAPS, "cm-invalid", ns)


async def test_cluster_scoped_child_of_a_namespaced_owner_gets_upstreams_warning(
        c: RestClient, ns: str, gc_server: Server) -> None:
    """Rules 10 and 12: upstream reports the child's own (empty) namespace, word for word
    (graph_builder.go ``reportInvalidNamespaceOwnerRef``; garbagecollector_test.go expects
    ``namespace: , ...] does not exist in namespace ""``), on the child, whose event lands
    in "default"; the child is never collected."""
    owner = await c.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, namespace=ns)
    uid = owner["metadata"]["uid"]
    await settle(gc_server)  # the owner is observed before its invalid child
    child = await c.create(PVS, {"metadata": {"name": f"pv-child-{ns}", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/tmp"}}})

    async def warnings() -> list[dict[str, Any]]:
        listed = await c.list(EVENTS, namespace="default")
        return [e for e in listed["items"] if e.get("reason") == "OwnerRefInvalidNamespace"
                and e["involvedObject"].get("uid") == child["metadata"]["uid"]]

    [event] = await eventually(warnings, what="OwnerRefInvalidNamespace event")
    assert event["type"] == "Warning"
    assert event["message"] == (f'ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {uid}] '
                                'does not exist in namespace ""')
    assert event["involvedObject"]["kind"] == "PersistentVolume"
    assert not event["involvedObject"].get("namespace")
    assert event["source"] == {"component": "garbage-collector-controller"}  # upstream's
    await settle(gc_server)
    assert await exists(c, PVS, f"pv-child-{ns}")


async def test_debug_graph_in_dot(c: RestClient, ns: str, gc_server: Server) -> None:
    rc = await new_rc(c, ns, "rc")
    pod = await new_pod(c, ns, "pod", [ref(rc, block=True)])
    await settle(gc_server)
    graph = "/debug/controllers/garbagecollector/graph"
    status, body = await asyncio.to_thread(
        gc_server.http, "GET", f"{graph}?uid={pod['metadata']['uid']}")
    text = body.decode()
    assert status == 200 and "digraph" in text
    assert rc["metadata"]["uid"] in text and pod["metadata"]["uid"] in text
    status, whole = await asyncio.to_thread(gc_server.http, "GET", graph)
    assert status == 200 and len(whole) >= len(body)


async def test_deletion_records_explain_a_deletion(c: RestClient, ns: str) -> None:
    """The record outlives events: why was the pod deleted, and by which decision."""
    rc = await new_rc(c, ns, "rc")
    pod = await new_pod(c, ns, "pod", [ref(rc)])
    await delete(c, RC, "rc", ns, policy="Background")
    await eventually(lambda: _gone(c, PODS, "pod", ns), what="pod deleted")

    async def record() -> Any:
        listed = await c.list(RECORDS, options=ListOptions(
            label_selector=f"kubegc.io/object-uid={pod['metadata']['uid']}"))
        return listed["items"]

    [rec] = await eventually(record, what="deletion record written")
    assert (rec["action"], rec["reason"], rec["propagationPolicy"]) == (
        "delete", "OwnerAbsent", "Background")
    assert rec["owners"][0]["uid"] == rc["metadata"]["uid"]


async def test_deletion_records_survive_a_clean_shutdown_right_after_a_cascade(
        tmp_path: Path) -> None:
    """Records are written after the GC's work (deferred, batched); a SIGTERM right after
    the last dependent is gone must still leave one DeletionRecord per deletion."""
    data = tmp_path / "records"
    server = start_server(data, "--controllers", "garbagecollector")
    dependents = 500
    c = rest_client(server)
    try:
        await c.create(NAMESPACES, {"metadata": {"name": "cascade"}})
        owner = await c.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, namespace="cascade")
        owner = dict(owner, apiVersion="v1", kind="ConfigMap")
        sem = asyncio.Semaphore(32)

        async def dependent(i: int) -> None:
            async with sem:
                await c.create(CONFIGMAPS, {"metadata": {
                    "name": f"dep-{i}", "ownerReferences": [ref(owner)]}}, namespace="cascade")

        await asyncio.gather(*(dependent(i) for i in range(dependents)))
        await settle(server)
        await delete(c, CONFIGMAPS, "owner", "cascade", policy="Background")
        await eventually(lambda: _none_left(c, "cascade"), what="dependents deleted")
    finally:
        await c.close()
        stop_server(server)
    assert server.process.returncode == 0, server.log_tail()
    server = start_server(data, "--controllers", "")
    c = rest_client(server)
    try:
        listed = await c.list(RECORDS, options=ListOptions(
            label_selector="kubegc.io/object-namespace=cascade,kubegc.io/action=delete"))
        assert sorted(r["object"]["name"] for r in listed["items"]) == sorted(
            f"dep-{i}" for i in range(dependents))
    finally:
        await c.close()
        stop_server(server)


async def _none_left(c: RestClient, ns: str) -> bool:
    return not (await c.list(CONFIGMAPS, namespace=ns))["items"]
