"""The namespace controller: the deletion conditions (pure, the table of upstream's
TestNamespaceCondition), one deleter pass against FakeClient (pods first, finalizers,
finalize), and namespace termination in a real kubegc (upstream's e2e "should ensure that
all pods/services are removed when a namespace is deleted")."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError, is_not_found, resource_expired
from kubegc.api.resources import GroupVersionResource
from kubegc.client.fake import FakeClient, builtin_api_resources
from kubegc.client.interface import PatchType
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.namespace.deletion.namespaced_resources_deleter import (
    NamespacedResourcesDeleter,
    ResourcesRemainingError,
)
from kubegc.controllers.namespace.deletion.status_condition_utils import (
    CONDITION_TYPES,
    NamespaceConditionUpdater,
    successful_condition,
    update_conditions,
)
from kubegc.registry.generic import collection
from kubegc.testing import Cluster

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PODS = GroupVersionResource("", "v1", "pods")
SERVICES = GroupVersionResource("", "v1", "services")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
NOW = "2026-01-01T00:00:00Z"
OK = [successful_condition(t, NOW) for t in CONDITION_TYPES]


def bare(conditions: list[dict]) -> list[tuple]:
    return [(c["type"], c["status"], c.get("reason"), c.get("message")) for c in conditions]


@pytest.mark.parametrize(("new", "start", "expected"), [
    pytest.param([], [{"type": "unknown", "status": "True"}],
                 [{"type": "unknown", "status": "True"}, *OK], id="leave-unknown"),
    pytest.param([], [{"type": "NamespaceDeletionDiscoveryFailure", "status": "True"}], OK,
                 id="replace-with-success"),
    pytest.param([], [{"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "True"},
                      {"type": "NamespaceDeletionDiscoveryFailure", "status": "True"}],
                 [OK[1], OK[0], *OK[2:]], id="leave-different-order"),
    pytest.param([{"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "True",
                   "reason": "foo", "message": "bar"}],
                 [{"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "False"},
                  {"type": "NamespaceDeletionDiscoveryFailure", "status": "True"}],
                 [{"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "True",
                   "reason": "foo", "message": "bar"}, OK[0], *OK[2:]],
                 id="overwrite-with-failure"),
])
def test_update_conditions(new, start, expected) -> None:
    status = {"conditions": start}
    update_conditions(status, new, now=NOW)
    assert bare(status["conditions"]) == bare(expected)


def test_process_content_totals_messages() -> None:
    updater = NamespaceConditionUpdater(NOW)
    updater.process_content_totals({("apps.k8s.io", "daemonsets"): 5,
                                    ("apps.k8s.io", "deployments"): 5},
                                   {"service-catalog": 6, "kubedb": 5})
    assert bare(updater.new_conditions) == [
        ("NamespaceContentRemaining", "True", "SomeResourcesRemain",
         "Some resources are remaining: daemonsets.apps.k8s.io has 5 resource instances, "
         "deployments.apps.k8s.io has 5 resource instances"),
        ("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
         "Some content in the namespace has finalizers remaining: kubedb in 5 resource "
         "instances, service-catalog in 6 resource instances"),
    ]


def test_delete_content_errors_are_aggregated() -> None:
    updater = NamespaceConditionUpdater(NOW)
    updater.process_delete_content_err("b failed")
    updater.process_delete_content_err("a failed")
    ns: dict = {}
    assert updater.update(ns)
    failure = {c["type"]: c for c in ns["status"]["conditions"]}[
        "NamespaceDeletionContentFailure"]
    assert (failure["reason"], failure["message"]) == (
        "ContentDeletionFailed", "Failed to delete all resource types, 2 remaining: a failed, "
        "b failed")
    assert not updater.update(ns)  # unchanged: nothing to write


# -- one pass against FakeClient --------------------------------------------------------------

def terminating_namespace(client: FakeClient) -> None:
    client.add_object(NAMESPACES, {"metadata": {
        "name": "ns", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["hold"]},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating"}})


def verbs(client: FakeClient) -> list[str]:
    return [a for a in client.actions
            if a.split()[0] in ("delete", "delete-collection", "update")]


async def test_pods_first_then_the_rest_then_finalize() -> None:
    client = FakeClient(resources=builtin_api_resources())
    terminating_namespace(client)
    client.add_object(PODS, {"metadata": {"name": "p", "finalizers": ["example.com/x"]},
                             "spec": {"terminationGracePeriodSeconds": 30}}, namespace="ns")
    client.add_object(CONFIGMAPS, {"metadata": {"name": "cm"}}, namespace="ns")
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock())
    with pytest.raises(ResourcesRemainingError) as remaining:
        await deleter.delete("ns")
    assert remaining.value.pods_remaining and remaining.value.estimate == 30
    assert [a for a in verbs(client) if a.startswith("delete")] == [
        "delete-collection v1 pods ns"]
    assert client.stored(CONFIGMAPS, "cm", namespace="ns") is not None  # not yet
    await client.patch(PODS, "p", {"metadata": {"finalizers": None}}, namespace="ns")
    client.clear_actions()
    await deleter.delete("ns")
    assert "delete-collection v1 configmaps ns" in verbs(client)
    assert verbs(client)[-1] == "update v1 namespaces/finalize ns"
    ns = client.stored(NAMESPACES, "ns")
    assert ns["spec"]["finalizers"] == []
    assert {c["type"]: c["status"] for c in ns["status"]["conditions"]} == dict.fromkeys(
        CONDITION_TYPES, "False")


async def test_a_delete_collection_whose_snapshot_expired_goes_on_in_the_same_pass() -> None:
    """A DeleteCollection whose paged listing's snapshot was compacted (410 after some
    pages, each deleted) is started again at once on a fresh list: the pass finishes, with
    no failure to back off from; every object deleted is recorded once."""
    client = FakeClient(resources=builtin_api_resources())
    terminating_namespace(client)
    for i in range(3):
        client.add_object(CONFIGMAPS, {"metadata": {"name": f"cm{i}"}}, namespace="ns")
    real = client.delete_collection_each
    expired = []

    async def first_page_then_expired(gvr, each, **kwargs):  # type: ignore[no-untyped-def]
        if gvr == CONFIGMAPS and not expired:
            expired.append(True)
            listed = await client.get(CONFIGMAPS, "cm0", namespace="ns")
            await client.delete(CONFIGMAPS, "cm0", namespace="ns")
            each([listed])
            raise resource_expired("The provided continue parameter is too old to display a "
                                   "consistent list result.")
        return await real(gvr, each, **kwargs)

    client.delete_collection_each = first_page_then_expired  # type: ignore[method-assign]
    sink = InMemoryDeletionSink()
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock(), deletions=sink)
    await deleter.delete("ns")
    assert expired
    assert client.stored(NAMESPACES, "ns")["spec"]["finalizers"] == []
    assert sorted(d.object.name for d in sink.deletions) == ["cm0", "cm1", "cm2"]


async def test_without_ordered_deletion_everything_goes_in_one_pass() -> None:
    """``OrderedNamespaceDeletion`` off (1.30-1.32's default): the ConfigMap is deleted in
    the same pass as the pod that remains."""
    client = FakeClient(resources=builtin_api_resources())
    terminating_namespace(client)
    client.add_object(PODS, {"metadata": {"name": "p", "finalizers": ["example.com/x"]},
                             "spec": {"terminationGracePeriodSeconds": 30}}, namespace="ns")
    client.add_object(CONFIGMAPS, {"metadata": {"name": "cm"}}, namespace="ns")
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock(), ordered=False)
    with pytest.raises(ResourcesRemainingError) as remaining:
        await deleter.delete("ns")
    assert remaining.value.pods_remaining
    assert client.stored(CONFIGMAPS, "cm", namespace="ns") is None
    assert "delete-collection v1 configmaps ns" in verbs(client)


async def test_an_object_already_being_deleted_is_not_recorded_again() -> None:
    """A pod deleted in an earlier pass (or by someone else) and still terminating is in
    the next DeleteCollection's answer; that DELETE changed nothing: no second record."""
    client = FakeClient(resources=builtin_api_resources())
    terminating_namespace(client)
    client.add_object(PODS, {"metadata": {"name": "p", "finalizers": ["example.com/x"]},
                             "spec": {"terminationGracePeriodSeconds": 30}}, namespace="ns")
    sink = InMemoryDeletionSink()
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock(), deletions=sink,
                                         deleter="namespace-controller")
    for _ in range(3):
        with pytest.raises(ResourcesRemainingError):
            await deleter.delete("ns")
    assert [(d.object.kind, d.object.name) for d in sink.deletions] == [("Pod", "p")]


