"""The ephemeral-volume controller (cf. pkg/controller/volume/ephemeral): the claim of each
generic ephemeral volume of a pod, ``<pod>-<volume>``, created from the volume's template and
owned by the pod."""

from kubegc.controllers.volume.ephemeral.controller import EphemeralController

__all__ = ["EphemeralController"]
