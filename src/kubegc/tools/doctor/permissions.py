"""``kubegc doctor KIND/NAME [--as USER]``: may a user set this object's ownerReferences
under ``OwnerReferencesPermissionEnforcement``, and if not, which permission is missing and
the RBAC rule that grants it.

Two questions about the object, answered by the plugin's own rule
(``kubegc.authz.ownerreferences.validate``, the one the registry runs) on the cluster's own
authorization answers (a SubjectAccessReview for each record the rule may ask about, or a
SelfSubjectAccessReview for the kubeconfig's user):

* may the user **change ownerReferences** (add, remove or edit one, in an update, patch or
  apply)? That needs ``delete`` on the object; a create may set them freely;
* for each reference, may the user **set blockOwnerDeletion: true** on it (at create or
  by turning it on)? That needs ``update`` on the owner's ``finalizers`` subresource.

Whether the plugin runs and whether RBAC decides come from ``access.read_access``; when
either is not known, or not the case, the report says so instead of a verdict.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubegc.api.auth import (
    Attributes,
    UserInfo,
    impersonated_groups,
    service_account_groups,
    split_service_account_username,
)
from kubegc.api.errors import GroupResource, StatusError
from kubegc.api.goformat import go_quote
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.authz.ownerreferences import (
    PLUGIN_NAME,
    Operation,
    OwnerMapping,
    Refusal,
    Resolver,
    Verdict,
    WriteAttributes,
    finalize_anything_record,
    no_kind_match,
    record_key,
    records_asked,
    validate,
)
from kubegc.client.interface import APIResource, Client
from kubegc.tools.doctor.access import Access, State, read_access
from kubegc.tools.model import ObjRef

_SAR = GroupVersionResource("authorization.k8s.io", "v1", "subjectaccessreviews")
_SSAR = GroupVersionResource("authorization.k8s.io", "v1", "selfsubjectaccessreviews")
#: a reference the "change ownerReferences" question adds (not blocking: only ``delete``)
_ANOTHER_REF = {"apiVersion": "v1", "kind": "ConfigMap", "name": "another", "uid": "another"}


def impersonated_user(name: str, groups: Sequence[str] = ()) -> UserInfo:
    """The user ``kubectl --as NAME --as-group G`` acts as, as the impersonation filter makes
    it: a ServiceAccount's username brings its groups when none are asked for, and
    ``impersonated_groups`` adds ``system:authenticated`` (or ``system:unauthenticated``)."""
    given = tuple(groups)
    sa = split_service_account_username(name)
    if sa is not None and not given:
        given = service_account_groups(sa[0])
    return UserInfo(name, groups=impersonated_groups(name, given))


@dataclass(frozen=True)
class Permission:
    """One authorization record and the cluster's answer about it."""

    record: Attributes
    verdict: Verdict | None  # None: the cluster could not be asked

    @property
    def allowed(self) -> bool | None:
        return None if self.verdict is None else self.verdict.allowed

    def describe(self) -> str:
        r = self.record
        resource = r.resource + (f"/{r.subresource}" if r.subresource else "")
        if r.api_group == "*":
            return f"{r.verb} on {resource} of anything"
        group = f" (group {r.api_group})" if r.api_group else ""
        where = f" in namespace {r.namespace}" if r.namespace else " (cluster-scoped)"
        return f"{r.verb} on {resource} {go_quote(r.name)}{group}{where}"

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        out: dict[str, Any] = {
            "verb": r.verb, "group": r.api_group, "version": r.api_version,
            "resource": r.resource, "subresource": r.subresource, "name": r.name,
            "namespace": r.namespace, "allowed": self.allowed}
        if self.verdict is not None:
            out["reason"] = self.verdict.reason
        return out


@dataclass(frozen=True)
class Rule:
    """An RBAC ``PolicyRule`` granting one record, in a Role (namespaced) or ClusterRole."""

    api_group: str
    resource: str
    verb: str
    namespace: str  # "": only a ClusterRole grants it

    @classmethod
    def granting(cls, record: Attributes) -> Rule:
        resource = record.resource + (f"/{record.subresource}" if record.subresource else "")
        return cls(record.api_group, resource, record.verb, record.namespace)

    def yaml(self) -> str:
        group = self.api_group if re.fullmatch(r"[a-z0-9][a-z0-9.-]*", self.api_group) else (
            f'"{self.api_group}"')
        return (f"- apiGroups: [{group}]\n  resources: [{self.resource}]\n"
                f"  verbs: [{self.verb}]")

    def where(self) -> str:
        if self.namespace:
            return (f"in a Role in namespace {self.namespace} (with a RoleBinding), or in a "
                    "ClusterRole (with a ClusterRoleBinding, or a RoleBinding in that namespace)")
        return "in a ClusterRole, with a ClusterRoleBinding (the owner is cluster-scoped)"

    def to_dict(self) -> dict[str, Any]:
        return {"apiGroups": [self.api_group], "resources": [self.resource],
                "verbs": [self.verb], "yaml": self.yaml(), "in": self.where()}


