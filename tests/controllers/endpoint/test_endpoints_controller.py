"""The endpoints controller: which pods a Service lists and how (pure), the Endpoints
object it writes against FakeClient, and readiness via the kubelet in a real kubegc."""

from __future__ import annotations

import asyncio

import pytest

from kubegc.api.clock import ManualClock
from kubegc.client.fake import FakeClient
from kubegc.controllers.endpoint.endpoints_controller import (
    ENDPOINTS,
    SERVICES,
    EndpointsController,
    compute_subsets,
)
from kubegc.testing import Cluster

from ..workload_harness import PODS, eventually, quiet, running


def service(*, ports=None, selector=None, headless: bool = False, publish: bool = False,
            labels=None) -> dict:
    spec: dict = {"selector": {"app": "web"} if selector is None else selector,
                  "ports": [{"name": "http", "port": 80, "targetPort": "http"}]
                  if ports is None else ports}
    if headless:
        spec["clusterIP"] = "None"
    if publish:
        spec["publishNotReadyAddresses"] = True
    meta: dict = {"name": "web", "namespace": "ns"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def pod(name: str, ip: str | None, *, ready: bool = True, deleting: bool = False,
        phase: str = "Running", port: int = 8080, labels=None) -> dict:
    meta: dict = {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                  "labels": {"app": "web"} if labels is None else labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:30Z"
        meta["finalizers"] = ["example.com/hold"]  # keeps it in FakeClient
    status: dict = {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {
        "nodeName": "kubegc-node-1",
        "containers": [{"name": "c", "image": "nginx",
                        "ports": [{"name": "http", "containerPort": port}]}]}, "status": status}


def ips(subsets: list[dict], key: str = "addresses") -> list[str]:
    return [a["ip"] for s in subsets for a in s.get(key) or []]


@pytest.mark.parametrize(("svc", "pods", "ready", "not_ready"), [
    pytest.param(service(), [pod("b", "10.0.0.10"), pod("a", "10.0.0.9")],
                 ["10.0.0.9", "10.0.0.10"], [], id="sorted-by-ip"),
    pytest.param(service(), [pod("a", "10.0.0.1", ready=False)], [], ["10.0.0.1"],
                 id="not-ready"),
    pytest.param(service(publish=True), [pod("a", "10.0.0.1", ready=False)], ["10.0.0.1"], [],
                 id="publish-not-ready"),
    pytest.param(service(), [pod("a", "10.0.0.1", deleting=True), pod("b", "10.0.0.2")],
                 ["10.0.0.2"], [], id="terminating-leaves-at-once"),
    pytest.param(service(), [pod("a", None)], [], [], id="no-ip-yet"),
    pytest.param(service(), [pod("a", "10.0.0.1", phase="Succeeded")], [], [], id="terminal"),
    pytest.param(service(ports=[]), [pod("a", "10.0.0.1")], [], [], id="no-ports"),
    pytest.param(service(ports=[], headless=True), [pod("a", "10.0.0.1")], ["10.0.0.1"], [],
                 id="headless-without-ports"),
])
def test_compute_subsets(svc, pods, ready, not_ready) -> None:
    subsets = compute_subsets(svc, pods)
    assert (ips(subsets), ips(subsets, "notReadyAddresses")) == (ready, not_ready)


def test_ports_are_resolved_per_pod_and_repacked() -> None:
    subsets = compute_subsets(service(), [pod("a", "10.0.0.1"), pod("b", "10.0.0.2"),
                                          pod("c", "10.0.0.3", port=9090)])
    assert [(ips([s]), s["ports"]) for s in subsets] == [
        (["10.0.0.1", "10.0.0.2"], [{"name": "http", "port": 8080, "protocol": "TCP"}]),
        (["10.0.0.3"], [{"name": "http", "port": 9090, "protocol": "TCP"}]),
    ]
    address = subsets[0]["addresses"][0]
    assert address == {"ip": "10.0.0.1", "nodeName": "kubegc-node-1", "targetRef": {
        "kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"}}


async def test_writes_updates_and_deletes_endpoints() -> None:
    client = FakeClient()
    client.add_object(SERVICES, service(labels={"team": "a"}))
    client.add_object(PODS, pod("a", "10.0.0.1"))
    client.add_object(PODS, pod("other", "10.0.0.5", labels={"app": "db"}))
    async with running(EndpointsController, client) as controller:
        await eventually(lambda: client.stored(ENDPOINTS, "web", namespace="ns"))
        ep = client.stored(ENDPOINTS, "web", namespace="ns")
        assert ips(ep["subsets"]) == ["10.0.0.1"]
        assert ep["metadata"]["labels"] == {"team": "a"}
        client.add_object(PODS, pod("b", "10.0.0.2", ready=False))
        await eventually(lambda: ips(client.stored(ENDPOINTS, "web", namespace="ns")["subsets"],
                                     "notReadyAddresses") == ["10.0.0.2"])
        await client.delete(PODS, "a", namespace="ns")
        await eventually(lambda: ips(client.stored(ENDPOINTS, "web", namespace="ns")
                                     ["subsets"]) == [])
        await quiet(controller)
        writes = len([a for a in client.actions if "endpoints" in a and "update" in a])
        await client.patch(PODS, "other", {"metadata": {"labels": {"x": "y"}}}, namespace="ns")
        await quiet(controller)
        assert len([a for a in client.actions if "endpoints" in a and "update" in a]) == writes
        await client.delete(SERVICES, "web", namespace="ns")
        await eventually(lambda: client.stored(ENDPOINTS, "web", namespace="ns") is None)


async def test_service_without_selector_is_left_alone() -> None:
    client = FakeClient()
    client.add_object(SERVICES, service(selector={}))
    client.add_object(ENDPOINTS, {"metadata": {"name": "web", "namespace": "ns"},
                                  "subsets": [{"addresses": [{"ip": "192.168.1.1"}]}]})
    async with running(EndpointsController, client) as controller:
        await quiet(controller)
        assert ips(client.stored(ENDPOINTS, "web", namespace="ns")["subsets"]) == ["192.168.1.1"]



async def test_readiness_from_the_kubelet_moves_pods_between_address_lists() -> None:
    from kubegc.api.resources import GroupVersionResource

    namespaces = GroupVersionResource("", "v1", "namespaces")
    async with Cluster(controllers=["kubelet", "scheduler", "endpoints"],
                       clock=ManualClock(), nodes=2) as c:
        client = c.client
        await client.create(namespaces, {"metadata": {"name": "ns"}})
        await client.create(SERVICES, service(), namespace="ns")
        for name, ready in (("a", "true"), ("b", "false")):
            p = pod(name, None)
            del p["status"], p["spec"]["nodeName"], p["metadata"]["uid"]
            p["metadata"]["annotations"] = {"kubegc.io/ready": ready}
            await client.create(PODS, p, namespace="ns")
        await asyncio.wait_for(c.asettle(), 30)
        ep = await client.get(ENDPOINTS, "web", namespace="ns")
        by_name = {a["targetRef"]["name"]: key for s in ep["subsets"]
                   for key in ("addresses", "notReadyAddresses") for a in s.get(key) or []}
        assert by_name == {"a": "addresses", "b": "notReadyAddresses"}
        await client.patch(PODS, "b", {"metadata": {"annotations": {"kubegc.io/ready": "true"}}},
                           namespace="ns")
        await asyncio.wait_for(c.asettle(), 30)
        ep = await client.get(ENDPOINTS, "web", namespace="ns")
        assert sorted(a["targetRef"]["name"] for s in ep["subsets"]
                      for a in s.get("addresses") or []) == ["a", "b"]
