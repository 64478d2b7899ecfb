"""Metadata and DeleteOptions validation, worded as apimachinery's validation
(``apimachinery/pkg/api/validation/objectmeta.go``, ``ValidateDeleteOptions``).

Each function returns a list of ``StatusCause`` (empty when valid) so callers can aggregate
them into one 422 ``Invalid`` error, as upstream's ``field.ErrorList``. Label keys and values,
annotation keys and finalizer names are checked by ``kubegc.api.content`` (upstream's
``IsQualifiedName`` and ``IsValidLabelValue``, memoized there), and so are object names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubegc.api import errors
from kubegc.api.content import is_qualified_name, is_valid_label_value
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.goformat import go_sharp_v
from kubegc.api.limits import TOTAL_ANNOTATION_SIZE_LIMIT_B
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    DeleteOptions,
    DeletionPropagation,
)

NameValidator = Callable[[str], list[str]]


def validate_name(name: str, validator: NameValidator, path: str = "metadata.name") -> list[
    StatusCause
]:
    if not name:
        return [field_error("FieldValueRequired", path, "name or generateName is required")]
    return [field_error("FieldValueInvalid", path, msg, name) for msg in validator(name)]


def validate_owner_references(refs: Any, path: str = "metadata.ownerReferences") -> list[
    StatusCause
]:
    """Non-empty apiVersion/kind/name/uid, no ``v1 Event`` owner, one controller at most
    (``validateOwnerReference`` and ``ValidateOwnerReferences``,
    apimachinery/pkg/api/validation/objectmeta.go: each reference's errors name the list's
    path, no index)."""
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [field_error("FieldValueInvalid", path, "must be a list", refs)]
    causes: list[StatusCause] = []
    first_controller = ""
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            causes.append(field_error("FieldValueInvalid", f"{path}[{i}]", "must be an object",
                                      ref))
            continue
        causes += _validate_owner_reference(ref, path)
        if ref.get("controller"):
            name = f"{ref.get('kind')}/{ref.get('name')}"
            if not first_controller:
                first_controller = name
                continue
            causes.append(field_error(
                "FieldValueInvalid", path,
                "Only one reference can have Controller set to true. Found \"true\" in "
                f"references for {first_controller} and {name}",
                refs, go_type="[]v1.OwnerReference",
            ))
    return causes


def _validate_owner_reference(ref: dict[str, Any], path: str) -> list[StatusCause]:
    causes: list[StatusCause] = []
    api_version = str(ref.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    if not version:
        causes.append(field_error("FieldValueInvalid", f"{path}.apiVersion",
                                  "version must not be empty", api_version))
    if not group and "/" in api_version:
        causes.append(field_error("FieldValueInvalid", f"{path}.apiVersion",
                                  "group must not be empty", api_version))
    for key in ("kind", "name", "uid"):
        if not ref.get(key):
            causes.append(field_error("FieldValueInvalid", f"{path}.{key}",
                                      f"{key} must not be empty", str(ref.get(key) or "")))
    if api_version == "v1" and ref.get("kind") == "Event":
        # schema.GroupVersionKind.String() of the legacy group: "/v1, Kind=Event"
        causes.append(field_error("FieldValueInvalid", path,
                                  "/v1, Kind=Event is disallowed from being an owner", ref,
                                  go_type="v1.OwnerReference"))
    return causes


def validate_finalizers(finalizers: Any, path: str = "metadata.finalizers") -> list[StatusCause]:
    """``ValidateFinalizers``: each name qualified (``ValidateFinalizerName``), and not both
    ``orphan`` and ``foregroundDeletion``."""
    if finalizers is None:
        return []
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        return [field_error("FieldValueInvalid", path, "must be a list of strings", finalizers)]
    causes: list[StatusCause] = []
    for i, finalizer in enumerate(finalizers):
        for msg in is_qualified_name(finalizer):
            causes.append(field_error("FieldValueInvalid", f"{path}[{i}]", msg, finalizer))
    if FINALIZER_ORPHAN_DEPENDENTS in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        causes.append(field_error(
            "FieldValueInvalid", path,
            "finalizer orphan and foregroundDeletion cannot be both set", finalizers,
            go_type="[]string",
        ))
    return causes


def validate_new_finalizers_on_deleting(old: Sequence[str], new: Sequence[str]) -> list[
    StatusCause
]:
    """Once deletionTimestamp is set, an update may remove finalizers but not add them
    (``ValidateNoNewFinalizers``: the new ones as a sorted set, ``%#v``)."""
    added = sorted(set(new) - set(old))
    if not added:
        return []
    return [field_error(
        "FieldValueForbidden", "metadata.finalizers",
        "no new finalizers can be added if the object is being deleted, found new finalizers "
        + go_sharp_v(added, "[]string"),
    )]


def validate_labels(labels: Any, path: str) -> list[StatusCause]:
    """``ValidateLabels`` (``apis/meta/v1/validation``): per label, in the map's order, the
    key's ``IsQualifiedName`` messages, then the value's ``IsValidLabelValue`` messages, each
    an ``Invalid`` error on ``path`` itself carrying the key or the value. Runs on every
    create and update, hence the memoized checks."""
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [field_error("FieldValueInvalid", path, "must be a map of strings", labels)]
    causes: list[StatusCause] = []
    for key, value in labels.items():
        for msg in is_qualified_name(str(key)):
            causes.append(field_error("FieldValueInvalid", path, msg, key))
        if not isinstance(value, str):
            causes.append(field_error("FieldValueInvalid", f"{path}.{key}", "must be a string",
                                      value))
            continue
        for msg in is_valid_label_value(value):
            causes.append(field_error("FieldValueInvalid", path, msg, value))
    return causes


def validate_annotations(annotations: Any, path: str = "metadata.annotations") -> list[
    StatusCause
]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict) or not all(
        isinstance(v, str) for v in annotations.values()
    ):
        return [field_error("FieldValueInvalid", path, "must be a map of strings", None)]
    causes: list[StatusCause] = []
    size = 0
    for key, value in annotations.items():
        # ``ValidateAnnotations``: a qualified name, except that case does not matter. A key
        # valid as sent is ASCII, so valid lower-cased too: only a failing one is lowered.
        text = str(key)
        for msg in is_qualified_name(text) and is_qualified_name(text.lower()):
            causes.append(field_error("FieldValueInvalid", path, msg, key))
        size += len(text.encode()) + len(value.encode())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:  # ``ValidateAnnotationsSize``
        causes.append(field_error("FieldValueTooLong", path,
                                  f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes"))
    return causes


def validate_generate_name(generate_name: str, validator: NameValidator,
                           path: str = "metadata.generateName") -> list[StatusCause]:
    """A ``generateName`` is a name prefix: valid once its trailing ``-`` is masked
    (``ValidateNameFunc`` with ``prefix``, ``maskTrailingDash``)."""
    if not generate_name:
        return []
    masked = generate_name[:-1] + "a" if generate_name.endswith("-") and len(
        generate_name) > 1 else generate_name
    return [field_error("FieldValueInvalid", path, msg, generate_name)
            for msg in validator(masked)]


_POLICIES = frozenset(p.value for p in DeletionPropagation)


_RV_MATCHES = ("Exact", "NotOlderThan")


def validate_list_options(resource_version: str, resource_version_match: str,
                          continue_: str, send_initial_events: bool) -> list[StatusCause]:
    """``ValidateListOptions`` of a LIST (not a watch): resourceVersionMatch needs a
    resourceVersion, excludes continue, is Exact or NotOlderThan, and Exact is not "0"."""
    causes: list[StatusCause] = []
    if resource_version_match:
        if not resource_version:
            causes.append(field_error(
                "FieldValueForbidden", "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if continue_:
            causes.append(field_error(
                "FieldValueForbidden", "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided"))
        if resource_version_match not in _RV_MATCHES:
            causes.append(field_error(
                "FieldValueNotSupported", "resourceVersionMatch",
                'supported values: "Exact", "NotOlderThan", ""', resource_version_match))
        if resource_version_match == "Exact" and resource_version == "0":
            causes.append(field_error(
                "FieldValueForbidden", "resourceVersionMatch",
                'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if send_initial_events:
        causes.append(field_error("FieldValueForbidden", "sendInitialEvents",
                                  "sendInitialEvents is forbidden for list"))
    return causes


def orphan_and_policy(policy: Any) -> StatusCause:
    """The cause of DeleteOptions setting both ``orphanDependents`` and a policy."""
    return field_error("FieldValueInvalid", "propagationPolicy",
                       "orphanDependents and deletionPropagation cannot be both set", policy)


def validate_delete_options(options: Mapping[str, Any]) -> list[StatusCause]:
    """``ValidateDeleteOptions``: policy values and ``orphanDependents`` exclusivity."""
    causes: list[StatusCause] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(orphan_and_policy(policy))
    if policy is not None and policy not in _POLICIES:
        causes.append(field_error(
            "FieldValueNotSupported", "propagationPolicy",
            'supported values: "Foreground", "Background", "Orphan", "nil"', policy,
        ))
    dry_run = options.get("dryRun") or []
    if any(d != "All" for d in dry_run):
        causes.append(field_error(
            "FieldValueNotSupported", "dryRun", 'supported values: "All"', dry_run,
        ))
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        causes.append(field_error("FieldValueInvalid", "gracePeriodSeconds", "must be an integer",
                                  grace))
    return causes


def parse_delete_options(body: Mapping[str, Any]) -> DeleteOptions:
    """A wire DeleteOptions (already decoded into its Go type) as ``DeleteOptions``, after
    ``ValidateDeleteOptions`` (422 ``Invalid``, every cause at once)."""
    causes = validate_delete_options(body)
    if causes:
        raise errors.invalid("DeleteOptions", "", "", causes)
    return DeleteOptions.from_body(body)
