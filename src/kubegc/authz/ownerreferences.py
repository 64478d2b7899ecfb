"""Which permissions a write of ownerReferences needs under the
``OwnerReferencesPermissionEnforcement`` admission plugin, and the plugin's verdict
(cf. plugin/pkg/admission/gc/gc_admission.go).

One rule in one place: the registry's admission plugin (``registry/admission/gc.py``)
decides every create and update with ``validate``, and ``kubegc doctor`` asks the cluster's
authorizer (SubjectAccessReviews) about exactly the records ``records_asked`` lists, then
runs the same ``validate`` on the answers — so the doctor says what the plugin would.

The rule (upstream's ``gcPermissionsEnforcement.Validate``):

* a write that does not change ``metadata.ownerReferences`` (compared field by field,
  ``isChangingOwnerReference``) is always allowed; so is ``pods/status`` (the whitelist);
* a non-create that changes them needs ``delete`` on the object itself (a create does not:
  whoever creates an object could as well not have);
* each reference that newly blocks its owner's deletion (``blockOwnerDeletion: true`` on a
  new reference, or turned on from false/unset; ``newBlockingOwnerDeletionRefs``) needs
  ``update`` on the owner's ``finalizers`` subresource, for every resource its
  apiVersion/kind maps to (``ownerRefToDeleteAttributeRecords``), unless the user may
  ``update`` ``*/finalizers`` of anything (kubernetes/kubernetes#98147, asked first);
* a kind that maps to no resource is refused with the RESTMapper's error.
May import: api (auth) only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubegc.api.auth import Attributes, Authorizer, Decision, UserInfo

PLUGIN_NAME = "OwnerReferencesPermissionEnforcement"
#: where a kubegc server says which authorizers and admission plugins it runs (JSON:
#: ``authorizationModes``, ``admissionPlugins``), for ``kubegc doctor`` to tell whether
#: this rule applies; a non-resource URL, ``system:masters``' under RBAC
ACCESS_CONFIG_PATH = "/debug/kubegc/access"

#: (group, resource, subresource) the plugin never checks: old kubelets rewrite a pod's
#: status wholesale, and the pod status strategy keeps ownerReferences as they were
WHITELIST = frozenset({("", "pods", "status")})

Ref = dict[str, Any]


class Operation(enum.Enum):
    """``admission.Operation`` (the plugin handles these two)."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"


@dataclass(frozen=True)
class OwnerMapping:
    """One RESTMapping of an owner's kind: its resource and scope."""

    group: str
    version: str
    resource: str
    namespaced: bool


class NoMapping(Exception):
    """The RESTMapper knows no resource for a reference's apiVersion/kind; the message is
    its error as Go prints it (``meta.NoKindMatchError``)."""


#: (group, version, kind) → the resources it maps to (a RESTMapper's ``RESTMappings``);
#: raises ``NoMapping``
Resolver = Callable[[str, str, str], list[OwnerMapping]]


def no_kind_match(group: str, version: str, kind: str) -> NoMapping:
    """``meta.NoKindMatchError`` for one searched version."""
    gv = f"{group}/{version}" if group else version
    return NoMapping(f'no matches for kind "{kind}" in version "{gv}"')


def parse_group_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``: ``v1`` → ("", "v1"), ``apps/v1`` → ("apps", "v1");
    more than one slash is its error."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise NoMapping(f"unexpected GroupVersion string: {api_version}")


@dataclass(frozen=True)
class WriteAttributes:
    """What the plugin reads of one admission request (``admission.Attributes``): who,
    which operation on which resource, and the object's ownerReferences after the write
    (``new_refs``) and before it (``old_refs``; None on create)."""

    user: UserInfo
    operation: Operation
    namespace: str
    group: str
    version: str
    resource: str
    name: str
    new_refs: Sequence[Ref]
    old_refs: Sequence[Ref] | None = None
    subresource: str = ""


@dataclass(frozen=True)
class Verdict:
    """An authorizer's answer as the plugin prints it: allowed, its reason, and its error
    (Go's ``%v`` of a nil error is ``<nil>``)."""

    allowed: bool
    reason: str = ""
    error: str = "<nil>"


Authorize = Callable[[Attributes], Verdict]


def from_authorizer(authorizer: Authorizer) -> Authorize:
    """An ``Authorizer`` as the plugin asks it (kubegc's authorizers return no error)."""

    def authorize(attrs: Attributes) -> Verdict:
        decision, reason = authorizer.authorize(attrs)
        return Verdict(decision is Decision.ALLOW, reason)

    return authorize


def _ref_key(ref: Ref) -> tuple[Any, ...]:
    """A reference as ``metav1.OwnerReference`` holds it (other fields are not decoded)."""
    return (ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or "",
            ref.get("uid") or "", ref.get("controller"), ref.get("blockOwnerDeletion"))


def is_changing_owner_reference(new_refs: Sequence[Ref],
                                old_refs: Sequence[Ref] | None) -> bool:
    """``isChangingOwnerReference``: a create with references, or an update whose
    references differ in number, order or any field."""
    if old_refs is None:
        return len(new_refs) > 0
    if len(old_refs) != len(new_refs):
        return True
    return any(_ref_key(o) != _ref_key(n) for o, n in zip(old_refs, new_refs, strict=True))


def _blocking(ref: Ref) -> bool:
    return ref.get("blockOwnerDeletion") is True


