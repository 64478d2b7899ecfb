"""The deletion story with lightkube, sync (``Client``) and async (``AsyncClient``): its
models (``codecs.from_dict``, a generic resource for DeletionRecords), ``labels=`` /
``fields=`` selectors with ``operators``, ``patch(patch_type=…)``, ``apply(
field_manager=…, force=True)``, ``delete(cascade=CascadeType.…)``, ``watch`` from a
list's ``resourceVersion``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from lightkube import ApiError, AsyncClient, Client, codecs, operators
from lightkube.config.kubeconfig import KubeConfig
from lightkube.generic_resource import create_global_resource
from lightkube.resources.core_v1 import ConfigMap, Namespace, Secret
from lightkube.types import CascadeType
from lightkube.types import PatchType as LightkubePatchType

from ..conftest import Server
from .adapters import BlockingDriver, Event, LoopThread, ThreadWatch
from .story import DELETION_RECORD, Kind, Obj, PatchType, Story

DeletionRecord = create_global_resource(DELETION_RECORD.group, DELETION_RECORD.version,
                                        DELETION_RECORD.kind, DELETION_RECORD.plural)
RESOURCES: dict[str, Any] = {"ConfigMap": ConfigMap, "Secret": Secret, "Namespace": Namespace,
                             "DeletionRecord": DeletionRecord}


class LightkubeCalls:
    """What the sync and async drivers share: resource classes, selectors, conversions."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace

    def _where(self, kind: Kind) -> dict[str, Any]:
        return {"namespace": self.namespace} if kind.namespaced else {}

    @staticmethod
    def _res(kind: Kind) -> Any:
        return RESOURCES[kind.kind]

    @staticmethod
    def _labels(selector: str) -> dict[str, Any]:
        """``key`` or ``key=value,…`` as lightkube's ``labels=`` mapping."""
        out: dict[str, Any] = {}
        for term in selector.split(","):
            key, _, value = term.partition("=")
            out[key] = value if value else operators.exists()
        return out

    @staticmethod
    def _patch_args(patch_type: PatchType) -> dict[str, Any]:
        return {"patch_type": LightkubePatchType[patch_type.name]}

    @staticmethod
    def _cascade(policy: str) -> CascadeType:
        return CascadeType[policy.upper()]


class SyncDriver(LightkubeCalls):
    def __init__(self, client: Client, namespace: str) -> None:
        super().__init__(namespace)
        self.client = client

    def create(self, obj: Obj) -> Obj:
        return _dict(self.client.create(codecs.from_dict(obj)))

    def get(self, kind: Kind, name: str) -> Obj | None:
        try:
            return _dict(self.client.get(self._res(kind), name, **self._where(kind)))
        except ApiError as e:
            if e.status.code == 404:
                return None
            raise

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        return [_dict(o) for o in self.client.list(self._res(kind), **self._where(kind),
                                                   labels=self._labels(label_selector))]

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return _dict(self.client.patch(self._res(kind), name, patch, **self._where(kind),
                                       **self._patch_args(patch_type)))

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return _dict(self.client.apply(codecs.from_dict(obj), field_manager=field_manager,
                                       force=True))

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        self.client.delete(self._res(kind), name, **self._where(kind),
                           cascade=self._cascade(propagation_policy))

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        """A list by field selector, then a watch from its resourceVersion (lightkube's
        ``wait`` waits for conditions, and skips objects without a status)."""
        fields = {"metadata.name": name}
        listed = self.client.list(self._res(kind), **self._where(kind), fields=fields)
        if not list(listed):
            return
        for op, _ in self.client.watch(self._res(kind), **self._where(kind), fields=fields,
                                       resource_version=listed.resourceVersion):
            if op == "DELETED":
                return

    def watch(self, kind: Kind, *, label_selector: str) -> ThreadWatch:
        events = self.client.watch(self._res(kind), **self._where(kind),
                                   labels=self._labels(label_selector))
        return ThreadWatch((op, _dict(o)) for op, o in events)


class AsyncDriver(LightkubeCalls):
    def __init__(self, client: AsyncClient, namespace: str) -> None:
        super().__init__(namespace)
        self.client = client

    async def create(self, obj: Obj) -> Obj:
        return _dict(await self.client.create(codecs.from_dict(obj)))

    async def get(self, kind: Kind, name: str) -> Obj | None:
        try:
            return _dict(await self.client.get(self._res(kind), name, **self._where(kind)))
        except ApiError as e:
            if e.status.code == 404:
                return None
            raise

    async def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        found = self.client.list(self._res(kind), **self._where(kind),
                                 labels=self._labels(label_selector))
        return [_dict(o) async for o in found]

    async def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return _dict(await self.client.patch(self._res(kind), name, patch,
                                             **self._where(kind),
                                             **self._patch_args(patch_type)))

    async def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return _dict(await self.client.apply(codecs.from_dict(obj),
                                             field_manager=field_manager, force=True))

    async def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        await self.client.delete(self._res(kind), name, **self._where(kind),
                                 cascade=self._cascade(propagation_policy))

    async def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        fields = {"metadata.name": name}
        listed = self.client.list(self._res(kind), **self._where(kind), fields=fields)
        if not [o async for o in listed]:
            return
        async for op, _ in self.client.watch(self._res(kind), **self._where(kind),
                                             fields=fields,
                                             resource_version=listed.resourceVersion):
            if op == "DELETED":
                return

    async def watch(self, kind: Kind, *, label_selector: str) -> AsyncIterator[Event]:
        async for op, o in self.client.watch(self._res(kind), **self._where(kind),
                                             labels=self._labels(label_selector)):
            yield op, _dict(o)


def _dict(model: Any) -> Obj:
    out: Obj = model.to_dict()
    return out


def test_sync_client(server: Server, namespace: str) -> None:
    client = Client(config=KubeConfig.from_file(server.kubeconfig), field_manager="lightkube")
    try:
        Story(SyncDriver(client, namespace)).run()
    finally:
        client.close()


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    with LoopThread() as loop:
        yield loop


def test_async_client(server: Server, namespace: str, loop: LoopThread) -> None:
    async def make() -> AsyncClient:
        return AsyncClient(config=KubeConfig.from_file(server.kubeconfig),
                           field_manager="lightkube")

    client = loop.run(make())
    try:
        Story(BlockingDriver(AsyncDriver(client, namespace), loop)).run()
    finally:
        loop.run(client.close())
