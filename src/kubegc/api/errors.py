"""Kubernetes ``Status`` errors shared by every layer above storage.

Exception tree:
  StatusError(code, reason, message, details)  -- a metav1.Status failure
Constructors mirror apimachinery ``k8s.io/apimachinery/pkg/api/errors`` and produce
upstream's exact messages; predicates ``is_not_found``, ``is_conflict``,
``is_already_exists`` … classify them. The registry translates storage errors into these;
the server renders them as ``Status`` bodies; clients raise them from ``Status`` replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.auth import Attributes, forbidden_message
from kubegc.api.goformat import field_value


@dataclass(frozen=True, slots=True)
class StatusCause:
    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


@dataclass(frozen=True, slots=True)
class GroupResource:
    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


class StatusError(Exception):
    """A failure ``metav1.Status``: HTTP code, machine reason, human message."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        name: str = "",
        group: str = "",
        kind: str = "",
        uid: str = "",
        causes: Sequence[StatusCause] = (),
        retry_after_seconds: int = 0,
        empty_details: bool = False,
    ) -> None:
        """``empty_details``: the body carries ``details`` even when it says nothing (the
        constructors that always set it upstream: ``NewForbidden``)."""
        super().__init__(message)
        self.code = code
        self.empty_details = empty_details
        self.reason = reason
        self.message = message
        self.details = _Details(name, group, kind, uid, tuple(causes), retry_after_seconds)

    def to_status(self) -> dict[str, Any]:
        """The ``metav1.Status`` body, its keys in the Go struct's field order (kind,
        apiVersion, metadata, status, message, reason, details, code), as
        kube-apiserver's JSON encoder writes them."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
        }
        if self.message:  # omitempty
            status["message"] = self.message
        if self.reason:
            status["reason"] = self.reason
        details = self.details.to_dict()
        if details or self.empty_details:
            status["details"] = details
        status["code"] = self.code
        return status

    @classmethod
    def from_status(cls, status: dict[str, Any], *, code: int = 0) -> StatusError:
        details = status.get("details") or {}
        causes = [
            StatusCause(c.get("reason", ""), c.get("message", ""), c.get("field", ""))
            for c in details.get("causes") or []
        ]
        return cls(
            int(status.get("code") or code or 500),
            str(status.get("reason") or ""),
            str(status.get("message") or ""),
            name=str(details.get("name") or ""),
            group=str(details.get("group") or ""),
            kind=str(details.get("kind") or ""),
            uid=str(details.get("uid") or ""),
            causes=causes,
        )

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


@dataclass(frozen=True, slots=True)
class _Details:
    name: str
    group: str
    kind: str
    uid: str
    causes: tuple[StatusCause, ...] = field(default_factory=tuple)
    retry_after_seconds: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.group:
            out["group"] = self.group
        if self.kind:
            out["kind"] = self.kind
        if self.uid:
            out["uid"] = self.uid
        if self.causes:
            out["causes"] = [c.to_dict() for c in self.causes]
        if self.retry_after_seconds:
            out["retryAfterSeconds"] = self.retry_after_seconds
        return out


def _qualified(gr: GroupResource, name: str) -> str:
    return f'{gr} "{name}"'


def not_found(gr: GroupResource, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f"{_qualified(gr, name)} not found",
        name=name, group=gr.group, kind=gr.resource,
    )


def already_exists(gr: GroupResource, name: str, *, being_deleted: bool = False) -> StatusError:
    message = f"{_qualified(gr, name)} already exists"
    if being_deleted:
        message = "object is being deleted: " + message
    return StatusError(409, "AlreadyExists", message, name=name, group=gr.group, kind=gr.resource)


def conflict(gr: GroupResource, name: str, err: str) -> StatusError:
    return StatusError(
        409, "Conflict", f"Operation cannot be fulfilled on {_qualified(gr, name)}: {err}",
        name=name, group=gr.group, kind=gr.resource,
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(kind: str, group: str, name: str, causes: Sequence[StatusCause]) -> StatusError:
    """422 Invalid, worded as ``field.ErrorList.ToAggregate`` renders it."""
    qualified_kind = f"{kind}.{group}" if group else kind
    texts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return StatusError(
        422, "Invalid", f'{qualified_kind} "{name}" is invalid: {joined}',
        name=name, group=group, kind=kind, causes=causes,
    )


#: ``field.ErrorType.String()``
_FIELD_ERROR_TYPES = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
#: Types whose message never shows the value.
_VALUELESS = frozenset({"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong",
                        "InternalError"})


def field_error(kind: str, field_path: str, detail: str, value: Any = None, *,
                go_type: str | None = None) -> StatusCause:
    """One ``field.Error`` as a Status cause (``kind`` is e.g. ``FieldValueRequired``), its
    message worded as ``ErrorBody``: the value rendered by its Go type (``go_type``, e.g.
    ``[]string`` or ``v1.OwnerReference``; inferred when not given, see
    ``kubegc.api.goformat``)."""
    body = _FIELD_ERROR_TYPES.get(kind, kind)
    if kind not in _VALUELESS:
        body = f"{body}: {field_value(value, go_type)}"
    return StatusCause(kind, f"{body}: {detail}" if detail else body, field_path)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(gr: GroupResource, name: str, err: str) -> StatusError:
    """``apierrors.NewForbidden``: no resource (a non-resource path) reads ``forbidden: …``."""
    if not gr.resource and not gr.group:
        message = f"forbidden: {err}"
    else:
        message = f"{_qualified(gr, name) if name else gr} is forbidden: {err}"
    return StatusError(403, "Forbidden", message, name=name, group=gr.group, kind=gr.resource,
                       empty_details=True)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(401, "Unauthorized", message)


def method_not_supported(gr: GroupResource, action: str) -> StatusError:
    return StatusError(
        405, "MethodNotAllowed", f"{action} is not supported on resources of kind {gr}",
        group=gr.group, kind=gr.resource,
    )


def unsupported_media_type(message: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", message)


def not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def resource_expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", message)


def too_many_requests(message: str, retry_after_seconds: int = 1) -> StatusError:
    return StatusError(429, "TooManyRequests", message, retry_after_seconds=retry_after_seconds)


def internal_error(err: str) -> StatusError:
    return StatusError(
        500, "InternalError",
        f"Internal error occurred: {err}",
        causes=[StatusCause("UnexpectedServerResponse", err)],
    )


def resource_version_set_on_create() -> StatusError:
    """``storage.ErrResourceVersionSetOnCreate``: not a Status error upstream, so
    ``ErrorToAPIStatus`` answers it as a 500 with no reason."""
    return StatusError(500, "", "resourceVersion should not be set on objects to be created")


def server_timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def too_large_resource_version(minimum: int, current: int) -> StatusError:
    """``storage.NewTooLargeResourceVersionError`` (retry after 1 s, as the watch cache)."""
    return StatusError(
        504, "Timeout", f"Timeout: Too large resource version: {minimum}, current: {current}",
        causes=[StatusCause("ResourceVersionTooLarge", "Too large resource version")],
        retry_after_seconds=1)


def route_not_found() -> StatusError:
    return StatusError(404, "NotFound", "the server could not find the requested resource")


def _has(err: BaseException, *reasons: str) -> bool:
    return isinstance(err, StatusError) and err.reason in reasons


def is_not_found(err: BaseException) -> bool:
    return _has(err, "NotFound")


def is_conflict(err: BaseException) -> bool:
    return _has(err, "Conflict")


def is_already_exists(err: BaseException) -> bool:
    return _has(err, "AlreadyExists")


def is_invalid(err: BaseException) -> bool:
    return _has(err, "Invalid")


def is_forbidden(err: BaseException) -> bool:
    return _has(err, "Forbidden")


def is_gone(err: BaseException) -> bool:
    return _has(err, "Gone", "Expired")


def is_bad_request(err: BaseException) -> bool:
    return _has(err, "BadRequest")


def is_unsupported_media_type(err: BaseException) -> bool:
    return _has(err, "UnsupportedMediaType")


def sanitize_html(text: str) -> str:
    """``responsewriters``' sanitizer: nothing in an error message reads as HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def forbidden_request(attrs: Attributes, reason: str) -> StatusError:
    """``responsewriters.Forbidden``: the 403 of a request the authorizer did not allow
    (``ForbiddenStatusError``: the message is sanitized, the reason is not)."""
    message = sanitize_html(forbidden_message(attrs))
    return forbidden(GroupResource(attrs.api_group, attrs.resource), attrs.name,
                     f"{message}: {reason}" if reason else message)


def checked_kind(obj: dict[str, Any], api_version: str, kind: str) -> tuple[str, str]:
    """The body's apiVersion and kind (``api_version``/``kind`` where unset), or the 400 of
    a body of another type (the decoder's "does not match the expected" messages)."""
    given_version = obj.get("apiVersion") or api_version
    given_kind = obj.get("kind") or kind
    if given_version != api_version:
        raise bad_request(f"the API version in the data ({given_version}) does not match the "
                          f"expected API version ({api_version})")
    if given_kind != kind:
        raise bad_request(f"the kind in the data ({given_kind}) does not match the expected "
                          f"kind ({kind})")
    return given_version, given_kind
