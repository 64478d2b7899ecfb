"""Admission and validation of what a request writes (cf. apiserver admission plugins and
``ValidateObjectMeta(Update)``): field validation, metadata rules, NamespaceLifecycle,
DefaultTolerationSeconds."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from kubegc.api import errors
from kubegc.api.content import is_dns1123_label
from kubegc.api.errors import GroupResource, StatusCause, StatusError, field_error
from kubegc.api.meta import is_being_deleted
from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry.crd import decode_custom_resource
from kubegc.registry.definitions import unknown_fields
from kubegc.registry.keys import key_for
from kubegc.registry.strategy import Strategy
from kubegc.registry.target import Target, decode
from kubegc.registry.validation.core import validate_kube_finalizer_name
from kubegc.registry.validation.objectmeta import (
    validate_annotations,
    validate_finalizers,
    validate_generate_name,
    validate_labels,
    validate_name,
    validate_new_finalizers_on_deleting,
    validate_owner_references,
)
from kubegc.storage import KV

_IMMUTABLE_META = ("name", "namespace", "uid")
#: built-in groups whose servers validate metadata with apimachinery's ValidateObjectMeta
#: alone, not the core API's (CRDs, APIServices, kubegc's own kinds)
_OWN_META_VALIDATION = frozenset(("apiextensions.k8s.io", "apiregistration.k8s.io",
                                  "kubegc.io"))


_NAMESPACES = ResourceInfo(group="", versions=("v1",), resource="namespaces", kind="Namespace",
                           namespaced=False)


#: fieldValidation values (``Strict`` fails on unknown fields, ``Warn`` reports them, both
#: drop them); "" skips the check (in-process clients, which write only known fields).
FIELD_VALIDATION = ("", "Ignore", "Warn", "Strict")


def check_fields(t: Target, obj: Obj, mode: str, warnings: list[str] | None) -> None:
    """Drop the fields a built-in kind does not declare, as decoding into the typed object
    does upstream; fail (Strict) or warn (Warn) about them. Custom resources are decoded
    as the CRD handler does, for every client (in-process ones too): what their version's
    schema does not specify is pruned and the schema defaults are applied."""
    if mode not in FIELD_VALIDATION:
        raise errors.bad_request(
            f'fieldValidation must be one of "Ignore", "Warn" or "Strict", got "{mode}"')
    if t.info.custom:
        unknown = decode_custom_resource(t.info, t.version, obj)
    elif mode:
        unknown = unknown_fields(obj, t.info.group, t.version, t.info.kind, prune=True)
    else:
        return
    if not unknown:
        return
    listed = [f'unknown field "{path}"' for path in unknown]
    if mode == "Strict":
        kind, version = t.info.kind, t.version
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding '
            f"error: {', '.join(listed)}")
    if mode == "Warn" and warnings is not None:
        warnings.extend(listed)


def validate_object_meta(t: Target, strategy: Strategy, obj: Obj) -> list[StatusCause]:
    """``ValidateObjectMeta`` (apimachinery/pkg/api/validation/objectmeta.go), owner
    references included."""
    meta = obj["metadata"]
    causes: list[StatusCause] = []
    name = str(meta.get("name") or "")
    causes += validate_generate_name(str(meta.get("generateName") or ""),
                                     strategy.name_validator)
    causes += validate_name(name, strategy.name_validator)
    namespace = meta.get("namespace")
    if t.info.namespaced and not namespace:
        causes.append(field_error("FieldValueRequired", "metadata.namespace", ""))
    elif t.info.namespaced:
        causes += validate_name(str(namespace), is_dns1123_label, "metadata.namespace")
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(field_error("FieldValueInvalid", "metadata.generation",
                                  "must be greater than or equal to 0", generation))
    causes += validate_owner_references(meta.get("ownerReferences"))
    causes += validate_finalizers(meta.get("finalizers"))
    if not t.info.custom and t.info.group not in _OWN_META_VALIDATION:
        # the core API's ValidateObjectMeta (every built-in group's) checks finalizers further
        for i, finalizer in enumerate(meta.get("finalizers") or []):
            causes += validate_kube_finalizer_name(finalizer, f"metadata.finalizers[{i}]")
    causes += validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"))
    return causes


async def admit_namespace_lifecycle(store: KV, t: Target, obj: Obj,
                                    active: AbstractSet[str] = frozenset()) -> None:
    """Admission (NamespaceLifecycle): the namespace must exist and not be terminating.
    ``active`` holds namespaces known to be active (no storage read for those)."""
    if not t.info.namespaced:
        return
    ns = obj["metadata"]["namespace"]
    if ns in active:
        return
    namespace = await store.get(key_for(_NAMESPACES, "", ns))
    if namespace is None:
        raise errors.not_found(GroupResource("", "namespaces"), ns)
    if is_being_deleted(decode(namespace)):
        raise StatusError(
            403, "Forbidden",
            f'{t.gr} "{obj["metadata"]["name"]}" is forbidden: unable to create new content '
            f"in namespace {ns} because it is being terminated",
            name=obj["metadata"]["name"], group=t.info.group, kind=t.info.resource,
            causes=[StatusCause("NamespaceTerminating",
                                f'namespace {ns} is being terminated', "metadata.namespace")],
        )


#: The node controller's NoExecute taints a pod tolerates for ``DEFAULT_TOLERATION_SECONDS``
#: unless it says otherwise (kube-apiserver's ``--default-not-ready-toleration-seconds`` and
#: ``--default-unreachable-toleration-seconds``).
DEFAULT_TOLERATED_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300


def admit_default_toleration_seconds(t: Target, obj: Obj) -> None:
    """Mutating admission (plugin/pkg/admission/defaulttolerationseconds ``Admit``, on
    create and update of a pod, not its subresources): a toleration of each taint of
    ``DEFAULT_TOLERATED_TAINTS`` the pod does not tolerate already — a toleration with that
    key or no key, for ``NoExecute`` or every effect."""
    if (t.info.group, t.info.resource) != ("", "pods"):
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations") or []
    if not isinstance(tolerations, list):
        return  # validation reports it
    given = [tol for tol in tolerations if isinstance(tol, dict)]
    for key in DEFAULT_TOLERATED_TAINTS:
        if not any(tol.get("key") in (key, "", None) and tol.get("effect") in
                   ("NoExecute", "", None) for tol in given):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


def validate_object_meta_update(old_meta: dict[str, Any], new_meta: dict[str, Any]) -> list[
    StatusCause
]:
    """Immutable metadata; no new finalizers once deleting."""
    causes: list[StatusCause] = []
    for key in _IMMUTABLE_META:
        if (old_meta.get(key) or "") != (new_meta.get(key) or ""):
            causes.append(field_error("FieldValueInvalid", f"metadata.{key}",
                                      "field is immutable", new_meta.get(key) or ""))
    if old_meta.get("deletionTimestamp"):
        causes += validate_new_finalizers_on_deleting(
            old_meta.get("finalizers") or [], new_meta.get("finalizers") or [])
    return causes
