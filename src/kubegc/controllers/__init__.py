"""Controllers: the control loops of kubegc, one package per upstream pkg/controller/<name>
(garbagecollector, namespace, deployment, replicaset, replication, job, cronjob,
statefulset, daemon, endpoint, podgc; kubegc's own eventttl and deletionrecords), each
built from a ``kubegc.component.ControllerContext`` by ``kubegc.controllermanager``. The
modules beside the packages are upstream's pkg/controller/*.go every controller shares
(``controller_utils``, with its expectations in ``expectations``; ``controller_ref_manager``).

Controller packages do not import each other, except where upstream's do (replication on
replicaset, cronjob on job.util) and deletionrecords on the garbage collector's records;
import-linter checks it (pyproject.toml).

Concurrency model: asyncio, one event loop per process. A controller is a set of tasks
(informer tasks, a single-threaded event processor, N workers) that cooperate on that one
loop; no controller starts threads. Code between two ``await`` points runs without
interruption, so a controller's single writer (for the garbage collector:
``GraphBuilder.process_graph_changes``, the only writer of ``uid_to_node``) mutates shared
state in synchronous sections and readers never see a half-applied change. Locks are
therefore not needed for in-memory state; what still needs care is state read before an
``await`` and used after it (a worker must re-read the graph after every API call).

Boundary: controllers speak to the API server only through the ``kubegc.client`` protocol
(``Client``, informers, work queues, the event recorder) and never import ``registry``,
``storage`` or ``server``. Time is injected (``kubegc.api.clock.Clock``); nothing here
sleeps on the wall clock directly.

Loops are stoppable by cancelling their tasks and shutting down their queues; a
controller exposes ``is_idle()`` (nothing queued, delayed or in flight that could still
make progress) so tests and ``settle()`` wait on conditions instead of sleeping.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the standard library.
"""
