"""When a protection controller acts on an object (cf.
pkg/controller/volume/protectionutil/utils.go)."""

from __future__ import annotations

from kubegc.api.meta import finalizers_of, is_being_deleted
from kubegc.api.types import Obj


def is_deletion_candidate(obj: Obj, finalizer: str) -> bool:
    """``IsDeletionCandidate``: being deleted, and ``finalizer`` still on it."""
    return is_being_deleted(obj) and finalizer in finalizers_of(obj)


def need_to_add_finalizer(obj: Obj, finalizer: str) -> bool:
    """``NeedToAddFinalizer``: not being deleted and without ``finalizer`` (an object
    created before the admission plugin ran gets it from the controller)."""
    return not is_being_deleted(obj) and finalizer not in finalizers_of(obj)
