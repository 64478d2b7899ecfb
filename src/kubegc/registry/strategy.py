"""Per-resource strategies (cf. ``pkg/registry/*/strategy.go``): how a resource is created,
updated, validated and deleted beyond the generic Store's rules.

A ``Strategy`` is data plus a few hooks; ``strategy_for`` picks one for a ``ResourceInfo``.
"""

from __future__ import annotations

import enum
import functools
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from kubegc.api.content import is_dns1123_label, is_dns1123_subdomain, is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.meta import FINALIZER_KUBERNETES
from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.api.zero_status import (
    fill_zero_status,
    has_zero_status,
    zero_status,
    zero_status_fields,
)
from kubegc.registry.crd import CLEANUP_FINALIZER, CustomResourceInfo, established_status
from kubegc.registry.defaults import DEFAULTERS, Defaulter
from kubegc.registry.groups import DEFAULTERS as GROUP_DEFAULTERS
from kubegc.registry.groups import STRATEGY_OPTIONS
from kubegc.registry.namespace import GenericDelete, delete_namespace, no_spec_finalizers
from kubegc.registry.rbac.escalation import WriteCheck
from kubegc.registry.target import Target
from kubegc.registry.validation import VALIDATORS
from kubegc.registry.validation.objectmeta import NameValidator


class GCPolicy(enum.Enum):
    """``rest.GarbageCollectionPolicy``: what a DELETE without options does to dependents."""

    DELETE_DEPENDENTS = "DeleteDependents"
    ORPHAN_DEPENDENTS = "OrphanDependents"
    UNSUPPORTED = "Unsupported"


Hook = Callable[[Obj], None]
UpdateHook = Callable[[Obj, Obj], None]
Validator = Callable[[Obj], list[StatusCause]]
UpdateValidator = Callable[[Obj, Obj], list[StatusCause]]


def _noop(obj: Obj) -> None:
    return None


def _no_causes(obj: Obj) -> list[StatusCause]:
    return []


def _always(obj: Obj) -> bool:
    return True


class Deleter(Protocol):
    """A resource's own Delete (upstream: a REST that overrides ``Store.Delete``), handed
    the store and the generic delete to finish with."""

    def __call__(self, store: Any, t: Target, name: str, options: dict[str, Any], *,
                 generic: GenericDelete) -> Awaitable[tuple[Obj, bool]]: ...


@dataclass(frozen=True)
class Strategy:
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
    defaulter: Defaulter = _noop
    prepare_for_create: Hook = _noop  # after uid/name are set
    validate: Validator = _no_causes
    #: validation of an update (new, old) and of a status-subresource update (new, old);
    #: None: ``validate`` of the new object
    validate_update: UpdateValidator | None = None
    validate_status: UpdateValidator | None = None
    #: fields of the top level that a main-resource update may not change (status subresource)
    status_fields: tuple[str, ...] = ("status",)
    #: the resource's condition on ``ShouldDeleteDuringUpdate`` beyond the generic rule
    #: (upstream's ``Store.ShouldDeleteDuringUpdate``; namespaces: no spec finalizers)
    delete_during_update: Callable[[Obj], bool] = _always
    #: the resource's own Delete in place of the generic one (namespaces)
    delete: Deleter | None = None
    #: the objects are namespaces: the store keeps which are active for the
    #: NamespaceLifecycle admission of their content
    namespace_lifecycle: bool = False
    #: top-level fields whose change bumps ``generation`` (a PodTemplate's ``template``, a
    #: webhook configuration's ``webhooks``)
    generation_fields: tuple[str, ...] = ("spec",)
    #: the resource's own check of who may write what (upstream's policy-based storages
    #: of the RBAC resources: no escalation), run on create and update before validation
    #: with the store's ``rbac_policy``
    check_write: WriteCheck | None = None

    def spec_changed(self, old: Obj, new: Obj) -> bool:
        """Whether ``generation`` must be bumped by this update."""
        if self.custom:
            keys = (set(old) | set(new)) - {"metadata", "status", "apiVersion", "kind"}
            return any(old.get(k) != new.get(k) for k in keys)
        return any(old.get(k) != new.get(k) for k in self.generation_fields)


