"""Parse an API path into a ``RequestInfo`` (cf. apiserver ``RequestInfoFactory``).

``/api/v1/namespaces/ns/pods/p/status`` → group "", version v1, namespace ns, resource pods,
name p, subresource status. The ``namespaces`` resource's own subresources (``status``,
``finalize``) are told apart from namespaced resources as upstream does. Legacy
``/watch/`` path prefixes are accepted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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
