"""The in-process client's calls to resources of remote APIServices: sent through the
server's aggregation proxy (``Registry.aggregation.proxy``), as a controller's request
over HTTP would be (kube-controller-manager reaches metrics.k8s.io that way).

Get, list and delete are sent whole, a watch streamed (``Registry.aggregation.stream``):
what the garbage collector (its monitors of remote kinds) and the namespace deleter ask of
a remote resource; a remote group that is unavailable answers 503 ServiceUnavailable, as
over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import quote, urlencode

import orjson

from kubegc.api import errors
from kubegc.api.auth import Attributes, Decision, UserInfo
from kubegc.api.meta import EventType
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import WatchEvent, WatchOptions
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import response_error


def is_remote(registry: Registry, gvr: GroupVersionResource) -> bool:
    """Whether ``gvr`` is served by a remote APIService rather than the registry."""
    return (registry.resource(gvr.group, gvr.resource) is None
            and registry.aggregation.lookup(gvr.group, gvr.version) is not None)


def _namespaced(registry: Registry, gvr: GroupVersionResource) -> bool:
    entry = registry.aggregation.lookup(gvr.group, gvr.version)
    for resource in entry.resources if entry is not None else []:
        if resource.get("name") == gvr.resource:
            return bool(resource.get("namespaced"))
    return True


def _authorize(registry: Registry, user: UserInfo | None, verb: str,
               gvr: GroupVersionResource, namespace: str, name: str = "") -> None:
    if user is not None:
        attrs = Attributes(user=user, verb=verb, namespace=namespace, api_group=gvr.group,
                           api_version=gvr.version, resource=gvr.resource, name=name)
        decision, reason = registry.authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise errors.forbidden_request(attrs, reason)


def _path(registry: Registry, gvr: GroupVersionResource, namespace: str, name: str,
          query: dict[str, str] | None) -> str:
    path = f"/apis/{gvr.group}/{gvr.version}"
    if namespace and _namespaced(registry, gvr):
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{gvr.resource}" + (f"/{quote(name, safe='')}" if name else "")
    if query:
        path += "?" + urlencode({k: v for k, v in query.items() if v})
    return path


async def remote_call(registry: Registry, user: UserInfo | None, verb: str,
                      gvr: GroupVersionResource, *, namespace: str = "", name: str = "",
                      query: dict[str, str] | None = None, body: Obj | None = None) -> Obj:
    """``verb`` (get, list, delete) on a remote resource; raises its ``StatusError``."""
    _authorize(registry, user, verb, gvr, namespace, name)
    proxy = registry.aggregation.proxy
    if proxy is None:
        raise errors.route_not_found()
    method = {"get": "GET", "list": "GET", "delete": "DELETE"}[verb]
    status, _, payload = await proxy(method, _path(registry, gvr, namespace, name, query),
                                     orjson.dumps(body) if body else b"", user)
    if status >= 300:
        raise response_error(status, payload)
    try:
        decoded = orjson.loads(payload) if payload else {}
    except orjson.JSONDecodeError:
        decoded = {}
    return decoded if isinstance(decoded, dict) else {}


async def remote_watch(registry: Registry, user: UserInfo | None, gvr: GroupVersionResource,
                       *, namespace: str = "", options: WatchOptions | None = None
                       ) -> AsyncIterator[WatchEvent]:
    """A watch of a remote resource, streamed from its backend through the proxy: each
    ``{"type","object"}`` line as it comes; ends when the backend ends it."""
    _authorize(registry, user, "watch", gvr, namespace)
    stream = registry.aggregation.stream
    if stream is None:
        raise errors.route_not_found()
    o = options or WatchOptions()
    query = {"watch": "true", "resourceVersion": o.resource_version,
             "labelSelector": o.label_selector, "fieldSelector": o.field_selector,
             "allowWatchBookmarks": "true" if o.allow_bookmarks else "",
             "timeoutSeconds": str(o.timeout_seconds) if o.timeout_seconds else ""}
    async for line in stream(_path(registry, gvr, namespace, "", query), user):
        try:
            event = orjson.loads(line) if line.strip() else None
        except orjson.JSONDecodeError:
            continue
        if isinstance(event, dict) and isinstance(event.get("object"), dict):
            try:
                yield WatchEvent(EventType(str(event.get("type"))), event["object"])
            except ValueError:
                continue
