"""``Registry``: every resource's storage, addressed by group, version, resource and
subresource, over one KV (cf. kube-apiserver's ``APIGroupInfo`` storage maps and the
apiextensions CRD handler's per-CRD storages).

The storages come from the API groups' packages (``kubegc.registry.groups``); the catalog
(discovery's names, verbs and subresources) is derived from them. The server routes a
request to the storage it addresses and calls the interface of its verb
(``generic.rest``); in-process clients call the same storages through ``Verbs``
(``facade.py``), which answer 405 for a verb the storage does not serve, as the server
does.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Callable
from dataclasses import replace

from kubegc.api import errors
from kubegc.api.auth import Authorizer, Privileged, Union
from kubegc.api.authenticator import TokenAuthenticator
from kubegc.api.clock import Clock
from kubegc.api.lifecycle import served_versions
from kubegc.api.resources import BUILTIN_RESOURCES, Catalog, GroupVersionKind
from kubegc.api.types import Obj, clone
from kubegc.api.version import BINARY_VERSION, MajorMinor
from kubegc.authz.rules import GROUP as RBAC_GROUP
from kubegc.authz.rules import RuleResolver
from kubegc.registry import printers
from kubegc.registry.admission import Admission
from kubegc.registry.admission.webhook import GROUP as WEBHOOK_GROUP
from kubegc.registry.admission.webhook import MUTATING, VALIDATING
from kubegc.registry.default_service_cidr import DefaultServiceCIDRController
from kubegc.registry.facade import PolicyWriter, Verbs, not_allowed
from kubegc.registry.generic.rest import Resource, Storage
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target, decode, encode
from kubegc.registry.generic.watch_cache import DEFAULT_CAPACITY, CachedEvent, WatchCache
from kubegc.registry.groups import Services, builtin_resources
from kubegc.registry.groups.apiextensions.crd import CustomResourceInfo
from kubegc.registry.groups.apiextensions.handler import CRDHandler
from kubegc.registry.groups.apiregistration.aggregation import Aggregation
from kubegc.registry.groups.core import KUBERNETES_SERVICE_IP, SERVICE_CLUSTER_IP_RANGE
from kubegc.registry.groups.core.token import TokenIssuer
from kubegc.registry.groups.rbac import (
    STORE_NAMES,
    DefaultRuleResolver,
    PolicyIndex,
    RBACAuthorizer,
    RBACPolicy,
    ensure_policy,
)
from kubegc.registry.printers import TableHandler
from kubegc.storage import KV, KeyExistsError

log = logging.getLogger(__name__)

_CRD_KEY_ROOT = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
_RBAC_KEY_ROOT = f"/registry/{RBAC_GROUP}/"
_WEBHOOK_KEY_ROOTS = {f"/registry/{WEBHOOK_GROUP}/{r}/": r for r in (MUTATING, VALIDATING)}
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: discovery lists the built-in resources in the vocabulary's order
_ORDER = {(info.group, info.resource): i for i, info in enumerate(BUILTIN_RESOURCES)}


class Registry(Verbs):
    """Every verb on every served resource.

    Ownership: the registry is the only writer of ``catalog`` and of the storage table
    (custom resources come and go with their CRDs: ``custom``, the CRD handler, installs
    them through it); the watch cache task delivers other servers' CRD and RBAC writes to
    ``_on_event``.
    """

    def __init__(self, kv: KV, *, clock: Clock,
                 watch_cache_capacity: int = DEFAULT_CAPACITY,
                 version: MajorMinor = BINARY_VERSION) -> None:
        self.kv = kv
        self.clock = clock
        #: the emulated version: the built-in resource versions served are its
        #: (``kubegc.api.lifecycle``)
        self.version = version
        self.catalog = Catalog()
        #: the admission plugins that run (the composition root sets
        #: ``--enable-admission-plugins``'s); they ask ``authorizer`` as it is at each write
        self.admission = Admission(self.catalog, authorizer=lambda: self.authorizer)
        self.admission.lifecycle.get_namespace = self._namespace
        self.admission.webhooks.get_namespace = self._namespace
        self.store = Store(kv, clock=clock, admission=self.admission)
        self.cache = WatchCache(kv, capacity=watch_cache_capacity)
        #: called (synchronously, on the loop) after a CRD adds or removes a resource
        self.catalog_listeners: list[Callable[[], None]] = []
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
        #: the default ServiceCIDR's keeper, at the versions that serve ServiceCIDRs
        self._default_service_cidr: DefaultServiceCIDRController | None = None
        #: the TokenRequest issuer of ``serviceaccounts/token`` (the composition root sets
        #: it with the ServiceAccount key); None: the subresource answers 404
        self.token_issuer: TokenIssuer | None = None
        #: the server's authenticators, which TokenReviews ask (the server sets them)
        self.token_authenticator: TokenAuthenticator | None = None
        #: whether the components run and have synced (componentstatuses)
        self.components_healthy: Callable[[], bool] = lambda: False
        #: the remote group-versions of APIServices (the server's availability controller
        #: writes it; discovery and the in-process client read it)
        self.aggregation = Aggregation()
        self._context = StorageContext(self.store, self.cache)
        self._resources: dict[tuple[str, str], Resource] = {}
        #: the custom resources the CRDs serve
        self.custom = CRDHandler(
            self._context, install=self.install, uninstall=self._uninstall,
            served=self.resource, changed=self._catalog_changed,
            crd_target=lambda: self.target("apiextensions.k8s.io", "v1",
                                           "customresourcedefinitions"))
        for resource in sorted(builtin_resources(self._context, self._services()),
                               key=lambda r: _ORDER.get((r.info.group, r.info.resource), 0)):
            versions = served_versions(resource.info, version)
            if versions:  # as upstream's installer skips what shouldServe refuses
                self.install(replace(resource, info=replace(resource.info, versions=versions)))

    def _services(self) -> Services:
        policy = RBACPolicy(DefaultRuleResolver(self.rbac, STORE_NAMES), lambda: self.authorizer)
        return Services(
            admission=self.admission, clock=self.clock,
            healthy=lambda: self.components_healthy(),
            token_issuer=lambda: self.token_issuer, get_core=self.get_core,
            token_authenticator=lambda: self.token_authenticator,
            authorizer=lambda: self.authorizer, rule_resolver=lambda: self.rule_resolver,
            rbac_index=self.rbac, rbac_policy=policy, on_crd_write=self._crd_written)

    def _crd_written(self, crd: Obj, removed: bool) -> None:
        self.custom.written(crd, removed)

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
            self.custom.written(decode(kv), False)
        await self.rbac.load(self.kv)
        for root, resource in _WEBHOOK_KEY_ROOTS.items():
            for kv in (await self.kv.range(root, prefix=True)).kvs:
                self.admission.webhooks.configurations.written(resource, decode(kv),
                                                               deleted=False)
        await self.cache.start()
        self.cache.listeners.append(self._on_event)
        self.cache.relist_listeners.append(self._relist_rbac)
        if bootstrap:
            await self._bootstrap()
            await self.ensure_rbac_policy()
            if self.resource("networking.k8s.io", "servicecidrs") is not None:
                self._default_service_cidr = DefaultServiceCIDRController(
                    self, self.clock, [SERVICE_CLUSTER_IP_RANGE])
                await self._default_service_cidr.start()

    def _relist_rbac(self) -> None:
        """The watch cache lost events: read the RBAC policy from storage again."""
        if self._rbac_relist is None or self._rbac_relist.done():
            self._rbac_relist = asyncio.create_task(self.rbac.load(self.kv), name="rbac-relist")

    async def ensure_rbac_policy(self) -> None:
        """Create or reconcile the bootstrap roles and bindings (the ``rbac/bootstrap-roles``
        post-start hook), writing as the apiserver itself."""
        await ensure_policy(PolicyWriter(self))

    async def stop(self) -> None:
        if self._default_service_cidr is not None:
            await self._default_service_cidr.stop()
        await self.admission.webhooks.client.close()
        await self.custom.stop()
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
            "spec": {"clusterIP": KUBERNETES_SERVICE_IP, "ports": [
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

    def route(self, group: str, version: str, resource: str, namespace: str,
              subresource: str) -> tuple[Target, Storage]:
        """What a request addresses and the storage that serves it (``target`` and
        ``storage`` in one lookup: the server's, once per request)."""
        served = self._resources.get((group, resource))
        if served is None or version not in served.info.versions:
            raise errors.route_not_found()
        storage = served.subresources.get(subresource) if subresource else served.storage
        if storage is None:
            raise errors.route_not_found()
        return Target(served.info, served.strategy, version,
                      namespace if served.info.namespaced else ""), storage

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
                self.custom.written(stored, False)
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

    # -- CRDs, the RBAC index, webhook configurations: other servers' writes ---------------

    def _on_event(self, event: CachedEvent) -> None:
        if event.key.startswith(_RBAC_KEY_ROOT):
            self.rbac.apply_event(event.key, event.obj, event.revision, deleted=event.deleted)
            return
        if event.key.startswith(_CRD_KEY_ROOT):
            self.custom.written(event.obj, event.deleted)
            return
        for root, resource in _WEBHOOK_KEY_ROOTS.items():
            if event.key.startswith(root):
                self.admission.webhooks.configurations.written(resource, event.obj,
                                                               deleted=event.deleted)

    @property
    def crds(self) -> dict[str, Obj]:
        """Every CRD as last written, by name."""
        return self.custom.crds

    def _uninstall(self, group: str, resource: str) -> None:
        self._resources.pop((group, resource), None)
        self.catalog.remove(group, resource)

    def discovery_changed(self) -> None:
        """What discovery answers changed without the catalog changing (a remote APIService
        became available or unavailable): the same listeners are told."""
        self._catalog_changed()

    def _catalog_changed(self) -> None:
        for listener in list(self.catalog_listeners):
            try:
                listener()
            except Exception:
                log.exception("catalog listener failed")


def builtin_catalog(version: MajorMinor = BINARY_VERSION) -> Catalog:
    """The catalog of the built-in resources served at ``version``, with the verbs and
    subresources their storages serve (for clients that need it without a server: the fake
    client, tests)."""
    from kubegc.api.clock import RealClock
    from kubegc.storage.memory import MemoryKV

    return Registry(MemoryKV(), clock=RealClock(), version=version).catalog


__all__ = ["CustomResourceInfo", "Registry", "builtin_catalog", "not_allowed"]