def new_blocking_owner_deletion_refs(new_refs: Sequence[Ref],
                                     old_refs: Sequence[Ref] | None) -> list[Ref]:
    """``newBlockingOwnerDeletionRefs``: the blocking references that are new (by uid) or
    were not blocking before."""
    blocking = [ref for ref in new_refs if _blocking(ref)]
    if old_refs is None:
        return blocking
    old_by_uid = {ref.get("uid") or "": ref for ref in old_refs}
    return [ref for ref in blocking
            if (ref.get("uid") or "") not in old_by_uid
            or not _blocking(old_by_uid[ref.get("uid") or ""])]


def delete_record(a: WriteAttributes) -> Attributes:
    """The ``delete`` a non-create that changes ownerReferences needs, on the object."""
    return Attributes(user=a.user, verb="delete", namespace=a.namespace, api_group=a.group,
                      api_version=a.version, resource=a.resource, subresource=a.subresource,
                      name=a.name)


def finalize_anything_record(a: WriteAttributes) -> Attributes:
    """``update`` on ``*/finalizers`` of everything: enough for any blocking reference."""
    return Attributes(user=a.user, verb="update", namespace=a.namespace, api_group="*",
                      api_version="*", resource="*", subresource="finalizers", name="*")


def owner_ref_records(ref: Ref, a: WriteAttributes, resolve: Resolver) -> list[Attributes]:
    """``ownerRefToDeleteAttributeRecords``: ``update`` on ``<resource>/finalizers`` of the
    owner, for each resource its kind maps to (in the dependent's namespace if the owner
    is namespaced: references do not cross namespaces). Raises ``NoMapping``."""
    group, version = parse_group_version(str(ref.get("apiVersion") or ""))
    return [Attributes(user=a.user, verb="update",
                       namespace=a.namespace if mapping.namespaced else "",
                       api_group=mapping.group, api_version=mapping.version,
                       resource=mapping.resource, subresource="finalizers",
                       name=str(ref.get("name") or ""))
            for mapping in resolve(group, version, str(ref.get("kind") or ""))]


def whitelisted(a: WriteAttributes) -> bool:
    return (a.group, a.resource, a.subresource) in WHITELIST


@dataclass(frozen=True)
class Refusal:
    """Why the plugin refuses a write: its error (the text after ``<resource> "<name>" is
    forbidden: ``, ``admission.NewForbidden``), and the record the authorizer did not
    allow (None when the owner's kind maps to no resource)."""

    message: str
    record: Attributes | None
    ref: Ref | None = None


def validate(a: WriteAttributes, authorize: Authorize, resolve: Resolver) -> Refusal | None:
    """The plugin's verdict: None (admitted) or its ``Refusal``."""
    if whitelisted(a) or not is_changing_owner_reference(a.new_refs, a.old_refs):
        return None
    if a.operation is not Operation.CREATE:
        record = delete_record(a)
        verdict = authorize(record)
        if not verdict.allowed:
            return Refusal(f"cannot set an ownerRef on a resource you can't delete: "
                           f"{verdict.reason}, {verdict.error}", record)
    refs = new_blocking_owner_deletion_refs(a.new_refs, a.old_refs)
    if not refs or authorize(finalize_anything_record(a)).allowed:
        return None
    for ref in refs:
        try:
            records = owner_ref_records(ref, a, resolve)
        except NoMapping as e:
            return Refusal(f"cannot set blockOwnerDeletion in this case because cannot find "
                           f"RESTMapping for APIVersion {ref.get('apiVersion') or ''} Kind "
                           f"{ref.get('kind') or ''}: {e}", None, ref)
        for record in records:
            verdict = authorize(record)
            if not verdict.allowed:
                return Refusal(f"cannot set blockOwnerDeletion if an ownerReference refers "
                               f"to a resource you can't set finalizers on: {verdict.reason}, "
                               f"{verdict.error}", record, ref)
    return None


def records_asked(a: WriteAttributes, resolve: Resolver) -> list[Attributes]:
    """Every record ``validate`` may ask the authorizer about for ``a`` (references whose
    kind does not map contribute none): ask them all, then ``validate`` on the answers."""
    if whitelisted(a) or not is_changing_owner_reference(a.new_refs, a.old_refs):
        return []
    asked = [] if a.operation is Operation.CREATE else [delete_record(a)]
    refs = new_blocking_owner_deletion_refs(a.new_refs, a.old_refs)
    if refs:
        asked.append(finalize_anything_record(a))
    for ref in refs:
        try:
            asked += owner_ref_records(ref, a, resolve)
        except NoMapping:
            continue
    return asked


def record_key(attrs: Attributes) -> tuple[str, ...]:
    """An authorization record without its user (the user is the same for one question)."""
    return (attrs.verb, attrs.namespace, attrs.api_group, attrs.api_version, attrs.resource,
            attrs.subresource, attrs.name)


__all__ = [
    "ACCESS_CONFIG_PATH",
    "PLUGIN_NAME",
    "WHITELIST",
    "Authorize",
    "NoMapping",
    "Operation",
    "OwnerMapping",
    "Refusal",
    "Resolver",
    "Verdict",
    "WriteAttributes",
    "delete_record",
    "finalize_anything_record",
    "from_authorizer",
    "is_changing_owner_reference",
    "new_blocking_owner_deletion_refs",
    "no_kind_match",
    "owner_ref_records",
    "parse_group_version",
    "record_key",
    "records_asked",
    "validate",
]
