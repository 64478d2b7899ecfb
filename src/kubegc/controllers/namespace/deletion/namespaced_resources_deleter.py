"""Deletes everything in a Terminating namespace, then releases it (cf.
pkg/controller/namespace/deletion/namespaced_resources_deleter.go; ``ordered``: the
``OrderedNamespaceDeletion`` gate, KEP-5080, kubernetes#130035, on by default from 1.33).

``NamespacedResourcesDeleter.delete(name)`` is one pass, to be repeated until it returns:

1. GET the namespace (gone, or not being deleted: nothing to do); make sure its
   ``status.phase`` is Terminating; if ``spec.finalizers`` is empty it is finalized.
2. Discover every namespaced resource supporting ``delete`` (custom resources included;
   one preferred version per group/resource). With ``ordered``, pods first: delete them
   (Background propagation, their own grace period) and, while any pod remains, touch
   nothing else. Then every other resource the same way (without ``ordered``: every
   resource, pods among them, in one round, as upstream before 1.33).
   Discovery that fails for some groups (an aggregated API whose backend is down) is not
   fatal: what was discovered is deleted, the ``NamespaceDeletionDiscoveryFailure``
   condition says "Discovery failed for some groups, N failing: ...", and the pass fails
   so the namespace is retried with backoff and finalized only once discovery succeeds
   (kubernetes #60807).
3. List again what was deleted: items still there with finalizers, or pods still within
   their grace period, mean "wait" (``ResourcesRemainingError`` with an estimate in
   seconds: the longest pod grace period not yet elapsed since the namespace's deletion,
   or 15 s for finalizers); items without either are an error.
4. Keep the five NamespaceDeletion* conditions up to date (``namespace_conditions``).
5. Nothing left: remove the ``kubernetes`` token from ``spec.finalizers`` by PUT to the
   ``finalize`` subresource; the API server removes the namespace once its metadata
   finalizers are empty too.

Each resource is deleted with one DeleteCollection (Background propagation, as
``deleteCollection``), and where the resource does not serve ``deletecollection`` (not in
its discovery verbs, or a 404/405 answer: remembered, as upstream's ``operationNotSupportedCache``)
listed and deleted item by item (``deleteEachItem``). Each object deleted is recorded as the
namespace controller's ``NamespaceDeleted`` deletion, from the DeleteCollection's answer,
taken a page at a time (``Client.delete_collection_each``).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from kubegc.api.clock import Clock, format_time, parse_time
from kubegc.api.errors import StatusError, is_conflict, is_gone, is_not_found
from kubegc.api.meta import (
    FINALIZER_KUBERNETES,
    DeletionPropagation,
    finalizers_of,
    is_being_deleted,
    name_of,
    uid_of,
)
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, DeleteOptions, ServerResources
from kubegc.component.deletions import (
    NAMESPACE_DELETED,
    Deletion,
    DeletionSink,
    NullDeletionSink,
)
from kubegc.controllers.namespace.deletion.resources import (
    Deleted,
    GVRDeletionMetadata,
    Totals,
    deletable_namespaced_resources,
    discovery_failure_message,
    gvr_string,
    longest_grace,
    reference_of,
)
from kubegc.controllers.namespace.deletion.status_condition_utils import NamespaceConditionUpdater

log = logging.getLogger(__name__)

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
#: upstream's default estimate for finalizers to complete on items pending deletion
FINALIZER_ESTIMATE_SECONDS = 15
#: how long a discovery result is reused (``invalidate`` drops it at once)
DISCOVERY_TTL = 5.0
#: DeleteCollections of one resource started again at once, in one pass, when the paged
#: listing's snapshot expired (410: compacted while its pages were deleted, every page
#: before deleted). A namespace of 1M objects under a compaction every few seconds would
#: otherwise fail its pass every few seconds and wait the failure backoff (5 ms doubling
#: to 60 s: upstream's ``nsControllerRateLimiter``) again and again; upstream's compaction
#: keeps five minutes of history, which its page listing rarely outlives. Then as before.
EXPIRED_SNAPSHOT_RETRIES = 10
def _background(item: Obj) -> DeleteOptions:
    """Background propagation, on the object listed only (its uid)."""
    return DeleteOptions(propagation_policy=DeletionPropagation.BACKGROUND,
                         preconditions_uid=uid_of(item) or None)


class ResourcesRemainingError(Exception):
    """Some content is still there; try again in about ``estimate`` seconds."""

    def __init__(self, estimate: int, *, pods_remaining: bool = False) -> None:
        super().__init__(f"some content remains in the namespace, estimate {estimate} seconds "
                         "before it is removed")
        self.estimate = estimate
        self.pods_remaining = pods_remaining


class NamespaceDeletionError(Exception):
    """One or more resources could not be deleted (the aggregated messages)."""


class NamespacedResourcesDeleter:
    """Stateless between passes except for the discovery cache."""

    def __init__(self, client: Client, *, clock: Clock,
                 finalizer_token: str = FINALIZER_KUBERNETES,
                 deletions: DeletionSink | None = None, deleter: str = "",
                 ordered: bool = True) -> None:
        self.client = client
        self.clock = clock
        #: where each DELETE it sent is recorded (``kubegc why``), as ``deleter``
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.deleter = deleter
        self.finalizer_token = finalizer_token
        #: ``OrderedNamespaceDeletion``: pods deleted, and gone, before anything else
        self.ordered = ordered
        self._discovered: ServerResources | None = None
        self._kinds: dict[GroupVersionResource, str] = {PODS: "Pod"}
        #: resources whose DeleteCollection is not supported (``operationNotSupportedCache``)
        self._no_delete_collection: set[GroupVersionResource] = set()
        self._discovered_at = 0.0

    def invalidate(self) -> None:
        """Forget the cached discovery (a CRD came or went)."""
        self._discovered = None

    async def delete(self, name: str) -> None:
        """One pass over namespace ``name``; raises ``ResourcesRemainingError`` to be
        called again later, other errors to be retried with backoff."""
        try:
            namespace = await self.client.get(NAMESPACES, name)
        except StatusError as exc:
            if is_not_found(exc):
                return
            raise
        if not namespace["metadata"].get("deletionTimestamp"):
            return
        try:
            namespace = await self._retry_on_conflict(namespace, self._update_status_phase)
        except StatusError as exc:
            if is_not_found(exc):
                return
            raise
        if not (namespace.get("spec") or {}).get("finalizers"):
            return
        estimate, pods_remaining = await self.delete_all_content(namespace)
        if estimate > 0:
            raise ResourcesRemainingError(estimate, pods_remaining=pods_remaining)
        try:
            await self._retry_on_conflict(namespace, self._finalize)
        except StatusError as exc:
            if not is_not_found(exc):
                raise

    async def _retry_on_conflict(self, namespace: Obj,
                                 fn: Callable[[Obj], Awaitable[Obj]]) -> Obj:
        latest = namespace
        while True:
            try:
                return await fn(latest)
            except StatusError as exc:
                if not is_conflict(exc):
                    raise
            previous = latest
            latest = await self.client.get(NAMESPACES, name_of(previous))
            if uid_of(previous) != uid_of(latest):
                raise NamespaceDeletionError("namespace uid has changed across retries")

    async def _update_status_phase(self, namespace: Obj) -> Obj:
        if (namespace.get("status") or {}).get("phase") == "Terminating":
            return namespace
        updated = copy.deepcopy(namespace)
        updated.setdefault("status", {})["phase"] = "Terminating"
        return await self.client.update(NAMESPACES, updated, subresource="status")

    async def _finalize(self, namespace: Obj) -> Obj:
        updated = copy.deepcopy(namespace)
        kept = sorted({f for f in updated["spec"].get("finalizers") or []
                       if f != self.finalizer_token})
        updated["spec"]["finalizers"] = kept
        return await self.client.update(NAMESPACES, updated, subresource="finalize")

    async def _discover(self) -> ServerResources:
        """Discovery, reused for ``DISCOVERY_TTL`` unless some group failed (asked again
        at the next pass, so that a group coming back is seen at once)."""
        now = self.clock.monotonic()
        if (self._discovered is None or self._discovered.failed
                or now - self._discovered_at > DISCOVERY_TTL):
            self._discovered = await self.client.server_resources()
            self._discovered_at = now
            self._kinds = {r.gvr: r.kind for r in self._discovered.resources}
            self._no_delete_collection = {r.gvr for r in self._discovered.resources
                                          if "deletecollection" not in r.verbs}
        return self._discovered

    async def delete_all_content(self, namespace: Obj) -> tuple[int, bool]:
        """Delete what can be deleted; (estimate of seconds left, whether pods remain)."""
        name = name_of(namespace)
        updater = NamespaceConditionUpdater(format_time(self.clock.now()))
        totals = Totals()
        try:
            discovered = await self._discover()
        except Exception as exc:  # not fatal: upstream goes on with what it has
            totals.errors.append(str(exc))
            updater.process_discover_resources_err(str(exc))
            discovered = ServerResources([])
        resources = deletable_namespaced_resources(discovered.resources)
        if discovered.failed:  # an unavailable aggregated API: delete the rest, then retry
            totals.errors.append(discovered.error())
            updater.process_discover_resources_err(discovery_failure_message(discovered))
        deleted_at = parse_time(str(namespace["metadata"]["deletionTimestamp"]))
        if self.ordered and PODS in resources:
            resources.remove(PODS)
            await self._delete_gvr(PODS, name, deleted_at, totals, updater)
        if not (self.ordered and totals.gvr_to_num_remaining.get(("", "pods"), 0) > 0):
            for gvr in resources:
                await self._delete_gvr(gvr, name, deleted_at, totals, updater)
        pods_remaining = totals.gvr_to_num_remaining.get(("", "pods"), 0) > 0
        updater.process_content_totals(totals.gvr_to_num_remaining,
                                       totals.finalizers_to_num_remaining)
        if updater.update(namespace):
            try:
                await self.client.update(NAMESPACES, namespace, subresource="status")
            except StatusError as exc:
                log.warning("couldn't update status condition for namespace %s: %s", name, exc)
        if totals.errors:
            raise NamespaceDeletionError("; ".join(sorted(totals.errors)))
        return totals.estimate, pods_remaining

    async def _delete_gvr(self, gvr: GroupVersionResource, namespace: str, deleted_at: datetime,
                          totals: Totals, updater: NamespaceConditionUpdater) -> None:
        try:
            meta = await self.delete_all_content_for_gvr(gvr, namespace, deleted_at)
        except _GVRError as exc:
            totals.errors.append(str(exc))
            updater.process_delete_content_err(str(exc))
            meta = exc.meta
        totals.add(gvr, meta)

    async def delete_all_content_for_gvr(self, gvr: GroupVersionResource, namespace: str,
                                         deleted_at: datetime) -> GVRDeletionMetadata:
        """Delete every ``gvr`` object of ``namespace`` (cf.
        ``deleteAllContentForGroupVersionResource``): one DeleteCollection, or list and
        delete each; then what remains."""
        deleted = await self._delete_collection(gvr, namespace, deleted_at)
        if deleted is None:
            items = await self._list(gvr, namespace)
            if not items:
                return GVRDeletionMetadata()
            deleted = await self._delete_each_item(gvr, namespace, items, deleted_at)
        elif not deleted.count:
            return GVRDeletionMetadata()
        estimate = self._estimate(deleted.longest_grace, deleted_at)
        if gvr != PODS and not deleted.may_remain:
            return GVRDeletionMetadata()  # every one was removed: nothing to list again
        remaining = await self._list(gvr, namespace)
        if not remaining:
            return GVRDeletionMetadata()
        finalizers: dict[str, int] = {}
        for item in remaining:
            for finalizer in finalizers_of(item):
                finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        if estimate:
            return GVRDeletionMetadata(estimate, len(remaining), finalizers)
        if finalizers:
            return GVRDeletionMetadata(FINALIZER_ESTIMATE_SECONDS, len(remaining), finalizers)
        raise _GVRError(f"unexpected items still remain in namespace: {namespace} for gvr: "
                        f"{gvr_string(gvr)}", GVRDeletionMetadata(estimate, len(remaining)))

    async def _delete_collection(self, gvr: GroupVersionResource, namespace: str,
                                 deleted_at: datetime) -> Deleted | None:
        """``deleteCollection``: what the objects deleted tell, or None where the resource
        has no DeleteCollection (then remembered). The answer is taken a page at a time
        (``delete_collection_each``), as upstream's deleter discards it: in process the
        objects of a namespace are never all held at once."""
        if gvr in self._no_delete_collection:
            return None
        deleted = Deleted()

        def each(items: list[Obj]) -> None:
            self._record(gvr, namespace, items, deleted_at)
            deleted.add(gvr, items)

        for attempt in range(EXPIRED_SNAPSHOT_RETRIES + 1):
            try:
                await self.client.delete_collection_each(
                    gvr, each, namespace=namespace,
                    options=DeleteOptions(propagation_policy=DeletionPropagation.BACKGROUND))
            except StatusError as exc:
                if is_not_found(exc) or exc.code == 405:
                    self._no_delete_collection.add(gvr)
                    return None
                if is_gone(exc) and attempt < EXPIRED_SNAPSHOT_RETRIES:
                    # its snapshot was compacted after some pages: those are deleted, so a
                    # DeleteCollection on a fresh snapshot goes on from there
                    log.info("deleting %s in %s: %s; again on a fresh list",
                             gvr_string(gvr), namespace, exc)
                    continue
                raise _GVRError(str(exc), GVRDeletionMetadata()) from exc
            break
        return deleted

    async def _delete_each_item(self, gvr: GroupVersionResource, namespace: str,
                                items: list[Obj], deleted_at: datetime) -> Deleted:
        """``deleteEachItem``: DELETE each listed object (its uid as precondition)."""
        deleted = Deleted()
        for item in items:
            try:
                result = await self.client.delete(gvr, name_of(item), namespace=namespace,
                                                  options=_background(item))
            except StatusError as exc:
                if not (is_not_found(exc) or exc.code == 405):
                    raise _GVRError(str(exc), GVRDeletionMetadata(self._estimate(
                        longest_grace(gvr, items), deleted_at))) from exc
                continue
            deleted.add(gvr, [result if result.get("kind") != "Status" else item])
            self._record(gvr, namespace, [item], deleted_at)
        return deleted

    def _record(self, gvr: GroupVersionResource, namespace: str, items: list[Obj],
                deleted_at: datetime) -> None:
        """Each object deleted, as this controller's ``NamespaceDeleted`` deletion; not
        one that was already being deleted when listed (an earlier pass's, or someone
        else's DELETE: this one changed nothing)."""
        why = f"namespace {namespace} is being deleted (since {format_time(deleted_at)})"
        now, kind = self.clock.now(), self._kinds.get(gvr, "")
        for item in items:
            if is_being_deleted(item):
                continue
            self.deletions.record_deletion(Deletion(
                now, self.deleter, reference_of(gvr, kind, item, namespace),
                NAMESPACE_DELETED, why))

    async def _list(self, gvr: GroupVersionResource, namespace: str) -> list[Obj] | None:
        """The items, or None where listing is not supported (404/405)."""
        try:
            listed = await self.client.list(gvr, namespace=namespace)
        except StatusError as exc:
            if is_not_found(exc) or exc.code == 405:
                return None
            raise _GVRError(str(exc), GVRDeletionMetadata()) from exc
        return list(listed.get("items") or [])

    def _estimate(self, longest_grace: int, deleted_at: datetime) -> int:
        """Pods: the longest grace period of a non-terminal pod deleted, 0 once that long
        has passed since the namespace's deletion (cf. ``estimateGracefulTermination``)."""
        elapsed = (self.clock.now() - deleted_at).total_seconds()
        return 0 if elapsed >= longest_grace else longest_grace


class _GVRError(Exception):
    def __init__(self, message: str, meta: GVRDeletionMetadata) -> None:
        super().__init__(message)
        self.meta = meta
