"""The deletion story with the official ``kubernetes`` client, three ways: its typed APIs
(``CoreV1Api``, ``CustomObjectsApi``, ``watch.Watch().stream``), the same watching with a
``kubernetes.informer.SharedInformer``, and its dynamic client (discovery,
``server_side_apply``, a watch that asks for ``sendInitialEvents``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError
from kubernetes.informer import ADDED, DELETED, ERROR, MODIFIED, SharedInformer

from .adapters import Collected, Event, ThreadWatch
from .story import APPLY_PATCH, DELETION_RECORD, KINDS, Driver, Kind, Obj, PatchType, Story

SNAKE = {"ConfigMap": "config_map", "Secret": "secret", "Namespace": "namespace"}


class TypedApis:
    """``CoreV1Api``'s ``<verb>_namespaced_<kind>`` methods, DeletionRecords through
    ``CustomObjectsApi``: the calls the typed drivers make, sync or async (the generated
    clients of ``kubernetes``, ``kubernetes.aio`` and ``kubernetes_asyncio`` have one
    surface)."""

    def __init__(self, client_module: Any, api: Any, namespace: str) -> None:
        self.api = api
        self.core = client_module.CoreV1Api(api)
        self.custom = client_module.CustomObjectsApi(api)
        self.delete_options = client_module.V1DeleteOptions
        self.namespace = namespace

    def _method(self, verb: str, kind: Kind) -> Callable[..., Any]:
        """The bound API method (``watch.Watch().stream`` reads its name and docstring)."""
        scope = "_namespaced_" if kind.namespaced else "_"
        method: Callable[..., Any] = getattr(self.core, f"{verb}{scope}{SNAKE[kind.kind]}")
        return method

    def _scope(self, kind: Kind) -> dict[str, str]:
        return {"namespace": self.namespace} if kind.namespaced else {}

    def _call(self, verb: str, kind: Kind, **kwargs: Any) -> Any:
        return self._method(verb, kind)(**self._scope(kind), **kwargs)

    def _dict(self, model: Any) -> Obj:
        out: Obj = self.api.sanitize_for_serialization(model)
        return out


class TypedDriver(TypedApis):
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        super().__init__(client, api, namespace)

    def create(self, obj: Obj) -> Obj:
        return self._dict(self._call("create", KINDS[obj["kind"]], body=obj))

    def get(self, kind: Kind, name: str) -> Obj | None:
        try:
            return self._dict(self._call("read", kind, name=name))
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        if kind is DELETION_RECORD:
            listed = self.custom.list_cluster_custom_object(
                kind.group, kind.version, kind.plural, label_selector=label_selector)
            items: list[Obj] = listed["items"]
            return items
        return self._dict(self._call("list", kind, label_selector=label_selector))["items"]

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return self._dict(self._call(
            "patch", kind, name=name, body=patch, _content_type=patch_type.content_type))

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return self._dict(self._call(
            "patch", KINDS[obj["kind"]], name=obj["metadata"]["name"], body=obj,
            field_manager=field_manager, force=True, _content_type=APPLY_PATCH))

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        status = self._call("delete", kind, name=name, body=self.delete_options(
            propagation_policy=propagation_policy))
        assert status is not None

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        """List the one object by field selector, then watch from the list's
        resourceVersion until it is DELETED (client-go's ``UntilWithSync`` idea)."""
        list_fn = self._method("list", kind)
        selector = f"metadata.name={name}"
        listed = list_fn(field_selector=selector, **self._scope(kind))
        if not listed.items:
            return
        w = watch.Watch()
        _until_deleted(w, w.stream(list_fn, field_selector=selector,
                                   timeout_seconds=int(timeout),
                                   resource_version=listed.metadata.resource_version,
                                   **self._scope(kind)), f"{kind.kind} {name}")

    def watch(self, kind: Kind, *, label_selector: str) -> ThreadWatch:
        w = watch.Watch()
        events = w.stream(self._method("list", kind), label_selector=label_selector,
                          timeout_seconds=300, **self._scope(kind))
        return ThreadWatch(((e["type"], e["raw_object"]) for e in events), close=w.stop)


class InformerWatch(Collected):
    """A ``SharedInformer``'s ADDED / MODIFIED / DELETED handlers, collected."""

    def __init__(self, driver: TypedDriver, kind: Kind, label_selector: str) -> None:
        super().__init__()
        self.informer = SharedInformer(list_func=driver._method("list", kind),
                                       label_selector=label_selector, **driver._scope(kind))
        for event_type in (ADDED, MODIFIED, DELETED):
            self.informer.add_event_handler(
                event_type, lambda o, t=event_type: self.add((t, driver._dict(o))))
        self.informer.add_event_handler(ERROR, lambda e: self.fail(
            e if isinstance(e, BaseException) else RuntimeError(e)))
        self.informer.start()

    def stop(self) -> None:
        """``SharedInformer.stop`` joins its thread, which leaves its watch at the next
        event: stop it on a thread of its own (the story's next deletions end it)."""
        threading.Thread(target=self.informer.stop, daemon=True).start()


class InformerDriver(TypedDriver):
    def watch(self, kind: Kind, *, label_selector: str) -> InformerWatch:  # type: ignore[override]
        return InformerWatch(self, kind, label_selector)


class DynamicDriver:
    """``dynamic.DynamicClient``: resources found by discovery, ``ResourceInstance``s."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.client = dynamic.DynamicClient(api)
        self.namespace = namespace

    def _resource(self, kind: Kind) -> Any:
        return self.client.resources.get(api_version=kind.api_version, kind=kind.kind)

    def _ns(self, kind: Kind) -> str | None:
        return self.namespace if kind.namespaced else None

    def create(self, obj: Obj) -> Obj:
        kind = KINDS[obj["kind"]]
        return _dict(self._resource(kind).create(body=obj, namespace=self._ns(kind)))

    def get(self, kind: Kind, name: str) -> Obj | None:
        try:
            return _dict(self._resource(kind).get(name=name, namespace=self._ns(kind)))
        except NotFoundError:
            return None

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        listed = self._resource(kind).get(namespace=self._ns(kind),
                                          label_selector=label_selector)
        items: list[Obj] = _dict(listed)["items"]
        return items

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return _dict(self._resource(kind).patch(body=patch, name=name,
                                                namespace=self._ns(kind),
                                                content_type=patch_type.content_type))

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        kind = KINDS[obj["kind"]]
        return _dict(self._resource(kind).server_side_apply(
            body=obj, namespace=self._ns(kind), field_manager=field_manager,
            force_conflicts=True))

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        self._resource(kind).delete(name=name, namespace=self._ns(kind),
                                    body={"propagationPolicy": propagation_policy})

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        resource = self._resource(kind)
        listed = resource.get(namespace=self._ns(kind), field_selector=f"metadata.name={name}")
        if not listed.items:
            return
        watcher = watch.Watch()
        _until_deleted(watcher, resource.watch(
            namespace=self._ns(kind), name=name, watcher=watcher, timeout=int(timeout),
            resource_version=listed.metadata.resourceVersion), f"{kind.kind} {name}")

    def watch(self, kind: Kind, *, label_selector: str) -> ThreadWatch:
        """A WatchList: the current state as ADDED events, a BOOKMARK, then changes."""
        watcher = watch.Watch()
        events = self._resource(kind).watch(
            namespace=self._ns(kind), label_selector=label_selector, watcher=watcher,
            send_initial_events=True, resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True, timeout=300)
        return ThreadWatch(_raw(events), close=watcher.stop)


def _until_deleted(w: watch.Watch, events: Iterator[Any], what: str) -> None:
    """Read a one-object watch until its DELETED event (or fail when the server ends it)."""
    for event in events:
        if event["type"] == "DELETED":
            w.stop()
            return
    raise AssertionError(f"{what} still there when the watch ended")


def _raw(events: Iterator[Any]) -> Iterator[Event]:
    for e in events:
        yield e["type"], e["raw_object"]


def _dict(instance: Any) -> Obj:
    out: Obj = instance.to_dict()
    return out


@pytest.mark.parametrize("make", [TypedDriver, InformerDriver, DynamicDriver],
                         ids=["typed", "informer", "dynamic"])
def test_deletion_story(api: client.ApiClient, namespace: str,
                        make: Callable[[client.ApiClient, str], Driver]) -> None:
    Story(make(api, namespace)).run()
