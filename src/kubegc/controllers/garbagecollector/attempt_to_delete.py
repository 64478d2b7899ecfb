"""One item of ``attempt_to_delete``, decided and acted on in one pass (cf.
``attemptToDeleteItem`` and ``processDeletingDependentsItem``, garbagecollector.go).

Upstream GETs the item, decides on that copy and acts. kubegc decides on *a copy* of the
item (``ItemCopy``): the one its monitor's cache holds when that copy is usable, else a
live GET (docs/architecture.md, "The GC decides deletes on its informer cache"). One
function decides on the copy (``decision``'s rules; the owners are looked up against the
live API, as upstream), one function acts on the decision. A write decided on a cached copy
carries the copy's resourceVersion as a precondition, so it lands only on exactly the
state decided on; since only a delete can carry one, the writes that cannot (patching
references away, unblocking a possible cycle) are decided on a live copy, as upstream. So
the item goes round once more, on a live GET, when acting on the cached copy is not
possible or the delete says the copy was stale (409) or gone (404); the owner lookups
made for the cached copy are reused when the live copy has the same owner references.
A live copy always ends the pass.

Ownership: reads the graph (never writes it) and may enqueue virtual delete events;
everything read before an ``await`` may be stale after it.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import NamedTuple, NoReturn

from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import FINALIZER_DELETE_DEPENDENTS
from kubegc.controllers.garbagecollector import decision, metaonly
from kubegc.controllers.garbagecollector import records as rec
from kubegc.controllers.garbagecollector.actions import Actions
from kubegc.controllers.garbagecollector.classify import ReferenceClassifier
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef, owner_refs_of
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.operations import Operations
from kubegc.controllers.garbagecollector.uid_cache import AbsentReason

log = logging.getLogger(__name__)


class DeleteItemOutcome(enum.Enum):
    DONE = "done"
    ENQUEUED_VIRTUAL_DELETE = "enqueuedVirtualDelete"


class ItemCopy(NamedTuple):  # a NamedTuple: made per item, at half a frozen dataclass's cost
    """A copy of the item that a decision reads: its monitor cache's, whose
    ``resource_version`` every write decided on it carries as a precondition, or the
    API's (``resource_version`` None: written with a uid precondition only, as upstream)."""

    obj: metaonly.Meta
    references: tuple[OwnerRef, ...]
    resource_version: str | None = None

    @property
    def cached(self) -> bool:
        return self.resource_version is not None


@dataclass(frozen=True, slots=True)
class _Lookups:
    """Owner lookups made for a copy, reusable for another copy with the same references."""

    references: tuple[OwnerRef, ...]
    classified: decision.Classified


