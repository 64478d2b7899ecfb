"""Pure functions over owner references and dependents (cf. graph_builder.go helpers).

No graph mutation and no I/O here: GraphBuilder uses these to decide what to relink,
which dependents disagree with an owner's observed identity, and which alternate identity
a virtual owner takes after one of its identities is verified absent (cf.
``getAlternateOwnerIdentity``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubegc.api.meta import ObjectReference
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef


@dataclass(frozen=True, slots=True)
class OwnerRefPair:
    old_ref: OwnerRef
    new_ref: OwnerRef


@dataclass(frozen=True, slots=True)
class ReferencesDiff:
    added: tuple[OwnerRef, ...]
    removed: tuple[OwnerRef, ...]
    changed: tuple[OwnerRefPair, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def references_diffs(old: Iterable[OwnerRef], new: Iterable[OwnerRef]) -> ReferencesDiff:
    """Owner references added, removed and changed (same uid, other fields), by uid."""
    old_by_uid = {ref.uid: ref for ref in old}
    remaining = dict(old_by_uid)
    added: list[OwnerRef] = []
    changed: list[OwnerRefPair] = []
    for ref in new:
        if ref.uid in remaining:
            previous = remaining.pop(ref.uid)
            if previous != ref:
                changed.append(OwnerRefPair(previous, ref))
        else:  # includes a repeated uid in ``new``, as upstream
            added.append(ref)
    return ReferencesDiff(tuple(added), tuple(remaining.values()), tuple(changed))


def unblocked_owner_uids(diff: ReferencesDiff) -> list[str]:
    """UIDs of owners a dependent stopped blocking: a blocking ref was removed, or
    changed from ``blockOwnerDeletion: true`` to false/unset (cf.
    ``addUnblockedOwnersToDeleteQueue``)."""
    uids = [ref.uid for ref in diff.removed if ref.blocks_owner_deletion]
    uids += [
        pair.new_ref.uid for pair in diff.changed
        if pair.old_ref.blocks_owner_deletion and not pair.new_ref.blocks_owner_deletion
    ]
    return uids


def partition_dependents(
    dependents: Sequence[Node], owner: ObjectReference,
) -> tuple[list[Node], list[Node]]:
    """Split dependents into those whose reference to ``owner.uid`` matches ``owner``'s
    coordinates (and namespace, for a namespaced owner) and those that do not. A
    dependent with several references to the uid can land in both lists."""
    owner_is_namespaced = bool(owner.namespace)
    matching: list[Node] = []
    nonmatching: list[Node] = []
    for dep in dependents:
        found_match = found_mismatch = False
        if owner_is_namespaced and owner.namespace != dep.identity.namespace:
            found_mismatch = True
        else:
            for ref in dep.owners:
                if ref.uid != owner.uid:
                    continue
                if ref.matches_coordinates(owner):
                    found_match = True
                else:
                    found_mismatch = True
        if found_match:
            matching.append(dep)
        if found_mismatch:
            nonmatching.append(dep)
    return matching, nonmatching


def reference_sort_key(ref: ObjectReference) -> tuple[str, str, str, str, str]:
    """Ordering of identities (cf. ``referenceLessThan``): kind and apiVersion first so
    kinds order the same whether cluster-scoped or namespaced, then namespace, name, uid."""
    return (ref.kind, ref.api_version, ref.namespace, ref.name, ref.uid)


def get_alternate_owner_identity(
    dependents: Sequence[Node], verified_absent: ObjectReference,
) -> ObjectReference | None:
    """Another identity the dependents use for ``verified_absent.uid``: the first one
    following ``verified_absent`` in ``reference_sort_key`` order, else the first one;
    ``None`` if every dependent agrees with the absent identity."""
    absent_is_cluster_scoped = not verified_absent.namespace
    seen = {verified_absent}
    first: ObjectReference | None = None
    first_following: ObjectReference | None = None
    absent_key = reference_sort_key(verified_absent)
    for dep in dependents:
        for ref in dep.owners:
            if ref.uid != verified_absent.uid:
                continue
            if ref.matches_coordinates(verified_absent) and (
                absent_is_cluster_scoped or verified_absent.namespace == dep.identity.namespace
            ):
                continue
            alternate = ref.identity_in(dep.identity.namespace)
            if (absent_is_cluster_scoped and alternate.api_version == verified_absent.api_version
                    and alternate.kind == verified_absent.kind):
                # apiVersion/kind verified cluster-scoped: the namespace does not apply
                alternate = ref.identity_in("")
            if alternate in seen:
                continue
            seen.add(alternate)
            key = reference_sort_key(alternate)
            if first is None or key < reference_sort_key(first):
                first = alternate
            if absent_key < key and (
                first_following is None or key < reference_sort_key(first_following)
            ):
                first_following = alternate
    return first_following if first_following is not None else first
