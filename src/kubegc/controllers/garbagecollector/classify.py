"""Owner classification against the live API (cf. ``isDangling``/``classifyReferences``).

For each ownerReference of an item: *dangling* if cached absent or the GET says 404 or
returns an object with another uid; *waitingForDependentsDeletion* if the owner exists,
is being deleted and has ``foregroundDeletion``; *solid* otherwise (rules 4-6). Lookups
go to the dependent's namespace for namespaced owner kinds and cluster-wide for
cluster-scoped ones (rules 8-9); verified absences enter the absent-owner cache under
the same key (rule 14).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegc.api.errors import is_not_found
from kubegc.api.types import Obj
from kubegc.client.interface import Client
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector import records as rec
from kubegc.controllers.garbagecollector.errors import NamespacedOwnerOfClusterScopedObjectError
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.resources import RESTMapper
from kubegc.controllers.garbagecollector.uid_cache import AbsentReason


@dataclass(frozen=True, slots=True)
class Classified:
    """An item's ownerReferences split three ways, plus per-owner details for records."""

    solid: tuple[OwnerRef, ...]
    dangling: tuple[OwnerRef, ...]
    waiting_for_dependents_deletion: tuple[OwnerRef, ...]
    owners: tuple[rec.OwnerClassification, ...] = ()


@dataclass(frozen=True, slots=True)
class DanglingCheck:
    dangling: bool
    owner: Obj | None
    detail: str


class ReferenceClassifier:
    def __init__(
        self, client: Client, *, rest_mapper: RESTMapper, graph_builder: GraphBuilder,
    ) -> None:
        self._client = client
        self._rest_mapper = rest_mapper
        self._graph_builder = graph_builder

    async def is_dangling(self, reference: OwnerRef, item: Node) -> DanglingCheck:
        """Whether ``reference`` points at nothing; raises ``RESTMappingError`` for kinds
        that cannot be mapped and ``NamespacedOwnerOfClusterScopedObjectError`` for a
        cluster-scoped item referring to a namespaced kind."""
        cache = self._graph_builder.absent_owner_cache
        coordinates = reference.coordinates()
        for namespace in ("", item.identity.namespace):  # cluster-scoped, then namespaced
            cached = cache.get(coordinates.identity_in(namespace))
            if cached is not None:
                return self._absent(reference, item, cached)
        mapping = self._rest_mapper.rest_mapping(reference.api_version, reference.kind)
        namespace = item.identity.namespace if mapping.namespaced else ""
        if mapping.namespaced and not item.identity.namespace:
            raise NamespacedOwnerOfClusterScopedObjectError()
        key = coordinates.identity_in(namespace)
        try:
            owner = await self._client.get(mapping.resource, reference.name, namespace=namespace)
        except Exception as exc:
            if not is_not_found(exc):
                raise
            cache.add(key, AbsentReason.NOT_FOUND)
            return self._absent(reference, item, AbsentReason.NOT_FOUND)
        if metaonly.uid(owner) != reference.uid:
            cache.add(key, AbsentReason.UID_MISMATCH)
            return self._absent(reference, item, AbsentReason.UID_MISMATCH)
        return DanglingCheck(False, owner, rec.DETAIL_EXISTS)

    def _absent(self, reference: OwnerRef, item: Node, reason: AbsentReason) -> DanglingCheck:
        return DanglingCheck(True, None, self._detail(reference, item, reason))

    def _detail(self, reference: OwnerRef, item: Node, reason: AbsentReason) -> str:
        """Why the owner counts as absent; notes an owner uid observed in another
        namespace (rule 11), which is what an OwnerRefInvalidNamespace event reported."""
        observed = self._graph_builder.uid_to_node.read(reference.uid)
        if (observed is not None and observed.is_observed() and observed.identity.namespace
                and observed.identity.namespace != item.identity.namespace):
            return rec.DETAIL_OTHER_NAMESPACE
        return str(reason)

    async def classify_references(
        self, item: Node, references: Sequence[OwnerRef],
    ) -> Classified:
        solid: list[OwnerRef] = []
        dangling: list[OwnerRef] = []
        waiting: list[OwnerRef] = []
        owners: list[rec.OwnerClassification] = []
        for ref in references:
            check = await self.is_dangling(ref, item)
            if check.dangling:
                dangling.append(ref)
                owners.append(_classification(ref, rec.Classification.DANGLING, check.detail))
            elif check.owner is not None and metaonly.being_deleted(check.owner) \
                    and metaonly.has_delete_dependents_finalizer(check.owner):
                waiting.append(ref)
                owners.append(_classification(
                    ref, rec.Classification.WAITING_FOR_DEPENDENTS_DELETION, rec.DETAIL_FOREGROUND))
            else:
                solid.append(ref)
                owners.append(_classification(ref, rec.Classification.SOLID, rec.DETAIL_EXISTS))
        return Classified(tuple(solid), tuple(dangling), tuple(waiting), tuple(owners))


def _classification(ref: OwnerRef, c: rec.Classification, detail: str) -> rec.OwnerClassification:
    return rec.OwnerClassification(ref.api_version, ref.kind, ref.name, ref.uid, c, detail)
