"""Step-driven GC scenarios (a port of upstream's garbagecollector_test.go harness).

A scenario is a list of steps run in order against one ``GarbageCollector`` whose queues
are ``TrackingQueue``s and whose client is the shared ``FakeClient`` set up as upstream's
tests drive it (``fake_client``); no task runs in the background, each step drives one
piece (``process_event``, ``process_attempt_to_delete``) and ``assert_state`` checks
everything observable. After every step the graph invariant (upstream's
``verifyGraphInvariants``) is verified.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubegc.api.clock import Clock, ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionKind, GroupVersionResource, split_api_version
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.fake import FakeClient, client_go_string
from kubegc.client.interface import APIResource
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.controllers.garbagecollector import (
    Event,
    EventType,
    GarbageCollector,
    InMemoryDecisionSink,
    Node,
    OwnerRef,
    ReferenceCache,
)

T = TypeVar("T", bound=Hashable)
_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


def api_resource(group: str, version: str, resource: str, kind: str, *,
                 namespaced: bool = True) -> APIResource:
    return APIResource(group, version, resource, kind, namespaced, verbs=_VERBS)


#: What the upstream tests' REST mapper knows, plus a few kinds used here.
DEFAULT_RESOURCES = (
    api_resource("", "v1", "pods", "Pod"),
    api_resource("", "v1", "secrets", "Secret"),
    api_resource("", "v1", "configmaps", "ConfigMap"),
    api_resource("", "v1", "replicationcontrollers", "ReplicationController"),
    api_resource("", "v1", "nodes", "Node", namespaced=False),
    api_resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False),
    api_resource("", "v1", "events", "Event"),
    api_resource("apps", "v1", "deployments", "Deployment"),
    api_resource("apps", "v1", "replicasets", "ReplicaSet"),
    api_resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    api_resource("rbac.authorization.k8s.io", "v1beta1", "roles", "Role"),
    api_resource("example.com", "v1", "widgets", "Widget"),  # a "custom resource": no SMP
)


def fake_client(*, clock: Clock) -> FakeClient:
    """The shared ``FakeClient`` as upstream's GC tests drive it: their REST mapper's
    resources, and actions as client-go prints them (``"get /v1, Resource=pods ns=ns1
    name=p"``)."""
    return FakeClient(resources=DEFAULT_RESOURCES, clock=clock, action_format=client_go_string)


class FakeRecorder:
    """Records events as ``"<type> <reason> <message> involvedObject{kind=K,apiVersion=V}"``
    (upstream's ``record.FakeRecorder`` with ``IncludeObject``)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.objects: list[Obj] = []

    def event(self, obj: Obj, type: str, reason: str, message: str) -> None:
        self.objects.append(obj)
        self.events.append(f"{type} {reason} {message} involvedObject{{kind={obj.get('kind')},"
                           f"apiVersion={obj.get('apiVersion')}}}")

    def take(self) -> list[str]:
        events, self.events = self.events, []
        return events


class TrackingQueue(RateLimitingQueue[T]):
    """A ``RateLimitingQueue`` that adds rate-limited and delayed items at once and keeps
    the pending items in order for inspection (cf. upstream's ``trackingWorkqueue``)."""

    def __init__(self, *, name: str, clock: Clock) -> None:
        super().__init__(name=name, clock=clock)
        self.pending: list[T] = []

    def add(self, item: T) -> None:
        if item not in self.pending:
            self.pending.append(item)
        super().add(item)

    def add_after(self, item: T, delay_seconds: float) -> None:
        self.add(item)

    def add_rate_limited(self, item: T) -> None:
        self.add(item)

    async def get(self) -> tuple[T, bool]:
        item, shutdown = await super().get()
        if not shutdown and item in self.pending:
            self.pending.remove(item)
        return item, shutdown


def make_id(api_version: str, kind: str, namespace: str, name: str, uid: str) -> ObjectReference:
    return ObjectReference(api_version, kind, name, uid, namespace)


def ref_of(identity: ObjectReference, **flags: Any) -> OwnerRef:
    return OwnerRef(identity.api_version, identity.kind, identity.name, identity.uid, **flags)


def make_obj(identity: ObjectReference, *owners: ObjectReference | OwnerRef,
             finalizers: tuple[str, ...] = (), deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": identity.name, "uid": identity.uid}
    if identity.namespace:
        meta["namespace"] = identity.namespace
    if owners:
        meta["ownerReferences"] = [
            (o if isinstance(o, OwnerRef) else ref_of(o)).to_dict() for o in owners
        ]
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": identity.api_version, "kind": identity.kind, "metadata": meta}


def _gvk(identity: ObjectReference) -> GroupVersionKind:
    group, version = split_api_version(identity.api_version)
    return GroupVersionKind(group, version, identity.kind)


def add_event(identity: ObjectReference, *owners: ObjectReference | OwnerRef, **kw: Any) -> Event:
    return Event(EventType.ADD, make_obj(identity, *owners, **kw), _gvk(identity))


def update_event(identity: ObjectReference, old: dict[str, Any],
                 *owners: ObjectReference | OwnerRef, **kw: Any) -> Event:
    return Event(EventType.UPDATE, make_obj(identity, *owners, **kw), _gvk(identity), old_obj=old)


def delete_event(identity: ObjectReference, *owners: ObjectReference | OwnerRef) -> Event:
    return Event(EventType.DELETE, make_obj(identity, *owners), _gvk(identity))


def virtual_delete_event(identity: ObjectReference) -> Event:
    return Event(EventType.DELETE, make_obj(identity), _gvk(identity), virtual=True)


@dataclass(frozen=True)
class N:
    """Expected node: identity, owners (coordinates only), virtual flag."""

    identity: ObjectReference
    owners: tuple[ObjectReference, ...] = ()
    virtual: bool = False


def node(identity: ObjectReference, *owners: ObjectReference, virtual: bool = False) -> N:
    return N(identity, owners, virtual)


@dataclass
class Harness:
    gc: GarbageCollector
    client: FakeClient
    recorder: FakeRecorder
    decisions: InMemoryDecisionSink
    graph_changes: TrackingQueue[Event]
    attempt_to_delete: TrackingQueue[Node]
    attempt_to_orphan: TrackingQueue[Node]

    @classmethod
    def create(cls, *, absent_cache_size: int = 100) -> Harness:
        clock = ManualClock()
        client = fake_client(clock=clock)
        recorder = FakeRecorder()
        decisions = InMemoryDecisionSink()
        gc = GarbageCollector(
            client, informer_factory=SharedInformerFactory(client, clock=clock),
            recorder=recorder, clock=clock, decisions=decisions, workers=1,
        )
        gc.rest_mapper.reset(DEFAULT_RESOURCES)
        gb = gc.graph_builder
        gb.absent_owner_cache = ReferenceCache(absent_cache_size)
        gb.graph_changes = TrackingQueue(name="graph_changes", clock=clock)
        gb.attempt_to_delete = TrackingQueue(name="attempt_to_delete", clock=clock)
        gb.attempt_to_orphan = TrackingQueue(name="attempt_to_orphan", clock=clock)
        return cls(gc, client, recorder, decisions, gb.graph_changes, gb.attempt_to_delete,
                   gb.attempt_to_orphan)

    def verify_graph_invariants(self) -> None:
        """Rule 45: d in o.dependents <=> o.uid in d.owners (for present owners)."""
        nodes = self.gc.graph_builder.uid_to_node.snapshot()
        for uid, n in nodes.items():
            for dep in n.get_dependents():
                assert any(o.uid == uid for o in dep.owners), \
                    f"{n.identity} lists {dep.identity} as dependent, but not vice versa"
            for ref in n.owners:
                owner = nodes.get(ref.uid)
                if owner is not None:
                    assert owner.has_dependent(n), \
                        f"{n.identity} has owner {owner.identity}, which does not list it"


Step = Callable[[Harness], Awaitable[None]]


def create_in_client(group: str, version: str, resource: str, obj: dict[str, Any]) -> Step:
    async def step(h: Harness) -> None:
        h.client.add_object(GroupVersionResource(group, version, resource), obj)
    return step


def delete_from_client(group: str, version: str, resource: str, namespace: str, name: str) -> Step:
    async def step(h: Harness) -> None:
        h.client.remove_object(GroupVersionResource(group, version, resource), name,
                               namespace=namespace)
    return step


def process_event(event: Event) -> Step:
    async def step(h: Harness) -> None:
        assert len(h.graph_changes) == 0, "process pending graph changes before process_event"
        h.graph_changes.add(event)
        await h.gc.graph_builder.process_graph_changes()
    return step


def insert_event(event: Event) -> Step:
    """Put ``event`` at the head of graph_changes (an informer event that sneaked in)."""
    async def step(h: Harness) -> None:
        items = []
        while len(h.graph_changes):
            item, _ = await h.graph_changes.get()
            h.graph_changes.done(item)
            items.append(item)
        h.graph_changes.add(event)
        for item in items:
            h.graph_changes.add(item)
    return step


def process_pending_graph_changes(count: int) -> Step:
    async def step(h: Harness) -> None:
        for i in range(count):
            assert len(h.graph_changes), f"expected at least {count} pending changes, got {i}"
            await h.gc.graph_builder.process_graph_changes()
    return step


def process_attempt_to_delete(count: int) -> Step:
    async def step(h: Harness) -> None:
        for i in range(count):
            assert len(h.attempt_to_delete), f"expected at least {count} pending items, got {i}"
            await h.gc.process_attempt_to_delete_worker()
    return step


def process_attempt_to_orphan(count: int) -> Step:
    async def step(h: Harness) -> None:
        for i in range(count):
            assert len(h.attempt_to_orphan), f"expected at least {count} pending items, got {i}"
            await h.gc.process_attempt_to_orphan_worker()
    return step


@dataclass
class State:
    events: list[str] = field(default_factory=list)
    client_actions: list[str] = field(default_factory=list)
    graph_nodes: list[N] = field(default_factory=list)
    pending_graph_changes: list[Event] = field(default_factory=list)
    pending_attempt_to_delete: list[N] = field(default_factory=list)
    pending_attempt_to_orphan: list[N] = field(default_factory=list)
    absent_owner_cache: list[ObjectReference] = field(default_factory=list)


def assert_state(**expected: Any) -> Step:
    want = State(**expected)

    async def step(h: Harness) -> None:
        gb = h.gc.graph_builder
        assert sorted(gb.absent_owner_cache.keys(), key=str) == \
            sorted(want.absent_owner_cache, key=str)
        assert h.recorder.take() == want.events
        assert h.client.take_actions() == want.client_actions
        nodes = gb.uid_to_node.snapshot()
        assert len(nodes) == len(want.graph_nodes), sorted(nodes)
        for n in want.graph_nodes:
            got = nodes.get(n.identity.uid)
            assert got is not None, f"no node in graph with uid={n.identity.uid}"
            assert got.identity == n.identity
            assert got.virtual == n.virtual, n.identity
            assert [o.coordinates() for o in got.owners] == [ref_of(o) for o in n.owners]
        assert [_event_key(e) for e in h.graph_changes.pending] == \
            [_event_key(e) for e in want.pending_graph_changes]
        assert [(x.identity, x.virtual) for x in h.attempt_to_delete.pending] == \
            [(x.identity, x.virtual) for x in want.pending_attempt_to_delete]
        assert [x.identity for x in h.attempt_to_orphan.pending] == \
            [x.identity for x in want.pending_attempt_to_orphan]
    return step


def _event_key(e: Event) -> tuple[Any, ...]:
    meta = e.obj.get("metadata") or {}
    refs = tuple(OwnerRef.from_dict(r) for r in meta.get("ownerReferences") or ())
    return (e.event_type, e.virtual, e.gvk, meta.get("namespace", ""), meta.get("name"),
            meta.get("uid"), refs)


async def run_steps(steps: list[Step], harness: Harness | None = None) -> Harness:
    h = harness or Harness.create()
    for i, step in enumerate(steps):
        try:
            await step(h)
            h.verify_graph_invariants()
        except AssertionError as exc:
            raise AssertionError(f"step {i}: {exc}") from exc
    return h
