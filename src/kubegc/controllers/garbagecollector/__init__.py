"""The garbage collector (cf. pkg/controller/garbagecollector).

Pipeline, one module per stage as upstream:
  monitors.py        one metadata-only informer per deletable resource -> ``graph_changes``
  graph_builder.py   ``GraphBuilder.process_graph_changes``: the single writer of
                     ``uid_to_node`` (graph.py); queues ``attempt_to_delete`` /
                     ``attempt_to_orphan``
  decision.py        the pure decision core: owners classified solid / dangling /
                     waitingForDependentsDeletion, then delete / patch / wait / retry
                     (``attemptToDeleteItem``'s rules); the tools ask it too
  garbagecollector.py  ``GarbageCollector``: its workers and their queues; periodic
                     resource sync (resource_sync.py, resources.py)
  attempt_to_delete.py  one item decided in one pass: on a copy of it (the monitor
                     cache's, else a live GET), owners looked up live (classify.py),
                     decision.py asked, then delete / patch / remove finalizers
  orphan.py          ``orphan_dependents``: owner references stripped for policy Orphan
  actions.py         the GC's writes (API calls: operations.py, patch.py), each recorded
  records.py         every action taken, with its reason, to a ``DecisionSink``
  owner_ref_warnings.py  the Warning events about ownerReferences the GC cannot use
  dump.py            the graph in DOT
  uid_cache.py       the absent-owner LRU cache, and the uids seen deleted

Contract (upstream's ``attemptToDeleteItem`` and the e2e "Garbage collector" tests): an
object is deleted only when every owner is verified dangling or waiting for its
dependents' deletion; deletes carry a uid precondition and an explicit propagation policy;
kinds that cannot be mapped never cause deletion. Records are handed to the sink
synchronously; ``kubegc.controllers.deletionrecords`` writes them later, in batches.
May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the standard library.
"""

from kubegc.controllers.garbagecollector.attempt_to_delete import DeleteItemOutcome
from kubegc.controllers.garbagecollector.decision import Classified
from kubegc.controllers.garbagecollector.errors import (
    GCError,
    NamespacedOwnerOfClusterScopedObjectError,
    OrphanDependentsError,
    RESTMappingError,
)
from kubegc.controllers.garbagecollector.garbagecollector import GarbageCollector, WorkItemAction
from kubegc.controllers.garbagecollector.graph import (
    ConcurrentUIDToNode,
    Event,
    EventType,
    Node,
    OwnerRef,
)
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.records import (
    Classification,
    DecisionReason,
    DecisionSink,
    DeletionRecord,
    InMemoryDecisionSink,
    NullDecisionSink,
    OwnerClassification,
    RecordAction,
)
from kubegc.controllers.garbagecollector.resource_sync import SyncResult
from kubegc.controllers.garbagecollector.resources import (
    DEFAULT_IGNORED_RESOURCES,
    RESTMapper,
    get_deletable_resources,
)
from kubegc.controllers.garbagecollector.uid_cache import AbsentReason, ReferenceCache

__all__ = [
    "DEFAULT_IGNORED_RESOURCES",
    "AbsentReason",
    "Classification",
    "Classified",
    "ConcurrentUIDToNode",
    "DecisionReason",
    "DecisionSink",
    "DeleteItemOutcome",
    "DeletionRecord",
    "Event",
    "EventType",
    "GCError",
    "GarbageCollector",
    "GraphBuilder",
    "InMemoryDecisionSink",
    "NamespacedOwnerOfClusterScopedObjectError",
    "Node",
    "NullDecisionSink",
    "OrphanDependentsError",
    "OwnerClassification",
    "OwnerRef",
    "RESTMapper",
    "RESTMappingError",
    "RecordAction",
    "ReferenceCache",
    "SyncResult",
    "WorkItemAction",
    "get_deletable_resources",
]
