"""``Controller`` of pkg/controller/servicecidrs/servicecidrs_controller.go
(``service-cidr-controller``, ServiceAccount ``service-cidrs-controller``).

Every ServiceCIDR not being deleted gets the ``networking.k8s.io/service-cidr-finalizer``
(a strategic merge patch, as upstream) and a ``Ready=True`` condition ("Kubernetes Service
CIDR is ready"). A ServiceCIDR being deleted keeps the finalizer while ``can_delete_cidr``
says no (an IPAddress of its range that the API server's allocator owns, which no other
ServiceCIDR contains): its ``Ready`` turns ``False`` with reason ``Terminating``. Once it
can go, the finalizer is removed ``DELETION_GRACE_PERIOD`` after the deletion, so that
allocators have seen it. Conditions are written with a server-side apply of the status,
forced, only when type, status, reason or message change (``updateConditionIfNeeded``).

Queued: a ServiceCIDR on every event (on add, also the ServiceCIDRs it overlaps); the
ServiceCIDRs containing an allocator-owned IPAddress that is added or deleted.

Started only at the versions that serve ServiceCIDRs (``kubegc.api.lifecycle``; upstream
starts it when ``MultiCIDRServiceAllocator`` is on, GA in 1.33): elsewhere it is idle.
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta

from kubegc.api.clock import format_time, parse_time
from kubegc.api.lifecycle import serves
from kubegc.api.meta import finalizers_of, is_being_deleted, name_of
from kubegc.api.servicecidrs import (
    IPADDRESSES,
    IPALLOCATOR,
    LABEL_IP_ADDRESS_FAMILY,
    LABEL_MANAGED_BY,
    REASON_TERMINATING,
    SERVICE_CIDR_FINALIZER,
    SERVICECIDRS,
    ready,
    ready_condition,
)
from kubegc.api.types import Obj
from kubegc.client.cache import FuncHandler
from kubegc.client.interface import PatchType
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext

CONTROLLER_NAME = "service-cidr-controller"
#: seconds between a ServiceCIDR's deletion and the removal of its finalizer
DELETION_GRACE_PERIOD = 10.0
TERMINATING_MESSAGE = ("There are still IPAddresses referencing the ServiceCIDR, please "
                       "remove them or create a new ServiceCIDR")
READY_MESSAGE = "Kubernetes Service CIDR is ready"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def prefixes(service_cidr: Obj) -> list[Network]:
    """The ServiceCIDR's CIDRs that parse (``netip.ParsePrefix``)."""
    out: list[Network] = []
    for cidr in (service_cidr.get("spec") or {}).get("cidrs") or []:
        try:
            out.append(ipaddress.ip_network(str(cidr), strict=False))
        except ValueError:
            continue
    return out


def contains_prefix(service_cidrs: list[Obj], prefix: Network) -> list[Obj]:
    """pkg/registry/networking/servicecidr ``ContainsPrefix``: the ServiceCIDRs with a
    CIDR containing ``prefix`` (or equal to it)."""
    return [s for s in service_cidrs if any(
        p.version == prefix.version and prefix.subnet_of(p)  # type: ignore[arg-type]
        for p in prefixes(s))]


def contains_address(service_cidrs: list[Obj], address: Address) -> list[Obj]:
    """``ContainsAddress``: the ServiceCIDRs with a CIDR containing ``address``."""
    return [s for s in service_cidrs if any(address in p for p in prefixes(s))]


