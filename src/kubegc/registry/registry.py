"""``Registry``: every resource's storage, addressed by group, version, resource and
subresource, over one KV (cf. kube-apiserver's ``APIGroupInfo`` storage maps and the
apiextensions CRD handler's per-CRD storages).

The storages come from the API groups' packages (``kubegc.registry.groups``); the catalog
(discovery's names, verbs and subresources) is derived from them. The server routes a
request to the storage it addresses and calls the interface of its verb
(``generic.rest``); in-process clients call the same storages through the verbs of this
facade, which answer 405 for a verb the storage does not serve, as the server does.
"""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kubegc.api import errors
from kubegc.api.auth import Authorizer, Privileged, Union
from kubegc.api.authenticator import TokenAuthenticator
from kubegc.api.clock import Clock
from kubegc.api.meta import DeleteOptions, is_being_deleted
from kubegc.api.resources import BUILTIN_RESOURCES, Catalog, GroupVersionKind
from kubegc.api.types import Obj, clone
from kubegc.authz.rules import GROUP as RBAC_GROUP
from kubegc.authz.rules import RuleResolver
from kubegc.registry import printers
from kubegc.registry.admission import Admission
from kubegc.registry.generic import rest
from kubegc.registry.generic.listing import parse_resource_version
from kubegc.registry.generic.rest import ListOptions, Resource, Storage, WriteOptions
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Created, Target, decode, encode
from kubegc.registry.generic.watch_cache import DEFAULT_CAPACITY, CachedEvent, WatchCache
from kubegc.registry.generic.watching import RegistryWatch, WatchRequest
from kubegc.registry.groups import Services, builtin_resources
from kubegc.registry.groups.apiextensions import custom_resource
from kubegc.registry.groups.apiextensions import finalizer as crd_finalizer
from kubegc.registry.groups.apiextensions.crd import CustomResourceInfo, resource_info_for
from kubegc.registry.groups.core.serviceaccount import TokenIssuer
from kubegc.registry.groups.rbac import (
    STORE_NAMES,
    DefaultRuleResolver,
    PolicyIndex,
    RBACAuthorizer,
    RBACPolicy,
    ensure_policy,
)
from kubegc.registry.printers import TableHandler
from kubegc.registry.validation.objectmeta import parse_delete_options
from kubegc.storage import KV, KeyExistsError

log = logging.getLogger(__name__)
_S = TypeVar("_S", bound=Storage)

_CRD_KEY_ROOT = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
_RBAC_KEY_ROOT = f"/registry/{RBAC_GROUP}/"
#: Seconds a read waits for storage to reach the resourceVersion it asks for (upstream's
#: watch cache blocks 3 s).
FRESH_TIMEOUT = 3.0
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: discovery lists the built-in resources in the vocabulary's order
_ORDER = {(info.group, info.resource): i for i, info in enumerate(BUILTIN_RESOURCES)}


def not_allowed(t: Target) -> errors.StatusError:
    """The 405 of a verb the addressed storage does not serve."""
    return errors.StatusError(405, "MethodNotAllowed",
                              "the server does not allow this method on the requested resource",
                              group=t.info.group, kind=t.info.resource)


