"""Helpers for the garbage-collector scenarios: a RestClient to a ``kubegc serve`` process
and the objects upstream's GC integration tests build (RCs, pods, owner references)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import Client, DeleteOptions
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient

from .conftest import Server

RC = GroupVersionResource("", "v1", "replicationcontrollers")
PODS = GroupVersionResource("", "v1", "pods")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PVS = GroupVersionResource("", "v1", "persistentvolumes")
CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
RECORDS = GroupVersionResource("kubegc.io", "v1", "deletionrecords")


def rest_client(server: Server) -> RestClient:
    return RestClient(load_kubeconfig(str(server.kubeconfig)))


def ref(owner: dict[str, Any], *, block: bool | None = None,
        controller: bool | None = None) -> dict[str, Any]:
    out = {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if block is not None:
        out["blockOwnerDeletion"] = block
    if controller is not None:
        out["controller"] = controller
    return out


async def new_rc(c: Client, ns: str, name: str, *, finalizers: list[str] | None = None,
                 replicas: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if finalizers is not None:
        meta["finalizers"] = finalizers
    return await c.create(RC, {"apiVersion": "v1", "kind": "ReplicationController",
                               "metadata": meta, "spec": {
                                   "replicas": replicas, "selector": {"name": "test"},
                                   "template": {"metadata": {"labels": {"name": "test"}},
                                                "spec": {"containers": [
                                                    {"name": "c", "image": "fake"}]}}}},
                          namespace=ns)


async def new_pod(c: Client, ns: str, name: str, owners: Sequence[dict[str, Any]] = (),
                  *, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "ownerReferences": list(owners)}
    if finalizers:
        meta["finalizers"] = finalizers
    return await c.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                 "spec": {"containers": [{"name": "c", "image": "fake"}]}},
                          namespace=ns)


async def exists(c: Client, gvr: GroupVersionResource, name: str, ns: str = "") -> bool:
    try:
        await c.get(gvr, name, namespace=ns)
    except StatusError as e:
        if e.code == 404:
            return False
        raise
    return True


async def names(c: Client, gvr: GroupVersionResource, ns: str) -> list[str]:
    listed = await c.list(gvr, namespace=ns)
    return sorted(i["metadata"]["name"] for i in listed["items"])


async def delete(c: Client, gvr: GroupVersionResource, name: str, ns: str = "", *,
                 policy: str | None = None, orphan: bool | None = None,
                 uid: str | None = None) -> dict[str, Any]:
    return await c.delete(gvr, name, namespace=ns, options=DeleteOptions(
        propagation_policy=policy, orphan_dependents=orphan, preconditions_uid=uid))


async def eventually(fn: Callable[[], Awaitable[Any]], *, timeout: float = 30,
                     what: str = "condition") -> Any:
    """Await ``fn()`` until truthy; fail with ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        last = await fn()
        if last:
            return last
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} not met within {timeout}s (last: {last!r})")


async def settle(server: Server) -> None:
    await asyncio.to_thread(server.settle)