async def test_list_and_delete_each_where_deletecollection_is_not_served() -> None:
    """A resource whose discovery lacks ``deletecollection`` (or that answers 405) is
    listed and deleted item by item, with uid preconditions (``deleteEachItem``); each
    deleted object is recorded either way."""
    resources = [r if r.resource != "configmaps" else replace(
        r, verbs=tuple(v for v in r.verbs if v != "deletecollection"))
        for r in builtin_api_resources()]
    client = FakeClient(resources=resources)
    terminating_namespace(client)
    client.add_object(CONFIGMAPS, {"metadata": {"name": "cm"}}, namespace="ns")
    client.add_object(SERVICES, {"metadata": {"name": "s"}}, namespace="ns")
    sink = InMemoryDeletionSink()
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock(), deletions=sink,
                                         deleter="namespace-controller")
    await deleter.delete("ns")
    assert "delete v1 configmaps ns/cm" in verbs(client)
    assert "delete-collection v1 configmaps ns" not in verbs(client)
    assert "delete-collection v1 services ns" in verbs(client)
    assert sorted((d.deleter, d.object.kind, d.object.name, d.reason)
                  for d in sink.deletions) == [
        ("namespace-controller", "ConfigMap", "cm", "NamespaceDeleted"),
        ("namespace-controller", "Service", "s", "NamespaceDeleted")]


