"""The PVC protection controller (cf. pkg/controller/volume/pvcprotection): removes
``kubernetes.io/pvc-protection`` from a claim being deleted once no pod uses it.
``pod_uses_pvc`` is its decision, which the tools ask too."""

from kubegc.controllers.volume.pvcprotection.pvc_protection_controller import (
    PVCProtectionController,
    pod_is_shut_down,
    pod_uses_pvc,
    pods_using_pvc,
)

__all__ = ["PVCProtectionController", "pod_is_shut_down", "pod_uses_pvc", "pods_using_pvc"]
