"""GraphBuilder: informer events -> the dependency graph -> work for the GC workers
(cf. graph_builder.go).

Pipeline: monitors (one metadata-only informer per resource) put ``Event``s on
``graph_changes``; ``process_graph_changes``, one task, applies each event to
``uid_to_node`` and enqueues nodes on ``attempt_to_delete`` (something about them may
now be collectable) or ``attempt_to_orphan`` (an owner started deletion with ``orphan``).
Workers of ``GarbageCollector`` consume those two queues and may put virtual delete
events back on ``graph_changes`` (``enqueue_virtual_delete_event``).

Ownership: ``process_graph_changes`` is the single writer of ``uid_to_node`` and of every
node; it runs each event synchronously (no ``await`` while mutating), so workers on the
same loop never observe a half-applied event.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from kubegc.api.clock import Clock
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    ObjectReference,
)
from kubegc.api.resources import GroupVersionKind, GroupVersionResource, split_api_version
from kubegc.api.types import Obj
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector.graph import (
    ConcurrentUIDToNode,
    Event,
    EventType,
    Node,
    OwnerRef,
    SharedOwnerRefs,
)
from kubegc.controllers.garbagecollector.monitors import Monitors
from kubegc.controllers.garbagecollector.owner_ref_warnings import (
    EventRecorderLike,
    report_invalid_namespace_owner_ref,
    report_malformed_owner_refs,
)
from kubegc.controllers.garbagecollector.references import (
    ReferencesDiff,
    get_alternate_owner_identity,
    partition_dependents,
    references_diffs,
    unblocked_owner_uids,
)
from kubegc.controllers.garbagecollector.resources import DEFAULT_IGNORED_RESOURCES, RESTMapper
from kubegc.controllers.garbagecollector.uid_cache import AbsentReason, DeletedUIDs, ReferenceCache

if TYPE_CHECKING:
    from kubegc.client.cache import SharedInformerFactory

log = logging.getLogger(__name__)

class GraphBuilder:
    """Builds and owns the dependency graph (cf. ``GraphBuilder``).

    Queues (all ``RateLimitingQueue``): ``graph_changes`` (producers: monitors and GC
    workers; consumer: this builder), ``attempt_to_delete`` and ``attempt_to_orphan``
    (producer: this builder and GC workers; consumers: GC workers). The
    ``absent_owner_cache`` is shared with the GC workers.
    """

    def __init__(
        self, *, rest_mapper: RESTMapper, informer_factory: SharedInformerFactory,
        recorder: EventRecorderLike, clock: Clock,
        ignored_resources: Iterable[tuple[str, str]] = DEFAULT_IGNORED_RESOURCES,
        absent_owner_cache: ReferenceCache | None = None,
    ) -> None:
        self.rest_mapper = rest_mapper
        self.event_recorder = recorder
        self.uid_to_node = ConcurrentUIDToNode()
        self.absent_owner_cache = (
            ReferenceCache() if absent_owner_cache is None else absent_owner_cache)
        self.graph_changes: RateLimitingQueue[Event] = RateLimitingQueue(
            name="garbage_collector_graph_changes", clock=clock)
        self.attempt_to_delete: RateLimitingQueue[Node] = RateLimitingQueue(
            name="garbage_collector_attempt_to_delete", clock=clock)
        self.attempt_to_orphan: RateLimitingQueue[Node] = RateLimitingQueue(
            name="garbage_collector_attempt_to_orphan", clock=clock)
        self.monitors = Monitors(
            informer_factory=informer_factory, rest_mapper=rest_mapper,
            ignored_resources=ignored_resources, sink=self._enqueue_change,
        )
        self._processing = False
        # uid -> dependents still referencing it after its node was removed (upstream
        # forgets them; kept here so a node reappearing for the uid is linked again)
        self._unlinked: dict[str, set[Node]] = {}
        self.deleted_uids = DeletedUIDs()
        self._owner_refs = SharedOwnerRefs()

    def cached_owner_refs(self, obj: Obj) -> tuple[OwnerRef, ...]:
        """``owner_refs_of`` an object of the monitors' caches, parsed once per shared
        ownerReferences list (the same parse the builder made of it: one per owner's
        dependents, not one per item a GC worker decides)."""
        return self._owner_refs(obj)[0]

    def _enqueue_change(self, event: Event) -> None:
        self.graph_changes.add(event)

    # ----------------------------------------------------------------- lifecycle
    async def sync_monitors(self, resources: Iterable[GroupVersionResource]) -> list[Exception]:
        """Monitor exactly ``resources`` and start the new monitors if running."""
        errors = await self.monitors.sync(resources)
        self.monitors.start()
        return errors

    async def run(self) -> None:
        """Start monitors, then process graph changes until ``graph_changes`` shuts down."""
        self.monitors.running = True
        self.monitors.start()
        try:
            while await self.process_graph_changes():
                pass
        finally:
            await self.monitors.stop()

    def shut_down(self) -> None:
        self.graph_changes.shut_down()

    def is_synced(self) -> bool:
        return self.monitors.is_synced()

    def is_idle(self) -> bool:
        return not self._processing and self.graph_changes.is_idle() and self.monitors.is_idle()

    def enqueue_virtual_delete_event(
        self, identity: ObjectReference, *, reason: AbsentReason = AbsentReason.NOT_FOUND,
    ) -> None:
        """Tell the builder an identity was verified absent (cf. ``enqueueVirtualDeleteEvent``)."""
        group, version = split_api_version(identity.api_version)
        self.graph_changes.add(Event(
            EventType.DELETE, metaonly.reference_object(identity),
            GroupVersionKind(group, version, identity.kind), virtual=True,
            absent_reason=str(reason),
        ))

    # ----------------------------------------------------------------- processing
    async def process_graph_changes(self) -> bool:
        """Apply one queued event; False once ``graph_changes`` is shut down."""
        event, shutdown = await self.graph_changes.get()
        if shutdown:
            return False
        self._processing = True
        try:
            self._process_event(event)
        except Exception:  # one bad event must not stop the builder
            log.exception("GraphBuilder failed to process %s event", event.event_type.value)
        finally:
            self._processing = False
            self.graph_changes.done(event)
        return True

    def _process_event(self, event: Event) -> None:
        existing = self.uid_to_node.read(metaonly.uid(event.obj))
        if existing is not None and not event.virtual and not existing.is_observed():
            existing = self._observe(existing, event)
        if event.event_type is not EventType.DELETE:
            self._handle_add_or_update(event, existing)
        elif existing is None:
            log.debug("item %s doesn't exist in the graph, this shouldn't happen",
                      metaonly.uid(event.obj))
        elif not event.virtual or self._handle_virtual_delete(event, existing):
            self._handle_delete(event, existing)

    def _observe(self, existing: Node, event: Event) -> Node:
        """First informer event for a virtual node: take its observed identity and requeue the
        dependents that disagree with it (cf. ``processGraphChanges``, "observed")."""
        observed = metaonly.identity_from(event.gvk, event.obj)
        if observed != existing.identity:
            # bad child -> good parent order; the reverse is caught in add_dependent_to_owners
            _, mismatched = partition_dependents(existing.get_dependents(), observed)
            for dep in mismatched:
                if observed.namespace and dep.identity.namespace != observed.namespace:
                    report_invalid_namespace_owner_ref(self.event_recorder, dep, observed.uid)
                self.attempt_to_delete.add(dep)
            log.debug("replacing virtual item %s with observed item %s",
                      existing.identity, observed)
            existing = existing.clone()
            existing.identity = observed
            self.uid_to_node.write(existing)
        existing.mark_observed()
        return existing

    def _handle_add_or_update(self, event: Event, existing: Node | None) -> None:
        obj = event.obj
        owners, malformed = self._owner_refs(obj)
        if malformed:
            report_malformed_owner_refs(self.event_recorder, metaonly.identity_from(event.gvk, obj),
                                        malformed)
        being_deleted = metaonly.being_deleted(obj)
        if existing is None:
            node = Node(
                metaonly.identity_from(event.gvk, obj), owners=owners,
                being_deleted=being_deleted,
                deleting_dependents=being_deleted
                and metaonly.has_delete_dependents_finalizer(obj),
            )
            self.insert_node(node)
        else:
            node = existing
            self._update_owners(node, owners)
            if being_deleted:
                node.mark_being_deleted()
        # the informer may fold a creation and a deletion into one event
        self.process_transitions(event.old_obj, obj, node)

    def _update_owners(self, node: Node, owners: tuple[OwnerRef, ...]) -> None:
        diff = references_diffs(node.owners, owners)
        if not diff:
            return
        self.add_unblocked_owners_to_delete_queue(diff)
        node.owners = owners
        self.add_dependent_to_owners(node, diff.added)
        self.remove_dependent_from_owners(node, diff.removed)

    def add_unblocked_owners_to_delete_queue(self, diff: ReferencesDiff) -> None:
        """A removed or unblocked blocking reference may release an owner waiting for its
        dependents: queue it (cf. ``addUnblockedOwnersToDeleteQueue``)."""
        for uid in unblocked_owner_uids(diff):
            owner = self.uid_to_node.read(uid)
            if owner is not None:
                self.attempt_to_delete.add(owner)

    def _handle_virtual_delete(self, event: Event, existing: Node) -> bool:
        """A virtual delete verified one identity absent; return whether to remove the
        node (only if no dependent uses another identity for its uid; cf. the virtual-delete
        branch of ``processGraphChanges`` and ``getAlternateOwnerIdentity``)."""
        deleted = metaonly.identity_from(event.gvk, event.obj)
        reason = AbsentReason(event.absent_reason or AbsentReason.NOT_FOUND)
        if existing.virtual:
            matching, nonmatching = partition_dependents(existing.get_dependents(), deleted)
            if not nonmatching:
                return True
            self._remember_absent_identity(deleted, matching, reason)
            if existing.identity == deleted:
                replacement = get_alternate_owner_identity(nonmatching, deleted)
                if replacement is not None:
                    node = existing.clone()
                    node.identity = replacement
                    self.uid_to_node.write(node)
                    self.attempt_to_delete.add_rate_limited(node)
            return False
        if existing.identity != deleted:
            # an observed node is never removed on the word of a virtual event
            matching, _ = partition_dependents(existing.get_dependents(), deleted)
            self._remember_absent_identity(deleted, matching, reason)
            return False
        return True

    def _remember_absent_identity(
        self, identity: ObjectReference, dependents: Sequence[Node], reason: AbsentReason,
    ) -> None:
        if not dependents:
            return
        self.absent_owner_cache.add(identity, reason)
        for dep in dependents:
            self.attempt_to_delete.add(dep)

    def was_observed(self, uid: str) -> bool:
        """Whether an object with ``uid`` was observed: in the graph now, or deleted
        recently (``DeletedUIDs``)."""
        node = self.uid_to_node.read(uid)
        return (node is not None and node.is_observed()) or uid in self.deleted_uids

    def _handle_delete(self, event: Event, existing: Node) -> None:
        self.remove_node(existing)
        if existing.is_observed():
            self.deleted_uids.add(existing.identity.uid)
        dependents = existing.get_dependents()
        if dependents:
            reason = (AbsentReason(event.absent_reason) if event.virtual and event.absent_reason
                      else AbsentReason.OBSERVED_DELETED)
            self.absent_owner_cache.add(metaonly.identity_from(event.gvk, event.obj), reason)
        for dep in dependents:
            self.attempt_to_delete.add(dep)
        for ref in existing.owners:
            owner = self.uid_to_node.read(ref.uid)
            # a waiting owner may now have no blocking dependent left (cf. ``processGraphChanges``,
            # "delete": owners that are deleting dependents are re-queued)
            if owner is not None and owner.is_deleting_dependents():
                self.attempt_to_delete.add(owner)

    def process_transitions(self, old: Obj | None, new: Obj, node: Node) -> None:
        """Queue an owner that just started deleting with a GC finalizer
        (cf. ``processTransitions``)."""
        if not metaonly.being_deleted(new):  # most events: no transition to look for
            return
        if metaonly.deletion_starts_with_finalizer(old, new, FINALIZER_ORPHAN_DEPENDENTS):
            log.debug("add %s to attemptToOrphan", node.identity)
            self.attempt_to_orphan.add(node)
            return
        if metaonly.deletion_starts_with_finalizer(old, new, FINALIZER_DELETE_DEPENDENTS):
            log.debug("add %s to attemptToDelete, waiting for its dependents", node.identity)
            # a node first added as virtual has no deleting_dependents yet: always set it
            node.mark_deleting_dependents()
            for dep in node.get_dependents():
                self.attempt_to_delete.add(dep)
            self.attempt_to_delete.add(node)

    # ----------------------------------------------------------------- graph edits
    def insert_node(self, node: Node) -> None:
        self.uid_to_node.write(node)
        self._relink(node)
        self.add_dependent_to_owners(node, node.owners)

    def remove_node(self, node: Node) -> None:
        uid = node.identity.uid
        self.uid_to_node.delete(uid)
        self.remove_dependent_from_owners(node, node.owners)
        remaining = {d for d in node.get_dependents()
                     if d is not node and self.uid_to_node.read(d.identity.uid) is d}
        if remaining:
            self._unlinked.setdefault(uid, set()).update(remaining)

    def remove_dependent_from_owners(self, node: Node, owners: Iterable[OwnerRef]) -> None:
        for ref in owners:
            owner = self.uid_to_node.read(ref.uid)
            if owner is not None:
                owner.delete_dependent(node)
                continue
            unlinked = self._unlinked.get(ref.uid)
            if unlinked is not None:
                unlinked.discard(node)
                if not unlinked:
                    del self._unlinked[ref.uid]

    def _relink(self, node: Node) -> None:
        """Give a node that (re)appears for a uid the dependents still referencing that
        uid since an earlier node for it was removed (keeps the invariant of ``Node`` in
        graph.py for any event order)."""
        uid = node.identity.uid
        for dep in self._unlinked.pop(uid, ()):
            if self.uid_to_node.read(dep.identity.uid) is dep and any(
                    ref.uid == uid for ref in dep.owners):
                node.add_dependent(dep)

    def add_dependent_to_owners(self, node: Node, owners: Iterable[OwnerRef]) -> None:
        """Link ``node`` under each owner, creating virtual owners for unseen uids
        (cf. ``addDependentToOwners``) and queueing ``node`` if a reference looks invalid (its
        namespace or coordinates disagree with the observed owner; kubernetes PR 92743)."""
        potentially_invalid = False
        for ref in owners:
            owner = self.uid_to_node.read(ref.uid)
            if owner is None:
                owner = Node(ref.identity_in(node.identity.namespace), virtual=True)
                self.uid_to_node.write(owner)
                self._relink(owner)
                owner.add_dependent(node)
                # the GC verifies the owner and sends a virtual delete if it is absent
                self.attempt_to_delete.add(owner)
                continue
            owner.add_dependent(node)
            if not potentially_invalid:
                potentially_invalid = self._suspicious_reference(node, ref, owner)
        if potentially_invalid:
            self.attempt_to_delete.add(node)

    def _suspicious_reference(self, node: Node, ref: OwnerRef, owner: Node) -> bool:
        owner_ns = owner.identity.namespace
        if owner_ns and owner_ns != node.identity.namespace:
            if owner.is_observed():  # definitely wrong: report it on the child
                report_invalid_namespace_owner_ref(self.event_recorder, node, ref.uid)
            return True
        if not ref.matches_coordinates(owner.identity):
            if owner.is_observed():
                log.info("item %s references an owner with coordinates that do not match "
                         "the observed identity %s", node.identity, owner.identity)
            return True
        # cluster-scoped-looking virtual owner seen from another namespace (issue 98040)
        return not owner_ns and owner_ns != node.identity.namespace and owner.virtual
