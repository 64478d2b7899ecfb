"""An in-memory ``Client`` for unit tests of informers and controllers
(cf. client-go's fake clientsets: an object tracker plus reactors and recorded actions).

What it does:
  * keeps objects per resource, keyed by namespace/name; assigns ``uid`` (if missing),
    ``creationTimestamp`` and a ``resourceVersion`` from one global counter;
  * get/list (label and field selectors, ``limit``/``continue`` paging over the current
    state)/create/update/patch/delete/watch; patches go through ``kubegc.api.patch`` (the
    registry's implementation: strategic merge for built-in kinds only, apply needs a
    field manager), so patch errors are the server's;
  * delete removes at once unless the object has finalizers, in which case it only gets a
    ``deletionTimestamp``; an update or patch that empties the finalizers of an object
    being deleted removes it. No other registry semantics (no GC finalizers, no grace);
  * watch: ``resourceVersion`` ""/"0" starts with synthetic ADDED events, ``N`` replays the
    kept history after N (410 Expired ERROR if ``compact`` dropped it), then live events.
    Selectors filter each event by the object's new state (an object leaving a selector
    gets no DELETED). ``timeoutSeconds`` is ignored. Slow-consumer policy: unbounded
    per-watcher queues, nothing is dropped.
  * records every call (except ``discover``) in ``actions`` as strings
    ``"<verb> <group/version> <resource>[/<subresource>] [<namespace>/]<name>"`` (e.g.
    ``"get apps/v1 deployments ns1/deployment1"``, ``"list v1 pods ns1"``), and in
    ``action_log`` as ``Action`` values (with bodies);
  * reactors (``prepend_reactor``, ``fail_next``, ``respond_to_get``) run after recording
    and may answer or raise instead of the tracker, as client-go's ``PrependReactor``.
Objects going in and out are deep copies: callers may mutate what they get.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.clock import Clock, RealClock, format_time
from kubegc.api.fields import object_fields, parse_field_selector
from kubegc.api.labels import parse_label_selector
from kubegc.api.meta import finalizers_of, metadata
from kubegc.api.patch import apply_patch
from kubegc.api.resources import Catalog, GroupVersionResource
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

Reactor = Callable[["Action"], Obj | None]
_SUCCESS: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


@dataclass(frozen=True, slots=True)
class Action:
    """One recorded call. ``body``: the object (create/update), the patch (patch), the
    ``DeleteOptions`` (delete), the ``ListOptions``/``WatchOptions`` (list/watch)."""

    verb: str
    gvr: GroupVersionResource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    body: Any = None
    patch_type: PatchType | None = None

    def __str__(self) -> str:
        resource = f"{self.gvr.resource}/{self.subresource}" if self.subresource else (
            self.gvr.resource
        )
        target = f"{self.namespace}/{self.name}" if self.namespace and self.name else (
            self.name or self.namespace
        )
        return " ".join(p for p in (self.verb, self.gvr.group_version, resource, target) if p)


@dataclass(eq=False)
class _Watcher:
    gvr: GroupVersionResource
    matches: Callable[[Obj], bool]
    bookmarks: bool
    queue: asyncio.Queue[WatchEvent | None] = field(default_factory=asyncio.Queue)


def builtin_api_resources() -> builtins.list[APIResource]:
    """Discovery entries for kubegc's built-in resources (every served version)."""
    return [
        APIResource(i.group, v, i.resource, i.kind, i.namespaced, i.verbs, i.short_names,
                    i.categories, i.singular_name)
        for i in Catalog.builtin() for v in i.versions
    ]


