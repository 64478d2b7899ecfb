"""Deletes decided on the monitor cache's copy of an item (docs/architecture.md, "The GC
decides deletes on its informer cache").

Upstream's ``attemptToDeleteItem`` GETs the item before deciding. ``delete_as_cached``
takes the same decision on the copy the item's monitor holds and sends the DELETE with
that copy's resourceVersion as a precondition, so the delete lands only on exactly the
state decided on. Owners are still classified against the live API, as upstream.
``GarbageCollector.attempt_to_delete_item`` tries it first and decides again on a live GET
whenever it returns False.
"""

from __future__ import annotations

from kubegc.api.errors import is_conflict, is_not_found
from kubegc.api.meta import DeletionPropagation
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector.actions import Actions
from kubegc.controllers.garbagecollector.classify import ReferenceClassifier
from kubegc.controllers.garbagecollector.graph import Node, owner_refs_of
from kubegc.controllers.garbagecollector.operations import Operations


async def delete_as_cached(
    item: Node, *, operations: Operations, classifier: ReferenceClassifier, actions: Actions,
) -> bool:
    """Delete ``item`` as decided on its cached copy; True if the DELETE succeeded.

    Only for an observed item the cache holds with the same uid and a decision that is a
    plain delete. Returns False, having written nothing, for anything else (no usable
    copy, a solid owner, an item deleting its dependents, a possible cycle that needs an
    unblocking patch first) and when the delete finds the copy stale (409) or the object
    gone (404).
    """
    if not item.is_observed() or item.is_deleting_dependents():
        return False
    cached = operations.cached_object(item.identity)
    if cached is None:
        return False
    resource_version = metaonly.resource_version(cached)
    references = owner_refs_of(cached)
    if not resource_version or not references:
        return False
    classified = await classifier.classify_references(item, references)
    if classified.solid:
        return False
    if classified.waiting_for_dependents_deletion and item.dependents_length():
        if any(d.is_deleting_dependents() for d in item.get_dependents()):
            return False
        policy = DeletionPropagation.FOREGROUND
    else:
        policy = metaonly.own_policy(cached)
    try:
        await actions.delete(item, policy, classified, resource_version=resource_version)
    except Exception as exc:
        if is_conflict(exc) or is_not_found(exc):
            return False
        raise
    return True