def _clear_status(obj: Obj) -> None:
    obj.pop("status", None)


def _zero_status_create(fields: tuple[str, ...], obj: Obj) -> None:
    """``PrepareForCreate`` of a workload: no status from a create — the zero status
    struct, which reads with its non-omitempty fields (``api.zero_status``)."""
    obj["status"] = zero_status(fields)


def _workload_create(group: str, resource: str) -> Hook:
    return functools.partial(_zero_status_create, zero_status_fields(group, resource))


def _pod_create(obj: Obj) -> None:
    obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}


def _qos_class(pod: Obj) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    requests_any = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        limits, requests = res.get("limits") or {}, res.get("requests") or {}
        if limits or requests:
            requests_any = True
        limited = bool(limits.get("cpu") and limits.get("memory"))
        if not limited or any(requests.get(k, limits.get(k)) != limits.get(k)
                              for k in ("cpu", "memory")):
            guaranteed = False
    if guaranteed:
        return "Guaranteed"
    return "Burstable" if requests_any else "BestEffort"


def _namespace_create(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    finalizers = spec.get("finalizers")
    if not finalizers:
        spec["finalizers"] = [FINALIZER_KUBERNETES]
    obj["status"] = {"phase": "Active"}
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def _job_create(obj: Obj) -> None:
    _zero_status_create((), obj)
    spec = obj.setdefault("spec", {})
    meta = obj["metadata"]
    if spec.get("manualSelector"):
        return
    uid, name = meta["uid"], meta["name"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
        "controller-uid": uid, "job-name": name,
    }
    template = spec.setdefault("template", {})
    tmeta = template.setdefault("metadata", {})
    tlabels = tmeta.setdefault("labels", {})
    tlabels.update(generated)
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def _service_create(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
        digest = hashlib.sha256(obj["metadata"]["uid"].encode()).digest()
        spec["clusterIP"] = f"10.96.{digest[0]}.{max(2, digest[1])}"
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    obj["status"] = {"loadBalancer": {}}


def _crd_create(obj: Obj) -> None:
    meta = obj["metadata"]
    obj["status"] = established_status(obj, meta["creationTimestamp"])
    finalizers = meta.setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)


def _required(obj: Obj, *paths: str) -> list[StatusCause]:
    causes = []
    for path in paths:
        cur: Any = obj
        for part in path.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur in (None, "", [], {}):
            causes.append(field_error("FieldValueRequired", path, ""))
    return causes


def _validate_crd(obj: Obj) -> list[StatusCause]:
    causes = _required(obj, "spec.group", "spec.names.plural", "spec.names.kind", "spec.scope",
                       "spec.versions")
    if causes:
        return causes
    spec = obj["spec"]
    expected = f"{spec['names']['plural']}.{spec['group']}"
    name = obj["metadata"].get("name")
    if name != expected:
        causes.append(field_error(
            "FieldValueInvalid", "metadata.name", 'must be spec.names.plural+"."+spec.group', name,
        ))
    if spec["scope"] not in ("Namespaced", "Cluster"):
        causes.append(field_error("FieldValueNotSupported", "spec.scope",
                                  'supported values: "Cluster", "Namespaced"', spec["scope"]))
    storage = [v for v in spec["versions"] if isinstance(v, dict) and v.get("storage")]
    if len(storage) != 1:
        causes.append(field_error("FieldValueInvalid", "spec.versions",
                                  "must have exactly one version marked as storage version",
                                  None))
    return causes


_STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "namespaces"): Strategy(
        default_gc_policy=GCPolicy.DELETE_DEPENDENTS, tracks_generation=False,
        name_validator=is_dns1123_label, prepare_for_create=_namespace_create,
        status_fields=("status", "spec"), return_deleted_object=True,
        delete_during_update=no_spec_finalizers, delete=delete_namespace,
        namespace_lifecycle=True,
    ),
    ("", "pods"): Strategy(graceful=True, tracks_generation=True, prepare_for_create=_pod_create,
                           return_deleted_object=True),
    ("", "services"): Strategy(name_validator=is_dns1123_label, prepare_for_create=_service_create,
                               tracks_generation=False, return_deleted_object=True),
    ("", "endpoints"): Strategy(allow_create_on_update=True, tracks_generation=False),
    ("", "configmaps"): Strategy(tracks_generation=False),
    ("", "secrets"): Strategy(tracks_generation=False),
    ("", "serviceaccounts"): Strategy(tracks_generation=False, return_deleted_object=True),
    ("", "events"): Strategy(default_gc_policy=GCPolicy.UNSUPPORTED, allow_create_on_update=True,
                             tracks_generation=False, name_validator=is_path_segment_name),
    ("events.k8s.io", "events"): Strategy(
        default_gc_policy=GCPolicy.UNSUPPORTED, allow_create_on_update=True,
        tracks_generation=False, name_validator=is_path_segment_name),
    ("", "replicationcontrollers"): Strategy(
        default_gc_policy=GCPolicy.ORPHAN_DEPENDENTS,
        prepare_for_create=_workload_create("", "replicationcontrollers")),
    ("", "nodes"): Strategy(tracks_generation=False),
    ("", "persistentvolumes"): Strategy(tracks_generation=False, return_deleted_object=True),
    ("", "persistentvolumeclaims"): Strategy(tracks_generation=False,
                                             return_deleted_object=True),
    **{("apps", r): Strategy(prepare_for_create=_workload_create("apps", r))
       for r in ("deployments", "replicasets", "statefulsets", "daemonsets")},
    ("batch", "jobs"): Strategy(default_gc_policy=GCPolicy.ORPHAN_DEPENDENTS,
                                prepare_for_create=_job_create),
    ("batch", "cronjobs"): Strategy(prepare_for_create=_workload_create("batch", "cronjobs")),
    ("kubegc.io", "deletionrecords"): Strategy(tracks_generation=False),
    ("coordination.k8s.io", "leases"): Strategy(allow_create_on_update=True,
                                                tracks_generation=False),
    ("apiextensions.k8s.io", "customresourcedefinitions"): Strategy(
        prepare_for_create=_crd_create, validate=_validate_crd),
    ("", "podtemplates"): Strategy(generation_fields=("template",), return_deleted_object=True),
    # the other groups' built-ins (registry.groups)
    **{key: Strategy(**options) for key, options in STRATEGY_OPTIONS.items()},
}


