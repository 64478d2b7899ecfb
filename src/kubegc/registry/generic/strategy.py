"""What a resource's storage does beyond the generic Store's rules (cf. upstream's
``pkg/registry/<group>/<resource>/strategy.go`` and the fields of ``genericregistry.Store``
that are per resource: ``KeyRootFunc``, ``ReturnDeletedObject``, the storage version).

A ``Strategy`` is data plus a few hooks. Each resource's storage module builds its own
(``kubegc.registry.groups.<group>``), and the storage hands it to the generic Store
through the ``Target`` a request addresses; nothing here knows a resource by name.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubegc.api.content import is_dns1123_subdomain
from kubegc.api.errors import StatusCause
from kubegc.api.types import Obj
from kubegc.api.zero_status import fill_zero_status, zero_status
from kubegc.registry.validation.objectmeta import NameValidator

Hook = Callable[[Obj], None]
Defaulter = Callable[[Obj], None]
Validator = Callable[[Obj], list[StatusCause]]
UpdateValidator = Callable[[Obj, Obj], list[StatusCause]]
#: a resource's own check of who may write what, before validation: (namespace, name, new,
#: old or None); raises the StatusError that refuses the write (the RBAC resources' policy-
#: based storages: no escalation)
WriteCheck = Callable[[str, str, Obj, Obj | None], None]
#: what decoding a custom resource does upstream for one served version: prune what the
#: schema does not specify, apply its defaults; returns the pruned field paths
Decoder = Callable[[Obj, str], list[str]]


class GCPolicy(enum.Enum):
    """``rest.GarbageCollectionPolicy``: what a DELETE without options does to dependents."""

    DELETE_DEPENDENTS = "DeleteDependents"
    ORPHAN_DEPENDENTS = "OrphanDependents"
    UNSUPPORTED = "Unsupported"


class Conversion(Protocol):
    """Between the served shapes of a resource and its stored one, where they differ by
    more than ``apiVersion`` (core/v1 and events.k8s.io/v1 Events share one store;
    HorizontalPodAutoscalers are stored as autoscaling/v2)."""

    def to_storage(self, obj: Obj) -> Obj:
        """The stored shape of ``obj`` (mutated and returned, or a new object)."""
        ...

    def from_storage(self, obj: Obj, version: str) -> Obj:
        """``obj`` as served at ``version``; a new dict when it differs."""
        ...

    def served_as_stored(self, version: str) -> bool:
        """Whether objects served at ``version`` are exactly the stored ones (their stored
        bytes can be sent as they are)."""
        ...


def noop(obj: Obj) -> None:
    return None


def no_causes(obj: Obj) -> list[StatusCause]:
    return []


def always(obj: Obj) -> bool:
    return True


def clear_status(obj: Obj) -> None:
    """``PrepareForCreate`` of a resource with a status subresource: no status from a
    create."""
    obj.pop("status", None)


def _zero_status_create(fields: tuple[str, ...], obj: Obj) -> None:
    obj["status"] = zero_status(fields)


def zero_status_create(fields: tuple[str, ...]) -> Hook:
    """``PrepareForCreate`` of a workload: no status from a create — the zero status
    struct, which reads with its non-omitempty fields (``api.zero_status``)."""
    return functools.partial(_zero_status_create, fields)


def keeping_zero_status(defaulter: Defaulter, fields: tuple[str, ...]) -> Defaulter:
    """``defaulter``, then the zero status fields a write left out (a typed apiserver
    decodes every write into the status struct, whose encoding has them)."""

    def default(obj: Obj) -> None:
        defaulter(obj)
        fill_zero_status(obj, fields)

    return default


@dataclass(frozen=True)
class Strategy:
    """One resource's rules. Immutable; a custom resource gets a new one when its CRD's
    schemas change."""

    default_gc_policy: GCPolicy = GCPolicy.DELETE_DEPENDENTS
    graceful: bool = False  # RESTGracefulDeleteStrategy (pods)
    tracks_generation: bool = True
    name_validator: NameValidator = is_dns1123_subdomain
    allow_create_on_update: bool = False
    #: the store's ReturnDeletedObject: a DELETE that removes the object answers with it;
    #: otherwise with a Success Status naming it (upstream's ``finalizeDelete``)
    return_deleted_object: bool = False
    status_subresource: bool = False
    custom: bool = False  # CR: generation bumps on any non-metadata, non-status change
    defaulter: Defaulter = noop
    prepare_for_create: Hook = noop  # after uid/name are set
    validate: Validator = no_causes
    #: validation of an update (new, old) and of a status-subresource update (new, old);
    #: None: ``validate`` of the new object
    validate_update: UpdateValidator | None = None
    validate_status: UpdateValidator | None = None
    #: fields of the top level that a main-resource update may not change (status subresource)
    status_fields: tuple[str, ...] = ("status",)
    #: the resource's condition on ``ShouldDeleteDuringUpdate`` beyond the generic rule
    #: (upstream's ``Store.ShouldDeleteDuringUpdate``; namespaces: no spec finalizers)
    delete_during_update: Callable[[Obj], bool] = always
    #: top-level fields whose change bumps ``generation`` (a PodTemplate's ``template``, a
    #: webhook configuration's ``webhooks``)
    generation_fields: tuple[str, ...] = ("spec",)
    #: run on create and update before validation (the RBAC resources' escalation checks)
    check_write: WriteCheck | None = None
    #: the core API's ValidateObjectMeta, which checks finalizer names further than
    #: apimachinery's (every built-in group's but CRDs', APIServices' and kubegc's own)
    core_object_meta: bool = True
    #: the (group, resource) whose keys hold the objects when another resource's do
    #: (events.k8s.io Events live under core Events' keys); None: its own
    storage_resource: tuple[str, str] | None = None
    #: the served shapes ↔ the stored one; None: they differ by ``apiVersion`` only
    conversion: Conversion | None = None
    #: custom resources: pruning and schema defaults as the object is decoded
    decode: Decoder | None = None

    def spec_changed(self, old: Obj, new: Obj) -> bool:
        """Whether ``generation`` must be bumped by this update."""
        if self.custom:
            keys = (set(old) | set(new)) - {"metadata", "status", "apiVersion", "kind"}
            return any(old.get(k) != new.get(k) for k in keys)
        return any(old.get(k) != new.get(k) for k in self.generation_fields)


#: the strategy of a resource that asks nothing beyond the generic rules
DEFAULT = Strategy()

__all__ = [
    "DEFAULT",
    "Conversion",
    "Decoder",
    "Defaulter",
    "GCPolicy",
    "Hook",
    "NameValidator",
    "Strategy",
    "UpdateValidator",
    "Validator",
    "WriteCheck",
    "always",
    "clear_status",
    "keeping_zero_status",
    "no_causes",
    "noop",
    "zero_status_create",
]
