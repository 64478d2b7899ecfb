"""An in-memory ``Client`` for unit tests of informers and controllers, the garbage collector
included (cf. client-go's fake clientsets: an object tracker plus reactors and recorded
actions).

What it does:
  * keeps objects per resource *version* (``roles`` in v1 and v1beta1 are separate), keyed
    by namespace/name; on create assigns ``uid`` and ``creationTimestamp`` (if missing),
    and every write takes a ``resourceVersion`` from one global counter;
  * get/list (label and field selectors, ``limit``/``continue`` paging over the current
    state)/create/update/patch/delete/watch; patches go through
    ``kubegc.registry.fieldmanager`` (the registry's implementation: strategic merge for
    built-in kinds only, so custom resources answer 415, apply needs a field manager),
    so patch errors are the server's; update and patch results must keep the stored
    ``resourceVersion`` and ``uid`` if they carry one (409 Conflict, as the registry's
    update checks);
  * delete: uid/resourceVersion preconditions; GC finalizers as the API server adds them
    (``orphanDependents`` > ``propagationPolicy`` Orphan/Foreground > a GC finalizer already
    there; Background or none adds nothing); an object left with finalizers only gets a
    ``deletionTimestamp`` (grace 0), one without is removed at once; an update or patch
    that empties the finalizers of an object being deleted removes it. No grace periods,
    no other registry semantics;
  * watch: ``resourceVersion`` ""/"0" starts with synthetic ADDED events, ``N`` replays the
    kept history after N (410 Expired ERROR if ``compact`` dropped it), then live events.
    Selectors filter each event by the object's new state (an object leaving a selector
    gets no DELETED). ``timeoutSeconds`` is ignored. Slow-consumer policy: unbounded
    per-watcher queues, nothing is dropped.
  * records every call (except ``discover``) in ``action_log`` as ``Action`` values (with
    bodies) and in ``actions`` as strings rendered by ``action_format``: by default
    ``"<verb> <group/version> <resource>[/<subresource>] [<namespace>/]<name>"`` (e.g.
    ``"get apps/v1 deployments ns1/deployment1"``), or with ``client_go_string`` upstream's
    GC tests' ``"get /v1, Resource=pods ns=ns1 name=pod1"``;
  * reactors (``prepend_reactor``, ``fail_next``, ``fail_matching``, ``respond_to_get``)
    run after recording and may answer or raise instead of the tracker, as client-go's
    ``PrependReactor``.
Objects going in and out are deep copies: callers may mutate what they get.

Modules: ``actions`` (the recorded calls and their renderings), ``tracker`` (objects,
resourceVersions, watches, deletion rules), ``client`` (the ``Client`` methods, reactors
and test controls).
"""

from kubegc.client.fake.actions import Action, ActionFormat, Reactor, client_go_string
from kubegc.client.fake.client import FakeClient, builtin_api_resources
from kubegc.client.fake.tracker import ObjectTracker

__all__ = [
    "Action",
    "ActionFormat",
    "FakeClient",
    "ObjectTracker",
    "Reactor",
    "builtin_api_resources",
    "client_go_string",
]
