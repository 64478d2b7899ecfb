"""Resource monitors: one metadata-only shared informer per monitored resource, funnelled
into the ``graph_changes`` queue (cf. graph_builder.go ``monitor``, ``syncMonitors``).

A monitor's handler turns informer callbacks into ``Event``s; it runs in the informer's
task and only enqueues. Removing a monitor deactivates and unregisters its handler at
once (later callbacks are dropped). When the resource vanished from discovery (a deleted
CRD) its informer is stopped too, so a re-created CRD gets a fresh one (upstream's
TestCRDDeletionCascading); when the
GC merely stops, the shared informers are left to their owner (the controller manager),
as upstream leaves shared informers running when a monitor stops. A resource whose
informer cannot sync does not hold back the others: ``is_synced`` is false, events of
the other resources keep flowing (upstream's TestCascadingDeleteOnCRDConversionFailure).

Ownership: the GarbageCollector's sync task is the only caller of ``sync``/``start``/
``stop``; readers (``is_synced``, ``store_for``) may run anywhere on the loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubegc.api.resources import GroupVersionKind, GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, ResourceEventHandler
from kubegc.controllers.garbagecollector.errors import RESTMappingError
from kubegc.controllers.garbagecollector.graph import Event, EventType
from kubegc.controllers.garbagecollector.resources import RESTMapper

if TYPE_CHECKING:
    from kubegc.client.cache import SharedInformer, SharedInformerFactory

log = logging.getLogger(__name__)

EventSink = Callable[[Event], None]


class MonitorHandler(ResourceEventHandler):
    """Informer callbacks -> graph changes for one resource (cf. ``controllerFor``)."""

    def __init__(self, sink: EventSink, kind: GroupVersionKind) -> None:
        self._sink = sink
        self.kind = kind
        self.active = True

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if self.active:
            self._sink(Event(EventType.ADD, obj, self.kind))

    def on_update(self, old: Obj, new: Obj) -> None:
        if self.active:
            self._sink(Event(EventType.UPDATE, new, self.kind, old_obj=old))

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if not self.active:
            return
        # a relist may report a deletion it did not see as DeletedFinalStateUnknown
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self._sink(Event(EventType.DELETE, obj, self.kind))


@dataclass(eq=False)
class Monitor:
    resource: GroupVersionResource
    kind: GroupVersionKind
    informer: SharedInformer
    handler: MonitorHandler
    started: bool = False

    def has_synced(self) -> bool:
        return self.informer.has_synced()


class Monitors:
    """The set of monitors, keyed by resource."""

    def __init__(
        self, *, informer_factory: SharedInformerFactory, rest_mapper: RESTMapper,
        ignored_resources: Iterable[tuple[str, str]], sink: EventSink,
    ) -> None:
        self._factory = informer_factory
        self._rest_mapper = rest_mapper
        self._ignored = frozenset(ignored_resources)
        self._sink = sink
        self._monitors: dict[GroupVersionResource, Monitor] = {}
        self.running = False

    def __contains__(self, resource: object) -> bool:
        return resource in self._monitors

    def resources(self) -> set[GroupVersionResource]:
        return set(self._monitors)

    def get(self, resource: GroupVersionResource) -> Monitor | None:
        return self._monitors.get(resource)

    async def sync(self, resources: Iterable[GroupVersionResource]) -> list[Exception]:
        """Monitor exactly ``resources`` (minus ignored ones): keep existing monitors,
        create missing ones, stop the rest. Returns the per-resource errors; one failure
        does not prevent the other monitors (cf. ``syncMonitors``). Does not start new
        monitors: call ``start``."""
        to_remove = dict(self._monitors)
        current: dict[GroupVersionResource, Monitor] = {}
        errors: list[Exception] = []
        for resource in sorted(resources):
            if (resource.group, resource.resource) in self._ignored:
                continue
            if resource in to_remove:
                current[resource] = to_remove.pop(resource)
                continue
            try:
                current[resource] = self._monitor_for(resource)
            except (RESTMappingError, LookupError, ValueError) as exc:
                errors.append(exc)
        self._monitors = current
        for monitor in to_remove.values():
            await self._stop_monitor(monitor, stop_informer=True)
        log.debug("synced monitors: current %d, removed %d", len(current), len(to_remove))
        return errors

    def _monitor_for(self, resource: GroupVersionResource) -> Monitor:
        kind = self._rest_mapper.kind_for(resource)
        informer = self._factory.for_resource(resource, metadata_only=True)
        handler = MonitorHandler(self._sink, kind)
        informer.add_event_handler(handler)
        return Monitor(resource, kind, informer, handler)

    async def _stop_monitor(self, monitor: Monitor, *, stop_informer: bool) -> None:
        monitor.handler.active = False
        monitor.informer.remove_event_handler(monitor.handler)
        if stop_informer:
            await self._factory.stop(monitor.resource)

    def start(self) -> int:
        """Start monitors not started yet (no-op before the GraphBuilder runs)."""
        if not self.running:
            return 0
        new = [m for m in self._monitors.values() if not m.started]
        for monitor in new:
            monitor.started = True
        if new:
            self._factory.start()
        return len(new)

    async def stop(self) -> None:
        """Detach every monitor and forget them (the builder can be re-run afterwards).
        The shared informers keep running: their owner stops them."""
        monitors, self._monitors = self._monitors, {}
        self.running = False
        for monitor in monitors.values():
            await self._stop_monitor(monitor, stop_informer=False)

    def is_synced(self) -> bool:
        """True if there is at least one monitor and all have synced (cf. ``IsSynced``)."""
        return bool(self._monitors) and all(m.has_synced() for m in self._monitors.values())

    def unsynced(self) -> list[GroupVersionResource]:
        return sorted(r for r, m in self._monitors.items() if not m.has_synced())

    def is_idle(self) -> bool:
        """No informer of a started monitor is dispatching events right now."""
        return all(m.informer.is_idle() for m in self._monitors.values() if m.started)

    def cached(self, resource: GroupVersionResource, namespace: str, name: str) -> Obj | None:
        """The informer cache's copy of an object, if the resource is monitored."""
        monitor = self._monitors.get(resource)
        if monitor is None:
            return None
        key = f"{namespace}/{name}" if namespace else name
        found = monitor.informer.indexer.get_by_key(key)
        return found if isinstance(found, dict) else None
