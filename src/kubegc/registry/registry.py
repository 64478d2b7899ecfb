"""``Registry``: the facade over Store, deletion, patching, listing, watching and CRDs."""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import logging
from collections.abc import Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.auth import Authorizer, Privileged, Union
from kubegc.api.clock import Clock
from kubegc.api.meta import is_being_deleted
from kubegc.api.resources import Catalog, GroupVersionKind, ResourceInfo
from kubegc.api.types import Obj, clone
from kubegc.authz.rules import GROUP as RBAC_GROUP
from kubegc.authz.rules import RuleResolver
from kubegc.registry import crd as crds
from kubegc.registry import crd_finalizer
from kubegc.registry.admission_plugins import Admission
from kubegc.registry.conversion import to_storage
from kubegc.registry.deletion import check_delete_options, delete
from kubegc.registry.listing import list_encoded, list_objects, parse_resource_version
from kubegc.registry.namespace import finalize_namespace
from kubegc.registry.patching import patch
from kubegc.registry.rbac import (
    STORE_NAMES,
    DefaultRuleResolver,
    PolicyIndex,
    RBACAuthorizer,
    RBACPolicy,
    ensure_policy,
)
from kubegc.registry.serviceaccount_token import TokenIssuer, create_token
from kubegc.registry.store import Store
from kubegc.registry.target import Created, Target, decode, encode, is_direct
from kubegc.registry.watch_cache import DEFAULT_CAPACITY, CachedEvent, WatchCache
from kubegc.registry.watching import RegistryWatch, WatchRequest
from kubegc.storage import KV, KeyExistsError

log = logging.getLogger(__name__)

