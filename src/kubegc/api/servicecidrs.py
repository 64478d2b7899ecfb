"""The ServiceCIDR vocabulary the service-cidr controller and the tools share (cf.
k8s.io/api/networking/v1 ``ServiceCIDRConditionReady``, ``ServiceCIDRReasonTerminating``,
``LabelIPAddressFamily``, ``LabelManagedBy`` and pkg/controller/servicecidrs
``ServiceCIDRProtectionFinalizer``). Served from 1.33 (``kubegc.api.lifecycle``)."""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj

SERVICECIDRS = GroupVersionResource("networking.k8s.io", "v1", "servicecidrs")
IPADDRESSES = GroupVersionResource("networking.k8s.io", "v1", "ipaddresses")

#: kept by the service-cidr controller on every ServiceCIDR, removed once deleting it
#: leaves no IPAddress of its range without a ServiceCIDR
SERVICE_CIDR_FINALIZER = "networking.k8s.io/service-cidr-finalizer"
#: an IPAddress's family label and the label naming who allocated it; the controller
#: counts only the API server allocator's (``ipallocator.ControllerName``)
LABEL_IP_ADDRESS_FAMILY = "ipaddress.kubernetes.io/ip-family"
LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
IPALLOCATOR = "ipallocator.k8s.io"

#: the ServiceCIDR condition (``ServiceCIDRConditionReady``) and the reason of a ServiceCIDR
#: being deleted while IPAddresses of its range remain (``ServiceCIDRReasonTerminating``)
READY = "Ready"
REASON_TERMINATING = "Terminating"


def ready_condition(service_cidr: Obj) -> dict[str, Any] | None:
    """The ServiceCIDR's ``Ready`` condition, if it has one."""
    status = service_cidr.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, dict) and condition.get("type") == READY:
            return condition
    return None


def ready(status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    """A ``Ready`` condition (``metav1.Condition``, in its field order: ``reason`` is
    written even when empty, as its Go field has no omitempty)."""
    return {"type": READY, "status": status, "lastTransitionTime": now, "reason": reason,
            "message": message}
