"""Orphaning the dependents of an owner deleted with propagation policy Orphan (cf.
``orphanDependents``, garbagecollector.go).

The registry gives such an owner the ``orphan`` finalizer and the GraphBuilder queues it on
``attempt_to_orphan``. The orphan worker (``GarbageCollector.attempt_to_orphan_worker``)
calls ``orphan_dependents`` with the owner's dependents in the graph and removes the
finalizer only if every one of them was patched; otherwise it retries the owner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from kubegc.api.errors import is_not_found
from kubegc.api.meta import ObjectReference
from kubegc.controllers.garbagecollector.actions import Actions
from kubegc.controllers.garbagecollector.errors import OrphanDependentsError
from kubegc.controllers.garbagecollector.graph import Node

#: Dependents patched at once while orphaning (upstream: one goroutine each); bounded so
#: an owner with thousands of dependents does not open thousands of requests.
ORPHAN_PATCH_CONCURRENCY = 32


async def orphan_dependents(
    actions: Actions, owner: ObjectReference, dependents: Sequence[Node],
) -> None:
    """Remove ``owner``'s reference from each dependent, ``ORPHAN_PATCH_CONCURRENCY`` at
    a time. A dependent already gone (404) is skipped, as upstream; any other failure is
    collected and raised, after every patch ended, as one ``OrphanDependentsError``."""
    semaphore = asyncio.Semaphore(ORPHAN_PATCH_CONCURRENCY)

    async def orphan(dependent: Node) -> str | None:
        async with semaphore:
            try:
                await actions.orphan(dependent.identity, owner)
            except Exception as exc:
                if is_not_found(exc):
                    return None
                return f"orphaning {dependent.identity} failed, {exc}"
        return None

    errors = [e for e in await asyncio.gather(*(orphan(d) for d in dependents)) if e]
    if errors:
        raise OrphanDependentsError(owner, errors)
