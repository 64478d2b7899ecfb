"""The deletion story with kr8s' asyncio API (``kr8s.asyncio``, which its sync API wraps):
``APIObject`` subclasses (``create``, ``patch(type="json")``, merge patches, ``delete(
propagation_policy=…)``, ``wait("delete")``), ``api.get`` by kind name (discovery),
``api.async_watch``; kr8s has no strategic merge patch or server-side apply of its own,
so those go through ``api.call_api`` as its users do."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import kr8s
import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import APIObject, get_class, new_class
from kr8s.objects import Namespace, Pod, StatefulSet

from ..conftest import Server
from .adapters import BlockingDriver, Event, LoopThread
from .story import APPLY_PATCH, DELETION_RECORD, Kind, Obj, PatchType, Story

DeletionRecord = new_class("DeletionRecord", DELETION_RECORD.api_version, namespaced=False)


class Kr8sDriver:
    def __init__(self, api: Any, namespace: str) -> None:
        self.api = api
        self.namespace = namespace

    def _object(self, kind: Kind, spec: Obj | str) -> APIObject:
        cls = DeletionRecord if kind is DELETION_RECORD else get_class(kind.kind,
                                                                         kind.api_version)
        namespace = self.namespace if kind.namespaced else None
        return cls(spec, namespace=namespace, api=self.api)

    async def create(self, obj: Obj) -> Obj:
        o = self._object(_kind(obj), obj)
        await o.create()
        return _raw(o)

    async def get(self, kind: Kind, name: str) -> Obj | None:
        o = self._object(kind, name)
        if not await o.exists():
            return None
        await o.refresh()
        return _raw(o)

    async def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        resource = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
        found = self.api.get(resource, namespace=self.namespace if kind.namespaced else None,
                             label_selector=label_selector)
        return [_raw(o) async for o in found]

    async def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        o = self._object(kind, name)
        if patch_type is PatchType.STRATEGIC:
            return await self._raw_patch(o, patch, patch_type.content_type)
        await o.patch(patch, type="json" if patch_type is PatchType.JSON else None)
        return _raw(o)

    async def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return await self._raw_patch(self._object(_kind(obj), obj), obj, APPLY_PATCH,
                                     params={"fieldManager": field_manager, "force": "true"})

    async def _raw_patch(self, o: APIObject, patch: Any, content_type: str,
                         params: dict[str, str] | None = None) -> Obj:
        async with self.api.call_api("PATCH", version=o.version, namespace=o.namespace,
                                     url=f"{o.endpoint}/{o.name}", content=json.dumps(patch),
                                     headers={"Content-Type": content_type},
                                     params=params or {}) as response:
            out: Obj = response.json()
            return out

    async def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        await self._object(kind, name).delete(propagation_policy=propagation_policy)

    async def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        await self._object(kind, name).wait("delete", timeout=timeout)

    async def watch(self, kind: Kind, *, label_selector: str) -> AsyncIterator[Event]:
        async for event, o in self.api.async_watch(kind.plural, namespace=self.namespace,
                                                   label_selector=label_selector):
            yield event, _raw(o)


def _raw(o: APIObject) -> Obj:
    out: Obj = o.to_dict()
    return out


def _kind(obj: Obj) -> Kind:
    from .story import KINDS

    return KINDS[obj["kind"]]


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    with LoopThread() as loop:
        yield loop


def test_deletion_story(server: Server, namespace: str, loop: LoopThread) -> None:
    api = loop.run(kr8s.asyncio.api(kubeconfig=str(server.kubeconfig)))
    Story(BlockingDriver(Kr8sDriver(api, namespace), loop)).run()


def test_sync_api_waits_on_a_statefulsets_available_replicas(server: Server,
                                                             namespace: str) -> None:
    """kr8s' own test idiom (its ``test_wait_replicas``), with its sync API: ``wait`` on
    ``{.status.availableReplicas}`` reads the field from every version of the object it
    sees, the first one (the create's answer) included; then a foreground deletion that
    takes the pods with it."""
    api = _sync_api_in(server, namespace)
    labels = {"app": "web"}
    sts = StatefulSet({"metadata": {"name": "web", "namespace": namespace}, "spec": {
        "replicas": 2, "selector": {"matchLabels": labels}, "serviceName": "web",
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}, api=api)
    sts.create()
    sts.wait("jsonpath='{.status.availableReplicas}'=2", timeout=30)
    pods = list(api.get(Pod, namespace=namespace, label_selector=labels))
    assert sorted(p.name for p in pods) == ["web-0", "web-1"]
    assert all(p.metadata.ownerReferences[0].uid == sts.metadata.uid for p in pods)
    sts.delete(propagation_policy="Foreground")
    sts.wait("delete", timeout=30)
    assert not list(api.get(Pod, namespace=namespace, label_selector=labels))


def test_sync_api_tolerate(server: Server, namespace: str) -> None:
    """kr8s' own ``test_pod_tolerate``: ``Pod.tolerate`` appends to the tolerations a real
    cluster's DefaultTolerationSeconds admission gives every pod, and patches them back."""
    api = _sync_api_in(server, namespace)
    pod = Pod({"metadata": {"name": "p", "namespace": namespace},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, api=api)
    pod.create()
    pod.tolerate("gpu", operator="Exists", effect="NoSchedule")
    pod.refresh()
    assert [t.key for t in pod.spec.tolerations] == [
        "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "gpu"]


def _sync_api_in(server: Server, namespace: str) -> Any:
    api = kr8s.api(kubeconfig=str(server.kubeconfig))
    Namespace({"metadata": {"name": namespace}}, api=api).create()
    return api
