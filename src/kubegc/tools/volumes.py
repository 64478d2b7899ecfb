"""What holds a claim or a volume being deleted, in the tools' words: the pods that keep a
claim's ``kubernetes.io/pvc-protection`` (the pvc-protection controller's own decision,
``pod_uses_pvc``), the claim a Bound volume's ``kubernetes.io/pv-protection`` waits for (the
pv-protection controller's ``is_being_used``). One place the doctor, ``kubegc why`` and
``kubegc plan`` all read (through ``finalizers.who_removes``).
"""

from __future__ import annotations

from kubegc.api.meta import name_of, namespace_of
from kubegc.api.types import Obj
from kubegc.api.volumes import claim_ref
from kubegc.controllers.volume.pvcprotection import pods_using_pvc
from kubegc.controllers.volume.pvprotection import is_being_used
from kubegc.tools.inventory import Inventory


def pvc_users(pvc: Obj, inv: Inventory) -> list[Obj]:
    """The pods of the inventory that use ``pvc`` (only scheduled pods count)."""
    return pods_using_pvc(pvc, inv.in_namespace(namespace_of(pvc)))


def pvc_protection_when(pvc: Obj, inv: Inventory) -> str:
    """When the pvc-protection controller removes the finalizer of ``pvc``."""
    users = pvc_users(pvc, inv)
    if users:
        names = ", ".join(f"pod/{name_of(p)}" for p in users)
        return (f"once no pod uses the claim: {names} "
                f"{'uses' if len(users) == 1 else 'use'} it, so it goes when "
                f"{'that pod goes' if len(users) == 1 else 'they go'}")
    if not inv.may_hold("", "Pod"):
        return "once no pod uses the claim (the pods were not read: which ones do is unknown)"
    return ("once no pod uses the claim: no scheduled pod uses it now, so it is released at "
            "once")


def pv_protection_when(pv: Obj) -> str:
    """When the pv-protection controller removes the finalizer of ``pv``."""
    claim = claim_ref(pv)
    if is_being_used(pv):
        return ("once the PersistentVolume is no longer Bound: it is Bound"
                + (f" to claim {claim}" if claim else "")
                + ", so it goes once that claim is gone and the volume released (status.phase "
                "no longer Bound)")
    status = pv.get("status")
    phase = (status.get("phase") if isinstance(status, dict) else None) or "no phase"
    return (f"once the PersistentVolume is no longer Bound: it is {phase}, so it is released "
            "at once")
