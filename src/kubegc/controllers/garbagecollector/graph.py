"""The GC dependency graph: nodes keyed by UID, owner references, dependents (cf. graph.go).

Ownership: ``GraphBuilder`` (its ``process_graph_changes`` task) is the only writer of
``ConcurrentUIDToNode`` and of every ``Node``; ``GarbageCollector`` workers only read.
With one asyncio loop, a mutation is a synchronous section, so readers see a node either
before or after a change, never in between; readers must not keep what they read across
an ``await`` (the graph may have changed when they resume).

Memory: a node holds its identity, a tuple of ``OwnerRef`` and its dependents (a dict
used as an insertion-ordered set) created only when the first dependent is added (an
empty ``set()`` would cost ~216 B, about a third of a node; bench/bench_gc.py measures
bytes per node).
Strings are the ones decoded by the informer, so the graph shares them with the informer
cache.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kubegc.api.interning import SHARED_VALUES_LIMIT
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionKind
from kubegc.api.sparse import compacted
from kubegc.api.types import Obj


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """One ``metadata.ownerReferences`` entry (cf. ``metav1.OwnerReference``).

    Equality covers every field (upstream compares with ``reflect.DeepEqual``); identity
    of the referenced object is the *coordinates*: apiVersion, kind, name and uid.
    """

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    @classmethod
    def from_dict(cls, ref: Mapping[str, Any]) -> OwnerRef:
        controller = ref.get("controller")
        block = ref.get("blockOwnerDeletion")
        return cls(
            api_version=str(ref.get("apiVersion") or ""),
            kind=str(ref.get("kind") or ""),
            name=str(ref.get("name") or ""),
            uid=str(ref.get("uid") or ""),
            controller=None if controller is None else bool(controller),
            block_owner_deletion=None if block is None else bool(block),
        )

    def to_dict(self) -> dict[str, Any]:
        """Wire form, camelCase, unset booleans omitted."""
        out: dict[str, Any] = {
            "apiVersion": self.api_version, "kind": self.kind, "name": self.name, "uid": self.uid,
        }
        if self.controller is not None:
            out["controller"] = self.controller
        if self.block_owner_deletion is not None:
            out["blockOwnerDeletion"] = self.block_owner_deletion
        return out

    @property
    def blocks_owner_deletion(self) -> bool:
        return self.block_owner_deletion is True

    def coordinates(self) -> OwnerRef:
        """Only the identifying fields (cf. ``ownerReferenceCoordinates``)."""
        return OwnerRef(self.api_version, self.kind, self.name, self.uid)

    def matches_coordinates(self, other: OwnerRef | ObjectReference) -> bool:
        """Same uid, name, kind and apiVersion (cf. ``ownerReferenceMatchesCoordinates``)."""
        return (
            self.uid == other.uid and self.name == other.name
            and self.kind == other.kind and self.api_version == other.api_version
        )

    def identity_in(self, namespace: str) -> ObjectReference:
        """The coordinates of this reference, qualified with ``namespace``."""
        return ObjectReference(self.api_version, self.kind, self.name, self.uid, namespace)


_REF_STRINGS = ("apiVersion", "kind", "name", "uid")
_REF_BOOLEANS = ("controller", "blockOwnerDeletion")


def is_owner_reference(ref: Any) -> bool:
    """An entry the API would have stored: non-empty strings for apiVersion, kind, name
    and uid, booleans (or nothing) for controller and blockOwnerDeletion."""
    if type(ref) is not dict and not isinstance(ref, Mapping):
        return False
    for k in _REF_STRINGS:
        value = ref.get(k)
        if not value or not isinstance(value, str):
            return False
    for k in _REF_BOOLEANS:
        value = ref.get(k)
        if value is not None and not isinstance(value, bool):
            return False
    return True


def _owner_references(obj: Mapping[str, Any]) -> Any:
    meta = obj.get("metadata")
    return meta.get("ownerReferences") if isinstance(meta, Mapping) else None


def owner_refs_of(obj: Mapping[str, Any]) -> tuple[OwnerRef, ...]:
    """The object's ownerReferences as ``OwnerRef`` values (empty tuple if none), leaving
    out entries that are no owner reference (``is_owner_reference``; an object stored below
    the API's validation): the GC never deletes an object on a reference it cannot
    understand."""
    return parse_owner_refs(obj)[0]


def malformed_owner_refs(obj: Mapping[str, Any]) -> list[tuple[int, Any]]:
    """(index, entry) of the ownerReferences ``owner_refs_of`` leaves out; the whole
    field (index -1) when it is not a list."""
    return parse_owner_refs(obj)[1]


def parse_owner_refs(obj: Mapping[str, Any]
                     ) -> tuple[tuple[OwnerRef, ...], list[tuple[int, Any]]]:
    """``owner_refs_of`` and ``malformed_owner_refs`` in one reading of the object (the
    GraphBuilder needs both for every informer event)."""
    refs = _owner_references(obj)
    if not refs:
        return (), ([(-1, refs)] if refs is not None and not isinstance(refs, list) else [])
    if not isinstance(refs, list):
        return (), [(-1, refs)]
    good: list[OwnerRef] = []
    bad: list[tuple[int, Any]] = []
    for i, ref in enumerate(refs):
        owner = _decoded_owner_ref(ref) if type(ref) is dict else None
        if owner is not None:
            good.append(owner)
        elif is_owner_reference(ref):
            good.append(OwnerRef.from_dict(ref))
        else:
            bad.append((i, ref))
    return tuple(good), bad


class SharedOwnerRefs:
    """``parse_owner_refs`` that parses an ownerReferences list once however many objects
    hold it: the metadata informers give an owner's dependents one shared list
    (``kubegc.api.interning.SharedValues``), and their nodes then share one tuple of
    ``OwnerRef`` (issue 27: ~130 bytes and a parse per dependent).

    A list is remembered with its parse (at most ``limit``, then the memo starts over);
    holding the list keeps its ``id`` from being reused, and informer objects are never
    mutated. Ownership: the event loop (the GraphBuilder's task, and the GC workers for
    their cached copies: ``GraphBuilder.cached_owner_refs``), synchronously."""

    __slots__ = ("_limit", "_parsed")

    def __init__(self, limit: int = SHARED_VALUES_LIMIT) -> None:
        self._limit = limit
        self._parsed: dict[int, tuple[list[Any], tuple[OwnerRef, ...]]] = {}

    def __call__(self, obj: Mapping[str, Any]
                 ) -> tuple[tuple[OwnerRef, ...], list[tuple[int, Any]]]:
        refs = _owner_references(obj)
        if type(refs) is not list or not refs:
            return parse_owner_refs(obj)
        hit = self._parsed.get(id(refs))
        if hit is not None and hit[0] is refs:
            return hit[1], []
        owners, malformed = parse_owner_refs(obj)
        if not malformed:
            if len(self._parsed) >= self._limit:
                self._parsed.clear()
            self._parsed[id(refs)] = (refs, owners)
        return owners, malformed


def _decoded_owner_ref(ref: dict[str, Any]) -> OwnerRef | None:
    """``OwnerRef.from_dict`` of a decoded entry that ``is_owner_reference``, in one
    reading of its fields (the common case of ``parse_owner_refs``); None otherwise."""
    api_version, kind, name, uid = (ref.get("apiVersion"), ref.get("kind"), ref.get("name"),
                                    ref.get("uid"))
    controller, block = ref.get("controller"), ref.get("blockOwnerDeletion")
    if (type(api_version) is str and type(kind) is str and type(name) is str
            and type(uid) is str and api_version and kind and name and uid
            and (controller is None or type(controller) is bool)
            and (block is None or type(block) is bool)):
        return OwnerRef(api_version, kind, name, uid, controller, block)
    return None


D = TypeVar("D")


def blocking_dependents(owner_uid: str, dependents: Iterable[tuple[D, Iterable[OwnerRef]]]
                        ) -> list[D]:
    """The dependents that keep an owner's ``foregroundDeletion`` (cf.
    ``blockingDependents``): those whose reference to ``owner_uid`` has
    ``blockOwnerDeletion: true``. ``dependents`` pairs each dependent with its owner
    references; the GC's graph and the tools' inventory both ask this."""
    return [dep for dep, refs in dependents
            if any(r.uid == owner_uid and r.blocks_owner_deletion for r in refs)]


class Node:
    """One object in the GC dependency graph, keyed by UID (cf. graph.go ``node``).

    Ownership: GraphBuilder.process_graph_changes is the only writer; GarbageCollector
    workers read through the accessor methods (each returns a consistent snapshot, since
    nothing else runs on the loop while it executes).

    Invariants (upstream's TestDependentsRace / TestConflictingData keep them):
      * d in n.dependents  <=>  n.identity.uid in {r.uid for r in d.owners}, while both
        are in the graph.
      * being_deleted and deleting_dependents only ever go False -> True.
      * A virtual node was created from an ownerReference and has not been observed via
        an informer event; attempt_to_delete_item verifies it against the server and
        enqueues a virtual delete event if it is absent.

    Hashing is by object identity, like upstream's ``*node`` pointers: a node replaced in
    the graph (``clone``) is a different queue item than the one it replaces.
    """

    __slots__ = ("_dependents", "being_deleted", "deleting_dependents", "identity", "owners",
                 "virtual")

    def __init__(
        self, identity: ObjectReference, *, owners: tuple[OwnerRef, ...] = (),
        virtual: bool = False, being_deleted: bool = False, deleting_dependents: bool = False,
    ) -> None:
        self.identity = identity
        self.owners = owners
        self.virtual = virtual
        self.being_deleted = being_deleted
        self.deleting_dependents = deleting_dependents
        #: dependents in the order they were added (a dict as an ordered set): a cascade
        #: deletes them in that order, which for an informer's initial list is name order,
        #: so a batch of deletes touches neighbouring index pages of the store (2.5x
        #: faster than random order on a 200k-key SQLite store here).
        self._dependents: dict[Node, None] | None = None

    def __repr__(self) -> str:
        flags = "".join(
            f" {name}" for name, on in (
                ("virtual", self.virtual), ("beingDeleted", self.being_deleted),
                ("deletingDependents", self.deleting_dependents),
            ) if on
        )
        return f"<Node {self.identity}{flags} owners={len(self.owners)} " \
               f"dependents={self.dependents_length()}>"

    def clone(self) -> Node:
        """A copy with its own dependents set (writer only; cf. ``node.clone``)."""
        copy = Node(
            self.identity, owners=self.owners, virtual=self.virtual,
            being_deleted=self.being_deleted, deleting_dependents=self.deleting_dependents,
        )
        if self._dependents:
            copy._dependents = dict(self._dependents)
        return copy

    # One-way state transitions.
    def mark_being_deleted(self) -> None:
        self.being_deleted = True

    def is_being_deleted(self) -> bool:
        return self.being_deleted

    def mark_observed(self) -> None:
        self.virtual = False

    def is_observed(self) -> bool:
        return not self.virtual

    def mark_deleting_dependents(self) -> None:
        self.deleting_dependents = True

    def is_deleting_dependents(self) -> bool:
        return self.deleting_dependents

    # Dependents.
    def add_dependent(self, dependent: Node) -> None:
        if self._dependents is None:
            self._dependents = {}
        self._dependents[dependent] = None

    def delete_dependent(self, dependent: Node) -> None:
        if self._dependents is not None:
            self._dependents.pop(dependent, None)
            if not self._dependents:
                self._dependents = None
            else:
                self._dependents = compacted(self._dependents)

    def has_dependent(self, dependent: Node) -> bool:
        return self._dependents is not None and dependent in self._dependents

    def dependents_length(self) -> int:
        return len(self._dependents) if self._dependents else 0

    def get_dependents(self) -> list[Node]:
        """A snapshot list; the graph may change once the caller awaits."""
        return list(self._dependents) if self._dependents else []

    def blocking_dependents(self) -> list[Node]:
        """Dependents whose reference to this node has ``blockOwnerDeletion: true``."""
        return blocking_dependents(self.identity.uid,
                                   ((dep, dep.owners) for dep in self.get_dependents()))


class ConcurrentUIDToNode:
    """``uid -> Node`` map (cf. ``concurrentUIDToNode``; the name is upstream's).

    Ownership: GraphBuilder writes (``write``/``delete``); anyone reads. No lock: every
    call is synchronous on the single event loop.
    """

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}

    def write(self, node: Node) -> None:
        self._nodes[node.identity.uid] = node

    def read(self, uid: str) -> Node | None:
        return self._nodes.get(uid)

    def delete(self, uid: str) -> None:
        self._nodes.pop(uid, None)
        self._nodes = compacted(self._nodes)  # its room back once the objects are gone

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, uid: object) -> bool:
        return uid in self._nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(list(self._nodes.values()))

    def snapshot(self) -> dict[str, Node]:
        """A shallow copy of the map (for dumps and tests)."""
        return dict(self._nodes)


class EventType(enum.Enum):
    """Kind of a graph change (cf. ``eventType``)."""

    ADD = "add"
    UPDATE = "update"
    DELETE = "delete"


@dataclass(eq=False, slots=True)
class Event:
    """One item of the ``graph_changes`` queue (cf. graph_builder.go ``event``).

    ``gvk`` is the monitored resource's version and kind (for virtual events: the
    reference's). ``virtual`` marks events the GC made up after verifying with the API
    that an identity does not exist; ``absent_reason`` then says how it was verified
    (an ``AbsentReason`` value). Hashing is by identity: two events are never merged.
    """

    event_type: EventType
    obj: Obj
    gvk: GroupVersionKind
    old_obj: Obj | None = None
    virtual: bool = False
    absent_reason: str = ""
