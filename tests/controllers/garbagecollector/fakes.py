"""Test doubles for the GC: an in-memory ``Client`` with just enough API-server deletion
semantics, a recording event recorder and a tracking work queue.

``FakeClient`` records every call as ``"<verb> <group>/<version>, Resource=<resource>
[ns=<ns>] [name=<name>]"`` (upstream's fake metadata client format), stores objects per
resource *version* (so ``roles`` in v1 and v1beta1 are separate, as upstream's fake),
and emulates: uid/resourceVersion preconditions, GC finalizers added by DELETE
(Foreground/Orphan), removal once finalizers are empty, strategic merge patch of
``ownerReferences`` keyed by uid (``$patch: delete``) and JSON merge patch, watches.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import itertools
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubegc.api import errors
from kubegc.api.clock import Clock, ManualClock, format_time
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)
from kubegc.client.workqueue import RateLimitingQueue

T = TypeVar("T", bound=Hashable)
_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


def api_resource(group: str, version: str, resource: str, kind: str, *,
                 namespaced: bool = True) -> APIResource:
    return APIResource(group, version, resource, kind, namespaced, verbs=_VERBS)


#: What the upstream tests' REST mapper knows, plus a few kinds used here.
DEFAULT_RESOURCES = (
    api_resource("", "v1", "pods", "Pod"),
    api_resource("", "v1", "secrets", "Secret"),
    api_resource("", "v1", "configmaps", "ConfigMap"),
    api_resource("", "v1", "replicationcontrollers", "ReplicationController"),
    api_resource("", "v1", "nodes", "Node", namespaced=False),
    api_resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False),
    api_resource("", "v1", "events", "Event"),
    api_resource("apps", "v1", "deployments", "Deployment"),
    api_resource("apps", "v1", "replicasets", "ReplicaSet"),
    api_resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    api_resource("rbac.authorization.k8s.io", "v1beta1", "roles", "Role"),
    api_resource("example.com", "v1", "widgets", "Widget"),  # a "custom resource": no SMP
)
CUSTOM_GROUPS = frozenset({"example.com"})


@dataclass
class _Watcher:
    gvr: GroupVersionResource
    namespace: str
    queue: asyncio.Queue[WatchEvent] = field(default_factory=asyncio.Queue)


class FakeClient(Client):
    def __init__(self, resources: tuple[APIResource, ...] = DEFAULT_RESOURCES, *,
                 clock: Clock | None = None) -> None:
        self.resources = list(resources)
        self.clock = clock or ManualClock()
        self.objects: dict[tuple[GroupVersionResource, str, str], Obj] = {}
        self.actions: list[str] = []
        self.failures: dict[str, errors.StatusError] = {}  # action string -> error to raise
        self.discovery_error: Exception | None = None
        self.unlistable: set[GroupVersionResource] = set()
        self._rv = itertools.count(1)
        self._current_rv = 0
        self._uid = itertools.count(1)
        self._watchers: list[_Watcher] = []
        self._log: list[tuple[int, GroupVersionResource, WatchEvent]] = []

    def _next_rv(self) -> str:
        self._current_rv = next(self._rv)
        return str(self._current_rv)

    # -- helpers for tests ---------------------------------------------------------
    def _action(self, verb: str, gvr: GroupVersionResource, namespace: str, name: str = "") -> None:
        text = f"{verb} {gvr.group}/{gvr.version}, Resource={gvr.resource}"
        if namespace:
            text += f" ns={namespace}"
        if name:
            text += f" name={name}"
        self.actions.append(text)
        if text in self.failures:
            raise self.failures[text]

    def take_actions(self) -> list[str]:
        actions, self.actions = self.actions, []
        return actions

    def seed(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """Store ``obj`` as is (no action recorded); fills resourceVersion."""
        stored = copy.deepcopy(obj)
        meta = stored.setdefault("metadata", {})
        meta["resourceVersion"] = self._next_rv()
        self.objects[(gvr, meta.get("namespace", ""), meta["name"])] = stored
        self._notify(gvr, "ADDED", stored)
        return copy.deepcopy(stored)

    def remove(self, gvr: GroupVersionResource, namespace: str, name: str) -> None:
        """Remove without recording an action."""
        obj = self.objects.pop((gvr, namespace, name))
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self._notify(gvr, "DELETED", obj)

    def lookup(self, gvr: GroupVersionResource, namespace: str, name: str) -> Obj | None:
        obj = self.objects.get((gvr, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def _key(self, gvr: GroupVersionResource, name: str, namespace: str) -> tuple[Any, ...]:
        return (gvr, namespace, name)

    def _not_found(self, gvr: GroupVersionResource, name: str) -> errors.StatusError:
        return errors.not_found(errors.GroupResource(gvr.group, gvr.resource), name)

    def _notify(self, gvr: GroupVersionResource, type_: str, obj: Obj) -> None:
        event = WatchEvent(type_, copy.deepcopy(obj))
        self._log.append((self._current_rv, gvr, event))
        for w in self._watchers:
            if self._matches(w, gvr, event):
                w.queue.put_nowait(event)

    @staticmethod
    def _matches(w: _Watcher, gvr: GroupVersionResource, event: WatchEvent) -> bool:
        ns = (event.object.get("metadata") or {}).get("namespace", "")
        return w.gvr == gvr and (not w.namespace or w.namespace == ns)

    def _store(self, gvr: GroupVersionResource, obj: Obj, type_: str) -> Obj:
        meta = obj["metadata"]
        meta["resourceVersion"] = self._next_rv()
        self.objects[(gvr, meta.get("namespace", ""), meta["name"])] = obj
        self._notify(gvr, type_, obj)
        return copy.deepcopy(obj)

    def _finalize_or_store(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            key = (gvr, meta.get("namespace", ""), meta["name"])
            del self.objects[key]
            meta["resourceVersion"] = self._next_rv()
            self._notify(gvr, "DELETED", obj)
            return copy.deepcopy(obj)
        return self._store(gvr, obj, "MODIFIED")

    # -- Client --------------------------------------------------------------------
    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        self._action("get", gvr, namespace, name)
        obj = self.objects.get((gvr, namespace, name))
        if obj is None:
            raise self._not_found(gvr, name)
        return copy.deepcopy(obj)

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Obj:
        self._action("list", gvr, namespace)
        stored = sorted(self.objects.items(), key=lambda kv: (kv[0][1], kv[0][2]))
        items = [copy.deepcopy(o) for (g, ns, _), o in stored
                 if g == gvr and (not namespace or ns == namespace)]
        if gvr in self.unlistable:
            raise errors.internal_error(f"cannot list {gvr}")
        return {"kind": "List", "apiVersion": "v1", "items": items,
                "metadata": {"resourceVersion": str(self._current_rv)}}

    async def watch(self, gvr: GroupVersionResource, *, namespace: str = "",
                    options: WatchOptions | None = None) -> AsyncIterator[WatchEvent]:
        self._action("watch", gvr, namespace)
        watcher = _Watcher(gvr, namespace)
        self._watchers.append(watcher)
        since = int((options.resource_version if options else "") or 0)
        for rv, g, event in self._log:  # replay what happened since the list
            if rv > since and self._matches(watcher, g, event):
                watcher.queue.put_nowait(event)
        try:
            while True:
                yield await watcher.queue.get()
        finally:
            self._watchers.remove(watcher)

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        self._action("create", gvr, namespace, obj["metadata"]["name"])
        stored = copy.deepcopy(obj)
        meta = stored.setdefault("metadata", {})
        if namespace:
            meta["namespace"] = namespace
        meta.setdefault("uid", f"uid-{next(self._uid)}")
        key = (gvr, namespace, meta["name"])
        if key in self.objects:
            raise errors.already_exists(errors.GroupResource(gvr.group, gvr.resource), meta["name"])
        return self._store(gvr, stored, "ADDED")

    async def update(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "",
                     subresource: str = "") -> Obj:
        name = obj["metadata"]["name"]
        self._action("update", gvr, namespace, name)
        if (gvr, namespace, name) not in self.objects:
            raise self._not_found(gvr, name)
        return self._finalize_or_store(gvr, copy.deepcopy(obj))

    async def patch(self, gvr: GroupVersionResource, name: str, patch: Any, *,
                    namespace: str = "", patch_type: PatchType = PatchType.MERGE,
                    subresource: str = "", field_manager: str = "", force: bool = False) -> Obj:
        self._action("patch", gvr, namespace, name)
        current = self.objects.get((gvr, namespace, name))
        if current is None:
            raise self._not_found(gvr, name)
        if patch_type is PatchType.STRATEGIC and gvr.group in CUSTOM_GROUPS:
            raise errors.unsupported_media_type(
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {PatchType.JSON}, {PatchType.MERGE}, {PatchType.APPLY}")
        body = copy.deepcopy(patch)
        meta_patch = body.get("metadata") or {}
        gr = errors.GroupResource(gvr.group, gvr.resource)
        if "uid" in meta_patch and meta_patch["uid"] != current["metadata"].get("uid"):
            raise errors.conflict(gr, name, "Precondition failed: UID in precondition: "
                                  f"{meta_patch['uid']}, UID in object meta: "
                                  f"{current['metadata'].get('uid')}")
        rv = meta_patch.get("resourceVersion")
        if rv and rv != current["metadata"].get("resourceVersion"):
            raise errors.conflict(gr, name, "the object has been modified; please apply your "
                                  "changes to the latest version and try again")
        meta_patch.pop("resourceVersion", None)
        merged = copy.deepcopy(current)
        if patch_type is PatchType.STRATEGIC:
            _strategic_merge(merged, body)
        else:
            _json_merge(merged, body)
        return self._finalize_or_store(gvr, merged)

    async def delete(self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
                     options: DeleteOptions | None = None) -> Obj:
        self._action("delete", gvr, namespace, name)
        current = self.objects.get((gvr, namespace, name))
        if current is None:
            raise self._not_found(gvr, name)
        options = options or DeleteOptions()
        uid = current["metadata"].get("uid")
        if options.preconditions_uid is not None and options.preconditions_uid != uid:
            raise errors.conflict(
                errors.GroupResource(gvr.group, gvr.resource), name,
                f"Precondition failed: UID in precondition: {options.preconditions_uid}, "
                f"UID in object meta: {uid}")
        rv = current["metadata"].get("resourceVersion")
        if options.preconditions_resource_version is not None \
                and options.preconditions_resource_version != rv:
            raise errors.conflict(
                errors.GroupResource(gvr.group, gvr.resource), name,
                f"Precondition failed: ResourceVersion in precondition: "
                f"{options.preconditions_resource_version}, ResourceVersion in object meta: {rv}")
        obj = copy.deepcopy(current)
        meta = obj["metadata"]
        finalizers = [f for f in meta.get("finalizers") or []
                      if f not in ("orphan", "foregroundDeletion")]
        existing_gc = [f for f in meta.get("finalizers") or []
                       if f in ("orphan", "foregroundDeletion")]
        policy = options.propagation_policy
        if policy == "Foreground":
            finalizers.append("foregroundDeletion")
        elif policy == "Orphan":
            finalizers.append("orphan")
        elif policy is None:
            finalizers += existing_gc
        meta["finalizers"] = finalizers
        meta.setdefault("deletionTimestamp", format_time(self.clock.now()))
        meta["deletionGracePeriodSeconds"] = 0
        return self._finalize_or_store(gvr, obj)

    async def discover(self) -> builtins.list[APIResource]:
        self.actions.append("discover")
        if self.discovery_error is not None:
            raise self.discovery_error
        return list(self.resources)


def _json_merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _json_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _strategic_merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """Enough SMP for metadata: ownerReferences merge by uid (``$patch: delete``)."""
    for key, value in patch.items():
        if key == "ownerReferences" and isinstance(value, list):
            refs = list(target.get(key) or [])
            for entry in value:
                uid = entry.get("uid")
                if entry.get("$patch") == "delete":
                    refs = [r for r in refs if r.get("uid") != uid]
                    continue
                for i, ref in enumerate(refs):
                    if ref.get("uid") == uid:
                        refs[i] = {**ref, **entry}
                        break
                else:
                    refs.append(entry)
            if refs:
                target[key] = refs
            else:
                target.pop(key, None)
        elif value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _strategic_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


class FakeRecorder:
    """Records events as ``"<type> <reason> <message> involvedObject{kind=K,apiVersion=V}"``
    (upstream's ``record.FakeRecorder`` with ``IncludeObject``)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.objects: list[Obj] = []

    def event(self, obj: Obj, type: str, reason: str, message: str) -> None:
        self.objects.append(obj)
        self.events.append(f"{type} {reason} {message} involvedObject{{kind={obj.get('kind')},"
                           f"apiVersion={obj.get('apiVersion')}}}")

    def take(self) -> list[str]:
        events, self.events = self.events, []
        return events


class TrackingQueue(RateLimitingQueue[T]):
    """A ``RateLimitingQueue`` that adds rate-limited and delayed items at once and keeps
    the pending items in order for inspection (cf. upstream's ``trackingWorkqueue``)."""

    def __init__(self, *, name: str, clock: Clock) -> None:
        super().__init__(name=name, clock=clock)
        self.pending: list[T] = []

    def add(self, item: T) -> None:
        if item not in self.pending:
            self.pending.append(item)
        super().add(item)

    def add_after(self, item: T, delay_seconds: float) -> None:
        self.add(item)

    def add_rate_limited(self, item: T) -> None:
        self.add(item)

    async def get(self) -> tuple[T, bool]:
        item, shutdown = await super().get()
        if not shutdown and item in self.pending:
            self.pending.remove(item)
        return item, shutdown
