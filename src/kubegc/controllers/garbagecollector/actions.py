"""The GC's writes, each recorded with its reason once it succeeds (records.py).

One method per ``RecordAction``: ``delete``, ``orphan`` (orphan-patch),
``unblock_owner_references`` (unblock-patch), ``remove_dangling_and_waiting_refs``
(remove-dangling-refs) and ``remove_finalizer``. Each sends its API call through
``Operations`` (owner-reference patches: strategic merge, JSON merge for custom resources;
cf. patch.go) and hands a ``DeletionRecord`` to the ``DecisionRecorder`` only after the
call succeeded. A failed call raises and is not recorded: the item is retried and
recorded when it succeeds. Deciding *which* write to make is the caller's
(garbagecollector.py, orphan.py).
"""

from __future__ import annotations

import functools
import logging

from kubegc.api.meta import DeletionPropagation, ObjectReference
from kubegc.controllers.garbagecollector import patch as patches
from kubegc.controllers.garbagecollector.decision import Classified
from kubegc.controllers.garbagecollector.graph import Node
from kubegc.controllers.garbagecollector.operations import Operations
from kubegc.controllers.garbagecollector.records import DecisionReason, DecisionRecorder

log = logging.getLogger(__name__)


class Actions:
    """Recorded writes of the GC: ``Operations`` calls plus their ``DeletionRecord``s."""

    def __init__(self, operations: Operations, decisions: DecisionRecorder) -> None:
        self._operations = operations
        self._decisions = decisions

    async def delete(self, item: Node, policy: DeletionPropagation, c: Classified, *,
                     resource_version: str | None = None) -> None:
        """Delete ``item`` with ``policy`` (uid precondition; also ``resource_version``
        if given); ``c`` says why."""
        log.info("Deleting item %s with propagation policy %s", item.identity, policy)
        await self._operations.delete_object(item.identity, policy,
                                             resource_version=resource_version)
        self._decisions.deleted(item.identity, str(policy), c.owners)

    async def remove_dangling_and_waiting_refs(self, item: Node, c: Classified) -> None:
        """Patch away ``item``'s dangling and waiting owner references: it has a solid
        owner and is kept."""
        log.debug("item %s has at least one existing owner, will not garbage collect",
                  item.identity)
        uids = [r.uid for r in (*c.dangling, *c.waiting_for_dependents_deletion)]
        if not uids:
            return
        # waiting refs must go too, or their owners would wait for this item forever
        await self._operations.patch(
            item.identity,
            patches.delete_owner_refs_strategic_merge_patch(item.identity.uid, uids),
            functools.partial(patches.delete_owner_refs_json_merge_patch, owner_uids=set(uids)),
        )
        self._decisions.dangling_refs_removed(item.identity, c.owners)

    async def unblock_owner_references(self, item: Node, cycle_suspect: Node,
                                       c: Classified) -> None:
        """Set ``blockOwnerDeletion=false`` on ``item``'s owner references, because its
        dependent ``cycle_suspect`` is also deleting its dependents (cf.
        ``unblockOwnerReferences``)."""
        owners = item.owners
        await self._operations.patch(
            item.identity,
            patches.unblock_owner_references_strategic_merge_patch(item.identity.uid, owners),
            functools.partial(patches.unblock_owner_references_json_merge_patch, owners=owners),
        )
        self._decisions.unblocked(item.identity, cycle_suspect.identity, c.owners)

    async def orphan(self, dependent: ObjectReference, owner: ObjectReference) -> None:
        """Remove ``owner``'s reference from ``dependent`` (its owner is deleted with
        propagation policy Orphan)."""
        await self._operations.patch(
            dependent,
            patches.delete_owner_refs_strategic_merge_patch(dependent.uid, [owner.uid]),
            functools.partial(patches.delete_owner_refs_json_merge_patch,
                              owner_uids={owner.uid}),
        )
        self._decisions.orphaned(dependent, owner)

    async def remove_finalizer(self, identity: ObjectReference, finalizer: str,
                               reason: DecisionReason) -> bool:
        """``Operations.remove_finalizer``, recorded with ``reason`` if this call removed
        it. True if it did; False if the object is gone or no longer has it."""
        removed = await self._operations.remove_finalizer(identity, finalizer)
        if removed:
            self._decisions.finalizer_removed(identity, finalizer, reason)
        return removed
