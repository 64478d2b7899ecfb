"""The interfaces a resource's storage implements (cf. k8s.io/apiserver/pkg/registry/rest,
``rest.go``), and the verbs that follow from them.

A storage serves one resource path (``pods``) or subresource path (``pods/status``) and
implements only the interfaces of the verbs it serves: ``Getter``, ``Lister``,
``Watcher``, ``Creater`` (POST to the collection), ``NamedCreater`` (POST to an object or
subresource: ``pods/binding``, ``serviceaccounts/token``), ``Updater``, ``Patcher``,
``GracefulDeleter``, ``CollectionDeleter``, ``Connecter`` (a raw answer: ``pods/log``).
Everything else is derived from which of them a storage is, as upstream's
``registerResourceHandlers`` derives it: the routes the server answers (a path no
interface serves is 404, a method none serves on a served path 405), the verbs discovery
lists, the operations OpenAPI describes (``verbs_of``).

Implementations subclass the interfaces they serve, so ``isinstance`` answers "does this
storage serve that verb" and mypy checks the signatures. Calls carry the ``Target`` (the
resource, its strategy, the version and namespace of the request) and the request's
options; the request's user is ``kubegc.api.auth.request_user()``.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from kubegc.api.errors import StatusError
from kubegc.api.meta import DeleteOptions, ListOptions
from kubegc.api.resources import GroupVersionKind, ResourceInfo, Subresource
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.strategy import DEFAULT, Strategy
from kubegc.registry.generic.target import Created, Target
from kubegc.registry.generic.watching import RegistryWatch, WatchRequest
from kubegc.registry.printers import TableConvertor


@dataclass
class WriteOptions:
    """What a create, update or patch request asks beside its body
    (``metav1.CreateOptions`` / ``UpdateOptions`` / ``PatchOptions``); ``warnings`` collects
    what the answer's ``Warning`` headers say."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = ""
    force: bool = False  # apply patches only
    warnings: builtins.list[str] = field(default_factory=builtins.list)


@dataclass(frozen=True)
class Raw:
    """An answer that is not an API object (``pods/log``'s text)."""

    body: bytes
    content_type: str = "text/plain"


class Storage(abc.ABC):  # noqa: B024 (an interface with no method of its own, as rest.Storage)
    """``rest.Storage``: what serves one resource or subresource path."""

    #: what a subresource's objects are when they are not the resource's own kind (a
    #: Scale, a Binding, a TokenRequest); None: the resource's kind
    kind: ClassVar[GroupVersionKind | None] = None
    #: the warning every answer carries when the API is deprecated (upstream's handlers add
    #: it for types with a ``APILifecycleDeprecated`` version)
    deprecation: ClassVar[str | None] = None


class Getter(Storage):
    @abc.abstractmethod
    async def get(self, t: Target, name: str) -> Obj: ...


class EncodedGetter(Getter):
    """A ``Getter`` that can answer with the stored bytes (no decoding) where the target
    serves objects as stored."""

    @abc.abstractmethod
    async def get_encoded(self, t: Target, name: str) -> bytes | None:
        """The object's JSON as served, or None when it must be decoded (then ``get``)."""


class Lister(Storage):
    @abc.abstractmethod
    async def list(self, t: Target, options: ListOptions) -> Obj: ...


class EncodedLister(Lister):
    """A ``Lister`` that can answer a LIST without selectors with the stored bytes."""

    @abc.abstractmethod
    async def list_encoded(self, t: Target, options: ListOptions) -> bytes | None:
        """The list's JSON as served, or None when it must be decoded (then ``list``)."""

    async def list_encoded_stream(self, t: Target, options: ListOptions
                                  ) -> AsyncIterator[bytes] | None:
        """``list_encoded``'s bytes in pieces, read and encoded as they are sent (a LIST
        without ``limit``), or None when this storage cannot stream it (then
        ``list_encoded``). Errors of the request raise here, before any piece."""
        return None


class Watcher(Storage):
    @abc.abstractmethod
    def watch(self, t: Target, request: WatchRequest) -> RegistryWatch: ...


class Creater(Storage):
    @abc.abstractmethod
    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Created | Obj:
        """The created object: what was written (``Created``), or an answer that was not
        stored (a review, a Status)."""


class BatchCreater(Creater):
    """Creates of many objects at once, for in-process writers (no verb of its own: each
    object is created as ``create`` creates it; ``registry/generic/batch_create.py``)."""

    @abc.abstractmethod
    async def create_batch(self, t: Target, objs: builtins.list[Obj],
                           options: WriteOptions) -> builtins.list[StatusError | None]:
        """One outcome per object of ``objs`` (edited in place): None, or its error."""


