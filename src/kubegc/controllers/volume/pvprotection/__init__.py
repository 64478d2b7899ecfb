"""The PV protection controller (cf. pkg/controller/volume/pvprotection): removes
``kubernetes.io/pv-protection`` from a volume being deleted once it is not Bound.
``is_being_used`` is its decision, which the tools ask too."""

from kubegc.controllers.volume.pvprotection.pv_protection_controller import (
    PVProtectionController,
    is_being_used,
)

__all__ = ["PVProtectionController", "is_being_used"]
