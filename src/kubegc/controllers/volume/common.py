"""Helpers the volume controllers share (cf. pkg/controller/volume/common/common.go): the
pod informer's index of the claims each pod names."""

from __future__ import annotations

from kubegc.api.meta import namespace_of
from kubegc.api.types import Obj
from kubegc.api.volumes import claim_names

#: ``PodPVCIndex``: pods by ``namespace/claim`` of each claim they name
POD_PVC_INDEX = "pod-pvc-index"


def pod_pvc_index_func(pod: Obj) -> list[str]:
    """``PodPVCIndexFunc``: ``namespace/claim`` of each claim the pod's volumes name (a
    ``persistentVolumeClaim`` source, or an ephemeral volume's ``<pod>-<volume>``)."""
    namespace = namespace_of(pod)
    return sorted({f"{namespace}/{claim}" for claim, _ in claim_names(pod)})
