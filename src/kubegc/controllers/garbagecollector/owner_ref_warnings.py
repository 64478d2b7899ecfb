"""The Warning events the garbage collector records about ownerReferences it cannot use
(cf. ``reportInvalidNamespaceOwnerRef``, graph_builder.go).

``OwnerRefInvalidNamespace`` on a dependent whose reference names an owner observed in
another namespace (upstream's); ``FailedSync`` on an object whose ownerReferences the GC
cannot understand (kubegc's: stored below the API's validation, see
``graph.owner_refs_of``). The GraphBuilder records both as it applies informer events.
"""

from __future__ import annotations

from typing import Any, Protocol

from kubegc.api.goformat import go_quote
from kubegc.api.meta import ObjectReference
from kubegc.api.types import Obj
from kubegc.component.failures import FAILED_SYNC_REASON
from kubegc.component.fields import invalid
from kubegc.controllers.garbagecollector import metaonly
from kubegc.controllers.garbagecollector.graph import Node

#: Event source component of the GC's Events (upstream's).
COMPONENT = "garbage-collector-controller"
REASON_OWNER_REF_INVALID_NAMESPACE = "OwnerRefInvalidNamespace"


class EventRecorderLike(Protocol):
    """The part of ``kubegc.client.events.EventRecorder`` the GC uses."""

    def event(self, obj: Obj, type: str, reason: str, message: str) -> None: ...


def report_invalid_namespace_owner_ref(recorder: EventRecorderLike, node: Node,
                                       invalid_owner_uid: str) -> None:
    """Warning event ``OwnerRefInvalidNamespace`` on the child (cf.
    ``reportInvalidNamespaceOwnerRef``)."""
    ref = next((r for r in node.owners if r.uid == invalid_owner_uid), None)
    if ref is None:
        return
    wrong = ref.coordinates().identity_in(node.identity.namespace)
    message = (f"ownerRef {wrong} does not exist in namespace "
               f"{go_quote(node.identity.namespace)}")
    recorder.event(metaonly.reference_object(node.identity), "Warning",
                   REASON_OWNER_REF_INVALID_NAMESPACE, message)


def report_malformed_owner_refs(recorder: EventRecorderLike, identity: ObjectReference,
                                malformed: list[tuple[int, Any]]) -> None:
    """Warning event ``FailedSync`` on an object whose ownerReferences the GC cannot
    understand (stored below the API's validation); they are ignored: the object is
    not collected because of them."""
    path = "metadata.ownerReferences"
    errors = [invalid(path if i < 0 else f"{path}[{i}]", ref,
                      "not an owner reference (apiVersion, kind, name and uid strings, "
                      "controller and blockOwnerDeletion booleans); ignored")
              for i, ref in malformed]
    recorder.event(metaonly.reference_object(identity), "Warning", FAILED_SYNC_REASON,
                   f"garbage-collector: cannot understand it: {'; '.join(errors)}")
