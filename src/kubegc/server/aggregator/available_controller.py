"""The ``Available`` condition of every APIService (cf. kube-aggregator's
pkg/controllers/status/local/local_available_controller.go and
remote/remote_available_controller.go ``sync``), and the remote group-versions the server
proxies (``Registry.aggregation``).

Local APIServices are ``True`` (``Local``). A remote one is checked as upstream, in order:
its Service (``ServiceNotFound``), the Service's port (``ServicePortError``), the Service's
Endpoints (``EndpointsNotFound``), an address with the port's name (``MissingEndpoints``),
then ``GET /apis/<group>/<version>`` of the backend as ``system:kube-aggregator`` in
``system:masters`` (``FailedDiscoveryCheck``: "failing or missing response from ...");
all good: ``True`` ``Passed`` "all checks passed". The status is written only when it
changes, ``lastTransitionTime`` only when the status does.

Unlike upstream (informer events plus a 30 s resync), every APIService is checked every
``RESYNC_SECONDS``: a backend that comes back or goes is seen within that time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from kubegc.api import errors
from kubegc.api.auth import APISERVER, as_user
from kubegc.api.clock import Clock, format_time
from kubegc.api.types import Obj
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import RemoteGroupVersion
from kubegc.server.aggregator.autoregister import stale_automanaged, wanted
from kubegc.server.aggregator.transport import ProxyTransport
from kubegc.server.serviceresolver import endpoint_of
from kubegc.server.wait import until

log = logging.getLogger(__name__)

RESYNC_SECONDS = 1.0
DISCOVERY_TIMEOUT = 5.0
AGGREGATOR_USER = "system:kube-aggregator"


@dataclass(frozen=True, slots=True)
class Condition:
    status: str
    reason: str
    message: str


LOCAL = Condition("True", "Local", "Local APIServices are always available")
PASSED = Condition("True", "Passed", "all checks passed")


def _svc(ref: dict[str, Any]) -> tuple[str, str, int]:
    return str(ref.get("namespace") or ""), str(ref.get("name") or ""), int(ref.get("port") or 443)


class AvailableConditionController:
    """Ownership: the only writer of APIService status and of ``registry.aggregation``;
    runs as one task of the server."""

    def __init__(self, registry: Registry, *, clock: Clock,
                 transport: ProxyTransport | None = None) -> None:
        self.registry = registry
        self.transport = transport or ProxyTransport()
        self.clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._catalog_generation = -1

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # no limit on connections: each proxied watch holds one
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=DISCOVERY_TIMEOUT))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def run(self) -> None:
        await until(self.sync_all, RESYNC_SECONDS, "APIService availability sync")

    def _target(self) -> Any:
        return self.registry.target("apiregistration.k8s.io", "v1", "apiservices")

    async def sync_all(self) -> None:
        with as_user(APISERVER):
            await self._autoregister()
            items = (await self.registry.list(self._target())).get("items") or []
            seen: set[tuple[str, str]] = set()
            for api_service in items:
                spec = api_service.get("spec") or {}
                if spec.get("service"):
                    seen.add((str(spec.get("group") or ""), str(spec.get("version") or "")))
                await self.sync(api_service)
            gone = [key for key in self.registry.aggregation.remote if key not in seen]
            for key in gone:
                del self.registry.aggregation.remote[key]
            if gone:
                self.registry.aggregation.openapi_generation += 1  # their OpenAPI goes too
                self.registry.discovery_changed()

    async def _autoregister(self) -> None:
        """Create the missing Local APIServices, delete those of CRD groups gone."""
        catalog = self.registry.catalog
        if catalog.generation == self._catalog_generation:
            return
        crd_groups = {str((crd.get("spec") or {}).get("group") or "")
                      for crd in self.registry.crds.values()}
        want = wanted(catalog, crd_groups)
        existing = (await self.registry.list(self._target())).get("items") or []
        names = {str((o.get("metadata") or {}).get("name")) for o in existing}
        for name, obj in sorted(want.items()):
            if name not in names:
                try:
                    await self.registry.create(self._target(), obj)
                except errors.StatusError as e:
                    if not errors.is_already_exists(e):
                        raise
        for name in stale_automanaged(existing, want):
            try:
                await self.registry.delete(self._target(), name)
            except errors.StatusError as e:
                if not errors.is_not_found(e):
                    raise
        self._catalog_generation = catalog.generation

    async def sync(self, api_service: Obj) -> None:
        spec = api_service.get("spec") or {}
        ref = spec.get("service")
        if not isinstance(ref, dict):
            await self._set_condition(api_service, LOCAL)
            return
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        entry = self.registry.aggregation.lookup(group, version)
        name = str(api_service["metadata"]["name"])
        if entry is None or entry.api_service != name:
            entry = RemoteGroupVersion(name, group, version)
            self.registry.aggregation.remote[(group, version)] = entry
        entry.group_priority_minimum = int(spec.get("groupPriorityMinimum") or 0)
        entry.version_priority = int(spec.get("versionPriority") or 0)
        condition, resources = await self.check(api_service, ref)
        before = (entry.available, entry.resources)
        entry.available = condition.status == "True"
        entry.reason, entry.message = condition.reason, condition.message
        if resources is not None:
            entry.resources = resources
        elif not entry.available:
            entry.resources = []
        if (entry.available, entry.resources) != before:
            self.registry.discovery_changed()
        await self._set_condition(api_service, condition)

    async def check(self, api_service: Obj, ref: dict[str, Any]
                    ) -> tuple[Condition, list[dict[str, Any]] | None]:
        """The condition of a remote APIService, and the backend's resources when its
        discovery answered."""
        namespace, name, port = _svc(ref)
        where = f'service/{name} in "{namespace}"'
        try:
            service = await self.registry.get_core("services", namespace, name)
        except errors.StatusError as e:
            if errors.is_not_found(e):
                return Condition("False", "ServiceNotFound", f"{where} is not present"), None
            return Condition("Unknown", "ServiceAccessError",
                             f"{where} cannot be checked due to: {e.message}"), None
        service_type = str((service.get("spec") or {}).get("type") or "ClusterIP")
        if service_type == "ClusterIP":
            ports = [p for p in (service.get("spec") or {}).get("ports") or []
                     if isinstance(p, dict) and p.get("port") == port]
            if not ports:
                return Condition("False", "ServicePortError",
                                 f"{where} is not listening on port {port}"), None
            port_name = str(ports[0].get("name") or "")
            try:
                endpoints = await self.registry.get_core("endpoints", namespace, name)
            except errors.StatusError as e:
                if errors.is_not_found(e):
                    return Condition("False", "EndpointsNotFound",
                                     f"cannot find endpoints for {where}"), None
                return Condition("Unknown", "EndpointsAccessError",
                                 f"{where} cannot be checked due to: {e.message}"), None
            if not _has_active_endpoints(endpoints, port_name):
                return Condition("False", "MissingEndpoints",
                                 f'endpoints for {where} have no addresses with port name '
                                 f'"{port_name}"'), None
        else:
            endpoints = await self.registry.get_core("endpoints", namespace, name)
        return await self._discovery_check(api_service, service, endpoints, port)

    async def _discovery_check(self, api_service: Obj, service: Obj, endpoints: Obj, port: int
                               ) -> tuple[Condition, list[dict[str, Any]] | None]:
        spec = api_service.get("spec") or {}
        try:
            endpoint = endpoint_of(service, endpoints, port)
        except errors.StatusError as e:
            return Condition("False", "FailedDiscoveryCheck", e.message), None
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        url = endpoint.url + (f"/apis/{group}/{version}" if group else f"/api/{version}")
        context = self.transport.check_context()
        headers = {"X-Remote-User": AGGREGATOR_USER, "X-Remote-Group": "system:masters",
                   "Accept": "application/json"}
        try:
            async with self.session().get(url, ssl=context, headers=headers,
                                          allow_redirects=False) as resp:
                body = await resp.read()
                if not 200 <= resp.status < 300:
                    return Condition("False", "FailedDiscoveryCheck",
                                     f"failing or missing response from {url}: "
                                     f"bad status from {url}: {resp.status}"), None
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            return Condition("False", "FailedDiscoveryCheck",
                             f"failing or missing response from {url}: "
                             f'Get "{url}": {_go_error(e, endpoint.host, endpoint.port)}'), None
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            doc = {}
        resources = doc.get("resources") if isinstance(doc, dict) else None
        return PASSED, [r for r in resources or [] if isinstance(r, dict)]

    async def _set_condition(self, api_service: Obj, condition: Condition) -> None:
        status = api_service.get("status") or {}
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        old = next((c for c in conditions if c.get("type") == "Available"), None)
        if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
                condition.status, condition.reason, condition.message):
            return
        new = {"type": "Available", "status": condition.status,
               "lastTransitionTime": (old.get("lastTransitionTime")
                                      if old is not None and old.get("status") == condition.status
                                      else format_time(self.clock.now())),
               "reason": condition.reason, "message": condition.message}
        if old is None or old.get("status") != condition.status:
            log.info("changing APIService availability name=%s newStatus=%s reason=%s",
                     api_service["metadata"]["name"], condition.status, condition.reason)
        updated = {**api_service, "status": {
            **status, "conditions": [c for c in conditions if c.get("type") != "Available"]
            + [new]}}
        try:
            await self.registry.update(self._target(), str(api_service["metadata"]["name"]),
                                       updated, subresource="status")
        except errors.StatusError as e:
            if not (errors.is_conflict(e) or errors.is_not_found(e)):
                raise


def _go_error(error: BaseException, host: str, port: int) -> str:
    """The error as Go's net/http would say it, where it is a refused connection."""
    if isinstance(error, aiohttp.ClientConnectorError) and isinstance(
            error.os_error, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    if isinstance(error, TimeoutError):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    return str(error) or type(error).__name__


def _has_active_endpoints(endpoints: Obj, port_name: str) -> bool:
    for subset in endpoints.get("subsets") or []:
        if not isinstance(subset, dict) or not subset.get("addresses"):
            continue
        for endpoint_port in subset.get("ports") or []:
            if (isinstance(endpoint_port, dict)
                    and str(endpoint_port.get("name") or "") == port_name):
                return True
    return False