def _labels(obj: Obj) -> dict[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def allocated_address(ip: Obj) -> Address | None:
    """The address of an IPAddress the API server's allocator owns (None otherwise)."""
    if _labels(ip).get(LABEL_MANAGED_BY) != IPALLOCATOR:
        return None
    try:
        return ipaddress.ip_address(name_of(ip))
    except ValueError:
        return None


def blocking_ip_addresses(service_cidr: Obj, service_cidrs: list[Obj], ips: list[Obj]
                          ) -> list[Obj]:
    """The IPAddresses that keep ``service_cidr`` from going (``canDeleteCIDR``): none when
    every CIDR of it has another ServiceCIDR containing it; else the allocator-owned
    IPAddresses of its families that no other ServiceCIDR contains. The decision the
    doctor asks too."""
    name = name_of(service_cidr)
    own = prefixes(service_cidr)
    if all(any(name_of(s) != name for s in contains_prefix(service_cidrs, p)) for p in own):
        return []
    families = {f"IPv{p.version}" for p in own}
    out = []
    for ip in ips:
        address = allocated_address(ip)
        if address is None or _labels(ip).get(LABEL_IP_ADDRESS_FAMILY) not in families:
            continue
        holders = contains_address(service_cidrs, address)
        if len(holders) == 1 and name_of(holders[0]) == name:
            out.append(ip)
    return out


def can_delete_cidr(service_cidr: Obj, service_cidrs: list[Obj], ips: list[Obj]) -> bool:
    """``canDeleteCIDR``: no IPAddress would be left in no ServiceCIDR."""
    return not blocking_ip_addresses(service_cidr, service_cidrs, ips)


class ServiceCIDRsController(BaseController):
    """Ownership: the queue holds ServiceCIDR names, drained by its workers (upstream's
    start function runs 5); the informers' stores are read, never written."""

    name = CONTROLLER_NAME
    component = CONTROLLER_NAME

    def __init__(self, ctx: ControllerContext[object]) -> None:
        super().__init__(ctx, workers=5)
        #: whether the emulated version serves ServiceCIDRs (else the controller is idle)
        self.enabled = serves(SERVICECIDRS.group, SERVICECIDRS.version, SERVICECIDRS.resource,
                              ctx.features.emulation)
        if self.enabled:
            self.service_cidrs = self.informer_factory.for_resource(SERVICECIDRS)
            self.ip_addresses = self.informer_factory.for_resource(IPADDRESSES)
            self.synced_informers = [self.service_cidrs, self.ip_addresses]
            self.primary_informer = self.service_cidrs

    async def start(self) -> None:
        if self.enabled:
            await super().start()

    def ready(self) -> bool:
        return super().ready() or not self.enabled

    def register_handlers(self) -> None:
        self.service_cidrs.add_event_handler(FuncHandler(
            add=lambda obj, _: self.add_service_cidr(obj),
            update=lambda _, new: self.enqueue_key(name_of(new)),
            delete=lambda obj: self.enqueue(obj)))
        self.ip_addresses.add_event_handler(FuncHandler(
            add=lambda obj, _: self.ip_address_changed(obj),
            delete=lambda obj: self.ip_address_changed(tombstone_object(obj))))

    def _all(self) -> list[Obj]:
        return list(self.service_cidrs.indexer.list())

    def add_service_cidr(self, obj: Obj) -> None:
        """``addServiceCIDR``: it, and the ServiceCIDRs it overlaps (``OverlapsPrefix``)."""
        self.enqueue_key(name_of(obj))
        for prefix in prefixes(obj):
            for other in self._all():
                if any(p.version == prefix.version and p.overlaps(prefix)
                       for p in prefixes(other)):
                    self.enqueue_key(name_of(other))

    def ip_address_changed(self, ip: Obj) -> None:
        """``addIPAddress`` / ``deleteIPAddress``: the ServiceCIDRs containing it."""
        address = allocated_address(ip)
        if address is not None:
            for service_cidr in contains_address(self._all(), address):
                self.enqueue_key(name_of(service_cidr))

    async def sync(self, key: str) -> float | None:
        service_cidr = self.service_cidrs.indexer.get_by_key(key)
        if service_cidr is None:
            return None
        if is_being_deleted(service_cidr):
            return await self._sync_deleting(service_cidr)
        if SERVICE_CIDR_FINALIZER not in finalizers_of(service_cidr):
            await self.client.patch(SERVICECIDRS, key, {"metadata": {
                "finalizers": [SERVICE_CIDR_FINALIZER]}}, patch_type=PatchType.STRATEGIC)
        await self._update_condition_if_needed(service_cidr, "True", "", READY_MESSAGE)
        return None

    async def _sync_deleting(self, service_cidr: Obj) -> float | None:
        if not can_delete_cidr(service_cidr, self._all(), list(self.ip_addresses.indexer.list())):
            await self._update_condition_if_needed(service_cidr, "False", REASON_TERMINATING,
                                                   TERMINATING_MESSAGE)
            return None
        deleted = parse_time(str(service_cidr["metadata"]["deletionTimestamp"]))
        wait = (deleted + timedelta(seconds=DELETION_GRACE_PERIOD) - self.clock.now())
        if wait.total_seconds() > 0:
            return wait.total_seconds()
        if SERVICE_CIDR_FINALIZER in finalizers_of(service_cidr):
            await self.client.patch(SERVICECIDRS, name_of(service_cidr), {"metadata": {
                "$deleteFromPrimitiveList/finalizers": [SERVICE_CIDR_FINALIZER]}},
                patch_type=PatchType.STRATEGIC)
        return None

    async def _update_condition_if_needed(self, service_cidr: Obj, status: str, reason: str,
                                          message: str) -> None:
        current = ready_condition(service_cidr)
        if current is not None and (current.get("status"), current.get("reason") or "",
                                    current.get("message")) == (status, reason, message):
            return
        condition = ready(status, reason, message, format_time(self.clock.now()))
        await self.client.patch(SERVICECIDRS, name_of(service_cidr), {
            "apiVersion": SERVICECIDRS.group_version, "kind": "ServiceCIDR",
            "metadata": {"name": name_of(service_cidr)}, "status": {"conditions": [condition]}},
            patch_type=PatchType.APPLY, subresource="status", field_manager=CONTROLLER_NAME,
            force=True)