class AttemptToDelete:
    """Decides and acts on items of ``attempt_to_delete`` for the GC's delete workers."""

    def __init__(
        self, *, graph_builder: GraphBuilder, operations: Operations,
        classifier: ReferenceClassifier, actions: Actions,
    ) -> None:
        self._graph_builder = graph_builder
        self._operations = operations
        self._classifier = classifier
        self._actions = actions

    async def attempt_to_delete_item(self, item: Node) -> DeleteItemOutcome:
        """Decide ``item`` on a copy (its cached one if usable, else a live one) and act.

        Raises the error of an owner lookup that stopped the decision (``RESTMappingError``
        for an unmappable kind, ``NamespacedOwnerOfClusterScopedObjectError``, a failed
        GET), which the worker turns into a retry or a forget."""
        log.debug("processing item %s virtual=%s", item.identity, not item.is_observed())
        if decision.waits_for_deletion(_flags(item)):
            return DeleteItemOutcome.DONE  # a one-way trip: wait for the final deletion
        copy = self._cached_copy(item)
        lookups: _Lookups | None = None
        while True:  # at most twice: acting on a live copy always ends the pass
            if copy is None:
                copy = await self._live_copy(item)
                if copy is None:
                    return DeleteItemOutcome.ENQUEUED_VIRTUAL_DELETE
            made = await self._decide(item, copy, lookups)
            outcome = await self._act(item, copy, made)
            if outcome is not None:
                return outcome
            if made.classified is not None:
                lookups = _Lookups(copy.references, made.classified)
            copy = None

    def _cached_copy(self, item: Node) -> ItemCopy | None:
        """The monitor cache's copy of an observed item; None when there is no usable one
        (not observed, not cached with that uid, no resourceVersion, no owner reference)
        or the item is deleting its dependents (decided on a live copy, as upstream)."""
        if not item.is_observed() or item.is_deleting_dependents():
            return None
        cached = self._operations.cached_object(item.identity)
        if cached is None:
            return None
        resource_version = metaonly.resource_version(cached)
        references = self._graph_builder.cached_owner_refs(cached)
        if not resource_version or not references:
            return None
        return ItemCopy(cached, references, resource_version)

    async def _live_copy(self, item: Node) -> ItemCopy | None:
        """The item as the API has it; None (after enqueueing a virtual delete event, as
        upstream) when it is gone or its name is held by another uid."""
        try:
            latest = await self._operations.get_object(item.identity)
        except StatusError as exc:
            if not is_not_found(exc):
                raise
            self._graph_builder.enqueue_virtual_delete_event(item.identity)
            return None
        if metaonly.uid(latest) != item.identity.uid:
            self._graph_builder.enqueue_virtual_delete_event(
                item.identity, reason=AbsentReason.UID_MISMATCH)
            return None
        return ItemCopy(latest, owner_refs_of(latest))

    async def _decide(self, item: Node, copy: ItemCopy,
                      lookups: _Lookups | None) -> decision.Decision:
        """``decision``'s rules over ``copy``: owners looked up live (or reused from
        ``lookups`` when made for the same references); the graph read after them, as
        upstream reads the item's dependents after ``classifyReferences``."""
        early = decision.before_lookup(_flags(item), has_references=bool(copy.references))
        if early is not None:
            return early
        if lookups is not None and lookups.references == copy.references:
            classified = lookups.classified
        else:
            classified = await self._classifier.classify_references(item, copy.references)
        return decision.after_lookup(_item_state(item, copy.obj), classified)

    async def _act(self, item: Node, copy: ItemCopy,
                   made: decision.Decision) -> DeleteItemOutcome | None:
        """Carry ``made`` out on ``copy``; None when it must be decided again on a live
        copy (only ever for a cached one: see the module docstring)."""
        action = made.action
        if action is decision.Action.PROCESS_DELETING_DEPENDENTS:
            await self.process_deleting_dependents_item(item)
            return DeleteItemOutcome.DONE
        if action in (decision.Action.RETRY, decision.Action.NEVER):
            _raise_stopped(made)
        if action not in (decision.Action.REMOVE_REFERENCES, decision.Action.DELETE):
            return DeleteItemOutcome.DONE  # nothing to write
        c = made.classified
        if c is None:
            raise ValueError(f"decision {action} without its classification")
        if copy.cached and (action is decision.Action.REMOVE_REFERENCES
                            or made.unblock_owner_references):
            return None  # a patch carries no resourceVersion precondition
        if action is decision.Action.REMOVE_REFERENCES:
            await self._actions.remove_dangling_and_waiting_refs(item, c)
            return DeleteItemOutcome.DONE
        if made.policy is None:
            raise ValueError("a delete decision carries its propagation policy")
        if made.unblock_owner_references:
            # a dependent also waits for its dependents: maybe a cycle (false positives
            # are possible), so stop blocking our owners before deleting in foreground
            suspect = next(d for d in item.get_dependents() if d.is_deleting_dependents())
            await self._actions.unblock_owner_references(item, suspect, c)
        try:
            await self._actions.delete(item, made.policy, c,
                                       resource_version=copy.resource_version)
        except StatusError as exc:
            if copy.cached and (is_conflict(exc) or is_not_found(exc)):
                return None  # the cached copy was stale or gone: decide on a live one
            if not is_not_found(exc):
                raise
            # gone since the GET: what upstream's retry finds, without the error log
            self._graph_builder.enqueue_virtual_delete_event(item.identity)
            return DeleteItemOutcome.ENQUEUED_VIRTUAL_DELETE
        return DeleteItemOutcome.DONE

    async def process_deleting_dependents_item(self, item: Node) -> None:
        """Remove ``foregroundDeletion`` once no blocking dependent is left; else queue
        the blocking dependents (cf. ``processDeletingDependentsItem``)."""
        blocking = item.blocking_dependents()
        if not blocking:
            await self._actions.remove_finalizer(item.identity, FINALIZER_DELETE_DEPENDENTS,
                                                 rec.DecisionReason.NO_BLOCKING_DEPENDENTS)
            return
        for dep in blocking:
            if not dep.is_deleting_dependents():
                self._graph_builder.attempt_to_delete.add(dep)


#: The four states the decisions taken before any lookup read, made once (ItemState is
#: frozen; building one costs ~0.5 µs, per item of a cascade).
_FLAGS = {(b, d): decision.ItemState(b, d) for b in (False, True) for d in (False, True)}


def _flags(item: Node) -> decision.ItemState:
    """What the decisions taken before any lookup read: the node's deletion flags."""
    return _FLAGS[item.is_being_deleted(), item.is_deleting_dependents()]


def _item_state(item: Node, copy: metaonly.Meta) -> decision.ItemState:
    """What the decision reads: the graph node, and the finalizers of ``copy``."""
    finalizers = tuple((copy.get("metadata") or {}).get("finalizers") or ())
    dependents = item.get_dependents()
    return decision.ItemState(
        being_deleted=item.is_being_deleted(), deleting_dependents=item.is_deleting_dependents(),
        finalizers=finalizers, dependents=len(dependents),
        dependent_deleting_dependents=any(d.is_deleting_dependents() for d in dependents))


def _raise_stopped(made: decision.Decision) -> NoReturn:
    """Raise the error of the owner lookup that stopped ``made``'s classification."""
    stopped = made.classified.stopped if made.classified is not None else None
    if stopped is None or stopped.error is None:
        raise ValueError(f"decision {made.action} without the lookup that stopped it")
    raise stopped.error