class Registry:
    """Every verb on every served resource.

    Ownership: the registry is the only writer of ``catalog`` and of the storage table
    (custom resources come and go with their CRDs) and of the CRD cleanup tasks; the watch
    cache task delivers other servers' CRD and RBAC writes to ``_on_event``.
    """

    def __init__(self, kv: KV, *, clock: Clock,
                 watch_cache_capacity: int = DEFAULT_CAPACITY) -> None:
        self.kv = kv
        self.clock = clock
        self.catalog = Catalog()
        #: the admission plugins that run (the composition root sets
        #: ``--enable-admission-plugins``'s); they ask ``authorizer`` as it is at each write
        self.admission = Admission(self.catalog, authorizer=lambda: self.authorizer)
        self.admission.lifecycle.get_namespace = self._namespace
        self.store = Store(kv, clock=clock, admission=self.admission)
        self.cache = WatchCache(kv, capacity=watch_cache_capacity)
        self.crds: dict[str, Obj] = {}
        #: called (synchronously, on the loop) after a CRD adds or removes a resource
        self.catalog_listeners: list[Callable[[], None]] = []
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        self._stopping = False
        #: the stored RBAC policy, current after every write of this server
        self.rbac = PolicyIndex()
        self.rbac_authorizer = RBACAuthorizer(self.rbac)
        #: what a user may do: asked by the server for every request, by in-process
        #: clients with an identity for every call, by admission (the composition root
        #: sets ``--authorization-mode``'s)
        self.authorizer: Authorizer = Union([Privileged(), self.rbac_authorizer])
        #: which rules a user holds (SelfSubjectRulesReview), the same modes'
        self.rule_resolver: RuleResolver = self.rbac_authorizer
        self._rbac_relist: asyncio.Task[None] | None = None
        #: the TokenRequest issuer of ``serviceaccounts/token`` (the composition root sets
        #: it with the ServiceAccount key); None: the subresource answers 404
        self.token_issuer: TokenIssuer | None = None
        #: the server's authenticators, which TokenReviews ask (the server sets them)
        self.token_authenticator: TokenAuthenticator | None = None
        #: whether the components run and have synced (componentstatuses)
        self.components_healthy: Callable[[], bool] = lambda: False
        self._context = StorageContext(self.store, self.cache)
        self._resources: dict[tuple[str, str], Resource] = {}
        for resource in sorted(builtin_resources(self._context, self._services()),
                               key=lambda r: _ORDER.get((r.info.group, r.info.resource), 0)):
            self.install(resource)

    def _services(self) -> Services:
        policy = RBACPolicy(DefaultRuleResolver(self.rbac, STORE_NAMES), lambda: self.authorizer)
        return Services(
            admission=self.admission, clock=self.clock,
            healthy=lambda: self.components_healthy(),
            token_issuer=lambda: self.token_issuer, get_core=self.get_core,
            token_authenticator=lambda: self.token_authenticator,
            authorizer=lambda: self.authorizer, rule_resolver=lambda: self.rule_resolver,
            rbac_index=self.rbac, rbac_policy=policy, on_crd_write=self._crd_written)

    def install(self, resource: Resource) -> None:
        """Serve ``resource`` (in place of one of the same group and name): the built-in
        groups' at start, a CRD's custom resources, an embedder's own. Its catalog entry
        (discovery, OpenAPI) is derived from its storages."""
        self._resources[(resource.info.group, resource.info.resource)] = resource
        self.catalog.add(resource.served_info())

    def resource(self, group: str, resource: str) -> Resource | None:
        """The served ``group``/``resource``, storages and all."""
        return self._resources.get((group, resource))

    async def start(self, *, bootstrap: bool = True) -> None:
        """Load what the registry keeps in memory (CRDs, the RBAC policy) and start the
        watch cache; ``bootstrap``: also create the default namespaces and the bootstrap
        RBAC policy (``ensure_rbac_policy``), as a new kube-apiserver does."""
        listed = await self.kv.range(_CRD_KEY_ROOT, prefix=True)
        for kv in listed.kvs:
            self._sync_crd(decode(kv))
        await self.rbac.load(self.kv)
        await self.cache.start()
        self.cache.listeners.append(self._on_event)
        self.cache.relist_listeners.append(self._relist_rbac)
        if bootstrap:
            await self._bootstrap()
            await self.ensure_rbac_policy()

    def _relist_rbac(self) -> None:
        """The watch cache lost events: read the RBAC policy from storage again."""
        if self._rbac_relist is None or self._rbac_relist.done():
            self._rbac_relist = asyncio.create_task(self.rbac.load(self.kv), name="rbac-relist")

    async def ensure_rbac_policy(self) -> None:
        """Create or reconcile the bootstrap roles and bindings (the ``rbac/bootstrap-roles``
        post-start hook), writing as the apiserver itself."""
        await ensure_policy(_PolicyWriter(self))

    async def stop(self) -> None:
        self._stopping = True  # no CRD cleanup starts, or goes round again, from now on
        tasks = list(self._cleanups.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._cleanups.clear()
        await self.cache.stop()
        if self._rbac_relist is not None:
            self._rbac_relist.cancel()
            await asyncio.gather(self._rbac_relist, return_exceptions=True)

    async def _bootstrap(self) -> None:
        for name in BOOTSTRAP_NAMESPACES:
            await self._create_if_absent(self.target("", "v1", "namespaces"),
                                         {"metadata": {"name": name}})
        await self._create_if_absent(self.target("", "v1", "services", "default"), {
            "metadata": {"name": "kubernetes", "labels": {
                "component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.96.0.1", "ports": [
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]},
        })

    async def _create_if_absent(self, t: Target, obj: Obj) -> None:
        try:
            await self.create(t, obj)
        except errors.StatusError as e:
            if not errors.is_already_exists(e):
                raise

    # -- addressing ------------------------------------------------------------------------

    def target(self, group: str, version: str, resource: str, namespace: str = "") -> Target:
        """What a request for ``resource`` at ``version`` (in ``namespace``) addresses; 404
        when it is not served."""
        served = self._resources.get((group, resource))
        if served is None or version not in served.info.versions:
            raise errors.route_not_found()
        return Target(served.info, served.strategy, version,
                      namespace if served.info.namespaced else "")

    def storage(self, t: Target, subresource: str = "") -> Storage:
        """The storage of ``t``'s resource, or of one of its subresources (404 when there is
        no such subresource)."""
        served = self._resources.get((t.info.group, t.info.resource))
        if served is None:
            raise errors.route_not_found()
        if not subresource:
            return served.storage
        found = served.subresources.get(subresource)
        if found is None:
            raise errors.route_not_found()
        return found

    def table(self, t: Target) -> TableHandler:
        """How ``kubectl get`` prints ``t``'s resource at ``t.version``."""
        served = self._resources.get((t.info.group, t.info.resource))
        return printers.DEFAULT if served is None else served.table.for_version(t.version)

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
                                label_selector: str = "", field_selector: str = "") -> Obj:
        return await self._serving(t, rest.CollectionDeleter).delete_collection(
            t, _delete(options), ListOptions(label_selector=label_selector,
                                             field_selector=field_selector))

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

    # -- snapshots ---------------------------------------------------------------------------

    async def restore(self, objects: builtins.list[Obj]) -> builtins.list[Obj]:
        """Write ``objects`` as they are (uid, timestamps, finalizers, deletionTimestamp and
        ownerReferences kept; resourceVersion reassigned) into storage, CRDs first so that
        their instances can be restored. Returns the objects whose kind is not served.

        For loading a dump of another cluster (the planner); it bypasses validation and
        admission on purpose: the source cluster already accepted these objects."""
        def is_crd(o: Obj) -> bool:
            return bool(o.get("kind") == "CustomResourceDefinition")

        skipped: builtins.list[Obj] = []
        for obj in sorted(objects, key=lambda o: (not is_crd(o), o.get("kind") != "Namespace")):
            t = self._restore_target(obj)
            if t is None:
                skipped.append(obj)
                continue
            stored = t.to_storage(clone(obj))
            stored["metadata"].pop("resourceVersion", None)
            try:
                await self.kv.create(t.key(obj["metadata"]["name"]), encode(stored))
            except KeyExistsError:
                skipped.append(obj)
                continue
            if is_crd(obj):
                self._sync_crd(stored)
        return skipped

    def _restore_target(self, obj: Obj) -> Target | None:
        gvk = GroupVersionKind.from_api_version(str(obj.get("apiVersion", "")),
                                                str(obj.get("kind", "")))
        info = self.catalog.for_gvk(gvk)
        meta = obj.get("metadata") or {}
        if info is None or not meta.get("name") or (info.namespaced and not meta.get(
                "namespace")):
            return None
        return self.target(info.group, gvk.version, info.resource,
                           str(meta.get("namespace") or ""))

    # -- CRDs and the RBAC index: other servers' writes --------------------------------------

    def _on_event(self, event: CachedEvent) -> None:
        if event.key.startswith(_RBAC_KEY_ROOT):
            self.rbac.apply_event(event.key, event.obj, event.revision, deleted=event.deleted)
            return
        if event.key.startswith(_CRD_KEY_ROOT):
            self._crd_written(event.obj, event.deleted)

    def _crd_written(self, crd: Obj, removed: bool) -> None:
        """A CRD was written (by this server's CRD storage, or seen in the watch cache)."""
        if removed:
            self._forget_crd(crd)
        else:
            self._sync_crd(crd)

    def _sync_crd(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        info = resource_info_for(crd)
        old = self.crds.get(name)
        self.crds[name] = crd
        if info is None:
            return
        served = self._resources.get((info.group, info.resource))
        if served is None or served.info != info or (
                old is not None and _subresources(old) != _subresources(crd)):
            if old is not None:
                old_info = resource_info_for(old)
                if old_info is not None and (old_info.group, old_info.resource) != (
                        info.group, info.resource):
                    self._uninstall(old_info.group, old_info.resource)
            self.install(custom_resource(self._context, crd, info,
                                          current=lambda: self.crds.get(name)))
            self._catalog_changed()
        if is_being_deleted(crd) and name not in self._cleanups and not self._stopping:
            # the apiserver's own work, not the request's that deleted the CRD: a new
            # context, so no request user (``api.auth.request_user``) is inherited
            self._cleanups[name] = asyncio.create_task(
                self._cleanup(crd), name=f"crd-{name}", context=contextvars.Context())

    def _forget_crd(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        self.crds.pop(name, None)
        info = resource_info_for(crd)
        if info is not None:
            served = self._resources.get((info.group, info.resource))
            if served is not None and served.info.custom:
                self._uninstall(info.group, info.resource)
                self._catalog_changed()

    def _uninstall(self, group: str, resource: str) -> None:
        self._resources.pop((group, resource), None)
        self.catalog.remove(group, resource)

    def _catalog_changed(self) -> None:
        for listener in list(self.catalog_listeners):
            try:
                listener()
            except Exception:
                log.exception("catalog listener failed")

    async def _cleanup(self, crd: Obj) -> None:
        """Finalize a deleted CRD: its instances, its Terminating condition and the cleanup
        finalizer (``finalizer.finalize``)."""
        name = crd["metadata"]["name"]
        crd_t = self.target("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        info = resource_info_for(crd)
        custom = None if info is None else self._resources.get((info.group, info.resource))
        try:
            result, removed = await crd_finalizer.finalize(
                self.store, self.cache, crd_t, name, custom=custom,
                stopping=lambda: self._stopping)
            if not self._stopping:
                self._crd_written(result, removed)
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                log.warning("CRD %s cleanup failed: %s", name, e)
        finally:
            self._cleanups.pop(name, None)


def _subresources(crd: Obj) -> tuple[bool, bool]:
    from kubegc.registry.groups.apiextensions.crd import served_subresources

    return served_subresources(crd)


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


class _PolicyWriter:
    """The reconciler's writes, through the registry without a user (the apiserver's own:
    no escalation check), so the index has them before the server serves."""

    def __init__(self, registry: Registry) -> None:
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


def builtin_catalog() -> Catalog:
    """The catalog of the built-in resources, with the verbs and subresources their
    storages serve (for clients that need it without a server: the fake client, tests)."""
    from kubegc.api.clock import RealClock
    from kubegc.storage.memory import MemoryKV

    return Registry(MemoryKV(), clock=RealClock()).catalog


__all__ = ["CustomResourceInfo", "Registry", "builtin_catalog", "not_allowed"]
