"""The volume controllers as far as deletion goes (cf. pkg/controller/volume): the
ephemeral-volume controller (``ephemeral/``: a pod's generic ephemeral volumes get a claim
owned by the pod, which the garbage collector deletes with it) and the protection
controllers (``pvcprotection/``, ``pvprotection/``: they release the finalizers the
StorageObjectInUseProtection admission put on claims and volumes, once no pod uses the
claim / the volume is not Bound). ``common`` and ``protectionutil`` are upstream's shared
helpers of the same names. No provisioning, binding or attach/detach: kubegc has no storage.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""
