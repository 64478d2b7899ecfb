"""The remote groups' OpenAPI documents (cf. kube-aggregator's pkg/controllers/openapi
``AggregationController`` for v2 and pkg/controllers/openapiv3 for v3): each available
remote APIService's backend is asked for its ``/openapi/v2`` and for the ``/openapi/v3``
document of its group-version (the ``serverRelativeURL`` its ``/openapi/v3`` index gives),
as ``system:aggregator`` in ``system:masters`` (upstream's ``aggregatorUser``), through the
proxy (so with the front-proxy certificate).

Downloaded when the APIService changes (its resourceVersion: created, edited, its
``Available`` condition turning True) and again every ``RESYNC_SECONDS`` (upstream's
``successfulUpdateDelay``); a download that fails keeps the documents last downloaded, as
upstream keeps the last spec. The documents go into ``Registry.aggregation``'s entries;
``server/openapi_handler.py`` merges them into what ``/openapi/v2`` and ``/openapi/v3``
serve.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from kubegc.api.auth import APISERVER, UserInfo, as_user
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import RemoteGroupVersion
from kubegc.server.aggregator.proxy import BackendProxy, Call
from kubegc.server.wait import until

RESYNC_SECONDS = 60.0
CHECK_SECONDS = 1.0
AGGREGATOR_USER = UserInfo("system:aggregator", groups=("system:masters",))
_MISSING = object()  # a download that failed: the documents stay as they are


class OpenAPIAggregationController:
    """Ownership: the only writer of the entries' ``openapi_v2``/``openapi_v3``; moves
    ``Registry.aggregation.openapi_generation`` when they change (as the availability
    controller does when it drops an entry); runs as one task of the server."""

    def __init__(self, registry: Registry, backends: BackendProxy,
                 session: Callable[[], aiohttp.ClientSession]) -> None:
        self.registry = registry
        self.backends = backends
        self.session = session
        #: APIService name -> (resourceVersion downloaded for, when)
        self._synced: dict[str, tuple[str, float]] = {}

    async def run(self) -> None:
        await until(self.sync_all, CHECK_SECONDS, "remote OpenAPI download")

    async def sync_all(self) -> None:
        target = self.registry.target("apiregistration.k8s.io", "v1", "apiservices")
        with as_user(APISERVER):
            items = (await self.registry.list(target)).get("items") or []
        now = asyncio.get_running_loop().time()
        names = set()
        for api_service in items:
            spec, meta = api_service.get("spec") or {}, api_service.get("metadata") or {}
            entry = self.registry.aggregation.lookup(str(spec.get("group") or ""),
                                                     str(spec.get("version") or ""))
            if not spec.get("service") or entry is None or not entry.available:
                continue
            name, rv = str(meta.get("name")), str(meta.get("resourceVersion") or "")
            names.add(name)
            last = self._synced.get(name)
            if last is not None and last[0] == rv and now - last[1] < RESYNC_SECONDS:
                continue
            await self.download(entry)
            self._synced[name] = (rv, now)
        for gone in set(self._synced) - names:
            del self._synced[gone]

    async def download(self, entry: RemoteGroupVersion) -> None:
        v2 = await self._get(entry, "/openapi/v2")
        v3: Any = _MISSING
        index = await self._get(entry, "/openapi/v3")
        if isinstance(index, dict):
            key = f"apis/{entry.group}/{entry.version}" if entry.group else f"api/{entry.version}"
            found = (index.get("paths") or {}).get(key)
            url = found.get("serverRelativeURL") if isinstance(found, dict) else None
            v3 = await self._get(entry, str(url)) if isinstance(url, str) else None
        changed = False
        if v2 is not _MISSING and v2 != entry.openapi_v2:
            entry.openapi_v2 = v2 if isinstance(v2, dict) else None
            changed = True
        if v3 is not _MISSING and v3 != entry.openapi_v3:
            entry.openapi_v3 = v3 if isinstance(v3, dict) else None
            changed = True
        if changed:
            self.registry.aggregation.openapi_generation += 1

    async def _get(self, entry: RemoteGroupVersion, path: str) -> Any:
        """The JSON document at ``path``; None when the backend has none (404);
        ``_MISSING`` when it could not be read."""
        call = Call("GET", path, b"", AGGREGATOR_USER, {"Accept": "application/json"})
        status, _, body = await self.backends.forward(self.session(), entry, call)
        if status == 404:
            return None
        if status != 200:
            return _MISSING
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            return _MISSING
