"""The ``Client`` protocol: the only way controllers and tools talk to an API server.

Two implementations: ``LocalClient`` (in-process, straight to the registry) and
``RestClient`` (HTTP from a kubeconfig; kubegc or any real cluster). Both raise
``kubegc.api.errors.StatusError`` for every API failure, with upstream's code and reason,
and both return plain JSON-shaped dicts. Objects returned by ``get``/``list``/``watch``
may be shared with caches: copy before mutating.
"""

from __future__ import annotations

import builtins
import enum
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kubegc.api.meta import DeleteOptions as DeleteOptions
from kubegc.api.meta import EventType
from kubegc.api.meta import ListOptions as ListOptions  # metav1: one type for every layer
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj


class PatchType(enum.StrEnum):
    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event. ``EventType`` is a ``StrEnum``: its members compare equal to the
    strings on the wire; a client parses the type a server sent once, on arrival."""

    type: EventType
    object: Obj


@dataclass(frozen=True, slots=True)
class APIResource:
    """One resource as discovery describes it (enough for a RESTMapper)."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    singular: str = ""

    @property
    def gvr(self) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, self.resource)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True)
class ServerResources:
    """What discovery found, and the group-versions it could not read (client-go's
    ``ServerGroupsAndResources`` with its ``ErrGroupDiscoveryFailed``: partial results
    and the failures together)."""

    resources: builtins.list[APIResource]
    #: group-version (``metrics.k8s.io/v1beta1``) -> why it failed
    failed: dict[str, str] = field(default_factory=dict)

    def error(self) -> str:
        """``ErrGroupDiscoveryFailed.Error()``; "" when nothing failed."""
        if not self.failed:
            return ""
        groups = ", ".join(sorted(f"{gv}: {why}" for gv, why in self.failed.items()))
        return f"unable to retrieve the complete list of server APIs: {groups}"


@dataclass(frozen=True, slots=True)
class WatchOptions:
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    allow_bookmarks: bool = False
    timeout_seconds: int = 0
    extra: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class VersionReader(Protocol):
    """A client that can read the server's ``/version`` (``RestClient``, ``LocalClient``;
    a dump cannot)."""

    async def version(self) -> Obj:
        """The ``version.Info`` document: ``major``, ``minor``, ``gitVersion`` and, from
        1.33, ``emulationMajor``/``emulationMinor``."""
        ...


class Client(Protocol):
    """CRUD + watch + discovery against one API server (cf. client-go's dynamic client)."""

    @abstractmethod
    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        ...

    @abstractmethod
    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: ListOptions | None = None,
    ) -> Obj:
        """A ``<Kind>List`` with ``items`` and ``metadata.resourceVersion``."""

    @abstractmethod
    def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Watch events; a 410 arrives as an ``ERROR`` event with a Status object."""

    @abstractmethod
    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        ...

    @abstractmethod
    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        ...

    @abstractmethod
    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        ...

    @abstractmethod
    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        """The object as left by the delete (still present with deletionTimestamp if
        finalizers or a grace period hold it) or a ``Status`` of kind Success."""

    @abstractmethod
    async def delete_collection(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: DeleteOptions | None = None, list_options: ListOptions | None = None,
    ) -> Obj:
        """``DELETE`` of the collection (``deletecollection``; only ``list_options``'
        selectors count): the ``<Kind>List`` of the objects deleted, as they were listed
        before their deletes (upstream's answer). A resource without the verb answers 405
        (``MethodNotSupported``)."""

    async def delete_collection_each(
        self, gvr: GroupVersionResource, each: Callable[[builtins.list[Obj]], None], *,
        namespace: str = "", options: DeleteOptions | None = None,
        list_options: ListOptions | None = None,
    ) -> None:
        """``delete_collection`` for a caller that does not keep the answer (the namespace
        controller): the objects deleted are handed to ``each`` a page at a time. In process
        (``LocalClient``) the server then holds one page, never the whole collection; here,
        as over HTTP, the answer is one page."""
        listed = await self.delete_collection(gvr, namespace=namespace, options=options,
                                              list_options=list_options)
        each(list(listed.get("items") or []))

    @abstractmethod
    async def discover(self) -> builtins.list[APIResource]:
        """Every served resource of every group-version (legacy discovery); a group-version
        whose discovery fails is left out (``server_resources`` says which)."""

    async def server_resources(self) -> ServerResources:
        """``discover``'s resources with the group-versions that failed (none, for a client
        that cannot tell)."""
        return ServerResources(await self.discover())
