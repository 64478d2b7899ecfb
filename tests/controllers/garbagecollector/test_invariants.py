"""Property: whatever the order of informer and virtual events, the graph keeps upstream's
``verifyGraphInvariants`` (each dependent lists its owner in its ownerRefs and each present owner
lists the dependent), and no node is left pointing at a removed dependent."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegc.api.resources import GroupVersionKind
from kubegc.controllers.garbagecollector import Event, EventType

from .steps import Harness

UIDS = ["a", "b", "c", "d", "e"]
KINDS = [("v1", "Pod"), ("apps/v1", "Deployment"), ("v1", "Node")]
NAMESPACES = ["ns1", "ns2", ""]


@st.composite
def owner_refs(draw: st.DrawFn) -> list[dict[str, object]]:
    refs = []
    for uid in draw(st.lists(st.sampled_from([*UIDS, "zz"]), max_size=3)):
        api_version, kind = draw(st.sampled_from(KINDS))
        refs.append({"apiVersion": api_version, "kind": kind, "name": f"n-{uid}", "uid": uid,
                     "blockOwnerDeletion": draw(st.booleans())})
    return refs


@st.composite
def events(draw: st.DrawFn) -> Event:
    uid = draw(st.sampled_from([*UIDS, "zz"]))
    api_version, kind = draw(st.sampled_from(KINDS))
    group, _, version = api_version.rpartition("/")
    meta: dict[str, object] = {"uid": uid, "name": f"n-{uid}",
                               "namespace": draw(st.sampled_from(NAMESPACES))}
    event_type = draw(st.sampled_from(list(EventType)))
    virtual = event_type is EventType.DELETE and draw(st.booleans())
    if not virtual:
        meta["ownerReferences"] = draw(owner_refs())
        if draw(st.booleans()):
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            meta["finalizers"] = [draw(st.sampled_from(["orphan", "foregroundDeletion", "x/y"]))]
    obj = {"apiVersion": api_version, "kind": kind, "metadata": meta}
    return Event(event_type, obj, GroupVersionKind(group, version, kind), virtual=virtual)


async def _apply(sequence: list[Event]) -> None:
    h = Harness.create()
    for event in sequence:
        h.graph_changes.add(event)
        await h.gc.graph_builder.process_graph_changes()
        h.verify_graph_invariants()
        nodes = h.gc.graph_builder.uid_to_node.snapshot()
        for node in nodes.values():
            for dep in node.get_dependents():
                assert nodes.get(dep.identity.uid) is dep, "dependent not in the graph"


@settings(max_examples=300, deadline=None)
@given(st.lists(events(), max_size=25))
def test_graph_invariant_holds_for_any_event_order(sequence: list[Event]) -> None:
    asyncio.run(_apply(sequence))
