"""Whether the scenarios' in-process kubegc has settled, but for one wait that never ends.

A virtual owner node (an owner the garbage collector knows only from ownerReferences) whose
dependents name it in different namespaces — a namespaced owner referenced from its own
namespace and from another — is verified absent again and again, with backoff, under each
of those identities in turn, as long as such dependents exist (upstream
``GraphBuilder.processGraphChanges``: a virtual delete event with nonmatching dependents
replaces the node with ``getAlternateOwnerIdentity`` and adds it back rate-limited). A
dependent held by a finalizer nobody removes keeps that going for ever, and kubegc's
``settle`` counts every delayed retry, so it never returns. Once each such item has been
verified, its next verification changes nothing the scenario compares: when nothing else is
in flight and only such virtual owners wait for their next verification (each replacement
is a new node, so the rate limiter's count starts again), the scenario takes kubegc as
settled.

This reads the in-process kubegc's internals from the test's thread: a heuristic the caller
requires several times in a row.
"""

from __future__ import annotations

from typing import Any

from kubegc.testing import Cluster


def _gc(cluster: Cluster) -> Any:
    manager = cluster.cluster.controller_manager
    if manager is None:
        return None
    ctl: Any = next((c for c in manager.controllers if c.name == "garbagecollector"), None)
    return ctl


def settled_but_for_virtual_owners(cluster: Cluster) -> bool:
    manager = cluster.cluster.controller_manager
    registry = cluster.cluster.registry
    ctl = _gc(cluster)
    if manager is None or registry is None or ctl is None or not registry.cache.is_idle():
        return False
    if not all(c.is_idle() for c in manager.controllers if c is not ctl):
        return False
    if not all(i.is_idle() for i in manager.informers.informers()):
        return False
    gc = ctl.gc
    queue = gc.attempt_to_delete
    orphan = gc.attempt_to_orphan
    waiting = list(queue._waiting)
    # its DeletionRecords sink is left out: it records each verification
    return (gc.graph_builder.is_idle() and len(queue) == 0
            and queue.processing_count() == 0 and len(orphan) == 0
            and orphan.processing_count() == 0 and orphan.waiting_count() == 0
            and bool(waiting) and all(getattr(n, "virtual", False) for n in waiting))


def unsettled(cluster: Cluster) -> str:
    """What keeps kubegc from settling (the controllers not idle, the GC's queue)."""
    manager = cluster.cluster.controller_manager
    if manager is None:
        return ""
    names = [c.name for c in manager.controllers if not c.is_idle()]
    ctl = _gc(cluster)
    detail = ""
    if ctl is not None:
        queue = ctl.gc.attempt_to_delete
        detail = (f"; the GC's queue: {len(queue)} ready, {queue.processing_count()} in "
                  f"flight, waiting {[str(getattr(n, 'identity', n)) for n in queue._waiting]}")
    return f"; kubegc not settled, controllers not idle: {names}{detail}"
