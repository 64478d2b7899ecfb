"""What holds a ServiceCIDR being deleted, in the tools' words: the IPAddresses that keep
its ``networking.k8s.io/service-cidr-finalizer`` (the service-cidr controller's own
decision, ``blocking_ip_addresses``). Read through ``finalizers.who_removes`` by the doctor,
``kubegc why`` and ``kubegc plan``.
"""

from __future__ import annotations

from kubegc.api.meta import name_of
from kubegc.api.types import Obj
from kubegc.controllers.servicecidrs import DELETION_GRACE_PERIOD, blocking_ip_addresses
from kubegc.tools.inventory import Inventory

NETWORKING = "networking.k8s.io"


def service_cidr_when(service_cidr: Obj, inv: Inventory) -> str:
    """When the service-cidr controller removes the finalizer of ``service_cidr``."""
    if not inv.may_hold(NETWORKING, "IPAddress"):
        return ("once no IPAddress allocated from its range is left outside another "
                "ServiceCIDR (the IPAddresses were not read: which ones hold it is unknown)")
    blocking = blocking_ip_addresses(service_cidr, inv.of_kind(NETWORKING, "ServiceCIDR"),
                                     inv.of_kind(NETWORKING, "IPAddress"))
    if not blocking:
        return (f"{DELETION_GRACE_PERIOD:.0f}s after its deletion: no IPAddress allocated "
                "from its range is left outside another ServiceCIDR")
    names = ", ".join(f"ipaddress/{name_of(ip)}" for ip in blocking[:5])
    more = f" and {len(blocking) - 5} more" if len(blocking) > 5 else ""
    return (f"once no IPAddress allocated from its range is left outside another ServiceCIDR: "
            f"{names}{more} {'holds' if len(blocking) == 1 else 'hold'} it (delete the "
            "Services they were allocated to, or create a ServiceCIDR containing them)")
