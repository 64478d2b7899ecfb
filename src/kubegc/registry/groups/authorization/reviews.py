"""The authorization.k8s.io review APIs (cf. pkg/registry/authorization: the REST of
selfsubjectaccessreview, subjectaccessreview, localsubjectaccessreview and
selfsubjectrulesreview; pkg/apis/authorization/validation; and
pkg/registry/authorization/util ``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``
/ ``AuthorizationAttributesFrom``).

Each is create-only and stored nowhere: the answer is the question with its ``status``
filled in by the server's authorizer (access reviews: ``allowed``, ``denied``, ``reason``,
``evaluationError``) or rule resolver (rules review: the rules the requester holds in a
namespace, ``incomplete``, ``evaluationError``). A SelfSubject review asks about the
requester; a SubjectAccessReview about any user and groups (asking it is itself
authorized: ``create subjectaccessreviews``); a LocalSubjectAccessReview the same, within the
namespace it is posted to.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.auth import Attributes, Authorizer, Decision, UserInfo
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.authz.rules import PolicyRule, RuleResolver, aggregate_error

GROUP = "authorization.k8s.io"
API_VERSION = f"{GROUP}/v1"
#: ``authorizationapi.ResourceAttributes`` fields, in their declaration order
_RESOURCE_FIELDS = ("namespace", "verb", "group", "version", "resource", "subresource", "name")
_NON_RESOURCE_FIELDS = ("path", "verb")


def _map(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _text(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _spec(body: Obj) -> dict[str, Any]:
    spec = body.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise errors.bad_request("spec must be an object")
    return spec or {}


def _only(attrs: dict[str, Any] | None, fields: tuple[str, ...]) -> dict[str, str] | None:
    """The attributes as the typed struct keeps them: known fields, empty ones omitted."""
    if attrs is None:
        return None
    return {k: _text(attrs, k) for k in fields if _text(attrs, k)}


def _validate_spec(spec: dict[str, Any], *, subject: bool) -> list[StatusCause]:
    """``ValidateSubjectAccessReviewSpec`` / ``ValidateSelfSubjectAccessReviewSpec``."""
    causes: list[StatusCause] = []
    resource = _map(spec.get("resourceAttributes"))
    non_resource = _map(spec.get("nonResourceAttributes"))
    if resource is not None and non_resource is not None:
        causes.append(field_error(
            "FieldValueInvalid", "spec.nonResourceAttributes",
            "cannot be specified in combination with resourceAttributes",
            _only(non_resource, _NON_RESOURCE_FIELDS),
            go_type="*authorization.NonResourceAttributes"))
    if resource is None and non_resource is None:
        causes.append(field_error(
            "FieldValueInvalid", "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            None, go_type="*authorization.NonResourceAttributes"))
    if subject and not _text(spec, "user") and not spec.get("groups"):
        causes.append(field_error("FieldValueInvalid", "spec.user",
                                  "at least one of user or group must be specified",
                                  _text(spec, "user")))
    return causes


def _invalid(kind: str, causes: list[StatusCause]) -> errors.StatusError:
    """``NewInvalid(authorizationapi.Kind(obj.Kind), "", errs)``: the internal object's
    kind is empty (decoding to the internal version clears it), so upstream's message
    reads ``.authorization.k8s.io "" is invalid: ...`` whatever the review (``kind`` kept
    for readers of this code)."""
    del kind
    return errors.invalid("", GROUP, "", causes)


def _meta_empty(body: Obj, *, but_namespace: bool = False) -> bool:
    """Whether the object's metadata is empty (managedFields aside; the namespace aside
    for a LocalSubjectAccessReview)."""
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        return True
    ignored = {"managedFields", "creationTimestamp"} | ({"namespace"} if but_namespace else set())
    return not any(v not in (None, "", [], {}) for k, v in meta.items() if k not in ignored)


def attributes_from(user: UserInfo, spec: dict[str, Any]) -> Attributes:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``: what the review asks
    about (a version left empty matches every version)."""
    resource = _map(spec.get("resourceAttributes"))
    if resource is not None:
        return Attributes(user=user, verb=_text(resource, "verb"),
                          namespace=_text(resource, "namespace"),
                          api_group=_text(resource, "group"),
                          api_version=_text(resource, "version") or "*",
                          resource=_text(resource, "resource"),
                          subresource=_text(resource, "subresource"),
                          name=_text(resource, "name"))
    non_resource = _map(spec.get("nonResourceAttributes")) or {}
    return Attributes(user=user, verb=_text(non_resource, "verb"), resource_request=False,
                      path=_text(non_resource, "path"))


def _subject(spec: dict[str, Any]) -> UserInfo:
    """``AuthorizationAttributesFrom``'s user: as the spec names it, nothing added."""
    groups = spec.get("groups")
    groups = groups if isinstance(groups, list) else []
    extra = spec.get("extra")
    extra = extra if isinstance(extra, dict) else {}
    return UserInfo(_text(spec, "user"), uid=_text(spec, "uid"),
                    groups=tuple(str(g) for g in groups),
                    extra={str(k): tuple(str(x) for x in v) for k, v in extra.items()
                           if isinstance(v, list)})