@dataclass
class Answer:
    """One question's answer: allowed (None: unknown), the permissions asked, the one
    missing and the rule that grants it, and the API server's 403 text."""

    allowed: bool | None
    permissions: list[Permission]
    missing: Permission | None = None
    rule: Rule | None = None
    message: str | None = None
    #: a reference whose kind the cluster does not serve
    unmapped: str | None = None

    def to_dict(self, forbidden: str = "") -> dict[str, Any]:
        """``forbidden``: how the API server names the object in a 403 (``configmaps "c"``)."""
        return {"allowed": self.allowed, "permissions": [p.to_dict() for p in self.permissions],
                "missing": self.missing.to_dict() if self.missing else None,
                "rule": self.rule.to_dict() if self.rule else None,
                "message": self.message, "unmappedKind": self.unmapped,
                "forbiddenMessage": f"{forbidden} is forbidden: {self.message}" if (
                    self.message is not None) else None}


@dataclass
class RefAnswer:
    index: int
    ref: dict[str, Any]
    answer: Answer

    def to_dict(self, forbidden: str = "") -> dict[str, Any]:
        keys = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
        return {"index": self.index, **{k: self.ref.get(k) for k in keys},
                "setBlockOwnerDeletion": self.answer.to_dict(forbidden)}


@dataclass
class PermissionsReport:
    source: str
    object: ObjRef
    resource: str  # group-qualified plural, as a 403 names it
    #: None: the kubeconfig's own user (SelfSubjectAccessReviews)
    user: UserInfo | None
    access: Access
    change: Answer
    refs: list[RefAnswer]
    notes: list[str] = field(default_factory=list)

    @property
    def enforced(self) -> bool | None:
        """Whether the answers are the cluster's verdicts (None: not known)."""
        if self.access.plugin is State.OFF or self.access.rbac is State.OFF:
            return False
        if self.access.plugin is State.UNKNOWN or self.access.rbac is State.UNKNOWN:
            return None
        return True

    def to_dict(self) -> dict[str, Any]:
        user = None if self.user is None else {"name": self.user.name,
                                               "groups": list(self.user.groups)}
        return {"kind": "OwnerReferencesPermissions", "source": self.source,
                "object": {"kind": self.object.kind, "apiVersion": self.object.api_version,
                           "namespace": self.object.namespace, "name": self.object.name,
                           "uid": self.object.uid},
                "user": user, "access": self.access.to_dict(), "enforced": self.enforced,
                "changeOwnerReferences": self.change.to_dict(self.forbidden_name),
                "ownerReferences": [r.to_dict(self.forbidden_name) for r in self.refs],
                "notes": self.notes}

    @property
    def forbidden_name(self) -> str:
        """The object as a 403 names it (``admission.NewForbidden``): ``configmaps "c"``."""
        return f"{self.resource} {go_quote(self.object.name)}"


def discovery_resolver(resources: Sequence[APIResource]) -> Resolver:
    """The RESTMapper over what discovery serves, as the API server's plugin maps kinds."""
    by_gvk: dict[tuple[str, str, str], list[OwnerMapping]] = {}
    for res in resources:
        if "/" in res.resource:
            continue
        by_gvk.setdefault((res.group, res.version, res.kind), []).append(
            OwnerMapping(res.group, res.version, res.resource, res.namespaced))

    def resolve(group: str, version: str, kind: str) -> list[OwnerMapping]:
        found = by_gvk.get((group, version, kind))
        if not found:
            raise no_kind_match(group, version, kind)
        return found

    return resolve


class Reviews:
    """Asks the cluster's authorizer: SubjectAccessReviews for ``user``, or
    SelfSubjectAccessReviews for the kubeconfig's own (``user`` None). Answers are kept
    per record."""

    def __init__(self, client: Client, user: UserInfo | None) -> None:
        self.client, self.user = client, user
        self.answers: dict[tuple[str, ...], Verdict | None] = {}
        self.failure: str | None = None

    async def ask(self, record: Attributes) -> Verdict | None:
        """About ``record`` for the report's user (its own user is not looked at)."""
        key = record_key(record)
        if key not in self.answers:
            self.answers[key] = await self._review(record, self.user)
        return self.answers[key]

    async def probe(self, record: Attributes) -> Verdict | None:
        """About ``record`` for its own user (``access``' probe of the authorizer)."""
        return await self._review(record, record.user, probe=True)

    async def _review(self, record: Attributes, user: UserInfo | None, *,
                      probe: bool = False) -> Verdict | None:
        spec: dict[str, Any] = {"resourceAttributes": {
            "namespace": record.namespace, "verb": record.verb, "group": record.api_group,
            "version": record.api_version, "resource": record.resource,
            "subresource": record.subresource, "name": record.name}}
        if user is not None:
            spec.update(user=user.name, groups=list(user.groups))
            if user.uid:
                spec["uid"] = user.uid
        gvr = _SSAR if user is None else _SAR
        try:
            answer = await self.client.create(gvr, {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview" if user is None else "SubjectAccessReview",
                "spec": spec})
        except StatusError as e:
            if self.failure is None and not probe:
                self.failure = f"{gvr.resource}.{gvr.group}: {e.code} {e.reason}: {e.message}"
            return None
        status = answer.get("status") or {}
        return Verdict(status.get("allowed") is True, str(status.get("reason") or ""),
                       str(status.get("evaluationError") or "") or "<nil>")


