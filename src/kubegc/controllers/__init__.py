"""Controllers: the control loops of kubegc (cf. kube-controller-manager).

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

May import: ``kubegc.api``, ``kubegc.client`` and the standard library.
"""
