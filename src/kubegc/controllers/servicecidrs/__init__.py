"""The ServiceCIDR controller (cf. pkg/controller/servicecidrs): keeps the
``networking.k8s.io/service-cidr-finalizer`` on every ServiceCIDR and the ``Ready``
condition, and removes the finalizer from one being deleted once no IPAddress of its range
would be left without a ServiceCIDR. ``blocking_ip_addresses`` is its decision, which the
tools ask too.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.servicecidrs.servicecidrs_controller import (
    DELETION_GRACE_PERIOD,
    ServiceCIDRsController,
    allocated_address,
    blocking_ip_addresses,
    can_delete_cidr,
    contains_address,
)

__all__ = ["DELETION_GRACE_PERIOD", "ServiceCIDRsController", "allocated_address",
           "blocking_ip_addresses", "can_delete_cidr", "contains_address"]