class FakeClient(Client):
    """In-memory ``Client`` (see the module docstring). One event loop; not thread-safe.

    Ownership: the test seeds objects (``add_object``) and inspects ``actions`` and
    ``stored``; the code under test calls the ``Client`` methods.
    """

    def __init__(
        self, *, resources: Iterable[APIResource] = (), clock: Clock | None = None,
    ) -> None:
        self.clock: Clock = clock or RealClock()
        self.actions: builtins.list[str] = []
        self.action_log: builtins.list[Action] = []
        self._resources: dict[GroupVersionResource, APIResource] = {}
        self._catalog = Catalog.builtin()
        self._objects: dict[GroupVersionResource, dict[tuple[str, str], Obj]] = {}
        self._reactors: builtins.list[tuple[str, GroupVersionResource | None, Reactor]] = []
        self._rv = 0
        self._history: builtins.list[tuple[int, GroupVersionResource, WatchEvent]] = []
        self._compacted = 0
        self._watchers: builtins.list[_Watcher] = []
        self.register(*resources)

    # -- test controls ---------------------------------------------------------------

    def register(self, *resources: APIResource) -> None:
        """Add resources to what ``discover`` returns."""
        for r in resources:
            self._resources[r.gvr] = r

    def unregister(self, gvr: GroupVersionResource) -> None:
        self._resources.pop(gvr, None)

    def add_object(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        """Create ``obj`` without recording an action (test setup); watchers see it."""
        return self._create(gvr, obj, namespace)

    def stored(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj | None:
        """A copy of the stored object, without recording an action."""
        obj = self._objects.get(gvr, {}).get((namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def objects(self, gvr: GroupVersionResource) -> builtins.list[Obj]:
        """Copies of every stored object of ``gvr``, by namespace/name; no action recorded."""
        return [copy.deepcopy(o) for _, o in sorted(self._objects.get(gvr, {}).items())]

    def clear_actions(self) -> None:
        self.actions.clear()
        self.action_log.clear()

    def prepend_reactor(
        self, verb: str, reactor: Reactor, *, gvr: GroupVersionResource | None = None,
    ) -> None:
        """Run ``reactor`` first for ``verb`` ("*" for all) on ``gvr`` (None: any). It returns
        the answer, None to fall through, or raises. For watch, only raising has an effect."""
        self._reactors.insert(0, (verb, gvr, reactor))

    def fail_next(
        self, verb: str, error: Exception, *, gvr: GroupVersionResource | None = None,
        name: str | None = None, times: int = 1,
    ) -> None:
        """Make the next ``times`` matching calls raise ``error``."""
        remaining = [times]

        def reactor(action: Action) -> Obj | None:
            if remaining[0] <= 0 or (name is not None and action.name != name):
                return None
            remaining[0] -= 1
            raise error

        self.prepend_reactor(verb, reactor, gvr=gvr)

    def respond_to_get(
        self, gvr: GroupVersionResource, name: str, response: Obj | Exception, *,
        namespace: str = "",
    ) -> None:
        """Answer every GET of that object with ``response`` (an object, or raise it)."""

        def reactor(action: Action) -> Obj | None:
            if action.name != name or action.namespace != namespace:
                return None
            if isinstance(response, Exception):
                raise response
            return response

        self.prepend_reactor("get", reactor, gvr=gvr)

    def compact(self, resource_version: int | None = None) -> None:
        """Forget watch history up to ``resource_version`` (default: all of it)."""
        self._compacted = self._rv if resource_version is None else resource_version
        self._history = [h for h in self._history if h[0] > self._compacted]

    def expire_watches(self, gvr: GroupVersionResource | None = None) -> None:
        """Send a 410 Expired ERROR to open watches (all, or of ``gvr``) and end them."""
        self.fail_watches(errors.resource_expired("too old resource version"), gvr)

    def fail_watches(
        self, error: errors.StatusError, gvr: GroupVersionResource | None = None,
    ) -> None:
        """Send ``error`` as an ERROR event to open watches (all, or of ``gvr``); end them."""
        self._end_watches(gvr, WatchEvent("ERROR", error.to_status()))

    def close_watches(self, gvr: GroupVersionResource | None = None) -> None:
        """End open watch streams normally (as a server-side timeout does)."""
        self._end_watches(gvr, None)

    def send_bookmark(self, gvr: GroupVersionResource) -> None:
        info = self._info(gvr)
        bookmark = {"kind": info.kind if info else "", "apiVersion": gvr.group_version,
                    "metadata": {"resourceVersion": str(self._rv)}}
        for w in self._watchers:
            if w.gvr == gvr and w.bookmarks:
                w.queue.put_nowait(WatchEvent("BOOKMARK", copy.deepcopy(bookmark)))

    def watcher_count(self, gvr: GroupVersionResource | None = None) -> int:
        return sum(1 for w in self._watchers if gvr is None or w.gvr == gvr)

    @property
    def resource_version(self) -> int:
        """The global counter: the resourceVersion of the last write."""
        return self._rv

    # -- Client ----------------------------------------------------------------------

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        answer = self._record(Action("get", gvr, namespace, name))
        return answer if answer is not None else copy.deepcopy(self._must(gvr, namespace, name))

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        opts = options or ListOptions()
        answer = self._record(Action("list", gvr, namespace, body=opts))
        if answer is not None:
            return answer
        matches = self._matcher(gvr, namespace, opts.label_selector, opts.field_selector)
        items = [o for _, o in sorted(self._objects.get(gvr, {}).items()) if matches(o)]
        start = int(opts.continue_ or 0)
        end = start + opts.limit if opts.limit > 0 else len(items)
        info = self._info(gvr)
        meta: dict[str, Any] = {"resourceVersion": str(self._rv)}
        if end < len(items):
            meta.update({"continue": str(end), "remainingItemCount": len(items) - end})
        return {"kind": f"{info.kind if info else ''}List", "apiVersion": gvr.group_version,
                "metadata": meta, "items": copy.deepcopy(items[start:end])}

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        opts = options or WatchOptions()
        self._record(Action("watch", gvr, namespace, body=opts))
        matches = self._matcher(gvr, namespace, opts.label_selector, opts.field_selector)
        rv = opts.resource_version
        if rv in ("", "0"):
            backlog = [WatchEvent("ADDED", copy.deepcopy(o))
                       for _, o in sorted(self._objects.get(gvr, {}).items()) if matches(o)]
        elif int(rv) < self._compacted:
            message = f"too old resource version: {rv} ({self._compacted + 1})"
            yield WatchEvent("ERROR", errors.resource_expired(message).to_status())
            return
        else:
            backlog = [WatchEvent(e.type, copy.deepcopy(e.object)) for r, g, e in self._history
                       if g == gvr and r > int(rv) and matches(e.object)]
        watcher = _Watcher(gvr, matches, opts.allow_bookmarks)
        self._watchers.append(watcher)
        try:
            for event in backlog:
                yield event
            while (event_or_end := await watcher.queue.get()) is not None:
                yield event_or_end
        finally:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        meta = obj.get("metadata") or {}
        ns = namespace or str(meta.get("namespace") or "")
        answer = self._record(Action("create", gvr, ns, str(meta.get("name") or ""), body=obj))
        return answer if answer is not None else self._create(gvr, obj, namespace)

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        meta = obj.get("metadata") or {}
        ns, name = namespace or str(meta.get("namespace") or ""), str(meta.get("name") or "")
        answer = self._record(Action("update", gvr, ns, name, subresource, body=obj))
        if answer is not None:
            return answer
        existing = self._must(gvr, ns, name)
        _check_rv(gvr, name, meta.get("resourceVersion"), existing)
        new = copy.deepcopy(obj)
        if subresource == "status":
            new = {**copy.deepcopy(existing), "status": new.get("status")}
        for keep in ("uid", "creationTimestamp", "deletionTimestamp", "namespace"):
            if keep in existing["metadata"]:
                metadata(new)[keep] = existing["metadata"][keep]
        return self._commit(gvr, new)

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        action = Action("patch", gvr, namespace, name, subresource, patch, patch_type)
        answer = self._record(action)
        if answer is not None:
            return answer
        existing = self._objects.get(gvr, {}).get((namespace, name))
        if existing is None and patch_type is not PatchType.APPLY:
            existing = self._must(gvr, namespace, name)
        info = self._info(gvr)
        kind = str((existing or {}).get("kind") or (info.kind if info else ""))
        body = patch if isinstance(patch, bytes | str) else orjson.dumps(patch)
        patched = copy.deepcopy(apply_patch(
            patch_type.value, existing, body, group=gvr.group, kind=kind, manager=field_manager,
            force=force, now=format_time(self.clock.now()), subresource=subresource))
        if existing is None:  # server-side apply creates
            metadata(patched)["name"] = name
            return self._create(gvr, patched, namespace)
        _check_rv(gvr, name, (patched.get("metadata") or {}).get("resourceVersion"), existing)
        metadata(patched).update(uid=existing["metadata"].get("uid"), name=name)
        return self._commit(gvr, patched)

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        opts = options or DeleteOptions()
        answer = self._record(Action("delete", gvr, namespace, name, body=opts))
        if answer is not None:
            return answer
        existing = self._must(gvr, namespace, name)
        _check_preconditions(gvr, name, opts, existing)
        if opts.dry_run:
            return copy.deepcopy(existing)
        if finalizers_of(existing):
            if existing["metadata"].get("deletionTimestamp"):
                return copy.deepcopy(existing)  # already being deleted: nothing to write
            new = copy.deepcopy(existing)
            metadata(new).update(deletionTimestamp=format_time(self.clock.now()),
                                 deletionGracePeriodSeconds=0)
            return self._commit(gvr, new)
        self._remove(gvr, existing)
        details = {"name": name, "group": gvr.group, "kind": gvr.resource,
                   "uid": existing["metadata"].get("uid", "")}
        return {**copy.deepcopy(_SUCCESS), "details": details}

    async def discover(self) -> builtins.list[APIResource]:
        self._react(Action("discover", GroupVersionResource("", "", "")))
        return list(self._resources.values())

    # -- the tracker -----------------------------------------------------------------

    def _record(self, action: Action) -> Obj | None:
        self.action_log.append(action)
        self.actions.append(str(action))
        return self._react(action)

    def _react(self, action: Action) -> Obj | None:
        for verb, gvr, reactor in builtins.list(self._reactors):
            if verb in ("*", action.verb) and gvr in (None, action.gvr):
                answer = reactor(action)
                if answer is not None:
                    return copy.deepcopy(answer)
        return None

    def _info(self, gvr: GroupVersionResource) -> APIResource | None:
        found = self._resources.get(gvr)
        if found is None and (
            info := self._catalog.lookup(gvr.group, gvr.version, gvr.resource)
        ) is not None:
            found = APIResource(gvr.group, gvr.version, gvr.resource, info.kind, info.namespaced)
        return found

    def _must(self, gvr: GroupVersionResource, namespace: str, name: str) -> Obj:
        obj = self._objects.get(gvr, {}).get((namespace, name))
        if obj is None:
            raise errors.not_found(errors.GroupResource(gvr.group, gvr.resource), name)
        return obj

    def _create(self, gvr: GroupVersionResource, obj: Obj, namespace: str) -> Obj:
        new = copy.deepcopy(obj)
        meta = metadata(new)
        if namespace:
            meta["namespace"] = namespace
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        gr = errors.GroupResource(gvr.group, gvr.resource)
        if not key[1]:
            cause = errors.field_error("FieldValueRequired", "metadata.name",
                                       "name or generateName is required")
            raise errors.invalid(new.get("kind", ""), gvr.group, "", [cause])
        if key in self._objects.get(gvr, {}):
            raise errors.already_exists(gr, key[1])
        info = self._info(gvr)
        new.setdefault("apiVersion", gvr.group_version)
        if info is not None:
            new.setdefault("kind", info.kind)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", format_time(self.clock.now()))
        return self._store(gvr, new, "ADDED")

    def _commit(self, gvr: GroupVersionResource, new: Obj) -> Obj:
        if new["metadata"].get("deletionTimestamp") and not finalizers_of(new):
            self._remove(gvr, new)
            return copy.deepcopy(new)
        return self._store(gvr, new, "MODIFIED")

    def _store(self, gvr: GroupVersionResource, obj: Obj, event_type: str) -> Obj:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        meta = obj["metadata"]
        self._objects.setdefault(gvr, {})[(meta.get("namespace") or "", meta["name"])] = obj
        self._notify(gvr, WatchEvent(event_type, obj))
        return copy.deepcopy(obj)

    def _remove(self, gvr: GroupVersionResource, final: Obj) -> None:
        meta = final["metadata"]
        self._objects[gvr].pop((meta.get("namespace") or "", meta["name"]))
        gone = copy.deepcopy(final)
        self._rv += 1
        gone["metadata"]["resourceVersion"] = str(self._rv)
        self._notify(gvr, WatchEvent("DELETED", gone))

    def _notify(self, gvr: GroupVersionResource, event: WatchEvent) -> None:
        self._history.append((self._rv, gvr, event))
        for w in self._watchers:
            if w.gvr == gvr and w.matches(event.object):
                w.queue.put_nowait(WatchEvent(event.type, copy.deepcopy(event.object)))

    def _end_watches(self, gvr: GroupVersionResource | None, last: WatchEvent | None) -> None:
        for w in builtins.list(self._watchers):
            if gvr is None or w.gvr == gvr:
                if last is not None:
                    w.queue.put_nowait(last)
                w.queue.put_nowait(None)
                self._watchers.remove(w)

    def _matcher(
        self, gvr: GroupVersionResource, namespace: str, labels: str, fields: str,
    ) -> Callable[[Obj], bool]:
        label_selector = parse_label_selector(labels)
        field_selector = parse_field_selector(fields)

        def matches(obj: Obj) -> bool:
            meta = obj.get("metadata") or {}
            return (
                (not namespace or meta.get("namespace") == namespace)
                and label_selector.matches(meta.get("labels"))
                and field_selector.matches(object_fields(gvr.group, gvr.resource, obj))
            )

        return matches


def _check_rv(gvr: GroupVersionResource, name: str, rv: Any, existing: Obj) -> None:
    if rv and str(rv) != existing["metadata"].get("resourceVersion"):
        gr = errors.GroupResource(gvr.group, gvr.resource)
        raise errors.conflict(gr, name, errors.OBJECT_MODIFIED)


def _check_preconditions(
    gvr: GroupVersionResource, name: str, opts: DeleteOptions, existing: Obj,
) -> None:
    meta = existing["metadata"]
    gr = errors.GroupResource(gvr.group, gvr.resource)
    uid, rv = meta.get("uid", ""), meta.get("resourceVersion", "")
    if opts.preconditions_uid is not None and opts.preconditions_uid != uid:
        raise errors.conflict(gr, name, "Precondition failed: UID in precondition: "
                              f"{opts.preconditions_uid}, UID in object meta: {uid}")
    if (opts.preconditions_resource_version is not None
            and opts.preconditions_resource_version != rv):
        raise errors.conflict(gr, name, "Precondition failed: ResourceVersion in precondition: "
                              f"{opts.preconditions_resource_version}, ResourceVersion in object "
                              f"meta: {rv}")