async def test_content_held_by_finalizers_is_reported_and_waited_for() -> None:
    client = FakeClient(resources=builtin_api_resources())
    terminating_namespace(client)
    client.add_object(DEPLOYMENTS, {"metadata": {"name": "d", "finalizers": [
        "custom.io/finalizer"]}}, namespace="ns")
    deleter = NamespacedResourcesDeleter(client, clock=ManualClock())
    with pytest.raises(ResourcesRemainingError) as remaining:
        await deleter.delete("ns")
    assert (remaining.value.estimate, remaining.value.pods_remaining) == (15, False)
    conditions = {c["type"]: c for c in client.stored(NAMESPACES, "ns")["status"]["conditions"]}
    assert conditions["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: deployments.apps has 1 resource instances")
    assert "update v1 namespaces/finalize ns" not in verbs(client)


# -- a real kubegc ------------------------------------------------------------------------------


def web_pod(name: str) -> dict:
    return {"metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def gone(client, gvr, name, namespace="") -> bool:
    try:
        await client.get(gvr, name, namespace=namespace)
    except StatusError as exc:
        return is_not_found(exc)
    return False


async def test_ns01_ns02_pods_and_services_go_with_the_namespace() -> None:
    async with Cluster(controllers=["garbagecollector", "kubelet", "scheduler", "endpoints",
                                    "namespace"], clock=ManualClock()) as c:
        client = c.client
        await client.create(NAMESPACES, {"metadata": {"name": "nsdeletetest"}})
        await client.create(PODS, web_pod("p"), namespace="nsdeletetest")
        await client.create(SERVICES, {"metadata": {"name": "s"}, "spec": {
            "selector": {"app": "web"}, "ports": [{"port": 80}]}}, namespace="nsdeletetest")
        await asyncio.wait_for(c.asettle(), 30)
        await client.delete(NAMESPACES, "nsdeletetest")
        await asyncio.wait_for(c.asettle(), 30)
        assert await gone(client, NAMESPACES, "nsdeletetest")
        await client.create(NAMESPACES, {"metadata": {"name": "nsdeletetest"}})
        assert (await client.list(PODS, namespace="nsdeletetest"))["items"] == []
        assert (await client.list(SERVICES, namespace="nsdeletetest"))["items"] == []


async def test_ns07_conditions_while_content_holds_finalizers() -> None:
    clock = ManualClock()
    async with Cluster(controllers=["garbagecollector", "kubelet", "scheduler", "namespace"],
                       clock=clock) as c:
        client = c.client
        await client.create(NAMESPACES, {"metadata": {"name": "ns07"}})
        await client.create(PODS, web_pod("p"), namespace="ns07")
        await client.create(DEPLOYMENTS, {"metadata": {"name": "d", "finalizers": [
            "custom.io/finalizer"]}, "spec": {
            "selector": {"matchLabels": {"app": "web"}}, "template": web_pod("")}},
            namespace="ns07")
        await asyncio.wait_for(c.asettle(), 30)
        await client.delete(NAMESPACES, "ns07")
        await asyncio.wait_for(c.asettle(), 30)
        ns = await client.get(NAMESPACES, "ns07")
        assert ns["status"]["phase"] == "Terminating"
        assert {cond["type"]: cond["message"] for cond in ns["status"]["conditions"]} == {
            "NamespaceDeletionGroupVersionParsingFailure":
                "All legacy kube types successfully parsed",
            "NamespaceDeletionDiscoveryFailure": "All resources successfully discovered",
            "NamespaceDeletionContentFailure":
                "All content successfully deleted, may be waiting on finalization",
            "NamespaceContentRemaining":
                "Some resources are remaining: deployments.apps has 1 resource instances",
            "NamespaceFinalizersRemaining": "Some content in the namespace has finalizers "
                                            "remaining: custom.io/finalizer in 1 resource "
                                            "instances",
        }
        assert await gone(client, PODS, "p", "ns07")
        await client.patch(DEPLOYMENTS, "d", {"metadata": {"finalizers": None}},
                           namespace="ns07", patch_type=PatchType.MERGE)
        for _ in range(10):  # the controller polls content held by finalizers with backoff
            clock.advance(1)
            await asyncio.wait_for(c.asettle(), 30)
        assert await gone(client, NAMESPACES, "ns07")


async def test_many_namespaces_terminate_concurrently() -> None:
    async with Cluster(controllers=["garbagecollector", "kubelet", "scheduler", "namespace"],
                       nodes=2) as c:
        client = c.client
        names = [f"nslifetest-{i}" for i in range(20)]
        for name in names:
            await client.create(NAMESPACES, {"metadata": {"name": name}})
            for i in range(5):
                await client.create(PODS, web_pod(f"p{i}"), namespace=name)
        await c.asettle()
        await asyncio.gather(*(client.delete(NAMESPACES, name) for name in names))
        await c.asettle()
        left = [n["metadata"]["name"] for n in (await client.list(NAMESPACES))["items"]]
        assert not set(names) & set(left)
        assert (await client.list(PODS))["items"] == []


async def test_its_records_wait_while_it_works_and_are_all_written_after() -> None:
    """The namespace controller's DeletionRecords wait while it has a namespace in hand or
    ready (they would take the loop from the deletion they explain, as the GC's would from
    a cascade); once it is idle every deleted object has its record."""
    async with Cluster(controllers=["namespace"]) as c:
        controller = c.cluster.controller_manager.get("namespace")
        sink = controller.sink
        assert not sink.busy()
        controller.queue.add("not-yet-synced")  # ready, no worker has run yet
        assert sink.busy()
        client = c.client
        await client.create(NAMESPACES, {"metadata": {"name": "held"}})
        for i in range(30):
            await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, namespace="held")
        await c.asettle()
        await client.delete(NAMESPACES, "held")
        await asyncio.wait_for(c.asettle(), 30)
        assert not sink.busy()
        assert await gone(client, NAMESPACES, "held")
        listed = await client.list(GroupVersionResource("kubegc.io", "v1", "deletionrecords"))
        about = {r["object"]["name"] for r in listed["items"]
                 if r["object"]["namespace"] == "held"}
        assert {f"c{i}" for i in range(30)} <= about