def _keeping_zero_status(defaulter: Defaulter, fields: tuple[str, ...]) -> Defaulter:
    """``defaulter``, then the zero status fields a write left out (a typed apiserver
    decodes every write into the status struct, whose encoding has them)."""

    def default(obj: Obj) -> None:
        defaulter(obj)
        fill_zero_status(obj, fields)

    return default


@functools.lru_cache(maxsize=1024)
def strategy_for(info: ResourceInfo) -> Strategy:
    """The strategy of a resource; custom resources get the CR strategy. Cached: resource
    infos are immutable values, and a CRD that changes gets a new one."""
    base = _STRATEGIES.get((info.group, info.resource))
    if base is None:
        base = Strategy(
            custom=info.custom, return_deleted_object=info.custom,
            name_validator=is_path_segment_name if info.custom else is_dns1123_subdomain,
            prepare_for_create=_clear_status if info.has_subresource("status") else _noop,
        )
        if isinstance(info, CustomResourceInfo):
            # pruning and defaulting happen as the object is decoded (admission.check_fields)
            schemas = info.schemas
            base = replace(base, validate=schemas.validate,
                           validate_update=schemas.validate_update,
                           validate_status=schemas.validate_status)
    validators = VALIDATORS.get((info.group, info.resource))
    if validators is not None:  # the kind's own validation (kubegc.registry.validation)
        base = replace(base, validate=validators[0], validate_update=validators[1])
    defaulter = DEFAULTERS.get((info.group, info.resource)) or GROUP_DEFAULTERS.get(
        (info.group, info.resource))
    if has_zero_status(info.group, info.resource):
        defaulter = _keeping_zero_status(defaulter or _noop,
                                         zero_status_fields(info.group, info.resource))
    status = info.has_subresource("status")
    if defaulter is not None or status != base.status_subresource:
        base = replace(base, defaulter=defaulter or base.defaulter, status_subresource=status)
    return base
