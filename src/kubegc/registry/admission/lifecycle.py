"""The ``NamespaceLifecycle`` admission plugin (plugin/pkg/admission/namespace/lifecycle):
content may be created only in a namespace that exists and is not terminating, and the
immortal namespaces may not be deleted.

Upstream's plugin reads a namespace informer, with a live lookup for namespaces created
too recently for it. kubegc's keeps the namespaces known to be active, told by the
namespace storage after each of its writes (``observe``), and reads storage for the
others, so that a namespace created a moment ago admits content at once and one being
deleted refuses it as soon as its DELETE has been answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kubegc.api import errors
from kubegc.api.errors import GroupResource, StatusCause, StatusError
from kubegc.api.meta import is_being_deleted
from kubegc.api.types import Obj
from kubegc.registry.generic.target import Target

#: the namespaces the plugin refuses to delete (its ``immortalNamespaces``)
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
_NAMESPACES = GroupResource("", "namespaces")

#: the stored namespace of that name, or None
NamespaceGetter = Callable[[str], Awaitable[Obj | None]]


class NamespaceLifecycle:
    """Ownership: the namespace storage is the only writer of ``active`` (``observe``);
    admission reads it."""

    def __init__(self) -> None:
        #: namespaces written as active (created, or updated without a deletionTimestamp)
        #: by the namespace storage; a namespace written otherwise (``Registry.restore``)
        #: is just not in it, and is read from storage
        self.active: set[str] = set()
        #: reads a namespace from storage (the registry sets it)
        self.get_namespace: NamespaceGetter | None = None

    def observe(self, namespace: Obj, *, removed: bool = False) -> None:
        """The namespace storage wrote ``namespace`` (``removed``: deleted it)."""
        name = str(namespace["metadata"]["name"])
        if removed or is_being_deleted(namespace):
            self.active.discard(name)
        else:
            self.active.add(name)

    async def validate_create(self, t: Target, obj: Obj) -> None:
        """The namespace of namespaced content must exist and not be terminating."""
        if not t.info.namespaced:
            return
        ns = obj["metadata"]["namespace"]
        if ns in self.active:
            return
        namespace = None if self.get_namespace is None else await self.get_namespace(ns)
        if namespace is None:
            raise errors.not_found(_NAMESPACES, ns)
        if is_being_deleted(namespace):
            name = obj["metadata"]["name"]
            raise StatusError(
                403, "Forbidden",
                f'{t.gr} "{name}" is forbidden: unable to create new content in namespace '
                f"{ns} because it is being terminated",
                name=name, group=t.info.group, kind=t.info.resource,
                causes=[StatusCause("NamespaceTerminating",
                                    f"namespace {ns} is being terminated",
                                    "metadata.namespace")],
            )

    @staticmethod
    def validate_delete(t: Target, name: str) -> None:
        """The immortal namespaces may not be deleted."""
        if name in IMMORTAL_NAMESPACES:
            raise errors.forbidden(t.gr, name, "this namespace may not be deleted")