async def test_its_delete_collections_hold_a_page_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In process the controller takes each DeleteCollection's answer a page at a time
    (``delete_collection_each``): the server never lists the whole namespace at once, and
    every object still has its record."""
    monkeypatch.setattr(collection, "DELETE_COLLECTION_EACH_PAGE", 7)
    pages: list[int] = []
    delete_page = collection._delete_page

    async def spy(*args, **kwargs):
        pages.append(len(args[4].kvs))
        return await delete_page(*args, **kwargs)

    monkeypatch.setattr(collection, "_delete_page", spy)
    async with Cluster(controllers=["namespace"]) as c:
        client = c.client
        await client.create(NAMESPACES, {"metadata": {"name": "paged"}})
        for i in range(30):
            await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, namespace="paged")
        await client.delete(NAMESPACES, "paged")
        await asyncio.wait_for(c.asettle(), 30)
        assert await gone(client, NAMESPACES, "paged")
        assert max(pages) == 7 and sum(pages) >= 30
        listed = await client.list(GroupVersionResource("kubegc.io", "v1", "deletionrecords"))
        about = {r["object"]["name"] for r in listed["items"]
                 if r["object"]["namespace"] == "paged"}
        assert {f"c{i}" for i in range(30)} <= about


def test_a_failing_namespace_is_retried_at_least_every_minute() -> None:
    """Upstream's nsControllerRateLimiter: 5 ms doubling, capped at 60 s (a namespace held
    by an unavailable aggregated API is retried at least every minute)."""
    from kubegc.api.clock import ManualClock
    from kubegc.controllers.namespace.namespace_controller import ns_controller_rate_limiter

    limiter = ns_controller_rate_limiter(ManualClock())
    delays = [limiter.when("ns") for _ in range(30)]
    assert delays[0] == 0.005 and delays[1] == 0.01
    assert max(delays) == 60.0