def _answer(write: WriteAttributes, reviews: Reviews, resolve: Resolver) -> Answer:
    """``validate`` on the answers already asked (``records_asked``)."""
    asked = records_asked(write, resolve)
    permissions = [Permission(r, reviews.answers.get(record_key(r))) for r in asked]
    if any(p.verdict is None for p in permissions):
        return Answer(None, permissions)

    def authorize(record: Attributes) -> Verdict:
        verdict = reviews.answers.get(record_key(record))
        return verdict if verdict is not None else Verdict(False)

    refusal: Refusal | None = validate(write, authorize, resolve)
    if refusal is None:
        return Answer(True, permissions)
    missing = next((p for p in permissions if refusal.record is not None and record_key(
        p.record) == record_key(refusal.record)), None)
    unmapped = None
    if refusal.ref is not None and refusal.record is None:
        unmapped = f"{refusal.ref.get('kind')} ({refusal.ref.get('apiVersion')})"
    return Answer(False, permissions, missing,
                  Rule.granting(refusal.record) if refusal.record is not None else None,
                  refusal.message, unmapped)


def _writes(obj: Obj, info: APIResource, user: UserInfo
            ) -> tuple[WriteAttributes, list[WriteAttributes]]:
    """The writes the two questions are about: an update that changes the references (one
    more, not blocking), and per reference a create with it blocking."""
    meta = obj.get("metadata") or {}
    refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
    change = WriteAttributes(user=user, operation=Operation.UPDATE,
                             namespace=str(meta.get("namespace") or ""), group=info.group,
                             version=info.version, resource=info.resource,
                             name=str(meta.get("name") or ""),
                             new_refs=[*refs, _ANOTHER_REF], old_refs=refs)
    blocking = [replace(change, operation=Operation.CREATE, old_refs=None,
                        new_refs=[{**ref, "blockOwnerDeletion": True}]) for ref in refs]
    return change, blocking


async def explain_permissions(client: Client, resources: Sequence[APIResource],
                              info: APIResource, obj: Obj, *, user: UserInfo | None,
                              source: str) -> PermissionsReport:
    resolve = discovery_resolver(resources)
    reviews = Reviews(client, user)
    # the records are asked as the user (its name is not in them: ``record_key``)
    subject = user or UserInfo("(you)")
    change, blocking = _writes(obj, info, subject)
    wanted: dict[tuple[str, ...], Attributes] = {}
    for write in (change, *blocking):
        for record in records_asked(write, resolve):
            wanted.setdefault(record_key(record), record)
    await asyncio.gather(*(reviews.ask(r) for r in wanted.values()))
    refused = any(v is not None and not v.allowed for v in reviews.answers.values())
    access = await read_access(client, resources, reviews.probe, refused=refused)
    refs = [r for r in (obj.get("metadata") or {}).get("ownerReferences") or []
            if isinstance(r, dict)]
    gr = GroupResource(info.group, info.resource)
    report = PermissionsReport(
        source=source, object=ObjRef.of(obj), resource=str(gr), user=user, access=access,
        change=_answer(change, reviews, resolve),
        refs=[RefAnswer(i, ref, _answer(write, reviews, resolve))
              for i, (ref, write) in enumerate(zip(refs, blocking, strict=True))])
    _notes(report, reviews, subject)
    return report


def _notes(report: PermissionsReport, reviews: Reviews, subject: UserInfo) -> None:
    if reviews.failure is not None:
        report.notes.append(f"the cluster could not be asked ({reviews.failure}): the answers "
                            "it did not give are unknown")
    wildcard = reviews.answers.get(record_key(finalize_anything_record(WriteAttributes(
        user=subject, operation=Operation.CREATE, namespace=report.object.namespace,
        group="", version="", resource="", name="", new_refs=()))))
    if wildcard is not None and wildcard.allowed and report.access.rbac is not State.OFF:
        report.notes.append("the user may update */finalizers of anything, which is enough "
                            "for every blockOwnerDeletion (the plugin asks it first)")
    report.notes.append("a create may set any ownerReferences without delete on the object; "
                        "blockOwnerDeletion: true needs the owner's finalizers permission at "
                        f"create too ({PLUGIN_NAME})")