_CRD_KEY_ROOT = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
_RBAC_KEY_ROOT = f"/registry/{RBAC_GROUP}/"
#: Seconds a read waits for storage to reach the resourceVersion it asks for (upstream's
#: watch cache blocks 3 s).
FRESH_TIMEOUT = 3.0
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Registry:
    """Every verb on every resource of ``catalog``.

    Ownership: the registry is the only writer of ``catalog`` (CRDs) and of the CRD
    cleanup tasks; the watch cache task delivers CRD events to ``_on_event``.
    """

    def __init__(self, kv: KV, *, clock: Clock, catalog: Catalog | None = None,
                 watch_cache_capacity: int = DEFAULT_CAPACITY) -> None:
        self.kv = kv
        self.clock = clock
        self.catalog = catalog or Catalog.builtin()
        #: the admission plugins that run (the composition root sets
        #: ``--enable-admission-plugins``'s); they ask ``authorizer`` as it is at each write
        self.admission = Admission(self.catalog, authorizer=lambda: self.authorizer)
        self.store = Store(kv, self.catalog, clock=clock, admission=self.admission)
        self.cache = WatchCache(kv, capacity=watch_cache_capacity)
        self.crds: dict[str, Obj] = {}
        #: called (synchronously, on the loop) after a CRD adds or removes a resource
        self.catalog_listeners: list[Callable[[], None]] = []
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        self._stopping = False
        #: the stored RBAC policy, current after every write (``_after_write``)
        self.rbac = PolicyIndex()
        self.rbac_authorizer = RBACAuthorizer(self.rbac)
        #: what a user may do: asked by the server for every request, by in-process
        #: clients with an identity for every call, by admission (the composition root
        #: sets ``--authorization-mode``'s)
        self.authorizer: Authorizer = Union([Privileged(), self.rbac_authorizer])
        #: which rules a user holds (SelfSubjectRulesReview), the same modes'
        self.rule_resolver: RuleResolver = self.rbac_authorizer
        self._rbac_relist: asyncio.Task[None] | None = None
        self.store.rbac_policy = RBACPolicy(DefaultRuleResolver(self.rbac, STORE_NAMES),
                                            lambda: self.authorizer)
        #: the TokenRequest issuer of ``serviceaccounts/token`` (the composition root sets
        #: it with the ServiceAccount key); None: the subresource is not served
        self.token_issuer: TokenIssuer | None = None

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
        ns = self.target("", "v1", "namespaces")
        for name in BOOTSTRAP_NAMESPACES:
            try:
                await self.store.create(ns, {"metadata": {"name": name}})
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    raise
        svc = self.target("", "v1", "services", "default")
        try:
            await self.store.create(svc, {
                "metadata": {"name": "kubernetes", "labels": {
                    "component": "apiserver", "provider": "kubernetes"}},
                "spec": {"clusterIP": "10.96.0.1", "ports": [
                    {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]},
            })
        except errors.StatusError as e:
            if not errors.is_already_exists(e):
                raise

    # -- addressing ------------------------------------------------------------------------

    def target(self, group: str, version: str, resource: str, namespace: str = "") -> Target:
        info = self.catalog.lookup(group, version, resource)
        if info is None:
            raise errors.route_not_found()
        return Target(info, version, namespace if info.namespaced else "")

    def info(self, group: str, resource: str) -> ResourceInfo | None:
        return self.catalog.get(group, resource)

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

    async def get(self, t: Target, name: str) -> Obj:
        return await self.store.get(t, name)

    async def list(self, t: Target, **options: Any) -> Obj:
        return await list_objects(self.store, t, **options)

    async def get_encoded(self, t: Target, name: str) -> bytes | None:
        """The object's JSON straight from storage, or None when ``t`` needs conversion
        (then use ``get``)."""
        return await self.store.get_encoded(t, name) if is_direct(t) else None

    async def list_encoded(self, t: Target, **options: Any) -> bytes | None:
        """A selector-free LIST's JSON straight from storage, or None when ``t`` needs
        conversion (then use ``list``)."""
        return await list_encoded(self.store, t, **options) if is_direct(t) else None

    async def create(self, t: Target, obj: Obj, *, dry_run: bool = False,
                     field_manager: str = "", field_validation: str = "",
                     warnings: builtins.list[str] | None = None) -> Obj:
        created = await self.create_stored(t, obj, dry_run=dry_run, field_manager=field_manager,
                                           field_validation=field_validation, warnings=warnings)
        return created.object()

    async def create_stored(self, t: Target, obj: Obj, *, dry_run: bool = False,
                            field_manager: str = "", field_validation: str = "",
                            warnings: builtins.list[str] | None = None) -> Created:
        """``create``, answering with what was stored (``Created.encoded()`` is the HTTP
        answer; the object is decoded only when asked for)."""
        if t.info.custom:
            crd = self.crds.get(f"{t.info.resource}.{t.info.group}")
            if crd is not None and is_being_deleted(crd):
                raise errors.StatusError(
                    405, "MethodNotAllowed",
                    "create not allowed while custom resource definition is terminating",
                    group=t.info.group, kind=t.info.resource)
        created = await self.store.create_stored(
            t, obj, dry_run=dry_run, field_manager=field_manager,
            field_validation=field_validation, warnings=warnings)
        if not dry_run and (_is_crd(t) or t.info.group == RBAC_GROUP):
            self._after_write(t, created.object())
        return created

    async def update(self, t: Target, name: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False, field_manager: str = "", field_validation: str = "",
                     warnings: builtins.list[str] | None = None) -> tuple[Obj, bool]:
        if subresource == "finalize":
            return await finalize_namespace(self.store, t, name, obj, dry_run=dry_run), False
        result, created = await self.store.update(
            t, name, obj, subresource=subresource, dry_run=dry_run, field_manager=field_manager,
            field_validation=field_validation, warnings=warnings)
        if not dry_run:
            self._after_write(t, result)
        return result, created

    async def patch(self, t: Target, name: str, patch_type: str, body: bytes, *,
                    subresource: str = "", dry_run: bool = False, field_manager: str = "",
                    force: bool = False, field_validation: str = "",
                    warnings: builtins.list[str] | None = None) -> tuple[Obj, bool]:
        result, created = await patch(
            self.store, t, name, patch_type, body, subresource=subresource, dry_run=dry_run,
            field_manager=field_manager, force=force, field_validation=field_validation,
            warnings=warnings)
        if not dry_run:
            self._after_write(t, result)
        return result, created

    async def delete(self, t: Target, name: str, options: dict[str, Any] | None = None) -> tuple[
        Obj, bool
    ]:
        result, removed = await delete(self.store, t, name, dict(options or {}))
        if not options or not options.get("dryRun"):
            self._after_write(t, result, removed=removed)
        return result, removed

    async def delete_collection(self, t: Target, options: dict[str, Any] | None = None, *,
                                label_selector: str = "", field_selector: str = "") -> Obj:
        check_delete_options(dict(options or {}))
        listed = await self.list(t, label_selector=label_selector, field_selector=field_selector)
        items = []
        for item in listed["items"]:
            item_t = Target(t.info, t.version, item["metadata"].get("namespace", ""))
            try:
                obj, _ = await self.delete(item_t, item["metadata"]["name"], options)
            except errors.StatusError as e:
                if errors.is_not_found(e):
                    continue
                raise
            items.append(obj)
        listed["items"] = items
        return listed

    async def create_token(self, namespace: str, name: str, request: Obj, *,
                           warnings: builtins.list[str] | None = None) -> Obj:
        """``POST .../serviceaccounts/<name>/token``: the TokenRequest answered
        (``serviceaccount_token.create_token``); 404 when no issuer is configured."""
        if self.token_issuer is None:
            raise errors.route_not_found()
        return await create_token(self.token_issuer, self.get_core, namespace, name,
                                  request, warnings)

    async def get_core(self, resource: str, namespace: str, name: str) -> Obj:
        """A core/v1 object by resource name (the lookups of the ServiceAccount token
        issuer and authenticator)."""
        return await self.store.get(self.target("", "v1", resource, namespace), name)

    def watch(self, t: Target, req: WatchRequest) -> RegistryWatch:
        return RegistryWatch(self.store, self.cache, t, req)

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
            gvk = GroupVersionKind.from_api_version(str(obj.get("apiVersion", "")),
                                                    str(obj.get("kind", "")))
            info = self.catalog.for_gvk(gvk)
            meta = obj.get("metadata") or {}
            if info is None or not meta.get("name") or (info.namespaced and not meta.get(
                    "namespace")):
                skipped.append(obj)
                continue
            t = Target(info, gvk.version, str(meta.get("namespace") or ""))
            stored = to_storage(info, clone(obj))
            stored["metadata"].pop("resourceVersion", None)
            try:
                await self.kv.create(t.key(meta["name"]), encode(stored))
            except KeyExistsError:
                skipped.append(obj)
                continue
            if is_crd(obj):
                self._sync_crd(stored)
        return skipped

    # -- CRDs --------------------------------------------------------------------------------

    def _after_write(self, t: Target, obj: Obj, *, removed: bool = False) -> None:
        if t.info.group == RBAC_GROUP:
            self.rbac.apply_object(t.key(obj["metadata"]["name"]), obj, removed=removed)
        elif _is_crd(t):
            if removed:
                self._forget_crd(obj)
            else:
                self._sync_crd(obj)

    def _on_event(self, event: CachedEvent) -> None:
        if event.key.startswith(_RBAC_KEY_ROOT):
            self.rbac.apply_event(event.key, event.obj, event.revision, deleted=event.deleted)
            return
        if not event.key.startswith(_CRD_KEY_ROOT):
            return
        if event.deleted:
            self._forget_crd(event.obj)
        else:
            self._sync_crd(event.obj)

    def _sync_crd(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        info = crds.resource_info_for(crd)
        old = self.crds.get(name)
        self.crds[name] = crd
        if info is None:
            return
        current = self.catalog.get(info.group, info.resource)
        if current != info:
            if old is not None:
                old_info = crds.resource_info_for(old)
                if old_info is not None and (old_info.group, old_info.resource) != (
                        info.group, info.resource):
                    self.catalog.remove(old_info.group, old_info.resource)
            self.catalog.add(info)
            self._catalog_changed()
        if is_being_deleted(crd) and name not in self._cleanups and not self._stopping:
            # the apiserver's own work, not the request's that deleted the CRD: a new
            # context, so no request user (``api.auth.request_user``) is inherited
            self._cleanups[name] = asyncio.create_task(
                self._cleanup(crd), name=f"crd-{name}", context=contextvars.Context())

    def _forget_crd(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        self.crds.pop(name, None)
        info = crds.resource_info_for(crd)
        if info is not None:
            current = self.catalog.get(info.group, info.resource)
            if current is not None and current.custom:
                self.catalog.remove(info.group, info.resource)
                self._catalog_changed()

    def _catalog_changed(self) -> None:
        for listener in list(self.catalog_listeners):
            try:
                listener()
            except Exception:
                log.exception("catalog listener failed")

    async def _cleanup(self, crd: Obj) -> None:
        """Finalize a deleted CRD: its instances, its Terminating condition and the cleanup
        finalizer (``crd_finalizer.finalize``)."""
        name = crd["metadata"]["name"]
        crd_t = self.target("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        try:
            result, removed = await crd_finalizer.finalize(
                self.store, self.cache, crd_t, name, stopping=lambda: self._stopping)
            if not self._stopping:
                self._after_write(crd_t, result, removed=removed)
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                log.warning("CRD %s cleanup failed: %s", name, e)
        finally:
            self._cleanups.pop(name, None)


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
            {"preconditions": {"uid": meta.get("uid"),
                               "resourceVersion": meta.get("resourceVersion")}})


__all__ = ["Registry"]


def _is_crd(t: Target) -> bool:
    return (t.info.group, t.info.resource) == ("apiextensions.k8s.io",
                                               "customresourcedefinitions")
