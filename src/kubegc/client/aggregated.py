"""The in-process client's calls to resources of remote APIServices: sent through the
server's aggregation proxy (``Registry.aggregation.proxy``), as a controller's request
over HTTP would be (kube-controller-manager reaches metrics.k8s.io that way).

Only get, list and delete are sent (what the garbage collector and the namespace
deleter ask of a remote resource); a remote group that is unavailable answers 503
ServiceUnavailable, as over HTTP.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

import orjson

from kubegc.api import errors
from kubegc.api.auth import Attributes, Decision, UserInfo
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.registry import Registry


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


async def remote_call(registry: Registry, user: UserInfo | None, verb: str,
                      gvr: GroupVersionResource, *, namespace: str = "", name: str = "",
                      query: dict[str, str] | None = None, body: Obj | None = None) -> Obj:
    """``verb`` (get, list, delete) on a remote resource; raises its ``StatusError``."""
    if user is not None:
        attrs = Attributes(user=user, verb=verb, namespace=namespace, api_group=gvr.group,
                           api_version=gvr.version, resource=gvr.resource, name=name)
        decision, reason = registry.authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise errors.forbidden_request(attrs, reason)
    proxy = registry.aggregation.proxy
    if proxy is None:
        raise errors.route_not_found()
    path = f"/apis/{gvr.group}/{gvr.version}"
    if namespace and _namespaced(registry, gvr):
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{gvr.resource}" + (f"/{quote(name, safe='')}" if name else "")
    if query:
        path += "?" + urlencode({k: v for k, v in query.items() if v})
    method = {"get": "GET", "list": "GET", "delete": "DELETE"}[verb]
    status, _, payload = await proxy(method, path, orjson.dumps(body) if body else b"", user)
    try:
        decoded = orjson.loads(payload) if payload else {}
    except orjson.JSONDecodeError:
        decoded = {}
    if status >= 300:
        if isinstance(decoded, dict) and decoded.get("kind") == "Status":
            raise errors.StatusError.from_status(decoded, code=status)
        if status == 503:
            raise errors.StatusError(503, "ServiceUnavailable",
                                     "the server is currently unable to handle the request")
        raise errors.StatusError(status, "InternalError", payload.decode(errors="replace"))
    return decoded if isinstance(decoded, dict) else {}