class NamedCreater(Storage):
    @abc.abstractmethod
    async def create_named(self, t: Target, name: str, obj: Obj,
                           options: WriteOptions) -> Obj: ...


class Updater(Storage):
    @abc.abstractmethod
    async def update(self, t: Target, name: str, obj: Obj,
                     options: WriteOptions) -> tuple[Obj, bool]:
        """(the object, whether the update created it)."""


class Patcher(Storage):
    @abc.abstractmethod
    async def patch(self, t: Target, name: str, patch_type: str, body: bytes,
                    options: WriteOptions) -> tuple[Obj, bool]:
        """(the object, whether the patch created it: server-side apply)."""


class GracefulDeleter(Storage):
    @abc.abstractmethod
    async def delete(self, t: Target, name: str,
                     options: DeleteOptions) -> tuple[Obj, bool]:
        """(the object as left, whether it was removed from storage)."""

    def deleted_answer(self, t: Target, name: str, obj: Obj) -> Obj | None:
        """What a DELETE that removed the object answers instead of the object (upstream's
        ``finalizeDelete``: a Success Status when the store does not return deleted
        objects); None: the object."""
        return None


class CollectionDeleter(Storage):
    @abc.abstractmethod
    async def delete_collection(self, t: Target, options: DeleteOptions,
                                list_options: ListOptions, *,
                                each_page: Callable[[builtins.list[Obj]], None] | None = None
                                ) -> Obj:
        """The List of the objects deleted; with ``each_page``, each page of them is
        handed to it once deleted instead (``collection.delete_collection``)."""


class Connecter(Storage):
    """A subresource that answers raw bytes (``pods/log``; upstream's log is a
    ``GetterWithOptions`` streaming text, its exec and proxy are ``Connecter``s)."""

    #: the HTTP methods it answers
    connect_methods: ClassVar[tuple[str, ...]] = ("GET",)

    @abc.abstractmethod
    async def connect(self, t: Target, name: str) -> Raw: ...


#: RequestInfoFactory's verb of each method on a connecter (the authorizer's too)
CONNECT_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}

#: the interfaces that serve each discovery verb
_VERBS: tuple[tuple[str, tuple[type[Storage], ...]], ...] = (
    ("create", (Creater, NamedCreater)),
    ("delete", (GracefulDeleter,)),
    ("deletecollection", (CollectionDeleter,)),
    ("get", (Getter,)),
    ("list", (Lister,)),
    ("patch", (Patcher,)),
    ("update", (Updater,)),
    ("watch", (Watcher,)),
)


def verbs_of(storage: Storage) -> tuple[str, ...]:
    """The verbs discovery lists for ``storage``, in upstream's (sorted) order."""
    verbs = {verb for verb, interfaces in _VERBS if isinstance(storage, interfaces)}
    if isinstance(storage, Connecter):
        verbs.update(CONNECT_VERBS[m] for m in storage.connect_methods)
    return tuple(sorted(verbs))


@dataclass(frozen=True)
class Resource:
    """One resource as served: its discovery names, its strategy (what the generic Store
    does particularly for it), its storage, and its subresources' storages (``status``,
    ``scale``, ``binding``...). The registry builds the catalog's ``ResourceInfo`` (verbs
    and subresources included) from it, and addresses requests with its strategy."""

    info: ResourceInfo
    storage: Storage
    subresources: dict[str, Storage] = field(default_factory=dict)
    strategy: Strategy = DEFAULT
    #: how ``kubectl get`` prints it (upstream's ``TableConvertor``)
    table: TableConvertor = printers.DEFAULT

    def served_info(self) -> ResourceInfo:
        """``info`` with the verbs and subresources the storages serve (subresources in
        name order, as upstream's installer registers its storage paths sorted)."""
        subs = tuple(_subresource(name, s) for name, s in sorted(self.subresources.items()))
        return replace(self.info, verbs=verbs_of(self.storage), subresources=subs)


def _subresource(name: str, storage: Storage) -> Subresource:
    kind = storage.kind
    if kind is None:
        return Subresource(name, verbs=verbs_of(storage))
    return Subresource(name, kind=kind.kind, group=kind.group, version=kind.version,
                       verbs=verbs_of(storage))


__all__ = [
    "CONNECT_VERBS",
    "BatchCreater",
    "CollectionDeleter",
    "Connecter",
    "Creater",
    "EncodedGetter",
    "EncodedLister",
    "Getter",
    "GracefulDeleter",
    "ListOptions",
    "Lister",
    "NamedCreater",
    "Patcher",
    "Raw",
    "Resource",
    "Storage",
    "Updater",
    "Watcher",
    "WriteOptions",
    "verbs_of",
]
