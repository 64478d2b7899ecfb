"""``FakeClient``: the ``Client`` protocol over an ``ObjectTracker``, recording every call
and letting reactors answer first (see the package docstring for the semantics)."""

from __future__ import annotations

import builtins
import contextlib
import copy
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.clock import Clock, RealClock, format_time
from kubegc.api.fields import object_fields, parse_field_selector
from kubegc.api.labels import parse_label_selector
from kubegc.api.meta import ERROR, metadata
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.fake.actions import Action, ActionFormat, Reactor
from kubegc.client.fake.tracker import ObjectTracker
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)
from kubegc.registry import builtin_catalog
from kubegc.registry.fieldmanager import apply_patch

_SUCCESS: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def builtin_api_resources() -> builtins.list[APIResource]:
    """Discovery entries for kubegc's built-in resources (every served version)."""
    return [
        APIResource(i.group, v, i.resource, i.kind, i.namespaced, i.verbs, i.short_names,
                    i.categories, i.singular_name)
        for i in builtin_catalog() for v in i.versions
    ]


class FakeClient(Client):
    """In-memory ``Client``. One event loop; not thread-safe.

    Ownership: the test seeds objects (``add_object``), steers calls (reactors) and
    inspects ``actions`` and ``stored``; the code under test calls the ``Client`` methods.
    ``action_format`` renders ``actions`` (default ``str``: kubegc's short form;
    ``client_go_string``: upstream's GC tests' form).
    """

    def __init__(
        self, *, resources: Iterable[APIResource] = (), clock: Clock | None = None,
        action_format: ActionFormat = str,
    ) -> None:
        self.clock: Clock = clock or RealClock()
        self.actions: builtins.list[str] = []
        self.action_log: builtins.list[Action] = []
        self._format = action_format
        self._resources: dict[GroupVersionResource, APIResource] = {}
        self._catalog = builtin_catalog()
        self._reactors: builtins.list[tuple[str, GroupVersionResource | None, Reactor]] = []
        self.tracker = ObjectTracker(self.clock, self._info)
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
        return self.tracker.create(gvr, obj, namespace)

    def update_object(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """Store ``obj`` over its stored version as is (no resourceVersion check), without
        recording an action: another writer's update. Watchers see it."""
        meta = obj.get("metadata") or {}
        self.tracker.must(gvr, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        return self.tracker.commit(gvr, copy.deepcopy(obj))

    def remove_object(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> None:
        """Remove the object at once, without recording an action; watchers see DELETED."""
        self.tracker.remove(gvr, self.tracker.must(gvr, namespace, name))

    def stored(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj | None:
        """A copy of the stored object, without recording an action."""
        obj = self.tracker.find(gvr, namespace, name)
        return copy.deepcopy(obj) if obj is not None else None

    def objects(self, gvr: GroupVersionResource) -> builtins.list[Obj]:
        """Copies of every stored object of ``gvr``, by namespace/name; no action recorded."""
        return self.tracker.items(gvr)

    def clear_actions(self) -> None:
        self.actions.clear()
        self.action_log.clear()

    def take_actions(self) -> builtins.list[str]:
        """The recorded ``actions`` so far; both logs are cleared."""
        taken = builtins.list(self.actions)
        self.clear_actions()
        return taken

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

    def fail_matching(self, failures: dict[str, Exception]) -> None:
        """Make every call whose rendered action (``action_format``) is a key of ``failures``
        raise that key's error; the dict is read at each call, so tests may edit it later."""

        def reactor(action: Action) -> Obj | None:
            error = failures.get(self._format(action))
            if error is not None:
                raise error
            return None

        self.prepend_reactor("*", reactor)

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
        self.tracker.compact(resource_version)

    def expire_watches(self, gvr: GroupVersionResource | None = None) -> None:
        """Send a 410 Expired ERROR to open watches (all, or of ``gvr``) and end them."""
        self.fail_watches(errors.resource_expired("too old resource version"), gvr)

    def fail_watches(
        self, error: errors.StatusError, gvr: GroupVersionResource | None = None,
    ) -> None:
        """Send ``error`` as an ERROR event to open watches (all, or of ``gvr``); end them."""
        self.tracker.end_watches(gvr, WatchEvent(ERROR, error.to_status()))

    def close_watches(self, gvr: GroupVersionResource | None = None) -> None:
        """End open watch streams normally (as a server-side timeout does)."""
        self.tracker.end_watches(gvr, None)

    def send_bookmark(self, gvr: GroupVersionResource) -> None:
        info = self._info(gvr)
        self.tracker.send_bookmark(gvr, {
            "kind": info.kind if info else "", "apiVersion": gvr.group_version,
            "metadata": {"resourceVersion": str(self.tracker.resource_version)}})

    def watcher_count(self, gvr: GroupVersionResource | None = None) -> int:
        return self.tracker.watcher_count(gvr)

    @property
    def resource_version(self) -> int:
        """The global counter: the resourceVersion of the last write."""
        return self.tracker.resource_version

    # -- Client ----------------------------------------------------------------------

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        answer = self._record(Action("get", gvr, namespace, name))
        return answer if answer is not None else copy.deepcopy(
            self.tracker.must(gvr, namespace, name))

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        opts = options or ListOptions()
        answer = self._record(Action("list", gvr, namespace, body=opts))
        if answer is not None:
            return answer
        items = self.tracker.items(
            gvr, self._matcher(gvr, namespace, opts.label_selector, opts.field_selector))
        start = int(opts.continue_ or 0)
        end = start + opts.limit if opts.limit > 0 else len(items)
        info = self._info(gvr)
        meta: dict[str, Any] = {"resourceVersion": str(self.tracker.resource_version)}
        if end < len(items):
            meta.update({"continue": str(end), "remainingItemCount": len(items) - end})
        return {"kind": f"{info.kind if info else ''}List", "apiVersion": gvr.group_version,
                "metadata": meta, "items": items[start:end]}

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        opts = options or WatchOptions()
        self._record(Action("watch", gvr, namespace, body=opts))
        matches = self._matcher(gvr, namespace, opts.label_selector, opts.field_selector)
        events = self.tracker.watch(gvr, matches, opts.resource_version, opts.allow_bookmarks)
        async with contextlib.aclosing(events):  # closing this stream ends the watch at once
            async for event in events:
                yield event

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        meta = obj.get("metadata") or {}
        ns = namespace or str(meta.get("namespace") or "")
        answer = self._record(Action("create", gvr, ns, str(meta.get("name") or ""), body=obj))
        return answer if answer is not None else self.tracker.create(gvr, obj, namespace)

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        meta = obj.get("metadata") or {}
        ns, name = namespace or str(meta.get("namespace") or ""), str(meta.get("name") or "")
        answer = self._record(Action("update", gvr, ns, name, subresource, body=obj))
        if answer is not None:
            return answer
        existing = self.tracker.must(gvr, ns, name)
        _check_rv_and_uid(gvr, name, meta, existing)
        new = copy.deepcopy(obj)
        if subresource == "status":
            new = {**copy.deepcopy(existing), "status": new.get("status")}
        for keep in ("uid", "creationTimestamp", "deletionTimestamp", "namespace"):
            if keep in existing["metadata"]:
                metadata(new)[keep] = existing["metadata"][keep]
        return self.tracker.commit(gvr, new)

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        action = Action("patch", gvr, namespace, name, subresource, patch, patch_type)
        answer = self._record(action)
        if answer is not None:
            return answer
        existing = self.tracker.find(gvr, namespace, name)
        if existing is None and patch_type is not PatchType.APPLY:
            existing = self.tracker.must(gvr, namespace, name)
        info = self._info(gvr)
        kind = str((existing or {}).get("kind") or (info.kind if info else ""))
        body = patch if isinstance(patch, bytes | str) else orjson.dumps(patch)
        patched = copy.deepcopy(apply_patch(
            patch_type.value, existing, body, group=gvr.group, kind=kind, manager=field_manager,
            force=force, now=format_time(self.clock.now()), subresource=subresource))
        if existing is None:  # server-side apply creates
            metadata(patched)["name"] = name
            return self.tracker.create(gvr, patched, namespace)
        _check_rv_and_uid(gvr, name, patched.get("metadata") or {}, existing)
        metadata(patched).update(uid=existing["metadata"].get("uid"), name=name)
        return self.tracker.commit(gvr, patched)

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        opts = options or DeleteOptions()
        answer = self._record(Action("delete", gvr, namespace, name, body=opts))
        if answer is not None:
            return answer
        existing = self.tracker.must(gvr, namespace, name)
        _check_preconditions(gvr, name, opts, existing)
        if opts.dry_run:
            return copy.deepcopy(existing)
        kept = self.tracker.delete(gvr, existing, opts)
        if kept is not None:
            return kept
        details = {"name": name, "group": gvr.group, "kind": gvr.resource,
                   "uid": existing["metadata"].get("uid", "")}
        return {**copy.deepcopy(_SUCCESS), "details": details}

    async def delete_collection(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: DeleteOptions | None = None, list_options: ListOptions | None = None,
    ) -> Obj:
        """Lists with ``list_options``' selectors, then deletes each as ``delete`` does
        (recording one ``delete-collection`` action, not one per object)."""
        opts, lo = options or DeleteOptions(), list_options or ListOptions()
        answer = self._record(Action("delete-collection", gvr, namespace, body=opts))
        if answer is not None:
            return answer
        info = self._info(gvr)
        if info is not None and info.verbs and "deletecollection" not in info.verbs:
            raise errors.method_not_supported(
                errors.GroupResource(gvr.group, gvr.resource), "deletecollection")
        deleted = []
        for item in self.tracker.items(
                gvr, self._matcher(gvr, namespace, lo.label_selector, lo.field_selector)):
            deleted.append(copy.deepcopy(item))  # as listed, as upstream answers
            if not opts.dry_run:
                self.tracker.delete(gvr, item, opts)
        return {"kind": f"{info.kind if info else ''}List", "apiVersion": gvr.group_version,
                "metadata": {"resourceVersion": str(self.tracker.resource_version)},
                "items": deleted}

    async def discover(self) -> builtins.list[APIResource]:
        self._react(Action("discover", GroupVersionResource("", "", "")))
        return builtins.list(self._resources.values())

    # -- internals -------------------------------------------------------------------

    def _record(self, action: Action) -> Obj | None:
        self.action_log.append(action)
        self.actions.append(self._format(action))
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


def _check_rv_and_uid(
    gvr: GroupVersionResource, name: str, new_meta: dict[str, Any], existing: Obj,
) -> None:
    """The registry's update checks: a resourceVersion and a uid given must match."""
    gr = errors.GroupResource(gvr.group, gvr.resource)
    old_meta = existing["metadata"]
    rv, uid = new_meta.get("resourceVersion"), new_meta.get("uid")
    if rv and str(rv) != old_meta.get("resourceVersion"):
        raise errors.conflict(gr, name, errors.OBJECT_MODIFIED)
    if uid and uid != old_meta.get("uid"):
        raise errors.conflict(gr, name, f"Precondition failed: UID in precondition: {uid}, "
                                        f"UID in object meta: {old_meta.get('uid')}")


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
