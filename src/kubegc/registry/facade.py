"""The registry's verbs for in-process callers (``LocalClient``, the registry's own
writes, tests): each finds the storage a ``Target`` addresses and calls the interface of
its verb, answering 405 for a verb the storage does not serve, as the server does.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kubegc.api import errors
from kubegc.api.meta import DeleteOptions
from kubegc.api.types import Obj
from kubegc.authz.rules import GROUP as RBAC_GROUP
from kubegc.registry.generic import rest
from kubegc.registry.generic.listing import parse_resource_version
from kubegc.registry.generic.rest import ListOptions, Storage, WriteOptions
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Created, Target
from kubegc.registry.generic.watch_cache import WatchCache
from kubegc.registry.generic.watching import RegistryWatch, WatchRequest
from kubegc.registry.validation.objectmeta import parse_delete_options

_S = TypeVar("_S", bound=Storage)
#: Seconds a read waits for storage to reach the resourceVersion it asks for (upstream's
#: watch cache blocks 3 s).
FRESH_TIMEOUT = 3.0


def not_allowed(t: Target) -> errors.StatusError:
    """The 405 of a verb the addressed storage does not serve."""
    return errors.StatusError(405, "MethodNotAllowed",
                              "the server does not allow this method on the requested resource",
                              group=t.info.group, kind=t.info.resource)


class Verbs:
    """Every verb on every served resource, for in-process callers. The ``Registry`` is
    one: it supplies ``target``, ``storage``, the Store and the watch cache."""

    store: Store
    cache: WatchCache

    def target(self, group: str, version: str, resource: str, namespace: str = "") -> Target:
        raise NotImplementedError

    def storage(self, t: Target, subresource: str = "") -> Storage:
        raise NotImplementedError

    def _serving(self, t: Target, interface: type[_S], subresource: str = "") -> _S:
        storage = self.storage(t, subresource)
        if not isinstance(storage, interface):
            raise not_allowed(t)
        return storage

    # -- verbs -----------------------------------------------------------------------------

    async def ensure_fresh(self, resource_version: str, match: str = "") -> None:
        """Before a GET or LIST "not older than" ``resource_version`` (not ``Exact``):
        storage ahead of it answers at once; else wait up to ``FRESH_TIMEOUT`` seconds for
        it to get there, then 504 TooLargeResourceVersion, as the watch cache's
        ``waitUntilFreshAndBlock`` does (client-go's reflector relies on that error)."""
        if resource_version in ("", "0") or match == "Exact":
            return
        wanted = parse_resource_version(resource_version)
        if wanted <= self.store.kv.current_revision:
            return
        if not await self.cache.wait_for_revision(wanted, timeout=FRESH_TIMEOUT):
            raise errors.too_large_resource_version(wanted, self.store.kv.current_revision)

    async def get(self, t: Target, name: str, *, subresource: str = "") -> Obj:
        return await self._serving(t, rest.Getter, subresource).get(t, name)

    async def list(self, t: Target, **options: Any) -> Obj:
        return await self._serving(t, rest.Lister).list(t, ListOptions(**options))

    async def get_encoded(self, t: Target, name: str) -> bytes | None:
        """The object's JSON straight from storage, or None when ``t`` needs conversion
        (then use ``get``)."""
        storage = self.storage(t)
        if isinstance(storage, rest.EncodedGetter):
            return await storage.get_encoded(t, name)
        return None

    async def list_encoded(self, t: Target, **options: Any) -> bytes | None:
        """A selector-free LIST's JSON straight from storage, or None when ``t`` needs
        conversion (then use ``list``)."""
        storage = self.storage(t)
        if isinstance(storage, rest.EncodedLister):
            return await storage.list_encoded(t, ListOptions(**options))
        return None

    async def create(self, t: Target, obj: Obj, *, dry_run: bool = False,
                     field_manager: str = "", field_validation: str = "",
                     warnings: builtins.list[str] | None = None) -> Obj:
        created = await self.create_stored(t, obj, dry_run=dry_run, field_manager=field_manager,
                                           field_validation=field_validation, warnings=warnings)
        return created.object() if isinstance(created, Created) else created

    async def create_stored(self, t: Target, obj: Obj, *, dry_run: bool = False,
                            field_manager: str = "", field_validation: str = "",
                            warnings: builtins.list[str] | None = None) -> Created | Obj:
        """``create``, answering with what was stored (``Created.encoded()`` is the HTTP
        answer; the object is decoded only when asked for)."""
        options = _options(dry_run, field_manager, field_validation, warnings)
        return await self._serving(t, rest.Creater).create(t, obj, options)

    async def create_batch(self, t: Target, objs: builtins.list[Obj], *,
                           field_manager: str = "") -> builtins.list[errors.StatusError | None]:
        """Create ``objs`` (edited in place), written together where the storage can
        (``StoredResource.create_batch``); one outcome per object: None, or its error."""
        storage = self._serving(t, rest.Creater)
        options = _options(False, field_manager, "", None)
        if isinstance(storage, rest.BatchCreater):
            return await storage.create_batch(t, objs, options)
        outcomes: builtins.list[errors.StatusError | None] = []
        for obj in objs:
            try:
                await storage.create(t, obj, options)
                outcomes.append(None)
            except errors.StatusError as exc:
                outcomes.append(exc)
        return outcomes

    async def update(self, t: Target, name: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False, field_manager: str = "", field_validation: str = "",
                     warnings: builtins.list[str] | None = None) -> tuple[Obj, bool]:
        options = _options(dry_run, field_manager, field_validation, warnings)
        return await self._serving(t, rest.Updater, subresource).update(t, name, obj, options)

    async def patch(self, t: Target, name: str, patch_type: str, body: bytes, *,
                    subresource: str = "", dry_run: bool = False, field_manager: str = "",
                    force: bool = False, field_validation: str = "",
                    warnings: builtins.list[str] | None = None) -> tuple[Obj, bool]:
        options = _options(dry_run, field_manager, field_validation, warnings)
        options.force = force
        return await self._serving(t, rest.Patcher, subresource).patch(
            t, name, patch_type, body, options)

    async def delete(self, t: Target, name: str,
                     options: DeleteOptions | Mapping[str, Any] | None = None) -> tuple[Obj, bool]:
        """``options``: typed, or as on the wire (parsed and validated as the server does)."""
        return await self._serving(t, rest.GracefulDeleter).delete(t, name, _delete(options))

    async def delete_collection(self, t: Target,
                                options: DeleteOptions | Mapping[str, Any] | None = None, *,
                                label_selector: str = "", field_selector: str = "",
                                each_page: Callable[[builtins.list[Obj]], None] | None = None
                                ) -> Obj:
        """``each_page``: see ``collection.delete_collection`` (the answer then has no
        items)."""
        return await self._serving(t, rest.CollectionDeleter).delete_collection(
            t, _delete(options), ListOptions(label_selector=label_selector,
                                             field_selector=field_selector),
            each_page=each_page)

    async def create_token(self, namespace: str, name: str, request: Obj, *,
                           warnings: builtins.list[str] | None = None) -> Obj:
        """``POST .../serviceaccounts/<name>/token``: the TokenRequest answered; 404 when no
        issuer is configured."""
        t = self.target("", "v1", "serviceaccounts", namespace)
        storage = self._serving(t, rest.NamedCreater, "token")
        return await storage.create_named(t, name, request, _options(False, "", "", warnings))

    async def get_core(self, resource: str, namespace: str, name: str) -> Obj:
        """A core/v1 object by resource name (the lookups of the ServiceAccount token
        issuer and authenticator)."""
        return await self.get(self.target("", "v1", resource, namespace), name)

    async def _namespace(self, name: str) -> Obj | None:
        """The stored namespace ``name``, or None (the NamespaceLifecycle plugin's read)."""
        try:
            return await self.store.get(self.target("", "v1", "namespaces"), name)
        except errors.StatusError as e:
            if errors.is_not_found(e):
                return None
            raise

    def watch(self, t: Target, req: WatchRequest) -> RegistryWatch:
        return self._serving(t, rest.Watcher).watch(t, req)


def _delete(options: DeleteOptions | Mapping[str, Any] | None) -> DeleteOptions:
    if options is None:
        return DeleteOptions()
    return options if isinstance(options, DeleteOptions) else parse_delete_options(options)


def _options(dry_run: bool, field_manager: str, field_validation: str,
             warnings: builtins.list[str] | None) -> WriteOptions:
    options = WriteOptions(dry_run=dry_run, field_manager=field_manager,
                           field_validation=field_validation)
    if warnings is not None:
        options.warnings = warnings
    return options


class PolicyWriter:
    """The reconciler's writes, through the registry without a user (the apiserver's own:
    no escalation check), so the index has them before the server serves."""

    def __init__(self, registry: Verbs) -> None:
        self.registry = registry

    def _target(self, kind: str, namespace: str) -> Target:
        return self.registry.target(RBAC_GROUP, "v1", kind, namespace)

    async def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        try:
            return await self.registry.get(self._target(kind, namespace), name)
        except errors.StatusError as e:
            if errors.is_not_found(e):
                return None
            raise

    async def create(self, kind: str, obj: Obj) -> None:
        await self.registry.create(
            self._target(kind, str(obj["metadata"].get("namespace") or "")), obj)

    async def update(self, kind: str, obj: Obj) -> None:
        meta = obj["metadata"]
        await self.registry.update(self._target(kind, str(meta.get("namespace") or "")),
                                   meta["name"], obj)

    async def delete(self, kind: str, obj: Obj) -> None:
        meta = obj["metadata"]
        await self.registry.delete(
            self._target(kind, str(meta.get("namespace") or "")), meta["name"],
            DeleteOptions(preconditions_uid=meta.get("uid"),
                          preconditions_resource_version=meta.get("resourceVersion")))
