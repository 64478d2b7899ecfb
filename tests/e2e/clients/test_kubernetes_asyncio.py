"""The deletion story with the official client's asyncio API, ``kubernetes.aio``, and with
``kubernetes_asyncio`` (a separate package with the same generated surface): typed APIs
awaited on an event loop, ``watch.Watch().stream`` as an async iterator."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import pytest

from ..conftest import Server
from .adapters import BlockingDriver, Event, LoopThread
from .story import APPLY_PATCH, DELETION_RECORD, KINDS, Kind, Obj, PatchType, Story
from .test_kubernetes import TypedApis


class AsyncTypedDriver(TypedApis):
    """The typed APIs, awaited; ``pkg`` is ``kubernetes.aio`` or ``kubernetes_asyncio``."""

    def __init__(self, pkg: ModuleType, api: Any, namespace: str) -> None:
        super().__init__(pkg.client, api, namespace)
        self.pkg = pkg

    async def create(self, obj: Obj) -> Obj:
        return self._dict(await self._call("create", KINDS[obj["kind"]], body=obj))

    async def get(self, kind: Kind, name: str) -> Obj | None:
        try:
            return self._dict(await self._call("read", kind, name=name))
        except self.pkg.client.ApiException as e:
            if e.status == 404:
                return None
            raise

    async def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        if kind is DELETION_RECORD:
            listed = await self.custom.list_cluster_custom_object(
                kind.group, kind.version, kind.plural, label_selector=label_selector)
            items: list[Obj] = listed["items"]
            return items
        listed = await self._call("list", kind, label_selector=label_selector)
        return self._dict(listed)["items"]

    async def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return self._dict(await self._call(
            "patch", kind, name=name, body=patch, _content_type=patch_type.content_type))

    async def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return self._dict(await self._call(
            "patch", KINDS[obj["kind"]], name=obj["metadata"]["name"], body=obj,
            field_manager=field_manager, force=True, _content_type=APPLY_PATCH))

    async def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        await self._call("delete", kind, name=name,
                         propagation_policy=propagation_policy)

    async def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        list_fn = self._method("list", kind)
        selector = f"metadata.name={name}"
        listed = await list_fn(field_selector=selector, **self._scope(kind))
        if not listed.items:
            return
        async with self.pkg.watch.Watch() as w:
            async for event in w.stream(list_fn, field_selector=selector,
                                        timeout_seconds=int(timeout),
                                        resource_version=listed.metadata.resource_version,
                                        **self._scope(kind)):
                if event["type"] == "DELETED":
                    return
        raise AssertionError(f"{kind.kind} {name} still there after {timeout}s")

    async def watch(self, kind: Kind, *, label_selector: str) -> AsyncIterator[Event]:
        async with self.pkg.watch.Watch() as w:
            async for event in w.stream(self._method("list", kind),
                                        label_selector=label_selector, timeout_seconds=300,
                                        **self._scope(kind)):
                yield event["type"], event["raw_object"]


async def _api_client(pkg: ModuleType, kubeconfig: str) -> Any:
    configuration = pkg.client.Configuration()
    await pkg.config.load_kube_config(config_file=kubeconfig,
                                      client_configuration=configuration)
    return pkg.client.ApiClient(configuration)


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    with LoopThread() as loop:
        yield loop


@pytest.mark.parametrize("package", ["kubernetes.aio", "kubernetes_asyncio"])
def test_deletion_story(server: Server, namespace: str, loop: LoopThread,
                        package: str) -> None:
    pkg = importlib.import_module(package)
    api = loop.run(_api_client(pkg, str(server.kubeconfig)))
    try:
        Story(BlockingDriver(AsyncTypedDriver(pkg, api, namespace), loop)).run()
    finally:
        loop.run(api.close())