def _answer(kind: str, body: Obj, spec: dict[str, Any], decision: Decision, reason: str
            ) -> Obj:
    """The review as the typed object re-encodes it, with its status."""
    status: dict[str, Any] = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    out_spec = {k: v for k, v in spec.items() if k in (
        "user", "groups", "extra", "uid") and v not in (None, "", [], {})}
    for key, fields in (("resourceAttributes", _RESOURCE_FIELDS),
                        ("nonResourceAttributes", _NON_RESOURCE_FIELDS)):
        kept = _only(_map(spec.get(key)), fields)
        if kept is not None:
            out_spec[key] = kept
    return {"kind": kind, "apiVersion": API_VERSION, "metadata": _metadata(body),
            "spec": out_spec, "status": status}


def _metadata(body: Obj) -> dict[str, Any]:
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    return {**{k: v for k, v in (meta or {}).items() if v not in (None, "", [], {})},
            "creationTimestamp": None}


def self_subject_access_review(authorizer: Authorizer, user: UserInfo, body: Obj) -> Obj:
    """``selfsubjectaccessreview.REST.Create``."""
    kind = "SelfSubjectAccessReview"
    spec = _spec(body)
    causes = _validate_spec(spec, subject=False)
    if causes:
        raise _invalid(kind, causes)
    decision, reason = authorizer.authorize(attributes_from(user, spec))
    return _answer(kind, body, spec, decision, reason)


def subject_access_review(authorizer: Authorizer, body: Obj) -> Obj:
    """``subjectaccessreview.REST.Create``."""
    kind = "SubjectAccessReview"
    spec = _spec(body)
    causes = _validate_spec(spec, subject=True)
    if not _meta_empty(body):
        causes.append(field_error("FieldValueInvalid", "metadata", "must be empty",
                                  body.get("metadata")))
    if causes:
        raise _invalid(kind, causes)
    decision, reason = authorizer.authorize(attributes_from(_subject(spec), spec))
    return _answer(kind, body, spec, decision, reason)


def local_subject_access_review(authorizer: Authorizer, namespace: str, body: Obj) -> Obj:
    """``localsubjectaccessreview.REST.Create``: the review's namespace is the request's
    (the object's, when set, must match it)."""
    kind = "LocalSubjectAccessReview"
    spec = _spec(body)
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    meta["namespace"] = namespace
    causes = _validate_spec(spec, subject=True)
    if not _meta_empty(body, but_namespace=True):
        causes.append(field_error("FieldValueInvalid", "metadata",
                                  "must be empty except for namespace", meta))
    resource = _map(spec.get("resourceAttributes"))
    if resource is not None and _text(resource, "namespace") != namespace:
        causes.append(field_error("FieldValueInvalid", "spec.resourceAttributes.namespace",
                                  "must match metadata.namespace", _text(resource, "namespace")))
    if _map(spec.get("nonResourceAttributes")) is not None:
        causes.append(field_error(
            "FieldValueInvalid", "spec.nonResourceAttributes",
            "disallowed on this kind of request",
            _only(_map(spec.get("nonResourceAttributes")), _NON_RESOURCE_FIELDS),
            go_type="*authorization.NonResourceAttributes"))
    if causes:
        raise _invalid(kind, causes)
    decision, reason = authorizer.authorize(attributes_from(_subject(spec), spec))
    return _answer(kind, body, spec, decision, reason)


def _resource_rule(rule: PolicyRule) -> dict[str, Any]:
    out: dict[str, Any] = {"verbs": list(rule.verbs)}
    for key, values in (("apiGroups", rule.api_groups), ("resources", rule.resources),
                        ("resourceNames", rule.resource_names)):
        if values:
            out[key] = list(values)
    return out


def _non_resource_rule(rule: PolicyRule) -> dict[str, Any]:
    out: dict[str, Any] = {"verbs": list(rule.verbs)}
    if rule.non_resource_urls:
        out["nonResourceURLs"] = list(rule.non_resource_urls)
    return out


def self_subject_rules_review(resolver: RuleResolver, user: UserInfo, body: Obj) -> Obj:
    """``selfsubjectrulesreview.REST.Create``: the answer is a new object (the request's
    metadata and spec are not echoed)."""
    spec = _spec(body)
    namespace = _text(spec, "namespace")
    if not namespace:
        raise errors.bad_request("no namespace on request")
    review = resolver.rules_for(user, namespace)
    status: dict[str, Any] = {
        "resourceRules": [_resource_rule(r) for r in review.resource_rules],
        "nonResourceRules": [_non_resource_rule(r) for r in review.non_resource_rules],
        "incomplete": review.incomplete}
    if review.errors:
        status["evaluationError"] = aggregate_error(review.errors)
    return {"kind": "SelfSubjectRulesReview", "apiVersion": API_VERSION,
            "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}
