"""What the aggregator knows of the remote group-versions (cf. kube-aggregator's
``proxyHandler`` handling info and its discovery manager's cache).

Ownership: the server's availability controller (``kubegc.server.aggregator``) is the only
writer; readers are the server's discovery and proxy, and the in-process client's
discovery. One entry per APIService with a ``spec.service``; ``available`` follows its
``Available`` condition, ``resources`` the backend's last ``APIResourceList``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.auth import UserInfo

#: (method, path with query, body, user) -> (status, content type, body): a request sent to
#: the backend of a remote group (set by the server; None: nothing proxies)
ProxyFn = Callable[[str, str, bytes, UserInfo | None], Awaitable[tuple[int, str, bytes]]]
#: (path with query, user) -> the lines of the backend's streamed answer (a watch), as they
#: come; raises the answer's ``StatusError`` when it is not a 200
StreamFn = Callable[[str, UserInfo | None], AsyncIterator[bytes]]


def response_error(status: int, payload: bytes) -> errors.StatusError:
    """The ``StatusError`` of a backend's failed answer: its Status when it sent one, else
    503 ServiceUnavailable (the proxy's plain "service unavailable") or the text."""
    try:
        decoded = orjson.loads(payload) if payload else {}
    except orjson.JSONDecodeError:
        decoded = {}
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        return errors.StatusError.from_status(decoded, code=status)
    if status == 503:
        return errors.StatusError(503, "ServiceUnavailable",
                                  "the server is currently unable to handle the request")
    return errors.StatusError(status, "InternalError", payload.decode(errors="replace"))


@dataclass(slots=True)
class RemoteGroupVersion:
    """One APIService served by a backend."""

    api_service: str
    group: str
    version: str
    group_priority_minimum: int = 0
    version_priority: int = 0
    available: bool = False
    reason: str = ""
    message: str = ""
    #: the backend's discovery of the group-version (``APIResourceList.resources``)
    resources: list[dict[str, Any]] = field(default_factory=list)
    #: the backend's OpenAPI documents, as last downloaded (the aggregator's OpenAPI
    #: controller writes them): its whole ``/openapi/v2``, and its ``/openapi/v3``
    #: document of this group-version; None: none downloaded
    openapi_v2: dict[str, Any] | None = None
    openapi_v3: dict[str, Any] | None = None

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _map(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class Aggregation:
    """The remote group-versions, by (group, version)."""

    def __init__(self) -> None:
        self.remote: dict[tuple[str, str], RemoteGroupVersion] = {}
        self.proxy: ProxyFn | None = None
        self.stream: StreamFn | None = None
        #: counts the changes of the remote OpenAPI documents (the served documents are
        #: built again when it moves)
        self.openapi_generation = 0

    def lookup(self, group: str, version: str) -> RemoteGroupVersion | None:
        return self.remote.get((group, version))

    def serves_group(self, group: str) -> bool:
        return any(g == group for g, _ in self.remote)

    def groups(self) -> list[tuple[str, list[RemoteGroupVersion]]]:
        """Each remote group with its versions, highest priority first (as upstream sorts
        ``groupPriorityMinimum`` then ``versionPriority``)."""
        by_group: dict[str, list[RemoteGroupVersion]] = {}
        for entry in self.remote.values():
            by_group.setdefault(entry.group, []).append(entry)
        ordered = sorted(by_group.items(), key=lambda item: (
            -max(e.group_priority_minimum for e in item[1]), item[0]))
        return [(g, sorted(vs, key=lambda e: (-e.version_priority, e.version)))
                for g, vs in ordered]

    def load_recorded(self, api_services: list[dict[str, Any]]) -> None:
        """The remote group-versions as the APIServices of a snapshot recorded them, with
        no backend to ask (the planner's simulation): available as their ``Available``
        condition says, with no resources."""
        for api_service in api_services:
            spec = _map(api_service.get("spec"))
            if not isinstance(spec.get("service"), dict):
                continue
            conditions = _map(api_service.get("status")).get("conditions")
            available = next((c for c in conditions if isinstance(c, dict)
                              and c.get("type") == "Available"), {}) if isinstance(
                conditions, list) else {}
            group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
            self.remote[(group, version)] = RemoteGroupVersion(
                str(_map(api_service.get("metadata")).get("name") or ""), group, version,
                _int(spec.get("groupPriorityMinimum")), _int(spec.get("versionPriority")),
                available=available.get("status") == "True",
                reason=str(available.get("reason") or ""),
                message=str(available.get("message") or ""))

    def unavailable(self) -> list[RemoteGroupVersion]:
        return [e for e in self.remote.values() if not e.available]
