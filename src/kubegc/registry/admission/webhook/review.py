"""The ``admission.k8s.io/v1`` AdmissionReview a webhook gets, and what its answer must be
(cf. webhook/request/admissionreview.go ``CreateAdmissionObjects`` and
``VerifyAdmissionResponse``; webhook/errors/statuserror.go ``ToStatusErr``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api.errors import StatusCause, StatusError
from kubegc.api.meta import new_uid
from kubegc.api.types import Obj
from kubegc.registry.generic.attributes import Attributes

API_VERSION = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
KIND = "AdmissionReview"
JSON_PATCH = "JSONPatch"


class InvalidResponse(Exception):
    """The webhook's answer is not a valid AdmissionReview response."""


def _user(a: Attributes) -> dict[str, Any]:
    if a.user is None:
        return {}
    out: dict[str, Any] = {"username": a.user.name}
    if a.user.uid:
        out["uid"] = a.user.uid
    if a.user.groups:
        out["groups"] = list(a.user.groups)
    if a.user.extra:
        out["extra"] = {k: list(v) for k, v in a.user.extra.items()}
    return out


def review_version(versions: tuple[str, ...]) -> str | None:
    """The AdmissionReview apiVersion to send: the first of the webhook's
    ``admissionReviewVersions`` kube-apiserver speaks (v1, v1beta1; same shape), None when
    it speaks none of them (``webhook.GetAdmissionReviewVersion``)."""
    for version in versions:
        if version in ("v1", "v1beta1"):
            return f"admission.k8s.io/{version}"
    return None


def admission_review(a: Attributes, version: str, obj: Obj | None, old: Obj | None, *,
                     review_api_version: str = API_VERSION) -> tuple[str, dict[str, Any]]:
    """(uid, review) for a webhook called at ``version`` with ``obj``/``old`` converted
    to it; ``requestKind``/``requestResource`` keep the request's own version."""
    info = a.t.info
    uid = new_uid()
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": info.group, "version": version, "kind": info.kind},
        "resource": {"group": info.group, "version": version, "resource": info.resource},
        "requestKind": {"group": info.group, "version": a.t.version, "kind": info.kind},
        "requestResource": {"group": info.group, "version": a.t.version,
                            "resource": info.resource},
        "operation": a.operation,
        "userInfo": _user(a),
        "object": obj,
        "oldObject": old,
        "dryRun": a.dry_run,
        "options": a.options or None,
    }
    if a.subresource:
        request["subResource"] = request["requestSubResource"] = a.subresource
    if a.name:
        request["name"] = a.name
    if a.t.namespace:
        request["namespace"] = a.t.namespace
    return uid, {"apiVersion": review_api_version, "kind": KIND, "request": request}


@dataclass
class Result:
    """A verified answer (``webhookrequest.AdmissionResponse``)."""

    allowed: bool
    status: dict[str, Any] = field(default_factory=dict)
    patch: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def verify_admission_response(uid: str, mutating: bool, review: Any, *,
                              api_version: str = API_VERSION) -> Result:
    """``VerifyAdmissionResponse``: the answer must be a review of the ``api_version``
    sent."""
    if not isinstance(review, dict):
        raise InvalidResponse("webhook response was absent")
    response = review.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    if response.get("uid") != uid:
        raise InvalidResponse(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    if review.get("apiVersion") != api_version or review.get("kind") != KIND:
        raise InvalidResponse(
            f"expected webhook response of {api_version}, Kind={KIND}, got "
            f"{review.get('apiVersion', '')}, Kind={review.get('kind', '')}")
    raw_patch, patch_type = response.get("patch"), response.get("patchType")
    if not mutating and raw_patch:
        raise InvalidResponse("validating webhook may not return response.patch")
    if not mutating and patch_type is not None:
        raise InvalidResponse("validating webhook may not return response.patchType")
    patch: list[dict[str, Any]] = []
    if raw_patch:
        if not patch_type:
            raise InvalidResponse("webhook returned response.patch but not response.patchType")
        if patch_type != JSON_PATCH:
            raise InvalidResponse(f'unsupported patch type "{patch_type}"')
        patch = _decode_patch(raw_patch)
    status = response.get("status")
    raw_warnings = response.get("warnings")
    warnings = ([str(w) for w in raw_warnings if w and isinstance(w, str)]
                if isinstance(raw_warnings, list) else [])
    return Result(bool(response.get("allowed")), status if isinstance(status, dict) else {},
                  patch, warnings)


def _decode_patch(raw: Any) -> list[dict[str, Any]]:
    try:
        ops = orjson.loads(base64.b64decode(str(raw), validate=True))
    except (binascii.Error, ValueError) as e:
        raise InvalidResponse(f"could not decode response.patch: {e}") from None
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise InvalidResponse("response.patch is not a JSON patch")
    return ops


def to_status_error(webhook: str, status: dict[str, Any]) -> StatusError:
    """``ToStatusErr``: a refusal, its code at least 400, its message prefixed with the
    webhook's name."""
    denied_by = f'admission webhook "{webhook}" denied the request'
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    message, reason = str(status.get("message") or ""), str(status.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else {}
    causes = [StatusCause(str(c.get("reason") or ""), str(c.get("message") or ""),
                          str(c.get("field") or ""))
              for c in (details or {}).get("causes") or [] if isinstance(c, dict)]
    return StatusError(code, reason, text, causes=causes)


__all__ = ["API_VERSION", "JSON_PATCH", "KIND", "V1BETA1", "InvalidResponse", "Result",
           "admission_review", "review_version", "to_status_error",
           "verify_admission_response"]
