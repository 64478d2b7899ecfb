"""Parse an API path into a ``RequestInfo`` (cf. apiserver ``RequestInfoFactory``).

``/api/v1/namespaces/ns/pods/p/status`` → group "", version v1, namespace ns, resource pods,
name p, subresource status. The ``namespaces`` resource's own subresources (``status``,
``finalize``) are told apart from namespaced resources as upstream does. Legacy
``/watch/`` path prefixes are accepted.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from kubegc.api.auth import Attributes, UserInfo

NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True, slots=True)
class RequestInfo:
    group: str
    version: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    watch_path: bool = False  # legacy /watch/ prefix


@functools.lru_cache(maxsize=4096)
def parse_resource_path(path: str) -> RequestInfo | None:
    """The resource request a path addresses, or None for non-resource paths (remembered:
    clients send the same paths again and again)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 3 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_path = False
    if rest and rest[0] == "watch":
        watch_path, rest = True, rest[1:]
    if not rest:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            # the namespaces resource itself: /namespaces/<name>[/status|/finalize]
            return RequestInfo(group, version, "namespaces", "", namespace,
                               rest[2] if len(rest) > 2 else "", watch_path)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3:
        return None
    return RequestInfo(group, version, resource, namespace, name, subresource, watch_path)


#: RequestInfoFactory's verbs of a resource request by method (GET/HEAD and DELETE depend on
#: whether a name is given)
_RESOURCE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def resource_verb(method: str, info: RequestInfo, watch: bool) -> str:
    """``RequestInfoFactory.NewRequestInfo``'s verb: get/list/watch, create, update, patch,
    delete/deletecollection."""
    if method in ("GET", "HEAD"):
        if watch or info.watch_path:
            return "watch"
        return "get" if info.name else "list"
    if method == "DELETE":
        return "delete" if info.name else "deletecollection"
    return _RESOURCE_VERBS.get(method, method.lower())


def _is_true(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true")


def request_attributes(user: UserInfo, method: str, path: str,
                       query: Mapping[str, str]) -> Attributes:
    """The authorizer's view of a request (``filters.GetAuthorizerAttributes``): a resource
    request's verb, group, version, resource, subresource, namespace and name (a list or
    watch restricted by ``metadata.name=`` names it, as upstream since 1.30), else the
    lower-cased method on the path."""
    info = parse_resource_path(path.rstrip("/") or "/")
    if info is None:
        return Attributes(user=user, verb=method.lower(), resource_request=False, path=path)
    verb = resource_verb(method, info, _is_true(query.get("watch")))
    name = info.name
    if verb in ("list", "watch") and not name:
        selector = query.get("fieldSelector") or ""
        for term in selector.split(","):
            key, sep, value = term.partition("=")
            if sep and key.strip() == "metadata.name" and not value.startswith("="):
                name = value.strip()
    namespace = info.namespace if info.resource != "namespaces" else (
        info.name if info.name else "")
    return Attributes(user=user, verb=verb, namespace=namespace, api_group=info.group,
                      api_version=info.version, resource=info.resource,
                      subresource=info.subresource, name=name, path=path)
