"""Owner lookups against the live API (cf. ``isDangling`` and ``classifyReferences``).

``ReferenceClassifier.lookup`` looks one owner reference up as upstream's ``isDangling``
does — the absent-owner cache first (cluster-scoped, then in the dependent's namespace),
then the RESTMapper, then a GET in the dependent's namespace for a namespaced owner kind
and cluster-wide for a cluster-scoped one — and says what it found as a
``decision.OwnerLookup``; verified absences enter the absent-owner cache.
``classify_references`` looks the references up in order and lets ``decision`` classify
them (solid / dangling / waitingForDependentsDeletion), stopping at the first lookup that
fails, as upstream.

How an absence was concluded is kept for the DeletionRecord: ``NotFound``; a name held
by another uid is ``Recreated`` only when the garbage collector saw an object with the
referenced uid (its graph, or its memory of deletions), else ``UIDMismatch`` (a uid that
was never seen, e.g. made up or copied from another cluster); ``OtherNamespace`` when the
uid belongs to an object observed in another namespace (which is what its
``OwnerRefInvalidNamespace`` event reported).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubegc.api.errors import is_not_found
from kubegc.client.interface import Client
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector import records as rec
from kubegc.controllers.garbagecollector.decision import (
    Classified,
    LookupOutcome,
    OwnerLookup,
    ReferenceClassification,
)
from kubegc.controllers.garbagecollector.errors import (
    NamespacedOwnerOfClusterScopedObjectError,
    RESTMappingError,
)
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.resources import RESTMapper
from kubegc.controllers.garbagecollector.uid_cache import AbsentReason


class ReferenceClassifier:
    """Looks owners up for the GC workers; reads the graph, never writes it."""

    def __init__(
        self, client: Client, *, rest_mapper: RESTMapper, graph_builder: GraphBuilder,
    ) -> None:
        self._client = client
        self._rest_mapper = rest_mapper
        self._graph_builder = graph_builder

    async def lookup(self, reference: OwnerRef, item: Node) -> OwnerLookup:
        """What ``reference`` of ``item`` points at (cf. ``isDangling``). Failures are
        outcomes, not exceptions: UNMAPPABLE (``RESTMappingError``), INVALID_SCOPE (a
        cluster-scoped item naming a namespaced kind) and FAILED (the GET failed)."""
        cache = self._graph_builder.absent_owner_cache
        # identity_in keeps only the coordinates (cf. ``absentOwnerCacheKey``)
        for namespace in ("", item.identity.namespace):  # cluster-scoped, then namespaced
            cached = cache.get(reference.identity_in(namespace))
            if cached is not None:
                return self._absent(reference, item, cached)
        try:
            mapping = self._rest_mapper.rest_mapping(reference.api_version, reference.kind)
        except RESTMappingError as exc:
            return OwnerLookup.failed(LookupOutcome.UNMAPPABLE, exc)
        if mapping.namespaced and not item.identity.namespace:
            return OwnerLookup.failed(LookupOutcome.INVALID_SCOPE,
                                      NamespacedOwnerOfClusterScopedObjectError())
        namespace = item.identity.namespace if mapping.namespaced else ""
        key = reference.identity_in(namespace)
        try:
            owner = await self._client.get(mapping.resource, reference.name, namespace=namespace)
        except Exception as exc:
            if not is_not_found(exc):
                return OwnerLookup.failed(LookupOutcome.FAILED, exc)
            cache.add(key, AbsentReason.NOT_FOUND)
            return self._absent(reference, item, AbsentReason.NOT_FOUND)
        if metaonly.uid(owner) != reference.uid:
            cache.add(key, AbsentReason.UID_MISMATCH)
            return self._absent(reference, item, AbsentReason.UID_MISMATCH)
        return OwnerLookup.found(owner)

    def _absent(self, reference: OwnerRef, item: Node, reason: AbsentReason) -> OwnerLookup:
        return OwnerLookup.absent(self._detail(reference, item, reason))

    def _detail(self, reference: OwnerRef, item: Node, reason: AbsentReason) -> str:
        """How the owner's absence was concluded (see the module docstring)."""
        observed = self._graph_builder.uid_to_node.read(reference.uid)
        if (observed is not None and observed.is_observed() and observed.identity.namespace
                and observed.identity.namespace != item.identity.namespace):
            return rec.DETAIL_OTHER_NAMESPACE
        if reason is AbsentReason.UID_MISMATCH and self._graph_builder.was_observed(
                reference.uid):
            return rec.DETAIL_RECREATED
        return str(reason)

    async def classify_references(
        self, item: Node, references: Sequence[OwnerRef],
    ) -> Classified:
        """Look ``references`` up in order and classify them (``decision``)."""
        builder = ReferenceClassification()
        for ref in references:
            if not builder.add(ref, await self.lookup(ref, item)):
                break
        return builder.result()
