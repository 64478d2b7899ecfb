"""``LocalClient``: the ``Client`` protocol served in-process, straight to the registry.

Same semantics as ``RestClient`` against kubegc (same registry code paths, same
``StatusError``s), minus HTTP: controllers running inside ``kubegc serve`` use it.
Objects from ``watch`` are shared with the watch cache: never mutate them.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

from kubegc.api import errors
from kubegc.api.auth import APISERVER, Attributes, Decision, UserInfo, as_user
from kubegc.api.meta import EventType
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj, clone
from kubegc.api.version import EffectiveVersion
from kubegc.client.aggregated import is_remote, remote_call, remote_watch
from kubegc.client.batch import CreateOutcome, create_each
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    ServerResources,
    WatchEvent,
    WatchOptions,
)
from kubegc.registry import Registry, Target, WatchRequest
from kubegc.server.app import KUBERNETES_VERSION
from kubegc.server.audit.filter import status_of

if TYPE_CHECKING:
    from kubegc.server.audit import Auditor

#: The registry's watch event types as ``EventType`` members (a dict lookup: ~15 ns per
#: event, where calling ``EventType`` costs ~230 ns).
_EVENT_TYPES: dict[str, EventType] = {t.value: t for t in EventType}


KUBERNETES_GIT_VERSION = KUBERNETES_VERSION["gitVersion"]
#: the user agent of the composition root's client (kube-apiserver's loopback client's)
DEFAULT_USER_AGENT = f"kube-apiserver/{KUBERNETES_GIT_VERSION} (linux/amd64) kubernetes/0000000"


def user_agent_of(user: UserInfo) -> str:
    """The user agent of a controller's client: kube-controller-manager's, ending with
    the user it acts as (``SAControllerClientBuilder``'s ``restclient.AddUserAgent``)."""
    return (f"kube-controller-manager/{KUBERNETES_GIT_VERSION} (linux/amd64) "
            f"kubernetes/0000000/{user.name}")


def request_uri(attrs: Attributes) -> str:
    """The path of the HTTP request a call stands for."""
    parts = ["/api", attrs.api_version] if not attrs.api_group else [
        "/apis", attrs.api_group, attrs.api_version]
    if attrs.namespace and attrs.resource != "namespaces":
        parts += ["namespaces", attrs.namespace]
    parts += [p for p in (attrs.resource, attrs.name, attrs.subresource) if p]
    return "/".join(parts)


def _json(value: Any) -> Any:
    """A JSON value of a request or response body for the audit event (not shared)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return orjson.loads(orjson.dumps(value))


def remote_api_resource(group: str, version: str, r: dict[str, Any]) -> APIResource:
    """An ``APIResource`` of a backend's ``APIResourceList``."""
    return APIResource(
        group=group, version=version, resource=str(r.get("name") or ""),
        kind=str(r.get("kind") or ""), namespaced=bool(r.get("namespaced")),
        verbs=tuple(str(v) for v in r.get("verbs") or []),
        short_names=tuple(str(v) for v in r.get("shortNames") or []),
        categories=tuple(str(v) for v in r.get("categories") or []),
        singular=str(r.get("singularName") or ""))


class LocalClient(Client):
    def __init__(self, registry: Registry, *, field_manager: str = "",
                 user: UserInfo | None = None, auditor: Auditor | None = None,
                 user_agent: str = DEFAULT_USER_AGENT,
                 version: EffectiveVersion | None = None) -> None:
        """``version``: what ``version()`` reports (the server's ``--emulated-version``).
        ``field_manager`` "" (the default) records no managedFields for this client's
        writes: in-process controllers write often, and the bookkeeping costs more than the
        write itself (bench/README.md); name a manager to have its fields tracked.

        ``user``: the identity every call is made as — authorized by the registry's
        authorizer as the server authorizes a request, and the request's user for
        admission; None: the apiserver's own, unchecked (the composition root's client)."""
        self.registry = registry
        self.field_manager = field_manager
        self.user = user
        #: the server's audit (``--audit-policy-file``): every call is audited as the
        #: request upstream's controllers make over HTTP; None: no auditing
        self.auditor = auditor
        self.user_agent = user_agent
        self.effective_version = version or EffectiveVersion()

    def as_user(self, user: UserInfo, *, field_manager: str | None = None) -> LocalClient:
        """The same registry, as ``user`` (a controller's own identity)."""
        return LocalClient(self.registry, user=user, field_manager=(
            self.field_manager if field_manager is None else field_manager),
            auditor=self.auditor, user_agent=user_agent_of(user),
            version=self.effective_version)

    async def version(self) -> Obj:
        """``GET /version``, as the server answers it."""
        return self.effective_version.info(KUBERNETES_VERSION)

    async def _audited(self, gvr: GroupVersionResource, namespace: str, verb: str,
                       name: str, call: Callable[[Target], Awaitable[Obj]], *,
                       subresource: str = "", body: Any = None, code: int = 200) -> Obj:
        """``call`` audited as the HTTP request it stands for (``kubegc.server.audit``)."""
        assert self.auditor is not None
        attrs = Attributes(user=self.user or APISERVER, verb=verb, namespace=namespace,
                           api_group=gvr.group, api_version=gvr.version,
                           resource=gvr.resource, subresource=subresource, name=name)
        audit = self.auditor.begin_call(attrs, request_uri(attrs), self.user_agent)
        if audit is None:
            t = self._target(gvr, namespace, verb, name, subresource)
            with as_user(self.user):
                return await call(t)
        try:
            t = self._target(gvr, namespace, verb, name, subresource)
            with as_user(self.user):
                result = await call(t)
        except errors.StatusError as e:
            audit.finish(status_of(e.to_status(), e.code), _json(body))
            raise
        audit.finish({"metadata": {}, "code": code}, _json(body), _json(result))
        return result

    def _target(self, gvr: GroupVersionResource, namespace: str, verb: str, name: str = "",
                subresource: str = "") -> Target:
        if self.user is not None:
            attrs = Attributes(user=self.user, verb=verb, namespace=namespace,
                               api_group=gvr.group, api_version=gvr.version,
                               resource=gvr.resource, subresource=subresource, name=name)
            decision, reason = self.registry.authorizer.authorize(attrs)
            if decision is not Decision.ALLOW:
                raise errors.forbidden_request(attrs, reason)
        return self.registry.target(gvr.group, gvr.version, gvr.resource, namespace)

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        if is_remote(self.registry, gvr):
            return await remote_call(self.registry, self.user, "get", gvr, namespace=namespace,
                                     name=name)
        if self.auditor is not None:
            return await self._audited(gvr, namespace, "get", name,
                                       lambda t: self.registry.get(t, name))
        t = self._target(gvr, namespace, "get", name)
        with as_user(self.user):
            return await self.registry.get(t, name)

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        o = options or ListOptions()
        if is_remote(self.registry, gvr):
            return await remote_call(self.registry, self.user, "list", gvr, namespace=namespace,
                                     query={"labelSelector": o.label_selector,
                                            "fieldSelector": o.field_selector})

        def call(t: Target) -> Awaitable[Obj]:
            return self.registry.list(
                t, label_selector=o.label_selector, field_selector=o.field_selector,
                limit=o.limit, continue_=o.continue_, resource_version=o.resource_version)

        if self.auditor is not None:
            return await self._audited(gvr, namespace, "list", "", call)
        t = self._target(gvr, namespace, "list")
        with as_user(self.user):
            return await call(t)

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        if is_remote(self.registry, gvr):
            async for event in remote_watch(self.registry, self.user, gvr, namespace=namespace,
                                            options=options):
                yield event
            return
        o = options or WatchOptions()
        watch = self.registry.watch(self._target(gvr, namespace, "watch"), WatchRequest(
            label_selector=o.label_selector, field_selector=o.field_selector,
            resource_version=o.resource_version, allow_bookmarks=o.allow_bookmarks,
            timeout_seconds=float(o.timeout_seconds)))
        try:
            await watch.start()
            async for batch in watch.batches():
                for change in batch:
                    yield WatchEvent(_EVENT_TYPES[change.type], change.object)
        finally:
            watch.close()

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        # The registry takes the object it creates; the caller's stays untouched, as over HTTP.
        if self.auditor is not None:
            return await self._audited(
                gvr, namespace, "create", "", lambda t: self.registry.create(
                    t, clone(obj), field_manager=self.field_manager), body=obj, code=201)
        t = self._target(gvr, namespace, "create")
        with as_user(self.user):
            return await self.registry.create(t, clone(obj), field_manager=self.field_manager)

    async def create_batch(self, gvr: GroupVersionResource, objs: builtins.list[Obj], *,
                           namespace: str = "") -> builtins.list[CreateOutcome]:
        """``BatchCreater``: ``objs`` (handed over, not copied) created in one write batch
        by the registry, authorized once; audited or aggregated: one ``create`` each."""
        if self.auditor is not None or is_remote(self.registry, gvr):
            return await create_each(self, gvr, objs, namespace=namespace)
        t = self._target(gvr, namespace, "create")
        with as_user(self.user):
            return await self.registry.create_batch(t, objs, field_manager=self.field_manager)

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        name = str((obj.get("metadata") or {}).get("name") or "")

        async def call(t: Target) -> Obj:
            result, _ = await self.registry.update(
                t, name, obj, subresource=subresource, field_manager=self.field_manager)
            return result

        if self.auditor is not None:
            return await self._audited(gvr, namespace, "update", name, call,
                                       subresource=subresource, body=obj)
        t = self._target(gvr, namespace, "update", name, subresource)
        with as_user(self.user):
            return await call(t)

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        body = patch if isinstance(patch, bytes) else orjson.dumps(patch)

        async def call(t: Target) -> Obj:
            result, _ = await self.registry.patch(
                t, name, str(patch_type), body, subresource=subresource,
                field_manager=field_manager or self.field_manager, force=force)
            return result

        if self.auditor is not None:
            return await self._audited(gvr, namespace, "patch", name, call,
                                       subresource=subresource, body=body)
        t = self._target(gvr, namespace, "patch", name, subresource)
        with as_user(self.user):
            return await call(t)

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        if is_remote(self.registry, gvr):
            return await remote_call(self.registry, self.user, "delete", gvr,
                                     namespace=namespace, name=name,
                                     body=(options or DeleteOptions()).to_body())

        async def call(t: Target) -> Obj:
            result, _ = await self.registry.delete(t, name, options or DeleteOptions())
            return result

        if self.auditor is not None:
            return await self._audited(gvr, namespace, "delete", name, call,
                                       body=(options or DeleteOptions()).to_body())
        t = self._target(gvr, namespace, "delete", name)
        with as_user(self.user):
            return await call(t)

    async def delete_collection(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: DeleteOptions | None = None, list_options: ListOptions | None = None,
    ) -> Obj:
        return await self._delete_collection(gvr, namespace, options, list_options, None)

    async def delete_collection_each(
        self, gvr: GroupVersionResource, each: Callable[[builtins.list[Obj]], None], *,
        namespace: str = "", options: DeleteOptions | None = None,
        list_options: ListOptions | None = None,
    ) -> None:
        await self._delete_collection(gvr, namespace, options, list_options, each)

    async def _delete_collection(
        self, gvr: GroupVersionResource, namespace: str, options: DeleteOptions | None,
        list_options: ListOptions | None, each: Callable[[builtins.list[Obj]], None] | None,
    ) -> Obj:
        lo = list_options or ListOptions()

        async def call(t: Target) -> Obj:
            return await self.registry.delete_collection(
                t, options or DeleteOptions(), label_selector=lo.label_selector,
                field_selector=lo.field_selector, each_page=each)

        if self.auditor is not None:
            # an audit event carries the answer (RequestResponse level: every item deleted,
            # as upstream's namespace controller's DeleteCollection is logged), so it is
            # built whole, and handed to ``each`` once
            whole = each
            each = None
            answer = await self._audited(gvr, namespace, "deletecollection", "", call,
                                         body=(options or DeleteOptions()).to_body())
            if whole is not None:
                whole(list(answer.get("items") or []))
            return answer
        t = self._target(gvr, namespace, "deletecollection")
        with as_user(self.user):
            return await call(t)

    async def discover(self) -> builtins.list[APIResource]:
        return (await self.server_resources()).resources

    async def server_resources(self) -> ServerResources:
        """The registry's resources, then the remote APIServices' (those available); an
        unavailable one fails as kube-controller-manager's aggregated discovery sees it:
        "stale GroupVersion discovery"."""
        out = []
        for info in self.registry.catalog:
            for version in info.versions:
                out.append(APIResource(
                    group=info.group, version=version, resource=info.resource, kind=info.kind,
                    namespaced=info.namespaced, verbs=info.verbs, short_names=info.short_names,
                    categories=info.categories, singular=info.singular_name))
        failed: dict[str, str] = {}
        local = {g for g, _ in self.registry.catalog.groups()}
        for group, entries in self.registry.aggregation.groups():
            if group in local:
                continue
            for entry in entries:
                if not entry.available:
                    failed[entry.group_version] = (
                        f"stale GroupVersion discovery: {entry.group_version}")
                    continue
                out += [remote_api_resource(entry.group, entry.version, r)
                        for r in entry.resources if "/" not in str(r.get("name") or "")]
        return ServerResources(out, failed)
