"""Decisions on the monitor cache's copy of an item (docs/architecture.md, "The GC decides
deletes on its informer cache").

Upstream's ``attemptToDeleteItem`` GETs the item before deciding. ``decide_on_cache`` takes
the same decision (``decision.after_lookup``) on the copy the item's monitor holds; owners
are still looked up against the live API, as upstream. ``GarbageCollector`` then acts on
it only where the cached copy is enough: a plain delete, sent with that copy's
resourceVersion as a precondition (so it lands only on exactly the state decided on), and
the decisions that write nothing (solid owners only; an owner that cannot be looked up).
Anything else — patching references away, unblocking a possible cycle first, a delete
that finds the copy stale (409) or gone (404) — is decided again on a live GET, reusing
the owner lookups when the live copy has the same owner references.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegc.controllers.garbagecollector import decision, metaonly
from kubegc.controllers.garbagecollector.classify import ReferenceClassifier
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef, owner_refs_of
from kubegc.controllers.garbagecollector.operations import Operations


@dataclass(frozen=True, slots=True)
class CachedDecision:
    made: decision.Decision
    references: tuple[OwnerRef, ...]  # the cached copy's owner references
    resource_version: str  # the cached copy's

    def classified_for(self, references: tuple[OwnerRef, ...]) -> decision.Classified | None:
        """The owner lookups made for the cached copy, if they apply to ``references``."""
        c = self.made.classified
        if c is None or c.stopped is not None or references != self.references:
            return None
        return c


def item_state(item: Node, latest: metaonly.Meta) -> decision.ItemState:
    """What the decision reads: the graph node, and the finalizers of ``latest``."""
    finalizers = tuple((latest.get("metadata") or {}).get("finalizers") or ())
    dependents = item.get_dependents()
    return decision.ItemState(
        being_deleted=item.is_being_deleted(), deleting_dependents=item.is_deleting_dependents(),
        finalizers=finalizers, dependents=len(dependents),
        dependent_deleting_dependents=any(d.is_deleting_dependents() for d in dependents))


async def decide_on_cache(
    item: Node, *, operations: Operations, classifier: ReferenceClassifier,
) -> CachedDecision | None:
    """The decision for an observed item on its cached copy; None when there is no usable
    copy (not observed, not cached with that uid, no resourceVersion, no owner
    reference) or the item is deleting its dependents (decided on a live GET)."""
    if not item.is_observed() or item.is_deleting_dependents():
        return None
    cached = operations.cached_object(item.identity)
    if cached is None:
        return None
    resource_version = metaonly.resource_version(cached)
    references = owner_refs_of(cached)
    if not resource_version or not references:
        return None
    classified = await classifier.classify_references(item, references)
    made = decision.after_lookup(item_state(item, cached), classified)
    return CachedDecision(made, references, resource_version)
